/** Bytes a directory holds on disk, counted as file sizes. */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += directoryBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}
