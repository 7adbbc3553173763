/**
 * Session ids become one path segment inside the store directory, injectively.
 */
import { readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidSessionIdError } from '../../../src/store/contract/errors.js';
import { openJsonlStore } from '../../../src/store/jsonl/index.js';
import {
  contained,
  encodeSessionId,
  MAX_ENCODED_LENGTH,
  sessionPaths,
} from '../../../src/store/jsonl/paths.js';
import { header, note, tempDir } from './helpers.js';

const HOSTILE = [
  '../../x',
  '../../../../tmp/evil',
  '/etc/passwd',
  '..',
  '.',
  '...',
  'a/b',
  'a\\b',
  'C:\\Windows',
  'nul\u0000byte',
  '~0041',
  '~h00',
  '.hidden',
  'name.jsonl',
  'x.lock',
  ' ',
  'é',
  '\ud800',
  '日本語',
  '😀',
];

describe('encodeSessionId', () => {
  it('keeps ASCII letters, digits, underscore and hyphen as they are', () => {
    expect(encodeSessionId('Session_01-abc')).toBe('Session_01-abc');
  });

  it('escapes every other code unit as ~ and four hex digits', () => {
    expect(encodeSessionId('a.b')).toBe('a~002eb');
    expect(encodeSessionId('~')).toBe('~007e');
    expect(encodeSessionId('../x')).toBe('~002e~002e~002fx');
    expect(encodeSessionId('\u0000')).toBe('~0000');
    expect(encodeSessionId('😀')).toBe('~d83d~de00');
  });

  it('gives one path segment with no dot, separator or NUL for hostile ids', () => {
    for (const id of HOSTILE) {
      const name = encodeSessionId(id);
      expect(name).toMatch(/^[A-Za-z0-9_~-]+$/);
      expect(name.startsWith('.')).toBe(false);
    }
  });

  it('is injective on a sample of ids that differ only in escaped characters', () => {
    const ids = [
      ...HOSTILE,
      'a',
      'A',
      'a.',
      'a~',
      'a~002e',
      'a%2e',
      'a_',
      'a-',
      '~002e',
      'x'.repeat(199),
      'x'.repeat(200),
    ];
    for (let code = 0; code < 0x300; code++) ids.push(`k${String.fromCharCode(code)}`);
    const names = new Set(ids.map(encodeSessionId));
    expect(names.size).toBe(new Set(ids).size);
  });

  it('hashes an id whose encoding would be too long, into a bounded name', () => {
    const long = '/'.repeat(200);
    const name = encodeSessionId(long);
    expect(name).toMatch(/^~h[0-9a-f]{64}$/);
    expect(encodeSessionId(`${'/'.repeat(199)}.`)).not.toBe(name);
    expect(encodeSessionId('a'.repeat(MAX_ENCODED_LENGTH))).toBe('a'.repeat(MAX_ENCODED_LENGTH));
    expect(encodeSessionId(`${'a'.repeat(MAX_ENCODED_LENGTH - 1)}.`)).toMatch(/^~h/);
  });
});

describe('session paths', () => {
  it('places the log and the lock directly inside the directory for hostile ids', () => {
    const dir = resolve('/srv/sessions');
    for (const id of [...HOSTILE, '/'.repeat(200)]) {
      const paths = sessionPaths(dir, id);
      expect(dirname(paths.log)).toBe(dir);
      expect(dirname(paths.lock)).toBe(dir);
    }
  });

  it('refuses an entry that would leave the directory (defense in depth)', () => {
    expect(() => contained('/srv/sessions', '../x')).toThrow(InvalidSessionIdError);
    expect(() => contained('/srv/sessions', '/etc/passwd')).toThrow(InvalidSessionIdError);
    expect(() => contained('/srv/sessions', 'a/b')).toThrow(InvalidSessionIdError);
    expect(() => contained('/srv/sessions', '..')).toThrow(InvalidSessionIdError);
    expect(() => contained('/srv/sessions', '')).toThrow(InvalidSessionIdError);
  });

  it('never reads or writes outside the store directory for a traversal id', async () => {
    const root = await tempDir();
    const dir = join(root, 'a', 'b', 'sessions');
    const store = await openJsonlStore(dir, { fsync: false });
    for (const id of ['../../x', '../../../x', '/etc/passwd', '..', '.']) {
      await store.create(header(id));
      await store.append(id, [note(0)], { expectedSeq: 0 });
      const loaded = await store.load(id);
      expect(loaded.header.id).toBe(id);
      expect(loaded.events).toHaveLength(1);
    }
    await store.close();
    expect(await readdir(root)).toEqual(['a']);
    expect(await readdir(join(root, 'a'))).toEqual(['b']);
    expect(await readdir(join(root, 'a', 'b'))).toEqual(['sessions']);
    expect((await readdir(dir)).sort()).toEqual(
      [
        '~002e',
        '~002e~002e',
        '~002e~002e~002f~002e~002e~002fx',
        '~002e~002e~002f~002e~002e~002f~002e~002e~002fx',
        '~002fetc~002fpasswd',
      ]
        .map((name) => `${name}.jsonl`)
        .sort(),
    );
    expect((await stat(join(dir, '~002e~002e.jsonl'))).isFile()).toBe(true);
  });
});
