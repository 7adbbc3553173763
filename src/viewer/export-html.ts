/**
 * `palimpsest export ID --format html`: the viewer as one file that opens from `file://`, for a
 * bug report. The session is JSON in a `<script type="application/json">` element (data the
 * browser never runs), escaped so no string in it can close that element; the page's code and
 * style are inline, allowed by a Content-Security-Policy that names their SHA-256 hashes and
 * nothing else, so nothing injected could run even if it got into the markup.
 */
import { createHash } from 'node:crypto';
import { Session, type SessionEvent, type SessionHeader } from '../core/index.js';
import { callDigests } from '../model/index.js';
import { pageAssets } from './assets.js';
import { ViewerError } from './errors.js';
import { pageDocument } from './page-html.js';
import { EMBEDDED_DATA_ID, type SessionSnapshot } from './protocol.js';

/**
 * JSON that is inert inside any HTML element: `<`, `>` and `&` as `\u` escapes (no `</script>`,
 * no comment opener), and, as in the CLI's JSON exports, C1 controls, line separators and
 * bidirectional controls too, so a reader of the file's source is not deceived either.
 * `JSON.parse` reads it back as the same value.
 */
export function inertJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The digest of each answered call's request, by its `step/start` seq (see `SessionSnapshot`). */
function requestDigestsOf(
  header: SessionHeader,
  events: readonly SessionEvent[],
): Record<string, string> {
  const session = Session.create({ header, seed: events });
  const digests: Record<string, string> = {};
  for (const call of callDigests(session)) {
    if (call.digest !== undefined) digests[call.stepStartSeq] = call.digest;
  }
  return digests;
}

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The self-contained HTML document of one session, with what the store said of it when it was
 * written (`verify`, `tree`) when the caller gives them.
 */
export function exportHtml(
  header: SessionHeader,
  events: readonly SessionEvent[],
  atExport: Pick<SessionSnapshot, 'verify' | 'tree'> = {},
): string {
  const { script, style } = pageAssets();
  if (/<\/script|<!--/i.test(script) || /<\/style/i.test(style)) {
    throw new ViewerError(
      'NOT_BUILT',
      'the bundled page holds a closing tag, so it cannot be inlined (rebuild with npm run build)',
    );
  }
  const snapshot: SessionSnapshot = {
    kind: 'snapshot',
    header,
    events,
    children: [],
    ...atExport,
    requestDigests: requestDigestsOf(header, events),
  };
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  const head = `<meta http-equiv="Content-Security-Policy" content="${csp}">\n<style>${style}</style>`;
  const bodyEnd = `<script type="application/json" id="${EMBEDDED_DATA_ID}">${inertJson(snapshot)}</script>\n<script>${script}</script>`;
  return pageDocument(head, bodyEnd);
}
