/**
 * Following a JSONL log as it grows: the log is read once from the header, then from the end of
 * the last committed batch each time the file may have changed, by the same reference reader a
 * load falls back to (so a batch counts only once its commit marker matches, and damage is
 * named as a load names it). A batch still being written is left for the next read. Changes are
 * noticed by file watching (inotify), with a poll as the fallback for file systems whose
 * watchers miss writes (network and some container file systems).
 */
import { watch as watchFile } from 'node:fs';
import type { SessionEvent } from '../../core/index.js';
import type { LogSource } from '../contract/follow.js';
import type { FsFileHandle } from './fs.js';
import { eventsStart, headerCorrupt, parseHeaderLine } from './header.js';
import { LineReader, READ_CHUNK_BYTES } from './line-reader.js';
import { scanLines } from './line-scan.js';

/** How often a watched log is read again when no file event came. */
const POLL_MS = 250;

/** A {@link LogSource} over an open log file. */
export async function jsonlLogSource(
  handle: FsFileHandle,
  file: string,
  id: string,
  maxLineBytes: number,
  /** Rejects with `NotFoundError` once the log is gone (the open handle reads on regardless). */
  stillThere: () => Promise<unknown>,
): Promise<LogSource> {
  const reader = new LineReader(handle, file, maxLineBytes, 0, 1, READ_CHUNK_BYTES);
  const first = await reader.next();
  if (first === undefined) throw headerCorrupt(file, 'empty file (no header line)');
  if (!first.terminated) throw headerCorrupt(file, 'the header line is incomplete');
  parseHeaderLine(first.bytes, file, id);
  const start = await eventsStart(handle, file, first.bytes, first.offset + first.bytes.length + 1);
  let offset = start.offset;
  let line = start.lineNumber;
  let seq = 0;
  let dirty = true;
  let wake: (() => void) | undefined;
  let watcher: ReturnType<typeof watchFile> | undefined;
  try {
    watcher = watchFile(file, { persistent: false }, () => {
      dirty = true;
      wake?.();
    });
    watcher.on('error', () => {
      // The poll goes on without it.
      watcher?.close();
      watcher = undefined;
    });
  } catch {
    watcher = undefined;
  }
  return {
    read: async (from) => {
      dirty = false;
      await stillThere();
      // Events before `offset` are known; the reader adds a batch's events only once its
      // marker matched, from `events.length` on.
      const events: SessionEvent[] = new Array(seq);
      const end = await scanLines(
        handle,
        {
          file,
          maxLineBytes,
          offset,
          lineNumber: line,
          committedEnd: offset,
          chunkBytes: READ_CHUNK_BYTES,
        },
        events,
      );
      const added = events.slice(seq);
      offset = end.committedEnd;
      line = end.committedLine ?? line;
      seq = events.length;
      return added.filter((event) => event.seq >= from);
    },
    changed: (signal) =>
      dirty || signal.aborted
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const done = (): void => {
              clearTimeout(timer);
              signal.removeEventListener('abort', done);
              wake = undefined;
              resolve();
            };
            const timer = setTimeout(done, POLL_MS);
            signal.addEventListener('abort', done, { once: true });
            wake = done;
          }),
    close: async () => {
      watcher?.close();
      await handle.close();
    },
  };
}
