/**
 * Untrusted text in a Markdown export renders as text. The renderer is markdown-it with raw HTML
 * on and its own link filter off: the most permissive renderer a reader might use.
 */
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { codeBlock, inertProse } from '../../src/cli/markdown.js';

const renderer = new MarkdownIt({ html: true, linkify: true });
renderer.validateLink = () => true;
const render = (markdown: string): string => renderer.render(markdown);

/** The schemes of the links in rendered HTML, decoded once as a browser decodes attributes. */
function linkSchemes(html: string): string[] {
  return [...html.matchAll(/href="([^"]*)"/g)].flatMap((match) => {
    const url = (match[1] ?? '')
      .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) =>
        String.fromCodePoint(Number.parseInt(hex, 16)),
      )
      .replace(/&#(\d+);/g, (_, digits: string) => String.fromCodePoint(Number(digits)))
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
    // Browsers skip leading spaces and C0 controls before a URL's scheme.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: skipping them is the point.
    const scheme = /^[\s\u0000-\u001f]*([a-z][a-z0-9+.-]*):/i.exec(url)?.[1];
    return scheme === undefined ? [] : [scheme.toLowerCase()];
  });
}

describe('inert prose', () => {
  it('shows raw HTML as text instead of running it', () => {
    for (const html of [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '</p><iframe src="https://evil.example"></iframe>',
      '<!-- hide --><?php echo 1 ?>',
      '<a href="javascript:alert(1)">x</a>',
    ]) {
      const out = render(inertProse(`before ${html} after`));
      expect(out).not.toMatch(/<(script|img|iframe|\?php|!--)/);
      expect(linkSchemes(out).filter((scheme) => scheme !== 'https')).toEqual([]);
      expect(out).toContain('before');
    }
  });

  it('defuses links and link definitions whose scheme could run code', () => {
    for (const text of [
      '[click](javascript:alert(1))',
      '[click]( JavaScript:alert(1))',
      '[click](data:text/html;base64,PHNjcmlwdD4=)',
      '[click](vbscript:msgbox(1))',
      '[click][ref]\n\n[ref]: javascript:alert(1)',
      '<javascript:alert(1)>',
      '[click](&#106;avascript:alert(1))',
    ]) {
      expect(linkSchemes(render(inertProse(text))), text).toEqual([]);
    }
  });

  it('keeps ordinary Markdown and web links working', () => {
    const out = render(inertProse('Some **bold** and `code`, a [site](https://example.com).'));
    expect(out).toContain('<strong>bold</strong>');
    expect(out).toContain('<code>code</code>');
    expect(out).toContain('<a href="https://example.com">site</a>');
  });

  it('cannot forge a heading of the export', () => {
    expect(render(inertProse('### User · #12\nignore the above'))).not.toMatch(/<h\d/);
  });

  it('closes a code fence the text leaves open, so the rest of the export stays outside it', () => {
    const out = render(`${inertProse('look:\n```ts\nconst x = 1;')}\n\n### Next`);
    expect(out).toContain('<h3>Next</h3>');
  });

  it('leaves the inside of the text own code fences untouched', () => {
    const out = render(inertProse('```ts\nconst list: Array<string> = [];\n```'));
    expect(out).toContain('Array&lt;string&gt;');
    expect(out).not.toContain('&amp;lt;');
  });

  it('shows entities in the text as they were written', () => {
    expect(render(inertProse('AT&amp;T &lt;b&gt;'))).toContain('AT&amp;amp;T &amp;lt;b&amp;gt;');
  });
});

describe('code blocks', () => {
  it('use a fence longer than any backtick run in the text, which cannot close them', () => {
    const text = 'a ```` b\n```\n<script>alert(1)</script>';
    const block = codeBlock(text);
    expect(block.startsWith('`````\n')).toBe(true);
    const out = render(`${block}\n\n### After`);
    expect(out).not.toContain('<script>');
    expect(out).toContain('<h3>After</h3>');
  });
});
