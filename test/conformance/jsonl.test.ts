/** The contract suite against the JSONL backend, on a real temporary directory. */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openJsonlStore } from '../../src/store/jsonl/index.js';
import { runStoreContract } from './contract.js';

runStoreContract('jsonl', async () => {
  const root = mkdtempSync(join(tmpdir(), 'palimpsest-conformance-jsonl-'));
  const dir = join(root, 'sessions');
  return {
    store: await openJsonlStore(dir),
    reopen: () => openJsonlStore(dir),
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
    plantVersion: async (id, version) => {
      const file = join(dir, `${id}.jsonl`);
      writeFileSync(
        file,
        readFileSync(file, 'utf8').replace('{"version":1,', `{"version":${version},`),
      );
    },
    plantDamagedHeader: async (id) => {
      const file = join(dir, `${id}.jsonl`);
      writeFileSync(file, readFileSync(file, 'utf8').replace('"id":', '"iX":'));
    },
    plantDamagedEvent: async (id, seq) => {
      // Another last digit of the event's time: still JSON, not what the batch's checksum covered.
      const file = join(dir, `${id}.jsonl`);
      const text = readFileSync(file, 'utf8');
      const line = new RegExp(`^\\{"seq":${seq},"time":\\d+`, 'm');
      const damaged = text.replace(
        line,
        (found) => found.slice(0, -1) + (found.endsWith('0') ? '1' : '0'),
      );
      if (damaged === text) throw new Error(`no line of seq ${seq} to damage`);
      writeFileSync(file, damaged);
    },
    fingerprint: async (id) =>
      createHash('sha256')
        .update(readFileSync(join(dir, `${id}.jsonl`)))
        .digest('hex'),
  };
});
