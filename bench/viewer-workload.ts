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
import type { MARKS } from '../src/viewer/protocol.js';
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

/** The first render of a load and where it went: the page's JSON.parse, core's seeding, the views. */
export interface LoadPhases {
  readonly renderMs: number;
  readonly phases: { readonly parse: number; readonly seed: number; readonly views: number };
}

/** The marks of the page's latest load, read in the page. */
export interface LoadMarks {
  readonly received: number;
  readonly parsed: number;
  readonly seeded: number;
  readonly rendered: number;
  /** How long each part parse of the load took that ended before the last part arrived. */
  readonly earlier: readonly number[];
}

/**
 * Runs in the page: the latest load's marks (a page that opened the session again has several).
 * No named functions inside: tsx would wrap them in a helper the page does not have.
 */
export function readMarks(marks: typeof MARKS): LoadMarks {
  const [started, received, parsed, seeded, rendered] = [
    marks.streamStarted,
    marks.received,
    marks.parsed,
    marks.seeded,
    marks.firstRender,
  ].map((name) => performance.getEntriesByName(name).at(-1)?.startTime ?? Number.NaN) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const earlier = performance
    .getEntriesByName(marks.partParsed)
    .filter((part) => part.startTime >= started && part.startTime + part.duration <= received)
    .map((part) => part.duration);
  return { received, parsed, seeded, rendered, earlier };
}

/**
 * The first render as the page's work on the snapshot, in the floor's terms: the parse of every
 * part (those done while later parts were still coming, then the last one), the seed and the
 * views, up to the first render's mark.
 */
export function loadMarks(marks: LoadMarks): LoadPhases {
  const earlier = marks.earlier.reduce((total, ms) => total + ms, 0);
  return {
    renderMs: earlier + marks.rendered - marks.received,
    phases: {
      parse: earlier + marks.parsed - marks.received,
      seed: marks.seeded - marks.parsed,
      views: marks.rendered - marks.seeded,
    },
  };
}
