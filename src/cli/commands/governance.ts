/**
 * The governance commands: `redact` (erasure with provenance), `checkpoint` (the chain's head
 * appended now) and `anchor` (heads kept outside the store). None ever prints erased content or
 * the pattern that found it: the pattern is personal data too.
 */
import { appendFileSync } from 'node:fs';
import { InvalidArgumentError } from '../../core/index.js';
import {
  type Anchor,
  ChainTracker,
  type CheckpointSigner,
  ed25519Signer,
  FileKeyVault,
  openSession,
  type RedactReport,
  type RedactTarget,
  redact,
  redactEverywhere,
} from '../../store/index.js';
import { everySession } from '../../store/session/list-all.js';
import { type CliContext, readGivenFile } from '../context.js';
import { CliError, describeFailure, EXIT } from '../failure.js';
import { printableStoreUrl } from '../store-url.js';
import { safeLine } from '../terminal.js';
import { storeAnchors } from './anchors.js';

/** The options of `redact`. */
export interface RedactCommandOptions {
  readonly seq?: string;
  readonly match?: string;
  readonly ignoreCase?: boolean;
  readonly subject?: string;
  readonly reason?: string;
  readonly all?: boolean;
  readonly sign?: string;
}

/** `palimpsest redact ID…|--all (--seq LIST | --match REGEX | --subject ID) --reason TEXT` */
export async function redactCommand(
  context: CliContext,
  ids: readonly string[],
  options: RedactCommandOptions,
): Promise<number> {
  const target = redactTarget(options);
  if (options.reason === undefined || options.reason.trim() === '') {
    throw new CliError(
      'say why with --reason (a ticket or a policy, never personal data)',
      EXIT.usage,
    );
  }
  if ((ids.length === 0) === (options.all !== true)) {
    throw new CliError('name the sessions to redact, or pass --all (not both)', EXIT.usage);
  }
  if (options.all === true && 'seqs' in target) {
    throw new CliError('--seq names events of one session: name it instead of --all', EXIT.usage);
  }
  const signer = options.sign === undefined ? undefined : signerFrom(options.sign);
  const reason = options.reason;
  const redactOptions = { reason, ...(signer === undefined ? {} : { checkpoint: signer }) };
  const outcomes = await context.withStore(async (store) => {
    if (options.all === true && !('seqs' in target)) {
      return (await redactEverywhere(store, target, redactOptions)).map((result) =>
        'report' in result
          ? { id: result.session, report: result.report }
          : { id: result.session, error: result.error },
      );
    }
    const done: Array<{ id: string; report?: RedactReport; error?: unknown }> = [];
    for (const id of ids) {
      try {
        done.push({ id, report: await redact(store, id, target, redactOptions) });
      } catch (error) {
        done.push({ id, error });
      }
    }
    return done;
  });
  const failures = outcomes.filter((outcome) => outcome.error !== undefined);
  const erased = outcomes.filter((outcome) => (outcome.report?.erased.length ?? 0) > 0);
  if (context.json) {
    context.terminal.json(
      outcomes.map(({ id, report, error }) =>
        error === undefined
          ? { id, ...report }
          : { id, error: describeFailure(error).message, code: (error as { code?: string }).code },
      ),
    );
  } else {
    for (const { id, report, error } of outcomes) {
      if (error !== undefined) {
        context.terminal.line(
          safeLine(`${id}: not redacted: ${describeFailure(error).message}`, 240),
        );
        continue;
      }
      if (report === undefined || report.redaction === undefined) {
        if (options.all !== true) context.terminal.line(safeLine(`${id}: nothing to erase`, 240));
        continue;
      }
      context.terminal.line(
        safeLine(
          `${id}: erased ${report.erased.length} event(s) (${seqText(report.erased)}); the redaction is #${report.redaction}`,
          240,
        ),
      );
      if (report.derived.length > 0) {
        context.terminal.line(
          safeLine(
            `${id}: note: ${seqText(report.derived)} cite erased events and may repeat them (a summary, say): redact them too if they do`,
            240,
          ),
        );
      }
    }
    if (erased.length === 0 && failures.length === 0) {
      context.terminal.line(
        `nothing matched in ${outcomes.length} session(s): nothing was written`,
      );
    }
  }
  if (failures.length > 0) return describeFailure(failures[0]?.error).code;
  return erased.length === 0 ? EXIT.unchanged : EXIT.ok;
}

function redactTarget(options: RedactCommandOptions): RedactTarget {
  const given = [options.seq, options.match, options.subject].filter(
    (value) => value !== undefined,
  );
  if (given.length !== 1) {
    throw new CliError(
      'choose what to erase with exactly one of --seq, --match or --subject',
      EXIT.usage,
    );
  }
  if (options.seq !== undefined) {
    const seqs = options.seq.split(',').map((part) => part.trim());
    if (seqs.some((part) => !/^\d+$/.test(part))) {
      throw new CliError(
        `--seq expects seqs like 5,7,12, found '${safeLine(options.seq, 40)}'`,
        EXIT.usage,
      );
    }
    return { seqs: seqs.map(Number) };
  }
  if (options.match !== undefined) {
    try {
      return { match: new RegExp(options.match, options.ignoreCase === true ? 'gi' : 'g') };
    } catch {
      // The pattern itself is not echoed: it may be the personal data being erased.
      throw new CliError(
        '--match expects a regular expression, found one that does not parse',
        EXIT.usage,
      );
    }
  }
  return { subject: options.subject as string };
}

/** `palimpsest checkpoint ID… [--sign PEM]`: appends the chain's head now. */
export async function checkpointCommand(
  context: CliContext,
  ids: readonly string[],
  options: { readonly sign?: string },
): Promise<number> {
  if (ids.length === 0) throw new CliError('name the sessions to checkpoint', EXIT.usage);
  const signer = options.sign === undefined ? undefined : signerFrom(options.sign);
  const made = await context.withStore(async (store) => {
    const out: Array<{ id: string; seq?: number; head?: string; signed: boolean }> = [];
    for (const id of ids) {
      const live = await openSession(store, id, { create: false, durability: { mode: 'each' } });
      try {
        if (live.events.at(-1)?.type === 'log/checkpoint') {
          out.push({ id, signed: false });
          continue;
        }
        const data = ChainTracker.resume(live.header, live.events, signer).checkpoint();
        const event = live.append('log/checkpoint', data);
        await live.flush();
        out.push({ id, seq: event.seq, head: data.head, signed: data.signature !== undefined });
      } finally {
        await live.close();
      }
    }
    return out;
  });
  if (context.json) context.terminal.json(made);
  else {
    for (const entry of made) {
      context.terminal.line(
        entry.seq === undefined
          ? `${entry.id}: already ends with a checkpoint; nothing appended`
          : `${entry.id}: checkpoint #${entry.seq} over ${entry.seq} events${entry.signed ? ', signed' : ''}, head ${entry.head}`,
      );
    }
  }
  return made.some((entry) => entry.seq !== undefined) ? EXIT.ok : EXIT.unchanged;
}

/**
 * `palimpsest shred ID…`: destroys the data keys of encrypted sessions in the key vault. Only
 * the vault is touched (no master key needed): the sessions stay in the store, envelopes and
 * chain readable, payloads unreadable in every copy.
 */
export async function shredCommand(context: CliContext, ids: readonly string[]): Promise<number> {
  const dir = context.keyVault;
  if (dir === undefined) {
    throw new CliError(
      'shred destroys keys in a key vault: name it with --key-vault DIR (or PALIMPSEST_KEY_VAULT)',
      EXIT.usage,
    );
  }
  const vault = new FileKeyVault(dir);
  const done: Array<{ id: string; shredded: boolean }> = [];
  for (const id of ids) done.push({ id, shredded: await vault.shred(id, Date.now()) });
  if (context.json) context.terminal.json(done);
  else {
    for (const { id, shredded } of done) {
      context.terminal.line(
        safeLine(
          shredded
            ? `${id}: key shredded; its payloads can no longer be read, here or in any copy of the store`
            : `${id}: no key in the vault (shredded before, or never encrypted with it); nothing changed`,
          240,
        ),
      );
    }
  }
  return done.some((entry) => entry.shredded) ? EXIT.ok : EXIT.unchanged;
}

/** `palimpsest anchor ID… [--to FILE|URL]`: each session's chain head, to keep elsewhere. */
export async function anchorCommand(
  context: CliContext,
  ids: readonly string[],
  options: { readonly to?: string; readonly all?: boolean },
): Promise<number> {
  if ((ids.length === 0) === (options.all !== true)) {
    throw new CliError('name the sessions to anchor, or pass --all (not both)', EXIT.usage);
  }
  const anchors = await context.withReader(async (store) => {
    const targets =
      options.all === true ? (await everySession(store)).sessions.map((s) => s.header.id) : ids;
    const out: Anchor[] = [];
    for (const id of targets) {
      const loaded = await store.load(id);
      out.push(ChainTracker.resume(loaded.header, loaded.events).anchor());
    }
    return out;
  });
  const lines = anchors.map((anchor) => JSON.stringify(anchor));
  const to = options.to;
  if (to === undefined) {
    for (const line of lines) context.terminal.line(line);
  } else if (/^(jsonl|sqlite|memory|postgres|postgresql):/.test(to)) {
    await storeAnchors(context, to, anchors);
  } else {
    appendFileSync(to, lines.map((line) => `${line}\n`).join(''), { mode: 0o600 });
  }
  if (to !== undefined && !context.json) {
    context.terminal.line(
      `${anchors.length} anchor(s) written to ${safeLine(printableStoreUrl(to), 120)}`,
    );
  }
  return EXIT.ok;
}

function signerFrom(file: string): CheckpointSigner {
  const pem = readGivenFile(file, 'the signing key');
  try {
    return ed25519Signer(pem);
  } catch (error) {
    if (error instanceof InvalidArgumentError)
      throw new CliError(`${file}: ${error.message}`, EXIT.usage);
    throw error;
  }
}

function seqText(seqs: readonly number[]): string {
  const shown = seqs.slice(0, 12).map((seq) => `#${seq}`);
  return seqs.length > 12 ? `${shown.join(', ')} … ${seqs.length - 12} more` : shown.join(', ');
}
