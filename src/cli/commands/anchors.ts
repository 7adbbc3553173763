/**
 * Anchors: chain heads kept outside the session's store, as JSON lines in a file (for an
 * external log) or as `anchor/head` events of a session named `anchors` in another store.
 */
import { dataAsJson, type JsonValue } from '../../core/index.js';
import { type Anchor, NotFoundError, openSession, type SessionStore } from '../../store/index.js';
import { type CliContext, readGivenFile } from '../context.js';
import { CliError, EXIT } from '../failure.js';

/** The session of an anchor store that holds the anchors, and their event type. */
export const ANCHOR_SESSION = 'anchors';
export const ANCHOR_TYPE = 'anchor/head';

/** Whether `target` names a store (a URL) rather than a file. */
function isStoreUrl(target: string): boolean {
  return /^(jsonl|sqlite|memory|postgres|postgresql):/.test(target);
}

/** The anchors in `source`: a JSON-lines file, or the anchor session of the store it names. */
export async function readAnchors(context: CliContext, source: string): Promise<Anchor[]> {
  if (isStoreUrl(source)) {
    return context.withStore(async (store) => {
      try {
        const { events } = await store.load(ANCHOR_SESSION);
        return events
          .filter((event) => event.type === ANCHOR_TYPE)
          .map((event, index) => checkedAnchor(dataAsJson(event), `${source} event ${index}`));
      } catch (error) {
        if (NotFoundError.isInstance(error)) return [];
        throw error;
      }
    }, source);
  }
  const text = readGivenFile(source, 'the anchors file');
  return text
    .split('\n')
    .map((line, index) => [line.trim(), index + 1] as const)
    .filter(([line]) => line !== '')
    .map(([line, number]) => {
      let value: JsonValue;
      try {
        value = JSON.parse(line) as JsonValue;
      } catch {
        throw new CliError(
          `${source} line ${number}: expected a JSON anchor, found text that is not JSON`,
          EXIT.usage,
        );
      }
      return checkedAnchor(value, `${source} line ${number}`);
    });
}

/** Appends `anchors` to the anchor session of the store at `url` (created when new). */
export async function storeAnchors(context: CliContext, url: string, anchors: readonly Anchor[]) {
  await context.withStore(
    async (store: SessionStore) => {
      const live = await openSession(store, ANCHOR_SESSION, { durability: { mode: 'each' } });
      try {
        for (const anchor of anchors) live.append(ANCHOR_TYPE, { ...anchor });
        await live.flush();
      } finally {
        await live.close();
      }
    },
    url,
    { create: true },
  );
}

function checkedAnchor(value: JsonValue, where: string): Anchor {
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
  const { session, count, head } = record as Record<string, JsonValue>;
  if (typeof session !== 'string' || typeof count !== 'number' || typeof head !== 'string') {
    throw new CliError(
      `${where}: expected an anchor {"session", "count", "head"}, found ${JSON.stringify(value).slice(0, 80)}`,
      EXIT.usage,
    );
  }
  return { session, count, head };
}
