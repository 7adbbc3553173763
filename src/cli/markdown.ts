/**
 * Markdown written from untrusted text (model output, tool output, user input) for `export
 * --format markdown`: whatever the text holds, the document keeps its own structure and a
 * renderer shows the text, never runs it. Raw HTML is escaped, links with a scheme other than
 * http, https and mailto are defused, a line cannot become one of the export's own headings, and
 * a code fence the text opens is closed before the export goes on.
 */

/** A code block whose fence is longer than any backtick run in `text`, so the text cannot end it. */
export function codeBlock(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const ticks = '`'.repeat(Math.max(3, longest + 1));
  return `${ticks}\n${text}\n${ticks}`;
}

/**
 * Prose as inert Markdown: formatting (emphasis, lists, code) still renders, markup that would
 * act does not. Inside the text's own code fences nothing is changed, since a renderer shows
 * fenced text as it is.
 */
export function inertProse(text: string): string {
  const out: string[] = [];
  let open: { readonly marker: string; readonly length: number } | undefined;
  for (const line of text.split('\n')) {
    if (open === undefined) {
      const start = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      const info = start === null ? '' : line.slice(start[0].length);
      // A backtick fence's info string cannot hold a backtick (it would be a code span).
      if (start?.[1] !== undefined && !(start[1][0] === '`' && info.includes('`'))) {
        open = { marker: start[1][0] as string, length: start[1].length };
        out.push(line);
      } else {
        out.push(inertLine(line));
      }
      continue;
    }
    const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line)?.[1];
    if (close !== undefined && close[0] === open.marker && close.length >= open.length) {
      open = undefined;
    }
    out.push(line);
  }
  if (open !== undefined) out.push(open.marker.repeat(open.length));
  return out.join('\n');
}

const SAFE_SCHEMES = new Set(['http', 'https', 'mailto']);

function inertLine(line: string): string {
  return (
    line
      // `&` first, so that the entities below stay entities and the text's own cannot decode.
      .replace(/&/g, '&amp;')
      // A tag, closing tag, comment, declaration or autolink starts with `<` and one of these.
      .replace(/<(?=[A-Za-z/!?])/g, '&lt;')
      .replace(/^( {0,3})#/, '$1\\#')
      .replace(/^( {0,3})\[(?=[^\]]*\]:\s*([A-Za-z][A-Za-z0-9+.-]*):)/, (match, indent, scheme) =>
        isSafeScheme(scheme) ? match : `${indent}\\[`,
      )
      .replace(/\]\((?=\s*([A-Za-z][A-Za-z0-9+.-]*):)/g, (match, scheme: string) =>
        isSafeScheme(scheme) ? match : ']\\(',
      )
  );
}

function isSafeScheme(scheme: string): boolean {
  return SAFE_SCHEMES.has(scheme.toLowerCase());
}
