/** The versions a run measured: palimpsest, its drivers, and the peers as installed in bench/. */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const PACKAGES: readonly [string, string][] = [
  ['palimpsest', join(BENCH, '..', 'package.json')],
  ['better-sqlite3', join(BENCH, '..', 'node_modules', 'better-sqlite3', 'package.json')],
  ['pg', join(BENCH, '..', 'node_modules', 'pg', 'package.json')],
  ...[
    '@mariozechner/pi-coding-agent',
    '@langchain/langgraph',
    '@langchain/langgraph-checkpoint-sqlite',
    '@langchain/core',
    '@openai/agents-core',
  ].map((name): [string, string] => [name, join(BENCH, 'node_modules', name, 'package.json')]),
];

export function VERSIONS(): Record<string, string> {
  const out: Record<string, string> = { node: process.version };
  for (const [name, file] of PACKAGES) {
    try {
      out[name] = (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    } catch {
      out[name] = 'not installed';
    }
  }
  return out;
}
