/**
 * `palimpsest convert --from URL --to URL [--all | ID…]`: copies sessions between backends.
 * Resumable: a session whose copy stopped part way (the target holds a prefix of it) is
 * continued from where it stopped, one already complete is left alone. Every copy is verified by
 * loading it back through the target, re-folding it, and comparing it event by event.
 */
import {
  foldSurface,
  type JsonValue,
  jsonEqual,
  planRepair,
  Session,
  type SessionEvent,
} from '../../core/index.js';
import { EncryptedStore, NotFoundError, type SessionStore } from '../../store/index.js';
import type { CliContext } from '../context.js';
import { CliError, describeFailure, EXIT } from '../failure.js';
import { storeUrlOf } from '../store-url.js';
import { safeLine, table } from '../terminal.js';
import { allSessions } from './inspect.js';

const BATCH = 5000;

interface Outcome {
  readonly id: string;
  readonly events: number;
  readonly result: 'copied' | 'resumed' | 'up to date' | 'failed';
  readonly copied: number;
  readonly problem?: string;
  /** Copied, but the reader should know: the session ends inside a turn a crash left open. */
  readonly warning?: string;
}

export async function convertCommand(
  context: CliContext,
  ids: readonly string[],
  options: { from?: string; to?: string; all?: boolean },
): Promise<number> {
  if (options.to === undefined)
    throw new CliError('convert needs --to URL (the target store)', EXIT.usage);
  if (ids.length === 0 && options.all !== true)
    throw new CliError('name sessions to convert, or pass --all', EXIT.usage);
  const from = storeUrlOf(options.from ?? context.storeUrl);
  const to = storeUrlOf(options.to);
  if (from === to) throw new CliError('--from and --to name the same store', EXIT.usage);
  const outcomes = await context.withStore(
    (source) =>
      context.withStore(
        async (target) => {
          const targets =
            options.all === true
              ? (await allSessions(source)).map((summary) => summary.header.id)
              : ids;
          const progress = context.terminal.progress('converting', targets.length);
          const out: Outcome[] = [];
          for (const id of targets) {
            const outcome = await convertOne(source, target, id);
            if (outcome.warning !== undefined && !context.json) {
              context.terminal.note(`warning: ${safeLine(outcome.warning, 200)}`);
            }
            out.push(outcome);
            progress.tick();
          }
          progress.done();
          return out;
        },
        to,
        { create: true },
      ),
    from,
  );
  if (context.json) context.terminal.json(outcomes);
  else {
    context.terminal.line(
      table(
        ['ID', 'EVENTS', 'RESULT', 'COPIED', 'PROBLEM'],
        outcomes.map((outcome) => [
          outcome.id,
          String(outcome.events),
          outcome.result,
          String(outcome.copied),
          outcome.problem ?? outcome.warning ?? '',
        ]),
      ),
    );
  }
  return outcomes.every((outcome) => outcome.result !== 'failed') ? EXIT.ok : EXIT.failure;
}

/**
 * The stores to copy session `id`'s stored events between: with keys on both sides, an
 * encrypted session is copied sealed, between the stores the encrypted ones wrap, and keeps its
 * one key in the vault (sealing it anew would need a second key under the same id); any other
 * goes through the encrypted target and is sealed on the way in. The copy is read back through
 * the stores as given.
 */
async function copyPair(
  source: SessionStore,
  target: SessionStore,
  id: string,
): Promise<[SessionStore, SessionStore]> {
  if (!(source instanceof EncryptedStore) || !(target instanceof EncryptedStore)) {
    return [source, target];
  }
  const header = await source.inner.summarize(id).then(
    (stats) => stats.header,
    () => undefined,
  );
  return header?.encryption === undefined ? [source, target] : [source.inner, target.inner];
}

async function convertOne(
  source: SessionStore,
  target: SessionStore,
  id: string,
): Promise<Outcome> {
  let events = 0;
  try {
    const [from, to] = await copyPair(source, target, id);
    const stored = await from.load(id);
    events = stored.events.length;
    let existing: readonly SessionEvent[] = [];
    try {
      const copy = await to.load(id);
      if (!jsonEqual(copy.header, stored.header)) {
        return failed(id, events, 'the target holds a different session under this id');
      }
      existing = copy.events;
    } catch (error) {
      if (!NotFoundError.isInstance(error)) throw error;
      await to.create(stored.header);
    }
    if (existing.length > events || !samePrefix(existing, stored.events)) {
      return failed(
        id,
        events,
        'the target holds events the source does not; refusing to overwrite',
      );
    }
    for (let start = existing.length; start < events; start += BATCH) {
      await to.append(id, stored.events.slice(start, start + BATCH), { expectedSeq: start });
    }
    const loaded = from === source ? stored : await source.load(id);
    const check = await target.load(id);
    const reloaded = Session.create({ header: check.header, seed: check.events });
    const same =
      reloaded.seq === events &&
      samePrefix(reloaded.events, loaded.events) &&
      jsonEqual(
        foldSurface(reloaded.events).seqs as JsonValue,
        foldSurface(loaded.events).seqs as JsonValue,
      );
    if (!same) return failed(id, events, 'the copy does not read back equal to the source');
    const copied = events - existing.length;
    const result = copied === 0 ? 'up to date' : existing.length === 0 ? 'copied' : 'resumed';
    // Copied as stored, so the copy holds what the source holds; the writer that opens either
    // one next closes the turn.
    const open = planRepair(loaded.events).length > 0;
    const warning = open
      ? `session '${id}' ends inside a turn a crashed writer left open; copied as stored (palimpsest repair ${id} closes it)`
      : undefined;
    return { id, events, result, copied, ...(warning === undefined ? {} : { warning }) };
  } catch (error) {
    return failed(id, events, describeFailure(error).message);
  }
}

function samePrefix(prefix: readonly SessionEvent[], events: readonly SessionEvent[]): boolean {
  return (
    prefix.length <= events.length &&
    prefix.every((event, i) => jsonEqual(event, events[i] ?? null))
  );
}

function failed(id: string, events: number, problem: string): Outcome {
  return { id, events, result: 'failed', copied: 0, problem };
}
