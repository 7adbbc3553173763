/**
 * CRC-32 (IEEE 802.3, the polynomial of zip, PNG and zlib: reflected 0xEDB88320, initial and
 * final XOR 0xFFFFFFFF). Uses zlib's native `crc32` where Node has it (20.15+, 22.2+), else
 * slicing-by-8 tables in JavaScript (about 7x slower).
 */
import * as zlib from 'node:zlib';

const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array | string, value?: number) => number })
  .crc32;

const TABLES = buildTables();

function buildTables(): Uint32Array[] {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256));
  const first = tables[0] as Uint32Array;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    first[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = first[n] as number;
    for (let t = 1; t < 8; t++) {
      c = (first[c & 0xff] as number) ^ (c >>> 8);
      (tables[t] as Uint32Array)[n] = c >>> 0;
    }
  }
  return tables;
}

/**
 * Continues a CRC-32 over `bytes`. Start with `crc32(bytes)` (or `crc32(bytes, 0)`) and feed the
 * result back to checksum data that arrives in pieces.
 */
export function crc32(bytes: Uint8Array, previous = 0): number {
  if (nativeCrc32 !== undefined) return nativeCrc32(bytes, previous);
  return crc32Js(bytes, previous);
}

/**
 * Continues a CRC-32 over the UTF-8 encoding of `text` (zlib encodes a string natively, without
 * a Buffer per call). The text must be well-formed: a lone surrogate has no UTF-8 form.
 */
export function crc32Text(text: string, previous = 0): number {
  if (nativeCrc32 !== undefined) return nativeCrc32(text, previous);
  return crc32Js(Buffer.from(text, 'utf8'), previous);
}

/** The table-driven fallback (exported for tests that compare it with the native one). */
export function crc32Js(bytes: Uint8Array, previous = 0): number {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES as [
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
  ];
  let crc = ~previous >>> 0;
  let i = 0;
  const length = bytes.length;
  const aligned = length - (length % 8);
  while (i < aligned) {
    const a =
      ((bytes[i] as number) |
        ((bytes[i + 1] as number) << 8) |
        ((bytes[i + 2] as number) << 16) |
        ((bytes[i + 3] as number) << 24)) ^
      crc;
    const b =
      (bytes[i + 4] as number) |
      ((bytes[i + 5] as number) << 8) |
      ((bytes[i + 6] as number) << 16) |
      ((bytes[i + 7] as number) << 24);
    crc =
      (t7[a & 0xff] as number) ^
      (t6[(a >>> 8) & 0xff] as number) ^
      (t5[(a >>> 16) & 0xff] as number) ^
      (t4[a >>> 24] as number) ^
      (t3[b & 0xff] as number) ^
      (t2[(b >>> 8) & 0xff] as number) ^
      (t1[(b >>> 16) & 0xff] as number) ^
      (t0[b >>> 24] as number);
    i += 8;
  }
  while (i < length) crc = (t0[(crc ^ (bytes[i++] as number)) & 0xff] as number) ^ (crc >>> 8);
  return ~crc >>> 0;
}
