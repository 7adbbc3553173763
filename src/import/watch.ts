/**
 * `watchImports`: keeps importing while a harness writes. The source is polled (its files' sizes
 * and modification times), because file-change notifications are unreliable across file systems
 * and editors that replace files; each change runs an ordinary, idempotent import.
 */
import { statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ImportError } from './errors.js';
import { type ImportOptions, type ImportReport, importSessions } from './import-sessions.js';
import { sourceFiles } from './read.js';

/** Options of {@link watchImports}. */
export interface WatchImportOptions extends Omit<ImportOptions, 'partialTail'> {
  /** Ends the watch. */
  readonly signal: AbortSignal;
  /** How often the source is looked at, in ms (default 250). */
  readonly intervalMs?: number;
  /** Called with the report of each import that ran (the first one included). */
  readonly onImport: (report: ImportReport) => void;
  /** Called when an import fails; the watch goes on (default: rethrow, ending it). */
  readonly onError?: (error: unknown) => void;
}

/**
 * Imports `path` now and again whenever it changes, until `signal` aborts. A final line still
 * being written is left for the next round.
 *
 * @throws ImportError from the first import only when no `onError` is given.
 */
export async function watchImports(options: WatchImportOptions): Promise<void> {
  const interval = options.intervalMs ?? 250;
  let seen: string | undefined;
  while (!options.signal.aborted) {
    const now = fingerprint(options.path);
    if (now !== seen) {
      seen = now;
      try {
        options.onImport(await importSessions({ ...options, partialTail: 'wait' }));
      } catch (error) {
        if (options.onError === undefined) throw error;
        options.onError(error);
      }
    }
    try {
      await sleep(interval, undefined, { signal: options.signal });
    } catch {
      return;
    }
  }
}

function fingerprint(path: string): string {
  try {
    return sourceFiles(path)
      .map((file) => {
        const stats = statSync(file);
        return `${file}:${stats.size}:${stats.mtimeMs}`;
      })
      .join('\n');
  } catch (error) {
    if (ImportError.isInstance(error)) return '';
    throw error;
  }
}
