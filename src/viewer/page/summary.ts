/**
 * The session's numbers (turns, events, bytes, rewrites, repairs, forks) and what time travel
 * says about a point in the log: the request header in force and the rewrite that shaped it.
 */
import { lastTurnNumber, type SurfaceReplacement } from '../../core/index.js';
import type { ViewedSession } from './state.js';
import { bytes, count, counted, excerpt } from './text.js';

/** The per-session figures of the top bar. */
export function statsText(viewed: ViewedSession): string[] {
  const replacements = [...viewed.replacements().values()];
  const prunes = replacements.filter((r) => viewed.event(r.seq)?.type === 'tool/result').length;
  return [
    counted(lastTurnNumber(viewed.session), 'turn'),
    counted(viewed.session.seq, 'event'),
    bytes(viewed.bytes),
    counted(replacements.length - prunes, 'compaction'),
    counted(prunes, 'prune'),
    counted(viewed.repairs, 'repair'),
    `${count(viewed.session.surface.size)} on the surface`,
  ];
}

/** The request header in force after `at`, as one line. */
export function headerText(viewed: ViewedSession, at: number): string {
  const event = viewed.headerAt(at);
  if (event === undefined) return 'no request header logged yet';
  const header = event.data;
  const tools = header.tools?.length ?? 0;
  const system =
    header.system === undefined ? 'no system prompt' : `system: ${excerpt(header.system, 120)}`;
  return `request header #${event.seq}: ${excerpt(`${header.provider}:${header.model}`, 80)} · ${counted(tools, 'tool')} · ${system}`;
}

function rewriteName(viewed: ViewedSession, replacement: SurfaceReplacement): string {
  const kind = viewed.event(replacement.seq)?.type === 'tool/result' ? 'prune' : 'compaction';
  return `#${replacement.seq} (${kind}, ${replacement.shadowedSeqs.length} replaced)`;
}

/** Which rewrite made the surface after `at` what it is, and which one comes next. */
export function rewriteText(viewed: ViewedSession, at: number): string {
  const all = [...viewed.replacements().values()];
  const before = all.filter((replacement) => replacement.seq <= at);
  const after = all.filter((replacement) => replacement.seq > at);
  const last = before[before.length - 1];
  const next = after[0];
  return [
    last === undefined ? 'no rewrite before it' : `last changed by ${rewriteName(viewed, last)}`,
    next === undefined ? 'no later rewrite' : `next: ${rewriteName(viewed, next)}`,
  ].join(' · ');
}
