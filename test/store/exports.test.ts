/**
 * The runtime surface of the store entry points: what a user needs and nothing a test alone
 * uses (framing internals, failpoint lists, fs implementations stay in their modules).
 */
import { describe, expect, it } from 'vitest';

describe('store entry points', () => {
  it('palimpsest/jsonl exports the store, its opener and the line-limit default', async () => {
    const jsonl = await import('../../src/store/jsonl/index.js');
    expect(Object.keys(jsonl).sort()).toEqual([
      'DEFAULT_MAX_LINE_BYTES',
      'JsonlStore',
      'openJsonlStore',
    ]);
  });

  it('palimpsest/sqlite exports the store, its opener and the schema identity', async () => {
    const sqlite = await import('../../src/store/sqlite/index.js');
    expect(Object.keys(sqlite).sort()).toEqual([
      'APPLICATION_ID',
      'SCHEMA_VERSION',
      'SqliteStore',
      'openSqliteStore',
    ]);
  });

  it('palimpsest/store exports none of the rules its backends share', async () => {
    const store = await import('../../src/store/index.js');
    for (const internal of ['checkBatch', 'decodeStoredHeader', 'coalesce', 'asStorageError']) {
      expect(Object.keys(store)).not.toContain(internal);
    }
  });
});
