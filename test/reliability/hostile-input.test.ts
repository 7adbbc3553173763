/**
 * Hostile input (reliability plan T9), per backend and for every CLI command that reads a store:
 * sessions whose content carries terminal escapes (OSC 52 clipboard writes, OSC 8 links, CSI
 * cursor moves, a status report request, 8-bit C1, DCS/APC strings, bidi overrides), markup
 * (`<script>`, `javascript:` links, fences that break out), NUL, U+2028, `__proto__` keys and
 * SQL-looking text; ids that look like paths or SQL; ids every backend must refuse; and files
 * where a store expects its own (FIFOs, links to devices, links out of the store, directories).
 *
 * Each command must end within 6 s with a documented exit code, print no raw control, C1 or
 * bidi character and no live markup, and leave nothing outside the store. The store must give
 * every payload back unchanged and keep Object.prototype clean. An untyped failure (an exit code
 * outside docs/cli.md, or a stack trace) counts as untyped; a command still running after ${HANG_MS / 1000} s
 * as a hang.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PalimpsestError, Session } from '../../src/core/index.js';
import {
  InvalidSessionIdError,
  LoadedSession,
  openSession,
  type SessionStore,
} from '../../src/store/index.js';
import { encodeSessionId } from '../../src/store/jsonl/paths.js';
import { binary } from '../cli/helpers.js';
import { HOSTILE_IDS } from '../conformance/ids.js';
import { BACKENDS, type BackendUnderTest } from './lib/backends.js';
import { override } from './lib/mutants.js';
import {
  add,
  expectClean,
  fail,
  recordMutant,
  type Tally,
  tally,
  useScratch,
} from './lib/results.js';

const scratch = useScratch(tmpdir());

/** Terminal and markup payloads (after vercel/ai PR #20052 and the viewer/markdown bugs). */
const PAYLOADS: readonly string[] = [
  'clip \u001b]52;c;cm0gLXJmIH4=\u0007 board',
  'link \u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007',
  'clear \u001b[2J\u001b[H\u001b[6n moved',
  'c1 \u009b31m red \u009d0;title\u009c',
  'dcs \u001bP1$r\u001b\\ apc \u001b_x\u001b\\ unterminated \u001b]0;t',
  'bidi \u202egnp.exe\u202c \u2066iso\u2069',
  '<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))',
  '```\n# forged heading\n```',
  'nul \u0000 line\u2028separator',
  "'; DROP TABLE events; -- $1 ? %s",
];

/** Ids that look like paths or SQL: valid, and stored inside the store. */
const PATH_IDS: readonly string[] = [
  '..',
  '.',
  '../../outside',
  '/etc/passwd',
  'a/b\\c',
  'C:\\x',
  'CON',
  "x'; DROP TABLE sessions; --",
];

/** The commands run on each path-like id, by name and third word (every one on the payload). */
const PATH_ID_COMMANDS = new Set([
  'show --store',
  'log --json',
  'export --store',
  'repair --store',
]);

/** Raw characters no output may carry: C0 controls but \t \n \r, DEL, C1 and bidi controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for leaked control characters.
const RAW = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const DOCUMENTED_EXIT = new Set([0, 1, 2, 3, 4, 5, 6, 7]);

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly hung: boolean;
}

/** How long a command may run before it counts as a hang (a normal one takes well under 2 s). */
const HANG_MS = 6000;

function palimpsest(args: readonly string[], hangMs = HANG_MS): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [binary, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', PALIMPSEST_STORE: '' },
    });
    let stdout = '';
    let stderr = '';
    let hung = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, hangMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, hung });
    });
  });
}

/** Runs commands two at a time (two cores). */
async function runAll(commands: readonly (readonly string[])[]): Promise<Run[]> {
  const results: Run[] = new Array(commands.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < commands.length; i = next++)
      results[i] = await palimpsest(commands[i] as string[]);
  };
  await Promise.all([worker(), worker()]);
  return results;
}

/** The read commands (and those that read before they write) on one session. */
function commandsFor(id: string, last: number, url: string, scratch: string): string[][] {
  return [
    ['ls'],
    ['ls', '--json'],
    ['show', id],
    ['show', id, '--json'],
    ['show', id, '--full'],
    ['surface', id],
    ['log', id],
    ['log', id, '--json'],
    ['why', id, '1'],
    ['verify', id],
    ['verify', '--all'],
    ['export', id],
    ['export', id, '--format', 'json'],
    ['export', id, '--format', 'openai'],
    ['export', id, '--format', 'anthropic'],
    ['repair', id],
    ['prune', id],
    ['fork', id, '--at', String(last), '--id', `fork-${Math.random().toString(36).slice(2)}`],
    [
      'convert',
      id,
      '--to',
      `jsonl:${join(scratch, `converted-${Math.random().toString(36).slice(2)}`)}`,
    ],
  ].map((args) => [...args, '--store', url]);
}

/** Judges a run: a documented exit code, one short stderr, no raw control characters. */
function judge(t: Tally, args: readonly string[], run: Run, allowed: ReadonlySet<number>): void {
  const what = args.slice(0, 3).join(' ');
  t.runs++;
  add(t, `exit ${run.code}`);
  let problem: ['hangs' | 'untyped', string] | undefined;
  if (run.hung) problem = ['hangs', `${what}: still running after ${HANG_MS / 1000} s`];
  else if (run.code === null || !DOCUMENTED_EXIT.has(run.code) || /\n\s+at /.test(run.stderr))
    problem = ['untyped', `${what}: exit ${run.code}: ${run.stderr.slice(0, 300)}`];
  else if (!allowed.has(run.code))
    problem = [
      'untyped',
      `${what}: exit ${run.code} (expected ${[...allowed].join('/')}): ${run.stderr.slice(0, 300)}`,
    ];
  if (problem !== undefined) {
    fail(t, problem[0], problem[1]);
    return;
  }
  if (RAW.test(run.stdout) || RAW.test(run.stderr))
    fail(t, 'altered', `${what}: a raw control, C1 or bidi character reached the output`);
  // Markup inside a fenced code block (fences sized to their content) is inert text.
  const prose = run.stdout.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1[ \t]*$/gm, '');
  if (args[0] === 'export' && args.length <= 4 && /<script>|\]\(javascript:/i.test(prose))
    fail(t, 'altered', `${what}: live markup in the markdown export`);
}

/** A session carrying every payload in every place a command prints. */
function payloadSession(id: string): Session {
  const session = Session.create({ id });
  session.append('turn/start', { turn: 1 });
  session.append(
    'user/message',
    {
      id: 'u1',
      role: 'user',
      content: PAYLOADS.map((text) => ({ type: 'text', text })),
      source: { kind: 'user' },
    },
    { surfaceOp: 'append' },
  );
  session.append('step/start', { turn: 1, step: 1 });
  const chunk = session.append('assistant/chunk', {
    turn: 1,
    step: 1,
    chunk: { type: 'text-delta', id: 't', delta: PAYLOADS[0] as string },
  });
  const name = 'tool\u001b[31m<img src=x onerror=alert(1)>';
  session.append(
    'assistant/message',
    {
      turn: 1,
      step: 1,
      finishReason: 'tool-calls',
      message: {
        id: 'a1',
        role: 'assistant',
        content: [
          { type: 'reasoning', text: PAYLOADS[5] as string },
          { type: 'text', text: PAYLOADS[2] as string },
          { type: 'tool-call', id: 'c1', name, arguments: '{"__proto__":{"polluted":1}}' },
        ],
        source: { kind: 'model', provider: 'p\u009b1m', model: 'm\u202e' },
      },
    },
    { surfaceOp: 'append', sourceEventSeqs: [chunk.seq] },
  );
  const call = session.append('tool/call', {
    turn: 1,
    step: 1,
    callId: 'c1',
    name,
    arguments: '{"__proto__":{"polluted":1}}',
  });
  session.append(
    'tool/result',
    {
      turn: 1,
      step: 1,
      message: {
        id: 'r1',
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            content: PAYLOADS.map((text) => ({ type: 'text', text })),
          },
        ],
      },
    },
    { surfaceOp: 'append', sourceEventSeqs: [call.seq] },
  );
  session.append('step/end', { turn: 1, step: 1 });
  session.append(
    'app/proto',
    JSON.parse(
      `{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"note":${JSON.stringify(PAYLOADS[8])}}`,
    ),
  );
  session.append('turn/end', { turn: 1, reason: { kind: 'completed' } });
  return session;
}

async function seed(store: SessionStore, session: Session): Promise<void> {
  await store.create(session.header);
  await store.append(session.header.id, session.events, { expectedSeq: 0 });
}

/**
 * The files under `dir`, recursively, as relative paths, without SQLite's -shm and -wal (a
 * read-only connection creates them; docs/durability.md says so, and neither holds data then).
 */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => !/-(shm|wal)$/.test(path))
    .sort();
}

for (const backend of BACKENDS) {
  describe(`hostile input: ${backend.name}`, () => {
    it('payloads come back unchanged, keep Object.prototype clean, and every command prints them inert', async () => {
      const t = tally('hostile-input', backend.name);
      const root = scratch(`hostile-${backend.name}`);
      const location = backend.location(join(root, 'store'));
      mkdirSync(join(root, 'store'));
      const store = await backend.open(location);
      const sessions = [payloadSession('payloads'), ...PATH_IDS.map((id) => payloadSession(id))];
      for (const session of sessions) {
        try {
          await seed(store, session);
        } catch (error) {
          fail(
            t,
            PalimpsestError.isInstance(error) ? 'lost' : 'untyped',
            `seed ${session.header.id}: ${String(error)}`,
          );
        }
        t.faults++;
      }
      for (const session of sessions) {
        const loaded = await store.load(session.header.id);
        t.acked += session.events.length;
        if (JSON.stringify(loaded.events) !== JSON.stringify(session.events))
          fail(t, 'altered', `${JSON.stringify(session.header.id)}: the payload came back changed`);
        // A literal __proto__ key is data: an own property, never the prototype.
        const proto = loaded.events.find((event) => event.type === 'app/proto')?.data;
        if (typeof proto !== 'object' || proto === null || !Object.hasOwn(proto, '__proto__'))
          fail(
            t,
            'altered',
            `${JSON.stringify(session.header.id)}: the __proto__ key was not kept as data`,
          );
        const live = await openSession(store, session.header.id);
        live.deriveMessages();
        await live.close();
      }
      if (({} as { polluted?: unknown }).polluted !== undefined)
        fail(t, 'altered', 'Object.prototype was polluted');
      await store.close();
      const outside = tree(root).filter((path) => !path.startsWith('store'));
      const converted = join(root, 'scratch');
      mkdirSync(converted);
      const url = backend.url(location);
      const commands = sessions.flatMap((session, i) =>
        // Every command on the payload session; the commonest ones on the path-like ids.
        commandsFor(session.header.id, session.seq - 1, url, converted).filter(
          (args) => i === 0 || PATH_ID_COMMANDS.has(`${args[0]} ${args[2]}`),
        ),
      );
      const runs = await runAll(commands);
      runs.forEach((run, i) => {
        const args = commands[i] as string[];
        // verify is 0 (a valid log); prune may replace nothing; fork/convert create.
        // Commands that take the writer lock may meet another command of this run holding it
        // (two run at a time): exit 5. Prune may find nothing to replace: exit 9.
        const writes = ['repair', 'prune', 'fork', 'convert'].includes(args[0] as string);
        judge(t, args, run, new Set(writes ? [0, 5, 9] : [0]));
      });
      const after = tree(root).filter(
        (path) => !path.startsWith('store') && !path.startsWith('scratch'),
      );
      if (JSON.stringify(after) !== JSON.stringify(outside))
        fail(
          t,
          'altered',
          `files appeared outside the store: ${after.filter((p) => !outside.includes(p)).join(', ')}`,
        );
      console.log(`hostile payloads ${backend.name}: ${JSON.stringify(t)}`);
      expectClean(t);
    });

    it('ids every backend must refuse are refused by the store and the CLI, with nothing written', async () => {
      const t = tally('hostile-input', backend.name);
      const root = scratch(`hostile-ids-${backend.name}`);
      mkdirSync(join(root, 'store'));
      const location = backend.location(join(root, 'store'));
      const store = await backend.open(location);
      await seed(store, payloadSession('fine'));
      for (const [what, id] of HOSTILE_IDS) {
        for (const call of [
          () => store.create({ version: 1, id, createdAt: 1 }),
          () => store.append(id, [], { expectedSeq: 0 }),
          () => store.load(id),
          () => store.lock(id),
          () => store.delete(id),
        ]) {
          t.runs++;
          t.faults++;
          const error = await call().then(
            () => undefined,
            (e: unknown) => e,
          );
          if (!(error instanceof InvalidSessionIdError))
            fail(
              t,
              error === undefined || PalimpsestError.isInstance(error) ? 'altered' : 'untyped',
              `${what}: ${String(error)}`,
            );
        }
      }
      const listed = await store.list();
      if (JSON.stringify(listed.sessions.map((s) => s.header.id)) !== '["fine"]')
        fail(t, 'altered', 'a refused id left a session behind');
      await store.close();
      const before = tree(root);
      const url = backend.url(location);
      // A NUL cannot be passed in an argument vector; the store refused it above.
      const passable = HOSTILE_IDS.filter(([, id]) => !id.includes('\u0000'));
      const commands = passable.flatMap(([, id]) =>
        [
          ['show', id],
          ['verify', id],
          ['repair', id],
        ].map((args) => [...args, '--store', url]),
      );
      const runs = await runAll(commands);
      runs.forEach((run, i) => {
        // An invalid id is a usage mistake (2) or names no session (3); verify reports it as a
        // problem found (7).
        const args = commands[i] as string[];
        judge(t, args, run, new Set(args[0] === 'verify' ? [2, 3, 7] : [2, 3]));
      });
      if (JSON.stringify(tree(root)) !== JSON.stringify(before))
        fail(t, 'altered', 'the CLI wrote for a refused id');
      console.log(`hostile ids ${backend.name}: ${JSON.stringify(t)}`);
      expectClean(t);
    });

    it('files where the store expects its own end every command at once with a typed refusal', async () => {
      const t = tally('hostile-input', backend.name);
      for (const [what, plant, known] of hostileFiles(backend)) {
        const root = scratch(`hostile-files-${backend.name}`);
        mkdirSync(join(root, 'store'));
        const location = backend.location(join(root, 'store'));
        const store = await backend.open(location);
        await seed(store, payloadSession('fine'));
        await seed(store, payloadSession('victim'));
        await store.close();
        const outsideFile = join(root, 'outside.jsonl');
        plant(location, outsideFile);
        t.faults++;
        const outsideBefore = existsSync(outsideFile)
          ? readFileSync(outsideFile, 'utf8')
          : undefined;
        const url = backend.url(location);
        const commands = [
          ['ls'],
          ['show', 'victim'],
          ['log', 'victim'],
          ['verify', '--all'],
          ['export', 'victim'],
          ['repair', 'victim'],
        ].map((args) => [...args, '--store', url]);
        const runs = await runAll(commands);
        // JSONL documents exit 4 (UnsafeFileError) for these; SQLite documents nothing narrower
        // than a typed failure (1, a storage error, or 4).
        const allowed = new Set(backend.name === 'jsonl' ? [0, 4, 7] : [0, 1, 3, 4, 7]);
        const judged = known === undefined ? t : tally('hostile-input', backend.name);
        runs.forEach((run, i) => {
          const args = commands[i] as string[];
          add(t, `${what}: exit ${run.code}`);
          judge(judged, [what, ...args], run, allowed);
        });
        if (known !== undefined) {
          t.runs += judged.runs;
          const broken = judged.lost + judged.altered + judged.untyped + judged.hangs;
          if (broken > 0) add(t, `known defect: ${known}`, broken);
        }
        if (outsideBefore !== undefined && readFileSync(outsideFile, 'utf8') !== outsideBefore)
          fail(t, 'altered', `${what}: a file outside the store was written`);
      }
      console.log(`hostile files ${backend.name}: ${JSON.stringify(t)}`);
      expectClean(t);
    });
  });
}

/**
 * A hostile file: what it is, how to plant it at a store location, and, for a known defect
 * (counted apart, and kept as a test that fails until it is fixed), what is wrong today.
 */
type HostileFile = readonly [
  what: string,
  plant: (location: string, outside: string) => void,
  known?: string,
];

/** Hostile files for a backend. */
function hostileFiles(backend: BackendUnderTest): HostileFile[] {
  const fifo = (path: string) => execFileSync('mkfifo', [path]);
  /** Puts `make(path)` where the file `path` was. */
  const replace = (path: string, make: (path: string) => void) => {
    rmSync(path, { force: true });
    make(path);
  };
  const linkOut = (path: string, outside: string) => {
    writeFileSync(outside, readFileSync(path));
    replace(path, (at) => symlinkSync(outside, at));
  };
  if (backend.name === 'jsonl') {
    const log = (location: string) => join(location, `${encodeSessionId('victim')}.jsonl`);
    const lock = (location: string) => join(location, `${encodeSessionId('victim')}.lock`);
    return [
      ['a FIFO as the log', (location) => replace(log(location), fifo)],
      [
        'a link to /dev/zero as the log',
        (location) => replace(log(location), (at) => symlinkSync('/dev/zero', at)),
      ],
      ['a FIFO as the lock file', (location) => fifo(lock(location))],
      [
        'the log swapped for a link out of the store',
        (location, out) => linkOut(log(location), out),
      ],
      ['a directory as the log', (location) => replace(log(location), (at) => mkdirSync(at))],
    ];
  }
  return [
    ['a FIFO as the ledger', (location) => replace(`${location}-lengths`, fifo)],
    [
      'a link to /dev/zero as the ledger',
      (location) => replace(`${location}-lengths`, (at) => symlinkSync('/dev/zero', at)),
    ],
    ['a FIFO as the WAL', (location) => replace(`${location}-wal`, fifo)],
    [
      'the ledger swapped for a link out of the store',
      (location, out) => linkOut(`${location}-lengths`, out),
    ],
  ];
}

describe('the hostile-input harness', () => {
  for (const backend of BACKENDS) {
    it(`catches a ${backend.name} store that accepts an id it must refuse`, async () => {
      const t = tally('hostile-input', backend.name);
      const root = scratch(`hostile-mutant-${backend.name}`);
      mkdirSync(join(root, 'store'));
      const real = await backend.open(backend.location(join(root, 'store')));
      // The mutant: creates and loads for any id succeed, as a store without the id rule would.
      const store = override(real, {
        create: async () => {},
        load: async (id: string) => LoadedSession.fromEvents({ version: 1, id, createdAt: 1 }, []),
      });
      for (const [what, id] of HOSTILE_IDS) {
        for (const call of [
          () => store.create({ version: 1, id, createdAt: 1 }),
          () => store.load(id),
        ]) {
          const error = await call().then(
            () => undefined,
            (e: unknown) => e,
          );
          if (!(error instanceof InvalidSessionIdError)) fail(t, 'altered', `${what}: accepted`);
        }
      }
      await real.close();
      recordMutant('hostile-input', backend.name, t.altered > 0);
      expect(t.altered).toBeGreaterThan(0);
    });
  }

  it('catches a command that prints raw escapes (the judge fails on them)', () => {
    const t = tally('hostile-input', 'jsonl');
    judge(
      t,
      ['show', 'x'],
      { code: 0, stdout: 'ok \u001b]52;c;x\u0007', stderr: '', hung: false },
      new Set([0]),
    );
    judge(
      t,
      ['export', 'x', '--store', 'u'],
      { code: 0, stdout: '<script>alert(1)</script>', stderr: '', hung: false },
      new Set([0]),
    );
    judge(
      t,
      ['show', 'x'],
      { code: 1, stdout: '', stderr: 'Error\n    at main (x.js:1:1)', hung: false },
      new Set([0, 1]),
    );
    judge(t, ['show', 'x'], { code: null, stdout: '', stderr: '', hung: true }, new Set([0]));
    const caught = t.altered === 2 && t.untyped === 1 && t.hangs === 1;
    recordMutant('hostile-input', 'jsonl', caught);
    expect(caught).toBe(true);
  });
});
