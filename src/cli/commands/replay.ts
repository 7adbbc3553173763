/**
 * `palimpsest replay ID [SEQ] --model provider:name [--id NEW]`: the exact request of a recorded
 * call sent to another model, its answer recorded in a fork of the session that ends where the
 * call's step began, and both answers printed side by side with their usage.
 */
import { type AskedAnswer, askAgain } from '../../agent/index.js';
import { InvalidArgumentError } from '../../core/index.js';
import { inspectSession } from '../../store/index.js';
import { type CliContext, parseCount } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { announce, resolveModel } from '../model.js';
import { safeLine } from '../terminal.js';

const COLUMN = 48;

/** `palimpsest replay ID [SEQ | --at SEQ] --model provider:name [--id NEW]` */
export async function replayCommand(
  context: CliContext,
  id: string,
  seqText: string | undefined,
  options: { at?: string; model?: string; id?: string },
): Promise<number> {
  if (seqText !== undefined && options.at !== undefined && seqText !== options.at) {
    throw new CliError(
      `expected one seq, as SEQ or --at; found SEQ ${seqText} and --at ${options.at}`,
      EXIT.usage,
    );
  }
  const seq = parseCount(seqText === undefined ? '--at' : 'SEQ', seqText ?? options.at);
  const resolved = await resolveModel(
    options.model,
    [{ text: 'This answer comes from palimpsest’s offline scripted model (--model scripted).' }],
    { offline: 'explicit', purpose: 'palimpsest replay' },
  );
  const model = announce(resolved, (text) => context.terminal.note(text));
  const result = await context.withStore(async (store) => {
    const session = await inspectSession(store, id);
    let asked: Awaited<ReturnType<typeof askAgain>>;
    try {
      asked = await askAgain(session, seq, {
        model,
        ...(options.id === undefined ? {} : { id: options.id }),
      });
    } catch (error) {
      if (!InvalidArgumentError.isInstance(error)) throw error;
      throw new CliError(error.message, EXIT.usage);
    }
    await store.create(asked.fork.header);
    await store.append(asked.fork.id, asked.fork.events, { expectedSeq: 0 });
    return asked;
  });
  const { fork, recorded, answer, reason } = result;
  if (context.json) {
    context.terminal.json({
      session: id,
      fork: fork.id,
      stepStartSeq: result.stepStartSeq,
      recorded,
      answer,
      reason,
    });
  } else {
    const out = context.terminal.out;
    out.write(`${sideBySide(recorded, answer)}\n`);
    out.write(
      `\nrecorded in fork '${safeLine(fork.id, 80)}' of '${safeLine(id, 80)}' (events 0..${result.stepStartSeq - 1} shared, the answer at #${answer.seq})\n`,
    );
  }
  if (reason.kind === 'error') {
    context.terminal.note(`the model failed: ${reason.error.message}`);
    return EXIT.model;
  }
  return EXIT.ok;
}

/** Two answers in two columns: the recorded one left, the new one right. */
function sideBySide(left: AskedAnswer | undefined, right: AskedAnswer): string {
  const column = (answer: AskedAnswer | undefined, title: string): string[] => {
    if (answer === undefined) return [title, '(no recorded answer)'];
    return [
      safeLine(`${title}: ${answer.provider}:${answer.model} (#${answer.seq})`, COLUMN * 2),
      '',
      ...wrap(answer.text === '' ? '(no text)' : answer.text),
      '',
      safeLine(`finish: ${answer.finishReason}`, COLUMN),
      `input tokens: ${count(answer.usage?.inputTokens)}`,
      `cached input: ${count(answer.usage?.cachedInputTokens)}`,
      `output tokens: ${count(answer.usage?.outputTokens)}`,
    ];
  };
  const a = column(left, 'recorded');
  const b = column(right, 'asked again');
  const lines: string[] = [];
  for (let row = 0; row < Math.max(a.length, b.length); row++) {
    lines.push(`${(a[row] ?? '').padEnd(COLUMN)}  │ ${b[row] ?? ''}`.trimEnd());
  }
  return lines.join('\n');
}

/** A text cut into lines of at most {@link COLUMN} characters, each made safe to print. */
function wrap(text: string): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of safeLine(paragraph).split(' ')) {
      if (line !== '' && line.length + 1 + word.length > COLUMN) {
        lines.push(line);
        line = '';
      }
      line = line === '' ? word : `${line} ${word}`;
      while (line.length > COLUMN) {
        lines.push(line.slice(0, COLUMN));
        line = line.slice(COLUMN);
      }
    }
    lines.push(line);
  }
  return lines;
}

function count(value: number | undefined): string {
  return value === undefined ? '-' : value.toLocaleString('en-US');
}
