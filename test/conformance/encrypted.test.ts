/**
 * The contract suite against encrypted stores: every event's data sealed before the wrapped
 * store (memory, then JSONL on a real directory) sees it, opened on the way out. A "restart" is
 * a new wrapper, with the same master key and vault, over the same data.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionHeader } from '../../src/core/index.js';
import {
  EncryptedStore,
  FileKeyVault,
  type KeyProvider,
  MemoryKeyVault,
  MemoryStore,
  masterKeyProvider,
} from '../../src/store/index.js';
import { openJsonlStore } from '../../src/store/jsonl/index.js';
import { runStoreContract } from './contract.js';

function storedHeader(keys: KeyProvider) {
  return (given: SessionHeader): SessionHeader => ({
    ...given,
    encryption: { scheme: 'aes-256-gcm/1', keyProvider: keys.id },
  });
}

runStoreContract('encrypted (over memory)', async () => {
  const keys = masterKeyProvider(randomBytes(32));
  const vault = new MemoryKeyVault();
  const inner = new MemoryStore();
  return {
    store: new EncryptedStore(inner, { keys, vault }),
    reopen: async () => new EncryptedStore(new MemoryStore({ sharedWith: inner }), { keys, vault }),
    cleanup: async () => {},
    storedHeader: storedHeader(keys),
    stubBytesAsStored: true,
  };
});

runStoreContract('encrypted (over JSONL, keys in a file vault)', async () => {
  const root = mkdtempSync(join(tmpdir(), 'palimpsest-conformance-encrypted-'));
  const keys = masterKeyProvider(randomBytes(32));
  const open = async () =>
    new EncryptedStore(await openJsonlStore(join(root, 'sessions')), {
      keys,
      vault: new FileKeyVault(join(root, 'keys')),
    });
  return {
    store: await open(),
    reopen: open,
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
    storedHeader: storedHeader(keys),
    stubBytesAsStored: true,
  };
});
