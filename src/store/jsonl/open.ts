/**
 * Opening a JSONL store: the factory of the `palimpsest/jsonl` entry. It checks the options
 * (`options.ts`), makes sure the directory exists (created with mode 0700 unless read-only) and
 * is one, and hands both to the store.
 */
import * as path from 'node:path';
import { InvalidStoreError, StorageError } from '../contract/errors.js';
import { errnoCode, type FsStats } from './fs.js';
import { type JsonlStoreOptions, resolveOptions } from './options.js';
import { JsonlStore } from './store.js';

/**
 * Opens (creating it, mode 0700, if needed) a directory of JSONL session logs.
 *
 * @throws InvalidStoreError when the path exists but is not a directory; InvalidArgumentError
 *   when an option is invalid.
 */
export async function openJsonlStore(
  directory: string,
  options: JsonlStoreOptions = {},
): Promise<JsonlStore> {
  const resolved = resolveOptions(options);
  const absolute = path.resolve(directory);
  const fs = resolved.fs;
  let stats: FsStats;
  try {
    try {
      stats = await fs.stat(absolute);
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT' || resolved.readOnly) throw error;
      await fs.mkdir(absolute, 0o700);
      stats = await fs.stat(absolute);
    }
  } catch (error) {
    throw new StorageError(`cannot open the session directory ${absolute}`, { cause: error });
  }
  if (!stats.isDirectory()) {
    throw new InvalidStoreError(
      'WRONG_FILE_TYPE',
      `jsonl store path ${absolute} exists but is not a directory`,
    );
  }
  // The inode alone would not do: a file system hands a deleted directory's inode number to the
  // next one created, and a lock this process still held in the old one must not hold the new.
  const key = `${stats.dev}:${stats.ino}:${stats.birthtimeMs ?? 0}`;
  return new JsonlStore(absolute, key, resolved);
}
