/**
 * Shared fixtures of the JSONL backend tests: real temp directories, simple events, and an fs
 * facade wrapper that can inject faults.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import {
  SESSION_FORMAT_VERSION,
  type SessionEvent,
  type SessionHeader,
} from '../../../src/core/index.js';
import { DEFAULT_MAX_LINE_BYTES } from '../../../src/store/jsonl/format.js';
import { nodeFs } from '../../../src/store/jsonl/fs.js';
import { encodeHeaderLine } from '../../../src/store/jsonl/header.js';
import type { FsFacade, FsFileHandle } from '../../../src/store/jsonl/index.js';
import { rawEvent } from '../../core/builders.js';

const created: string[] = [];

afterEach(async () => {
  for (const dir of created.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A fresh temp directory, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'palimpsest-jsonl-'));
  created.push(dir);
  return dir;
}

export function header(id: string, createdAt = 1_700_000_000_000): SessionHeader {
  return { version: SESSION_FORMAT_VERSION, id, createdAt };
}

/** A log-only event; the store does not validate semantics beyond seq. */
/** A header line and the commit marker that seals it, as `create` writes them. */
export function headerText(value: SessionHeader): string {
  return encodeHeaderLine(value, DEFAULT_MAX_LINE_BYTES).toString('utf8');
}

export function note(seq: number, text = `note ${seq}`): SessionEvent {
  return rawEvent({ seq, time: 1_700_000_000_000 + seq, type: 'test/note', data: { text } });
}

/** An `assistant/message` of turn 1 that cites `cites` (finishing the chunks among them). */
export function assistantMessage(seq: number, cites: readonly number[], step = 1): SessionEvent {
  return {
    seq,
    time: 1_700_000_000_000 + seq,
    type: 'assistant/message',
    data: {
      turn: 1,
      step,
      finishReason: 'stop',
      message: {
        id: `a${seq}`,
        role: 'assistant',
        content: [{ type: 'text', text: 'hi' }],
        source: { kind: 'model', provider: 'p', model: 'm' },
      },
    },
    surfaceOp: 'append',
    sourceEventSeqs: cites,
  };
}

export function notes(from: number, count: number, text?: (seq: number) => string): SessionEvent[] {
  return Array.from({ length: count }, (_, i) => note(from + i, text?.(from + i)));
}

/** Per-call hooks into a facade: return to pass through, throw to fail the call. */
export interface FaultHooks {
  datasync?: (path: string) => void | Promise<void>;
  write?: (path: string, length: number) => number | undefined;
  truncate?: (path: string) => void | Promise<void>;
  read?: (path: string, length: number, position: number) => void;
  open?: (path: string, flags: string) => void;
}

/** The real fs with hooks in front of some calls. */
export function faultyFs(hooks: FaultHooks): FsFacade {
  const wrap = (path: string, handle: FsFileHandle): FsFileHandle => ({
    read: (buffer, offset, length, position) => {
      hooks.read?.(path, length, position);
      return handle.read(buffer, offset, length, position);
    },
    write: (buffer, offset, length, position) => {
      const allowed = hooks.write?.(path, length);
      return handle.write(buffer, offset, Math.min(allowed ?? length, length), position);
    },
    stat: () => handle.stat(),
    truncate: async (length) => {
      await hooks.truncate?.(path);
      return handle.truncate(length);
    },
    datasync: async () => {
      await hooks.datasync?.(path);
      return handle.datasync();
    },
    sync: () => handle.sync(),
    chmod: (mode) => handle.chmod(mode),
    ...(handle.touch === undefined
      ? {}
      : { touch: (time: number) => (handle.touch as (time: number) => Promise<void>)(time) }),
    close: () => handle.close(),
  });
  return {
    ...nodeFs,
    open: async (path, flags, mode) => {
      hooks.open?.(path, flags);
      return wrap(path, await nodeFs.open(path, flags, mode));
    },
  };
}

/** An errno-style error. */
export function errno(code: string, message = code): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}

/** Awaits a promise expected to reject, and returns the rejection. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
