/**
 * Where the page's data comes from: the loopback server (the token from the page's own URL on
 * every request, the event stream read line by line as the server pushes batches), or the JSON
 * an HTML export embeds in a non-executable script element.
 */
import {
  type BranchMessages,
  type CallRequest,
  type ChunkBodies,
  EMBEDDED_DATA_ID,
  MARKS,
  type SessionAppend,
  type SessionList,
  type SessionSnapshot,
  type SessionTree,
  SNAPSHOT_PART_PREFIX,
  type StreamLine,
  type VerifyStatus,
} from '../protocol.js';
import { apiUrl, streamUrl, takeEarly } from './early-stream.js';
import { PendingSnapshot } from './snapshot-parts.js';

/** The JSON answers of the routes under `/api/sessions/:id/`. */
export interface SessionAnswers {
  readonly verify: VerifyStatus;
  readonly tree: SessionTree;
  readonly messages: BranchMessages;
}

/** Receives what a session stream delivers. */
export interface StreamHandlers {
  snapshot(snapshot: SessionSnapshot, bytes: number): void;
  events(line: SessionAppend, bytes: number): void;
  failure(message: string): void;
}

/** The embedded session of an HTML export, or `undefined` in the served page. */
export function embeddedSnapshot(): { snapshot: SessionSnapshot; bytes: number } | undefined {
  const element = document.getElementById(EMBEDDED_DATA_ID);
  if (element === null) return undefined;
  const text = element.textContent ?? '';
  performance.mark(MARKS.received);
  const snapshot = JSON.parse(text) as SessionSnapshot;
  performance.mark(MARKS.parsed);
  return { snapshot, bytes: text.length };
}

/** The served page's API, authorised by the token its URL carries. */
export class ServerSource {
  private url(path: string, query: Record<string, string> = {}): string {
    return apiUrl(path, query);
  }

  async sessions(text: string): Promise<SessionList> {
    const response = await fetch(this.url('/api/sessions', text === '' ? {} : { q: text }));
    if (!response.ok)
      throw new Error(`the session list failed: ${response.status} ${await response.text()}`);
    return (await response.json()) as SessionList;
  }

  /** What the server says about session `id`: `verify`'s checks, its tree, its messages. */
  async about<R extends keyof SessionAnswers>(
    id: string,
    route: R,
    query: Record<string, string> = {},
  ): Promise<SessionAnswers[R]> {
    const response = await fetch(
      this.url(`/api/sessions/${encodeURIComponent(id)}/${route}`, query),
    );
    const text = await response.text();
    if (!response.ok) throw new Error(`${route} failed: ${response.status} ${text}`);
    return JSON.parse(text) as SessionAnswers[R];
  }

  /** The stream chunks of session `id` in full, and the length of the answer's text. */
  async chunks(
    id: string,
    signal: AbortSignal,
  ): Promise<{ chunks: readonly unknown[]; bytes: number }> {
    const response = await fetch(this.url(`/api/sessions/${encodeURIComponent(id)}/chunks`), {
      signal,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`the stream chunks failed: ${response.status} ${text}`);
    const { chunks } = JSON.parse(text) as ChunkBodies;
    return { chunks: Array.isArray(chunks) ? chunks : [], bytes: text.length };
  }

  /** The request of the call whose step holds `seq` in session `id`, in the form `wire` names. */
  async request(id: string, seq: number, wire: CallRequest['wire']): Promise<CallRequest> {
    const response = await fetch(
      this.url(`/api/sessions/${encodeURIComponent(id)}/request`, { seq: String(seq), wire }),
    );
    const text = await response.text();
    if (!response.ok) throw new Error(`the request failed: ${response.status} ${text}`);
    return JSON.parse(text) as CallRequest;
  }

  /** The snapshot of session `id` alone: the stream is closed once it has come. */
  snapshotOf(id: string): Promise<{ snapshot: SessionSnapshot; bytes: number }> {
    const controller = new AbortController();
    return new Promise((resolve, reject) => {
      const handlers: StreamHandlers = {
        snapshot: (snapshot, bytes) => {
          resolve({ snapshot, bytes });
          controller.abort();
        },
        events: () => undefined,
        failure: (message) => reject(new Error(message)),
      };
      // Settled already when the snapshot came; otherwise the stream ended without one.
      void this.stream(id, handlers, controller.signal).then(() =>
        reject(new Error('the stream ended before the session came')),
      );
    });
  }

  /** Streams session `id` until `signal` aborts: the snapshot first, then each committed batch. */
  async stream(id: string, handlers: StreamHandlers, signal: AbortSignal): Promise<void> {
    let response: Response;
    const url = streamUrl(id);
    // The page asked for it already, before it was built, when its URL named this session.
    const early = takeEarly(url, signal);
    if (early === undefined) performance.mark(MARKS.streamAsked);
    try {
      response = await (early ?? fetch(url, { signal }));
    } catch (error) {
      if (!signal.aborted) handlers.failure(String(error));
      return;
    }
    if (!response.ok || response.body === null) {
      handlers.failure(`${response.status}: ${await response.text()}`);
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    // The pieces of the line under way. A long line (a snapshot part, a large batch) arrives in
    // many pieces: they are joined once, when its newline comes, into one flat string (joining
    // the pieces and then appending the last one made a rope that the first search flattened).
    let pieces: string[] = [];
    const pending = new PendingSnapshot();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        let start = 0;
        for (let end = value.indexOf('\n'); end !== -1; end = value.indexOf('\n', start)) {
          pieces.push(value.slice(start, end));
          const line = pieces.length === 1 ? (pieces[0] as string) : pieces.join('');
          pieces = [];
          start = end + 1;
          if (line !== '' && !this.deliver(line, handlers, pending)) {
            await reader.cancel();
            return;
          }
        }
        if (start < value.length) pieces.push(start === 0 ? value : value.slice(start));
      }
    } catch (error) {
      if (!signal.aborted) handlers.failure(String(error));
    }
  }

  /**
   * Takes one line of the stream; `false` when the stream is over for the page (a failure, or
   * a line out of place).
   */
  private deliver(text: string, handlers: StreamHandlers, pending: PendingSnapshot): boolean {
    if (pending.waiting) {
      if (!text.startsWith(SNAPSHOT_PART_PREFIX)) {
        handlers.failure(`expected ${pending.describe()}, found ${describeLine(text)}`);
        return false;
      }
      // Each part is parsed as it comes; the last one's arrival is the snapshot's.
      if (pending.awaitsLast) performance.mark(MARKS.received);
      const start = performance.now();
      const problem = pending.add(text);
      performance.measure(MARKS.partParsed, { start });
      if (problem !== undefined) {
        handlers.failure(problem);
        return false;
      }
    } else {
      const line = JSON.parse(text) as StreamLine;
      switch (line.kind) {
        case 'snapshot-start': {
          performance.mark(MARKS.streamStarted);
          const problem = pending.start(line, text.length);
          if (problem !== undefined) {
            handlers.failure(problem);
            return false;
          }
          if (pending.complete) performance.mark(MARKS.received); // no events: no parts
          break;
        }
        case 'events':
          handlers.events(line, text.length);
          return true;
        case 'error':
          handlers.failure(`${line.code}: ${line.message}`);
          return false;
        default:
          handlers.failure(`expected a snapshot-start or events line, found ${describeLine(text)}`);
          return false;
      }
    }
    if (!pending.complete) return true;
    const snapshot = pending.take();
    performance.mark(MARKS.parsed);
    if (typeof snapshot === 'string') {
      handlers.failure(snapshot);
      return false;
    }
    handlers.snapshot(snapshot.snapshot, snapshot.bytes);
    return true;
  }
}

/** The start of a stream line, for a message (a line may be megabytes long). */
function describeLine(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}
