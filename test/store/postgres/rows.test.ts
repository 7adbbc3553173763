/**
 * The decoding of the PostgreSQL store's rows merged with its chunk runs, as the driver gives
 * them: pure functions, no server.
 */
import { describe, expect, it } from 'vitest';
import { isElidedChunk, type SessionEvent } from '../../../src/core/index.js';
import { CorruptLogError } from '../../../src/store/index.js';
import {
  decodePage,
  decodeRows,
  type EventRow,
  type PgRunRow,
} from '../../../src/store/postgres/rows.js';
import { encodeRun, envelopeChecksum, runDigest } from '../../../src/store/sql/chunk-runs.js';
import { rowChecksum } from '../../../src/store/sql/row-checksums.js';
import { event } from '../../core/builders.js';

const site = { location: 'postgres://test', id: 's' };

function note(seq: number): SessionEvent {
  return { seq, time: 10 + seq, type: 'app/note', data: { seq } } as SessionEvent;
}

/** A row of `events` of session key 7 as the driver gives it (int8 as text). */
function row(event: SessionEvent): EventRow {
  const data = JSON.stringify(event.data);
  return {
    seq: String(event.seq),
    type: event.type,
    time: String(event.time),
    data,
    source_event_seqs: null,
    surface_op: null,
    crc: String(rowChecksum(7, event.seq, event.type, event.time, data, null, null)),
  };
}

/** A run row as the driver gives it, encoded for session key 7. */
function run(first: number, count: number): PgRunRow {
  const chunks = Array.from({ length: count }, (_, i) => ({
    seq: first + i,
    time: 10 + first + i,
    data: JSON.stringify({ delta: `c${first + i}` }),
  }));
  const encoded = encodeRun(7, chunks);
  return {
    ...encoded,
    first_seq: String(encoded.first_seq),
    time: String(encoded.time),
    times: Buffer.from(encoded.times),
    sizes: Buffer.from(encoded.sizes),
    data: Buffer.from(encoded.data),
    crc: String(encoded.crc),
    envelope_crc: String(envelopeChecksum(7, encoded, runDigest(encoded.data))),
  };
}

describe('merging rows and chunk runs', () => {
  it('gives every seq in order, stubs for the runs on a fast load', () => {
    const rows = [row(note(0)), row(note(3))];
    const full = decodeRows(site, '7', rows, [run(1, 2)], 4, {});
    expect(full.log.toEvents().map((event) => event.seq)).toEqual([0, 1, 2, 3]);
    expect(full.log.toEvents()[2]).toEqual(
      event(2, 'assistant/chunk', { delta: 'c2' }, { time: 12 }),
    );
    const fast = decodeRows(site, '7', rows, [run(1, 2)], 4, { elide: true });
    expect(fast.log.toEvents().map((event) => isElidedChunk(event))).toEqual([
      false,
      true,
      true,
      false,
    ]);
  });

  it('names the first missing seq', () => {
    const merge = () => decodeRows(site, '7', [row(note(0)), row(note(4))], [run(1, 2)], 5, {});
    expect(merge).toThrow(CorruptLogError);
    expect(merge).toThrow(/no event with seq 3/);
  });

  it('refuses a row beyond the recorded length, and a run of another session key', () => {
    expect(() => decodeRows(site, '7', [row(note(0)), row(note(1))], [], 1, {})).toThrow(
      /beyond its recorded length of 1/,
    );
    expect(() => decodeRows(site, '8', [row(note(0))], [run(1, 2)], 3, {})).toThrow(
      /does not match its checksum/,
    );
  });

  it('starts a watcher page inside a run', () => {
    const page = decodePage(site, '7', [row(note(3))], [run(1, 2)], 2, { length: 4, cut: false });
    expect(page.map((event) => event.seq)).toEqual([2, 3]);
  });
});
