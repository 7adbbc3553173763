/**
 * A real trace backend for the export tests: Fiberplane Studio (installed by .ci/run into
 * test/adapters/otel/backend/), started on a loopback port with a throwaway SQLite database.
 * It receives OTLP/HTTP JSON on /v1/traces and serves what it stored on
 * /v1/traces/:traceId/spans; its database is read too, to see every span it kept.
 *
 * Two quirks of this backend shape the tests: its API and UI serve only spans whose
 * instrumentation scope is `fpx-tracer` (the scope its own SDK writes), so exports name that
 * scope; and it refuses array attribute values, so a redaction hook sends arrays as JSON text.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OtelAttributes } from '../../../src/adapters/otel/index.js';
import { freePort } from '../../postgres/server.js';

/** The part of better-sqlite3 read here (the package ships no types of its own). */
type ReadOnlyDatabase = new (
  path: string,
  options: { readonly: boolean; fileMustExist: boolean },
) => { prepare(sql: string): { all(): unknown[] }; close(): void };
const Database = createRequire(import.meta.url)('better-sqlite3') as ReadOnlyDatabase;

const studio = join(import.meta.dirname, 'backend/node_modules/@fiberplane/studio/dist');

/** A span as the backend returns it. */
export interface StoredSpan {
  readonly trace_id: string;
  readonly span_id: string;
  readonly parent_span_id: string | null;
  readonly name: string;
  readonly kind: string;
  readonly scope_name: string | null;
  readonly start_time: string;
  readonly end_time: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly status: { readonly code: number; readonly message?: string | null };
  readonly links: ReadonlyArray<{ readonly trace_id: string; readonly span_id: string }>;
  readonly resource_attributes: Readonly<Record<string, unknown>>;
}

export interface TraceBackend {
  /** The OTLP/HTTP endpoint (base URL; `/v1/traces` is added by the exporter). */
  readonly endpoint: string;
  /** The backend's own UI. */
  readonly ui: string;
  /** Every span of a trace, through the backend's REST API. */
  spansOf(traceId: string): Promise<StoredSpan[]>;
  /** Every span the backend stored, whatever its scope, as the JSON it keeps. */
  storedText(): string;
  close(): Promise<void>;
}

/** Whether the backend is installed (`npm --prefix test/adapters/otel/backend ci`). */
export function backendInstalled(): boolean {
  return existsSync(join(studio, 'src/index.node.js'));
}

/** The scope name this backend serves. */
export const BACKEND_SCOPE = 'fpx-tracer';

/** Arrays as JSON text: this backend stores scalar attribute values only. */
export function scalarAttributes(attributes: OtelAttributes): OtelAttributes {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) {
    out[key] = Array.isArray(value) ? JSON.stringify(value) : (value as string | number | boolean);
  }
  return out;
}

export async function startTraceBackend(): Promise<TraceBackend> {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-otel-backend-'));
  const port = await freePort();
  const env = {
    ...process.env,
    FPX_PORT: String(port),
    FPX_DATABASE_URL: `file:${join(dir, 'fpx.db')}`,
    // What it watches for source files and probes for routes: an empty folder, a closed port.
    FPX_WATCH_DIR: dir,
    FPX_SERVICE_TARGET: 'http://127.0.0.1:9',
  };
  const migrated = spawnSync(process.execPath, [join(studio, 'migrate.js')], { cwd: dir, env });
  if (migrated.status !== 0) throw new Error(`the backend's migration failed: ${migrated.stderr}`);
  const child: ChildProcess = spawn(
    process.execPath,
    // Its login helper listens on a fixed port and leaves its failure unhandled: where that port
    // is taken, a warning, not the end of the backend.
    ['--unhandled-rejections=warn', join(studio, 'src/index.node.js')],
    {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => (await fetch(`${base}/v1/traces`)).ok,
    () => output,
  );
  return {
    endpoint: base,
    ui: base,
    async spansOf(traceId) {
      const response = await fetch(`${base}/v1/traces/${traceId}/spans`);
      if (!response.ok) throw new Error(`the backend answered ${response.status} for ${traceId}`);
      return (await response.json()) as StoredSpan[];
    },
    storedText() {
      const db = new Database(join(dir, 'fpx.db'), { readonly: true, fileMustExist: true });
      try {
        const rows = db.prepare('SELECT inner FROM otel_spans').all() as Array<{ inner: string }>;
        return rows.map((row) => row.inner).join('\n');
      } finally {
        db.close();
      }
    },
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitFor(ready: () => Promise<boolean>, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      if (await ready()) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the trace backend did not start within 20 s:\n${log().slice(-2000)}`);
}
