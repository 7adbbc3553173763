/**
 * The served page's request for the session its URL names, made as soon as the page's script
 * begins. The entry point imports this module first, so it runs before the rest of the bundle is
 * evaluated (core, the markdown renderer, the highlighter's grammars, the views): the server
 * reads the log while the page builds itself. The page's stream takes the answer over when it
 * asks for the same URL.
 */
import { EMBEDDED_DATA_ID, MARKS } from '../protocol.js';

/** The session the hash names (`#/s/ID`, or `#/s/ID?seq=N` for a search hit at event N). */
export function route(): { id: string; seq?: number } | undefined {
  const match = /^#\/s\/([^?]+)(?:\?seq=(\d+))?$/.exec(location.hash);
  if (match?.[1] === undefined) return undefined;
  try {
    const id = decodeURIComponent(match[1]);
    return match[2] === undefined ? { id } : { id, seq: Number(match[2]) };
  } catch {
    return undefined;
  }
}

/** An API route's URL (`path` encoded already) with the token of the page's own URL. */
export function apiUrl(path: string, query: Record<string, string> = {}): string {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  return `${path}?${new URLSearchParams({ ...query, token }).toString()}`;
}

/** The URL of session `id`'s event stream. */
export function streamUrl(id: string): string {
  return apiUrl(`/api/sessions/${encodeURIComponent(id)}/events`);
}

/** The request made before the page was built, until the page's stream takes it. */
let early:
  | {
      readonly url: string;
      readonly controller: AbortController;
      readonly response: Promise<Response>;
    }
  | undefined;

/** Asks for the routed session's stream now, in a served page whose URL names one. */
function askEarly(): void {
  const routed = route();
  if (routed === undefined || document.getElementById(EMBEDDED_DATA_ID) !== null) return;
  const url = streamUrl(routed.id);
  const controller = new AbortController();
  performance.mark(MARKS.streamAsked);
  const response = fetch(url, { signal: controller.signal });
  // Its failure is the stream's to report once taken; an unclaimed one is dropped.
  response.catch(() => undefined);
  early = { url, controller, response };
}

/**
 * The early request for `url`, once, aborted with `signal` from then on; `undefined` when there
 * is none for that URL (an early request for another is aborted: the hash changed).
 */
export function takeEarly(url: string, signal: AbortSignal): Promise<Response> | undefined {
  const taken = early;
  early = undefined;
  if (taken === undefined) return undefined;
  if (taken.url !== url || signal.aborted) {
    taken.controller.abort();
    return undefined;
  }
  signal.addEventListener('abort', () => taken.controller.abort(), { once: true });
  return taken.response;
}

askEarly();
