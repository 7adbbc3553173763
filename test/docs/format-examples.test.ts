/**
 * The JSON examples of docs/format.md are executable claims, and this file checks every one of
 * them against the implementation, so that the format specification cannot drift from the code.
 *
 * Each ```json or ```jsonl fence carries `key=value` words (or bare keys) after the language tag
 * that say what the block claims; a JSON block without a `check` word fails the first test.
 *
 * - `check=header`: the block is a valid session header.
 * - `check=session name=N`: a JSONL log whose first line is its header. It loads, and the header
 *   and every event serialize back to their exact lines.
 * - `check=events`: JSONL events without a header that load the same way into a fresh session.
 * - `check=append base=N [name=M]`: JSONL events that, appended to the log named N, load the
 *   same way; `name` makes the longer log a base for later blocks.
 * - `check=reject [base=N] code=C [path=P]`: JSONL events that, after the log named N (or alone),
 *   are refused with `SessionValidationError` code C (and `path` P) by both `Session.create` and
 *   `foldSurface`.
 * - `check=repair base=N`: `planRepair` of log N gives exactly these closers, byte for byte; the
 *   repaired log lints clean with `requireClosed` and needs no further repair.
 * - `check=messages base=N`: `deriveMessages()` of log N equals this array.
 * - `check=message role=R`: this message, carried by an event of role R, is admitted and derived
 *   unchanged.
 * - `check=fork base=N boundary=B`: forking log N at seq B, with this header's id and createdAt,
 *   gives exactly this header and a log of B + 1 events.
 *
 * The loading checks (`session`, `events`, `append`) also take `surface=a,b,c`, the expected
 * surface (checked against `foldSurface` too), and `lint`: absent, `checkInvariants` must find
 * nothing (with `requireClosed`, unless the bare word `open` is given); `lint=skip` does not run
 * it; `lint=CODE@seq,...` lists exactly the violations it must report, in order.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateHeader } from '../../src/core/backend.js';
import {
  checkInvariants,
  foldSurface,
  forkSession,
  planRepair,
  Session,
  type SessionEvent,
  type SessionHeader,
  SessionValidationError,
} from '../../src/core/index.js';

const DOC_PATH = new URL('../../docs/format.md', import.meta.url);

const KNOWN_WORDS: ReadonlySet<string> = new Set([
  'check',
  'name',
  'base',
  'surface',
  'lint',
  'open',
  'code',
  'path',
  'role',
  'boundary',
]);

/** One fenced JSON example of the document. */
interface Example {
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly language: 'json' | 'jsonl';
  /** The fence-line words: `key=value`, or `key` mapped to `''`. */
  readonly words: ReadonlyMap<string, string>;
  /** The block's lines, without the fences. */
  readonly lines: readonly string[];
}

/** A log an example defines, for later examples to build on. */
interface LoadedLog {
  readonly header: SessionHeader | undefined;
  /** The events as written in the document, one JSON text per event. */
  readonly eventLines: readonly string[];
  readonly session: Session;
}

function readExamples(markdown: string): Example[] {
  const examples: Example[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const opening = /^```(\S*)(.*)$/.exec(lines[i] ?? '');
    if (opening === null) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    const language = opening[1];
    if (language === 'json' || language === 'jsonl') {
      const words = new Map<string, string>();
      for (const word of (opening[2] ?? '').trim().split(/\s+/).filter(Boolean)) {
        const equals = word.indexOf('=');
        if (equals === -1) words.set(word, '');
        else words.set(word.slice(0, equals), word.slice(equals + 1));
      }
      examples.push({ line: i + 1, language, words, lines: lines.slice(i + 1, end) });
    }
    i = end;
  }
  return examples;
}

const examples = readExamples(readFileSync(DOC_PATH, 'utf8'));

function word(example: Example, key: string): string {
  const value = example.words.get(key);
  if (value === undefined || value === '') {
    throw new Error(`the example at line ${example.line} needs ${key}=...`);
  }
  return value;
}

function parseJson(text: string, example: Example): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`the example at line ${example.line} holds a line that is not JSON: ${text}`);
  }
}

/** The block of a `json` example as one value. */
function theValue(example: Example): unknown {
  return parseJson(example.lines.join('\n'), example);
}

function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectRefusal(action: () => unknown, code: string, path: string | undefined): void {
  const error = thrownBy(action);
  expect(error, 'the example must be refused with a SessionValidationError').toBeInstanceOf(
    SessionValidationError,
  );
  if (!(error instanceof SessionValidationError)) return;
  expect(error.code, error.message).toBe(code);
  if (path !== undefined) expect(error.path, error.message).toBe(path);
}

function expectLint(events: readonly SessionEvent[], example: Example): void {
  const expected = example.words.get('lint');
  if (expected === 'skip') return;
  const violations = checkInvariants(events, { requireClosed: !example.words.has('open') });
  const found = violations.map((violation) => `${violation.code}@${violation.seq}`);
  expect(found, JSON.stringify(violations, null, 2)).toEqual(
    expected === undefined ? [] : expected.split(','),
  );
}

function expectSurface(log: LoadedLog, example: Example): void {
  const expected = example.words.get('surface');
  if (expected === undefined) return;
  const seqs = expected.split(',').map(Number);
  expect(log.session.surface.seqs).toEqual(seqs);
  expect(foldSurface(log.eventLines.map((text) => parseJson(text, example))).seqs).toEqual(seqs);
}

/** Loads a header (or none) and events, and checks that every event serializes to its line. */
function load(
  header: SessionHeader | undefined,
  eventLines: readonly string[],
  example: Example,
): LoadedLog {
  const seed = eventLines.map((text) => parseJson(text, example));
  const session =
    header === undefined
      ? Session.create({ id: 'format-example', seed })
      : Session.create({ header, seed });
  expect(session.events.map((event) => JSON.stringify(event))).toEqual(eventLines);
  return { header, eventLines, session };
}

const logs = new Map<string, LoadedLog>();

/** The log a `session` or `append` example names, loaded (and checked) on first use. */
function namedLog(name: string): LoadedLog {
  const known = logs.get(name);
  if (known !== undefined) return known;
  const example = examples.find((candidate) => candidate.words.get('name') === name);
  if (example === undefined) throw new Error(`no example is named ${name}`);
  const log = loadExample(example);
  logs.set(name, log);
  return log;
}

function loadExample(example: Example): LoadedLog {
  switch (example.words.get('check')) {
    case 'session': {
      const [headerLine, ...eventLines] = example.lines;
      const header = validateHeader(parseJson(headerLine ?? '', example));
      expect(JSON.stringify(header)).toBe(headerLine);
      return load(header, eventLines, example);
    }
    case 'events':
      return load(undefined, example.lines, example);
    case 'append': {
      const base = namedLog(word(example, 'base'));
      return load(base.header, [...base.eventLines, ...example.lines], example);
    }
    default:
      throw new Error(`the example at line ${example.line} does not define a log`);
  }
}

function checkExample(example: Example): void {
  const check = word(example, 'check');
  switch (check) {
    case 'header': {
      const text = example.lines.join('\n');
      expect(JSON.stringify(validateHeader(theValue(example)))).toBe(text);
      return;
    }
    case 'session':
    case 'events':
    case 'append': {
      const name = example.words.get('name');
      const log = name === undefined ? loadExample(example) : namedLog(name);
      expectSurface(log, example);
      expectLint(log.session.events, example);
      return;
    }
    case 'reject': {
      const baseName = example.words.get('base');
      const base = baseName === undefined ? undefined : namedLog(baseName);
      const seed = [...(base?.eventLines ?? []), ...example.lines].map((text) =>
        parseJson(text, example),
      );
      const code = word(example, 'code');
      const path = example.words.get('path');
      expectRefusal(
        () =>
          base?.header === undefined
            ? Session.create({ id: 'format-example', seed })
            : Session.create({ header: base.header, seed }),
        code,
        path,
      );
      expectRefusal(() => foldSurface(seed), code, path);
      return;
    }
    case 'repair': {
      const base = namedLog(word(example, 'base'));
      const closers = planRepair(base.session.events);
      expect(closers.map((event) => JSON.stringify(event))).toEqual(example.lines);
      const repaired = load(base.header, [...base.eventLines, ...example.lines], example);
      expect(checkInvariants(repaired.session.events, { requireClosed: true })).toEqual([]);
      expect(planRepair(repaired.session.events)).toEqual([]);
      return;
    }
    case 'messages': {
      const base = namedLog(word(example, 'base'));
      expect(base.session.deriveMessages()).toEqual(theValue(example));
      return;
    }
    case 'message': {
      const message = theValue(example);
      const role = word(example, 'role');
      const event =
        role === 'user'
          ? { seq: 0, time: 0, type: 'user/message', data: message, surfaceOp: 'append' }
          : role === 'assistant'
            ? {
                seq: 0,
                time: 0,
                type: 'assistant/message',
                data: { turn: 1, step: 1, message, finishReason: 'stop' },
                surfaceOp: 'append',
              }
            : {
                seq: 0,
                time: 0,
                type: 'tool/result',
                data: { turn: 1, step: 1, message },
                surfaceOp: 'append',
              };
      const session = Session.create({ id: 'format-example', seed: [event] });
      expect(session.deriveMessages()).toEqual([message]);
      return;
    }
    case 'fork': {
      const text = example.lines.join('\n');
      const expected = validateHeader(theValue(example));
      const boundary = Number(word(example, 'boundary'));
      const child = forkSession(namedLog(word(example, 'base')).session, boundary, {
        id: expected.id,
        clock: () => expected.createdAt,
      });
      expect(JSON.stringify(child.header)).toBe(text);
      expect(child.events).toHaveLength(boundary + 1);
      return;
    }
    default:
      throw new Error(`the example at line ${example.line} has an unknown check=${check}`);
  }
}

/** A sentence saying what the example claims, for the test name. */
function claim(example: Example): string {
  const at = `line ${example.line}`;
  const name = example.words.get('name');
  const base = example.words.get('base');
  const surface = example.words.get('surface');
  const lint = example.words.get('lint');
  const findings = [
    surface === undefined ? '' : `surface [${surface.split(',').join(', ')}]`,
    lint === 'skip'
      ? ''
      : lint === undefined
        ? `lint clean${example.words.has('open') ? ' with the turn open' : ''}`
        : `lint ${lint.split(',').join(', ')}`,
  ].filter(Boolean);
  const suffix = findings.length === 0 ? '' : ` (${findings.join(', ')})`;
  switch (example.words.get('check')) {
    case 'header':
      return `${at}: the header is valid and serializes to its text`;
    case 'session':
      return `${at}: the log "${name}" loads and round-trips byte for byte${suffix}`;
    case 'events':
      return `${at}: the events load and round-trip byte for byte${suffix}`;
    case 'append':
      return `${at}: the events appended to "${base}" load and round-trip byte for byte${suffix}`;
    case 'reject':
      return `${at}: the event${base === undefined ? '' : ` after "${base}"`} is refused with ${example.words.get('code')}`;
    case 'repair':
      return `${at}: crash repair of "${base}" plans exactly these closers`;
    case 'messages':
      return `${at}: "${base}" derives exactly these messages`;
    case 'message':
      return `${at}: the ${example.words.get('role')} message is admitted and derived unchanged`;
    case 'fork':
      return `${at}: forking "${base}" at seq ${example.words.get('boundary')} writes exactly this header`;
    default:
      return `${at}: the example carries check metadata`;
  }
}

describe('docs/format.md examples', () => {
  it('every JSON example carries check metadata with known words, the right language and a unique name', () => {
    expect(examples.length).toBeGreaterThan(0);
    const names = new Set<string>();
    for (const example of examples) {
      expect(example.words.has('check'), `line ${example.line} has no check=`).toBe(true);
      for (const key of example.words.keys()) {
        expect(KNOWN_WORDS.has(key), `line ${example.line}: unknown word ${key}`).toBe(true);
      }
      const logLike = !['header', 'message', 'messages', 'fork'].includes(
        example.words.get('check') ?? '',
      );
      expect(example.language, `line ${example.line}: language`).toBe(logLike ? 'jsonl' : 'json');
      const name = example.words.get('name');
      if (name !== undefined) {
        expect(names.has(name), `line ${example.line}: name ${name} is used twice`).toBe(false);
        names.add(name);
      }
    }
  });

  for (const example of examples) {
    it(claim(example), () => checkExample(example));
  }
});
