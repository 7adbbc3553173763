/**
 * The governance commands as a user runs them: `verify --integrity` on a checkpointed session,
 * `redact` by pattern (printing neither the pattern nor what it erased), `checkpoint`, `anchor`
 * to a file, and a tampered log named by `verify --integrity --anchors`, with the exit codes of
 * docs/cli.md.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ed25519Signer, openStore } from '../../src/store/index.js';
import { MARKER, recordGovernedSession, withToolResultAltered } from '../store/governed-session.js';
import { cli, tempStores } from './helpers.js';

const stores = tempStores();
const store = stores.urls.jsonl;
const keys = generateKeyPairSync('ed25519');
const publicPem = join(stores.dir, 'audit.pub.pem');
const privatePem = join(stores.dir, 'audit.pem');

beforeAll(async () => {
  writeFileSync(publicPem, keys.publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(privatePem, keys.privateKey.export({ type: 'pkcs8', format: 'pem' }), {
    mode: 0o600,
  });
  const opened = await openStore(store);
  await recordGovernedSession(opened, 'support-7', { signer: ed25519Signer(keys.privateKey) });
  await recordGovernedSession(opened, 'support-8');
  await opened.close();
});
afterAll(() => stores.remove());

describe('palimpsest verify --integrity', () => {
  it('reports the chain intact, its signatures checked, and what no anchor covers', () => {
    const run = cli(['--store', store, 'verify', 'support-7', '--integrity', '--key', publicPem]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/support-7 +\d+ +ok +ok \(\d+\/\d+ covered\) +unknown/);
    const json = JSON.parse(
      cli(['--store', store, '--json', 'verify', 'support-7', '--integrity', '--key', publicPem])
        .stdout,
    );
    expect(json[0].integrity.signatures).toEqual({ verified: 3, unknownKey: 0 });
  });

  it('refuses --key or --anchors without --integrity (exit 2)', () => {
    const run = cli(['--store', store, 'verify', 'support-7', '--key', publicPem]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('add --integrity');
  });
});

describe('palimpsest redact', () => {
  it('erases every match, prints neither the pattern nor the content, and keeps the chain intact', () => {
    const run = cli([
      '--store',
      store,
      'redact',
      '--all',
      '--match',
      'ada\\.lovelace\\.\\d+@example\\.org',
      '--reason',
      'GDPR request 2026-31',
      '--sign',
      privatePem,
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/support-7: erased \d+ event\(s\) .*the redaction is #\d+/);
    expect(run.stdout).not.toContain('lovelace');
    const dir = store.slice('jsonl:'.length);
    for (const file of ['support-7.jsonl', 'support-8.jsonl']) {
      expect(readFileSync(join(dir, file), 'latin1')).not.toContain(MARKER);
    }
    const verify = cli([
      '--store',
      store,
      'verify',
      'support-7',
      'support-8',
      '--integrity',
      '--key',
      publicPem,
    ]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain('the redaction at #');
    const show = cli(['--store', store, 'show', 'support-7']);
    expect(show.stdout).toContain('Hi, I am [redacted]. What plan am I on?');
    expect(show.stdout).toMatch(
      /#\d+ redaction \(GDPR request 2026-31\): content of \d+ event\(s\) erased, shown as \[redacted\]/,
    );
  });

  it('exits 9 when nothing matches, writing nothing', () => {
    const before = readFileSync(join(store.slice('jsonl:'.length), 'support-8.jsonl'));
    const run = cli([
      '--store',
      store,
      'redact',
      'support-8',
      '--match',
      'nobody@nowhere',
      '--reason',
      'r',
    ]);
    expect(run.code).toBe(9);
    expect(run.stdout).toContain('nothing was written');
    expect(readFileSync(join(store.slice('jsonl:'.length), 'support-8.jsonl'))).toEqual(before);
  });

  it.each([
    [['support-8', '--match', 'x'], 'say why with --reason'],
    [
      ['support-8', '--match', 'x', '--seq', '1', '--reason', 'r'],
      'exactly one of --seq, --match or --subject',
    ],
    [['support-8', '--match', 'ada(', '--reason', 'r'], 'does not parse'],
    [['support-8', '--seq', 'five', '--reason', 'r'], '--seq expects seqs like 5,7,12'],
    [['--all', '--seq', '1', '--reason', 'r'], 'name it instead of --all'],
  ])('refuses %j with a usage error (exit 2)', (args, message) => {
    const run = cli(['--store', store, 'redact', ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toContain('ada(');
  });
});

describe('palimpsest checkpoint and anchor', () => {
  it('appends a checkpoint once, exits 9 the second time, and anchors catch a later tampering', async () => {
    const recorder = await openStore(store);
    await recordGovernedSession(recorder, 'support-9', { checkpoints: false });
    await recorder.close();
    const first = cli(['--store', store, 'checkpoint', 'support-9']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/support-9: checkpoint #\d+ over \d+ events, head sha256:/);
    expect(cli(['--store', store, 'checkpoint', 'support-9']).code).toBe(9);

    const anchors = join(stores.dir, 'anchors.jsonl');
    const anchored = cli(['--store', store, 'anchor', 'support-9', '--to', anchors]);
    expect(anchored.code).toBe(0);
    expect(JSON.parse(readFileSync(anchors, 'utf8').trim())).toMatchObject({
      session: 'support-9',
    });

    // One with write access rewrites a tool result and every checkpoint after it.
    const opened = await openStore(store);
    const { events } = await opened.load('support-9');
    const { events: altered, seq } = withToolResultAltered(events);
    const target = { seq };
    const lock = await opened.lock('support-9');
    await opened.replaceLog('support-9', altered, { expectedLength: events.length }, lock);
    await lock.release();
    await opened.close();

    const verify = cli([
      '--store',
      store,
      'verify',
      'support-9',
      '--integrity',
      '--anchors',
      anchors,
    ]);
    expect(verify.code).toBe(7);
    expect(verify.stdout).toContain(`#${target.seq} INTEGRITY_ALTERED`);
  });
});
