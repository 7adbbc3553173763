/**
 * The viewer benchmark's sessions and rig (shared by `bench/viewer.ts` and
 * `bench/viewer-profile.ts`): turns of a tool round trip and a streamed answer, recorded to a
 * JSONL store that the viewer server serves to Debian's chromium.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { Session } from '../src/core/index.js';
import { openStore, type SessionStore } from '../src/store/index.js';
import { startViewerServer } from '../src/viewer/index.js';
import { recordToolTurn } from '../test/core/builders.js';

/**
 * A session of about `events` events: turns of a tool round trip and a streamed answer (the
 * core tests' turn, 14 events of which 4 are messages and 2 stream chunks: a heavier model view
 * than a real session, whose chunks outnumber its messages far more).
 */
export function workload(id: string, events: number): Session {
  const session = Session.create({ id, clock: () => 1_700_000_000_000 });
  for (let turn = 1; session.seq < events; turn++) {
    recordToolTurn(session, turn, `Question ${turn}: what does file ${turn}.ts do?`);
  }
  return session;
}

/** Writes `session` to `store` in batches of 5,000 events. */
async function record(store: SessionStore, session: Session): Promise<void> {
  await store.create(session.header);
  const events = session.events;
  for (let from = 0; from < events.length; from += 5_000) {
    await store.append(session.id, events.slice(from, from + 5_000), { expectedSeq: from });
  }
}

/** What {@link withViewer} hands its callback. */
export interface ViewerRig {
  /** The viewer's URL, token included. */
  readonly url: string;
  readonly browser: Browser;
  /** A writable store over the same directory, for live appends. */
  readonly writer: SessionStore;
}

/**
 * Records `sessions` to a JSONL store in a temporary directory, serves it read-only with the
 * viewer server, launches Debian's chromium, runs `use`, then closes and removes everything.
 * `jsFlags` go to the page's V8 (`--js-flags`), for experiments such as `--no-opt`.
 */
export async function withViewer<T>(
  sessions: readonly Session[],
  use: (rig: ViewerRig) => Promise<T>,
  jsFlags = '',
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'palimpsest-bench-viewer-'));
  const storeUrl = `jsonl:${join(dir, 'sessions')}`;
  const writer = await openStore(storeUrl);
  for (const session of sessions) await record(writer, session);
  const reader = await openStore(storeUrl, { readOnly: true });
  const server = await startViewerServer({ store: reader });
  const browser = await chromium.launch({
    executablePath: process.env.PALIMPSEST_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--enable-precise-memory-info',
      ...(jsFlags === '' ? [] : [`--js-flags=${jsFlags}`]),
    ],
  });
  try {
    return await use({ url: server.url, browser, writer });
  } finally {
    await browser.close();
    await server.close();
    await reader.close();
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A session of `calls` model calls for the trace: turns of a tool round trip and a streamed
 * answer (two calls and one tool execution a turn) under one request header, its events 40 ms
 * apart so the bars have lengths.
 */
export function callWorkload(id: string, calls: number): Session {
  let now = 1_700_000_000_000;
  const session = Session.create({
    id,
    clock: () => {
      now += 40;
      return now;
    },
  });
  session.append('request/header', { provider: 'anthropic.messages', model: 'claude-sonnet-4-5' });
  for (let turn = 1; turn * 2 <= calls; turn++) {
    recordToolTurn(session, turn, `Question ${turn}: what does file ${turn}.ts do?`);
  }
  return session;
}
