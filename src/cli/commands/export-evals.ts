/**
 * `palimpsest export-evals ID… [--at turn-ends|SEQ,…]`: eval cases cut from sessions, one JSON
 * line each on stdout: the request a call received as OpenAI chat `messages` (and `tools`), the
 * recorded answer as the last message, and `metadata` naming the session, seq and request digest.
 */
import { toEvalCase, turnEndAnswers } from '../../agent/index.js';
import { InvalidArgumentError } from '../../core/index.js';
import { inspectSession } from '../../store/index.js';
import { type CliContext, parseCount } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { jsonText } from '../terminal.js';

/** `palimpsest export-evals ID… [--at turn-ends|SEQ,…]` */
export async function exportEvalsCommand(
  context: CliContext,
  ids: readonly string[],
  options: { at?: string },
): Promise<number> {
  const at = options.at ?? 'turn-ends';
  const seqs =
    at === 'turn-ends'
      ? undefined
      : at.split(',').map((text) => parseCount('--at', text.trim()) as number);
  if (seqs !== undefined && ids.length !== 1) {
    throw new CliError(
      `--at with seqs names events of one session; found ${ids.length} sessions (use --at turn-ends for several)`,
      EXIT.usage,
    );
  }
  let written = 0;
  for (const id of ids) {
    const session = await context.withReader((store) => inspectSession(store, id));
    for (const seq of seqs ?? turnEndAnswers(session)) {
      let line: string;
      try {
        line = jsonText(toEvalCase(session, seq), 0);
      } catch (error) {
        if (!InvalidArgumentError.isInstance(error)) throw error;
        throw new CliError(error.message, EXIT.usage);
      }
      context.terminal.out.write(`${line}\n`);
      written++;
    }
  }
  if (written === 0) {
    context.terminal.note('no eval case: the sessions hold no turn that ended with an answer');
    return EXIT.unchanged;
  }
  context.terminal.note(`${written} eval case(s) written`);
  return EXIT.ok;
}
