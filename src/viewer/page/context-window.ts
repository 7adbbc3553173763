/**
 * The context window a session's model has: the one its request header's settings name
 * (`settings.contextWindow`), else a known window for the model, else none. The list views'
 * per-row bars and the session panel's bar read it from here, so they agree.
 */
import { isEventOfType, type JsonValue, type RequestHeaderData } from '../../core/index.js';
import type { ViewedSession } from './state.js';

/** A window and where it came from. */
export interface ContextWindow {
  readonly tokens: number;
  readonly source: 'settings' | 'known model';
  /** The model it is the window of. */
  readonly model: string;
}

/**
 * Windows by model id prefix (the longest matching prefix wins), from the providers' model pages (Anthropic's
 * models overview and model pages, OpenAI's model pages, DeepSeek's and Google's API docs) for
 * the models listed. A prefix matches a whole id or one continued by `-` (a dated or named
 * variant), so `gpt-5` is not read as `gpt-5.4`. A window a provider offers only behind an
 * opt-in (Claude Sonnet 4.5's 1M beta) is not the default here.
 */
const KNOWN_WINDOWS: ReadonlyArray<readonly [prefix: string, tokens: number]> = [
  ['claude-', 200_000],
  // Claude's 1M-token window: Opus 4.6 and later, Sonnet 4.6 and later, Fable, Mythos, Haiku 5.5.
  ['claude-opus-4-6', 1_000_000],
  ['claude-opus-4-7', 1_000_000],
  ['claude-opus-4-8', 1_000_000],
  ['claude-opus-5', 1_000_000],
  ['claude-sonnet-4-6', 1_000_000],
  ['claude-sonnet-5', 1_000_000],
  ['claude-haiku-5', 1_000_000],
  ['claude-fable-', 1_000_000],
  ['claude-mythos-', 1_000_000],
  ['gpt-4.1', 1_047_576],
  ['gpt-4o', 128_000],
  ['gpt-5', 400_000],
  ['gpt-5.1', 400_000],
  ['gpt-5-chat', 128_000],
  ['gpt-5.1-chat', 128_000],
  ['gpt-5.2-chat', 128_000],
  ['o3', 200_000],
  ['o4-mini', 200_000],
  ['deepseek-chat', 128_000],
  ['deepseek-reasoner', 128_000],
  ['gemini-2.5-', 1_048_576],
  ['gemini-3-', 1_048_576],
  ['gemini-3.1-', 1_048_576],
];

/** Whether `prefix` names `model` or a variant of it (`-` after the prefix). */
function namesModel(model: string, prefix: string): boolean {
  return (
    model.startsWith(prefix) &&
    (model.length === prefix.length || prefix.endsWith('-') || model[prefix.length] === '-')
  );
}

/** The window of `model` from {@link KNOWN_WINDOWS}, when the table knows it. */
export function knownWindow(model: string): number | undefined {
  let best: readonly [string, number] | undefined;
  for (const entry of KNOWN_WINDOWS) {
    if (namesModel(model, entry[0]) && (best === undefined || entry[0].length > best[0].length))
      best = entry;
  }
  return best?.[1];
}

/**
 * The window in force under `header`, for `model` (the header's, else the last answer's: an
 * imported session logs no request header); `undefined` when neither settings nor the table say.
 */
export function contextWindowOf(
  header: RequestHeaderData | undefined,
  model = header?.model,
): ContextWindow | undefined {
  const setting: JsonValue | undefined = header?.settings?.contextWindow;
  if (typeof setting === 'number' && Number.isFinite(setting) && setting > 0)
    return { tokens: setting, source: 'settings', model: model ?? '' };
  const known = model === undefined ? undefined : knownWindow(model);
  return known === undefined || model === undefined
    ? undefined
    : { tokens: known, source: 'known model', model };
}

/** Answers looked at, from the end, for the model of a session without a request header. */
const ANSWERS_LOOKED_AT = 2_000;

/** The window of the session as it now stands: its last request header, else its last answer's model. */
export function sessionContextWindow(viewed: ViewedSession): ContextWindow | undefined {
  const last = viewed.session.seq - 1;
  const header = viewed.headerAt(last)?.data;
  if (header !== undefined) return contextWindowOf(header);
  for (let seq = last; seq >= 0 && seq > last - ANSWERS_LOOKED_AT; seq--) {
    if (viewed.session.eventType(seq) !== 'assistant/message') continue;
    const event = viewed.session.event(seq);
    if (event !== undefined && isEventOfType(event, 'assistant/message'))
      return contextWindowOf(undefined, event.data.message.source.model);
  }
  return undefined;
}
