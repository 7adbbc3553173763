/**
 * What failures say: the session's own file, never a temp file; an error's code once, never
 * "EACCES: EACCES:"; a dangling symbolic link where a log or lock belongs is an unsafe file,
 * not a session that "already exists" (nor a lock that is never there).
 */
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  StorageError,
  UnsafeFileError,
} from '../../src/store/contract/errors.js';
import { nodeFs } from '../../src/store/jsonl/fs.js';
import { type FsFacade, openJsonlStore } from '../../src/store/jsonl/index.js';
import { header, rejection, tempDir } from './jsonl/helpers.js';

/** A file system on which creating any file fails as on a directory this user cannot write. */
function unwritable(): FsFacade {
  return {
    ...nodeFs,
    open: async (path, flags, mode) => {
      if (flags === 'wx') {
        throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), {
          code: 'EACCES',
          syscall: 'open',
          path,
        });
      }
      return nodeFs.open(path, flags, mode);
    },
  };
}

describe('failure messages', () => {
  it('name the session log, not the temp file, and the error code once', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir, { fs: unwritable() });
    const error = await rejection(store.create(header('s1')));
    expect(error).toBeInstanceOf(StorageError);
    const message = (error as Error).message;
    expect(message).toBe(
      `create session in jsonl:${dir} failed: EACCES: permission denied, open '${join(dir, 's1.jsonl')}'`,
    );
    expect(message).not.toContain('.tmp');
    await store.close();
  });

  it('name the lock file, not its temp file, when the lock cannot be written', async () => {
    const dir = await tempDir();
    const store = await openJsonlStore(dir, { fs: unwritable() });
    const message = ((await rejection(store.lock('s1'))) as Error).message;
    expect(message).toContain(`open '${join(dir, 's1.lock')}'`);
    expect(message).not.toContain('.tmp');
    expect(message).not.toMatch(/EACCES: EACCES/);
    await store.close();
  });
});

describe('a dangling symbolic link', () => {
  it('where a log belongs is an unsafe file, not a session that already exists', async () => {
    const dir = await tempDir();
    await symlink(join(dir, 'nowhere'), join(dir, 's1.jsonl'));
    const store = await openJsonlStore(dir);
    const error = await rejection(store.create(header('s1')));
    expect(error).not.toBeInstanceOf(AlreadyExistsError);
    expect(error).toBeInstanceOf(UnsafeFileError);
    expect((error as UnsafeFileError).file).toBe(join(dir, 's1.jsonl'));
    expect((error as Error).message).toContain('a symbolic link that points to nothing');
    await store.close();
  });

  it('where a lock belongs is an unsafe file at once', async () => {
    const dir = await tempDir();
    await symlink(join(dir, 'nowhere'), join(dir, 's1.lock'));
    const store = await openJsonlStore(dir);
    const error = await rejection(store.lock('s1'));
    expect(error).toBeInstanceOf(UnsafeFileError);
    expect((error as UnsafeFileError).file).toBe(join(dir, 's1.lock'));
    await store.close();
  });
});
