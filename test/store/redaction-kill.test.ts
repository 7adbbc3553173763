/**
 * A redaction killed midway (SIGKILL at each point of the JSONL store's log replacement) leaves
 * the log as it was or as redacted, never torn; the next redaction takes the dead writer's lock
 * and finishes, and then no byte of the erased text remains in any file of the directory, the
 * temp files a killed replacement left included.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, redact, verifyIntegrity } from '../../src/store/index.js';
import { MARKER, MARKER_PATTERN, recordGovernedSession } from './governed-session.js';

const root = mkdtempSync(join(tmpdir(), 'palimpsest-redaction-kill-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const fixture = join(import.meta.dirname, 'fixtures', 'redactor.ts');

describe('a redaction killed midway', () => {
  it.each([
    ['replace:after-temp-write', 'as it was'],
    ['replace:after-temp-fsync', 'as it was'],
    ['replace:after-rename', 'redacted'],
  ])(
    'at %s leaves the log %s, and the next redaction erases every byte',
    async (failpoint, left) => {
      const dir = mkdtempSync(join(root, 'store-'));
      const store = await openStore(`jsonl:${dir}`);
      await recordGovernedSession(store, 'customer');
      const before = (await store.load('customer')).events.length;
      await store.close();

      const child = spawnSync(
        process.execPath,
        ['--import', 'tsx', fixture, dir, 'customer', failpoint],
        {
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(child.signal).toBe('SIGKILL');
      expect(child.stdout).not.toContain('REDACTED');

      const reopened = await openStore(`jsonl:${dir}`);
      const { header, events } = await reopened.load('customer');
      const redacted = events.some((event) => event.type === 'log/redaction');
      expect(redacted ? 'redacted' : 'as it was').toBe(left);
      expect(events.length).toBe(redacted ? before + 2 : before);
      expect(verifyIntegrity(header, events).broken).toBeUndefined();

      await redact(reopened, 'customer', { match: MARKER_PATTERN }, { reason: 'finish' });
      await reopened.close();
      for (const name of readdirSync(dir)) {
        expect(readFileSync(join(dir, name), 'latin1'), name).not.toContain(MARKER);
      }
      expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    },
  );
});
