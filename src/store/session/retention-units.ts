/**
 * The units a retention policy is written in: ages (`90d`, `12h`, `30m`, `2w`) and byte sizes
 * (`10GiB`, `500MB`, `4096`), parsed strictly so that a typo is an error, never a policy that
 * keeps or removes more than was meant.
 */
import { InvalidArgumentError } from '../../core/index.js';

const DURATION_UNITS: Readonly<Record<string, number>> = {
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/**
 * Milliseconds in a duration written as a whole number and one unit: `m` (minutes), `h`, `d`
 * or `w` (weeks).
 *
 * @throws InvalidArgumentError naming what was expected and what was found.
 * @example
 * ```ts
 * import { parseDuration } from 'palimpsest/store';
 *
 * console.log(parseDuration('90d')); // 7776000000
 * console.log(parseDuration('12h')); // 43200000
 * ```
 */
export function parseDuration(text: string): number {
  const match = /^(\d+)([mhdw])$/.exec(text.trim());
  const value =
    match === null ? Number.NaN : Number(match[1]) * (DURATION_UNITS[match[2] ?? ''] ?? 0);
  if (!Number.isSafeInteger(value)) {
    throw new InvalidArgumentError(
      `expected a duration as a whole number and a unit (m, h, d or w, as in 90d, 12h, 30m, 2w), found '${text.slice(0, 40)}'`,
    );
  }
  return value;
}

/**
 * Bytes in a size written as a whole number with an optional unit: none or `B` (bytes), `KB`,
 * `MB`, `GB`, `TB` (powers of 1000) or `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024); case is
 * ignored.
 *
 * @throws InvalidArgumentError naming what was expected and what was found.
 * @example
 * ```ts
 * import { parseByteSize } from 'palimpsest/store';
 *
 * console.log(parseByteSize('10GiB')); // 10737418240
 * console.log(parseByteSize('500MB')); // 500000000
 * ```
 */
export function parseByteSize(text: string): number {
  const match = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const factor = match === null ? undefined : SIZE_UNITS[(match[2] ?? '').toLowerCase()];
  const value = match === null || factor === undefined ? Number.NaN : Number(match[1]) * factor;
  if (!Number.isSafeInteger(value)) {
    throw new InvalidArgumentError(
      `expected a size as a whole number of bytes with an optional unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, as in 10GiB or 500MB), found '${text.slice(0, 40)}'`,
    );
  }
  return value;
}
