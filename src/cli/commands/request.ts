/**
 * `palimpsest request ID [SEQ] [--wire openai|anthropic]`: the request a model call received,
 * rebuilt from the log, as palimpsest's canonical form with its digest (and the digest the writer
 * recorded), or as the body of a provider's HTTP request.
 */
import { anthropicBody, openaiBody, requestAt } from '../../agent/index.js';
import { InvalidArgumentError } from '../../core/index.js';
import { inspectSession } from '../../store/index.js';
import { type CliContext, parseCount } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { jsonText } from '../terminal.js';

const WIRES = ['openai', 'anthropic'] as const;

/** `palimpsest request ID [SEQ] [--wire PROVIDER]` */
export async function requestCommand(
  context: CliContext,
  id: string,
  seqText: string | undefined,
  options: { wire?: string },
): Promise<void> {
  const wire = options.wire;
  if (wire !== undefined && !(WIRES as readonly string[]).includes(wire)) {
    throw new CliError(`--wire expects one of ${WIRES.join(', ')}; found '${wire}'`, EXIT.usage);
  }
  const seq = parseCount('SEQ', seqText);
  const session = await context.withReader((store) => inspectSession(store, id));
  let request: ReturnType<typeof requestAt>;
  try {
    request = requestAt(session, seq);
  } catch (error) {
    if (!InvalidArgumentError.isInstance(error)) throw error;
    throw new CliError(error.message, EXIT.usage);
  }
  const out = context.terminal.out;
  if (wire === 'openai') out.write(`${jsonText(openaiBody(request.header, request.messages))}\n`);
  else if (wire === 'anthropic') {
    out.write(`${jsonText(anthropicBody(request.header, request.messages))}\n`);
  } else {
    const { turn, step, stepStartSeq, answerSeq, digest, recordedDigest } = request;
    out.write(
      `${jsonText({
        session: id,
        turn,
        step,
        stepStartSeq,
        ...(answerSeq === undefined ? {} : { answerSeq }),
        digest,
        ...(recordedDigest === undefined ? {} : { recordedDigest }),
        request: request.request,
      })}\n`,
    );
  }
  if (request.recordedDigest !== undefined && request.recordedDigest !== request.digest) {
    context.terminal.note(
      `warning: the writer recorded ${request.recordedDigest} for this call; the request rebuilt from the log has ${request.digest} (palimpsest verify lists every such call)`,
    );
  }
}
