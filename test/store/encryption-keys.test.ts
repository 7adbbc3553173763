/**
 * The keys of encrypted stores: master keys as users give them, key providers, the file vault,
 * and sealed payloads that were tampered with.
 */
import { createSecretKey, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../src/core/index.js';
import { openEvent, sealEvent } from '../../src/store/encryption/seal.js';
import {
  AlreadyExistsError,
  callbackKeyProvider,
  EncryptionError,
  FileKeyVault,
  masterKeyFromEnv,
  masterKeyFromFile,
  masterKeyProvider,
  parseMasterKey,
  StorageError,
} from '../../src/store/index.js';

function codeOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return EncryptionError.isInstance(error) ? error.code : error;
  }
  return undefined;
}

describe('a master key given as text', () => {
  const key = randomBytes(32);

  it('reads as 64 hex digits, base64 or base64url, with a trailing newline', () => {
    expect(parseMasterKey(key.toString('hex'))).toEqual(key);
    expect(parseMasterKey(`${key.toString('base64')}\n`)).toEqual(key);
    expect(parseMasterKey(key.toString('base64url'))).toEqual(key);
  });

  it('is refused when it is not 32 bytes, and the refusal never repeats it', () => {
    const short = randomBytes(16).toString('hex');
    let message = '';
    try {
      parseMasterKey(short);
    } catch (error) {
      expect(EncryptionError.isInstance(error) && error.code).toBe('BAD_KEY');
      message = (error as Error).message;
    }
    expect(message).toContain('found 32 characters');
    expect(message).not.toContain(short);
    expect(codeOf(() => masterKeyProvider(randomBytes(31)))).toBe('BAD_KEY');
  });

  it('comes from an environment variable, and an unset one is named', () => {
    process.env.PALIMPSEST_TEST_KEY = key.toString('hex');
    try {
      const fromEnv = masterKeyFromEnv('PALIMPSEST_TEST_KEY');
      expect(fromEnv.id).toBe(masterKeyProvider(key).id);
    } finally {
      delete process.env.PALIMPSEST_TEST_KEY;
    }
    expect(() => masterKeyFromEnv('PALIMPSEST_TEST_KEY')).toThrow(/PALIMPSEST_TEST_KEY.*unset/);
  });

  it('comes from a file, as raw bytes or as text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'palimpsest-key-'));
    writeFileSync(join(dir, 'raw'), key);
    writeFileSync(join(dir, 'text'), `${key.toString('hex')}\n`);
    const id = masterKeyProvider(key).id;
    expect((await masterKeyFromFile(join(dir, 'raw'))).id).toBe(id);
    expect((await masterKeyFromFile(join(dir, 'text'))).id).toBe(id);
    expect(id).not.toContain(key.toString('hex').slice(0, 8));
  });
});

describe('a key provider', () => {
  it('unwraps a data key only for the session it was wrapped for', async () => {
    const keys = masterKeyProvider(randomBytes(32));
    const dataKey = randomBytes(32);
    const wrapped = await keys.wrapKey(dataKey, { session: 'a' });
    expect(Buffer.from(await keys.unwrapKey(wrapped, { session: 'a' }))).toEqual(dataKey);
    await expect(keys.unwrapKey(wrapped, { session: 'b' })).rejects.toThrow();
  });

  it('built from callbacks checks what the KMS gives back', async () => {
    const kms = callbackKeyProvider({
      id: 'kms:test',
      wrap: async () => 'handle',
      unwrap: async () => new Uint8Array(16),
    });
    const error = await kms.unwrapKey('handle', { session: 's' }).catch((e: unknown) => e);
    expect(EncryptionError.isInstance(error) && error.code).toBe('BAD_KEY');
  });
});

describe('a file key vault', () => {
  it('keeps each key once, in a file only its owner reads, and shreds it to a tombstone', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'palimpsest-vault-')), 'keys');
    const vault = new FileKeyVault(dir);
    const entry = { provider: 'master:x', wrapped: 'WRAPPED-KEY-BYTES', createdAt: 5 };
    await vault.put('s/1', entry);
    expect(await vault.get('s/1')).toEqual({ state: 'key', entry });
    expect(await vault.put('s/1', entry).catch((e: unknown) => e)).toBeInstanceOf(
      AlreadyExistsError,
    );
    const [file] = readdirSync(dir);
    expect(statSync(join(dir, file as string)).mode & 0o777).toBe(0o600);

    expect(await vault.shred('s/1', 7)).toBe(true);
    expect(await vault.get('s/1')).toEqual({ state: 'shredded', at: 7 });
    const left = readdirSync(dir).map((name) => readFileSync(join(dir, name), 'utf8'));
    expect(left.join('')).not.toContain('WRAPPED-KEY-BYTES');
    expect(await vault.shred('s/1', 8)).toBe(false);
    // A new session of the same id gets a key of its own.
    await vault.put('s/1', { ...entry, createdAt: 9 });
    expect((await vault.get('s/1')).state).toBe('key');
    expect(await vault.get('never')).toEqual({ state: 'none' });
  });

  it("gives a session's key to exactly one of two writers storing it at once", async () => {
    const vault = new FileKeyVault(join(mkdtempSync(join(tmpdir(), 'palimpsest-vault-')), 'k'));
    const attempts = await Promise.allSettled(
      ['first', 'second', 'third'].map((wrapped) =>
        vault.put('s', { provider: 'p', wrapped, createdAt: 1 }),
      ),
    );
    const won = attempts.filter((attempt) => attempt.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const attempt of attempts) {
      if (attempt.status === 'rejected') expect(attempt.reason).toBeInstanceOf(AlreadyExistsError);
    }
    const kept = await vault.get('s');
    expect(kept.state).toBe('key');
  });

  it('reports a damaged key file as a storage error, not as a missing key', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'palimpsest-vault-')), 'keys');
    const vault = new FileKeyVault(dir);
    await vault.put('s', { provider: 'p', wrapped: 'w', createdAt: 1 });
    const [file] = readdirSync(dir);
    writeFileSync(join(dir, file as string), '{"half":');
    expect(await vault.get('s').catch((e: unknown) => e)).toBeInstanceOf(StorageError);
  });
});

describe('a sealed payload', () => {
  const key = createSecretKey(randomBytes(32));
  const event: SessionEvent = {
    seq: 4,
    time: 10,
    type: 'user/message',
    data: {
      id: 'u',
      role: 'user',
      content: [{ type: 'text', text: 'héllo 世界' }],
      source: { kind: 'user' },
    },
    surfaceOp: 'append',
  };

  it('opens to the data it sealed', () => {
    const sealed = sealEvent(event, 's', key);
    expect(openEvent(sealed, 's', key)).toEqual(event);
  });

  it('does not open when altered, its digest changed, moved to another seq, or sealed for another session', () => {
    const sealed = sealEvent(event, 's', key);
    const inner = (sealed.data as unknown as { '~sealed': { data: string } })['~sealed'];
    const flipped = `${inner.data.slice(0, 5)}${inner.data[5] === 'A' ? 'B' : 'A'}${inner.data.slice(6)}`;
    const altered = {
      ...sealed,
      data: { '~sealed': { ...inner, data: flipped } },
    } as SessionEvent;
    expect(codeOf(() => openEvent(altered, 's', key))).toBe('SEAL_BROKEN');
    const otherDigest = {
      ...sealed,
      data: { '~sealed': { ...inner, digest: `sha256:${'A'.repeat(43)}` } },
    } as SessionEvent;
    expect(codeOf(() => openEvent(otherDigest, 's', key))).toBe('SEAL_BROKEN');
    expect(codeOf(() => openEvent({ ...sealed, seq: 5 }, 's', key))).toBe('SEAL_BROKEN');
    expect(codeOf(() => openEvent(sealed, 'other', key))).toBe('SEAL_BROKEN');
  });
});
