// @ts-check
/**
 * Bundles the viewer's page (src/viewer/page/main.ts, which imports core and markdown-it) into
 * dist/viewer/assets/page.js and page.css with esbuild: one script, no CDN, works offline.
 * Part of `npm run build`; takes well under a second.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'viewer', 'assets');
mkdirSync(out, { recursive: true });
/**
 * The entry point's first import is the module that asks for the session's stream as the script
 * begins (`early-stream.ts`): a bare import, which esbuild would drop under package.json's
 * `"sideEffects": false` and then evaluate the module only where the page's other modules reach
 * it, after core, markdown-it and the grammars.
 */
const earlyStreamFirst = {
  name: 'early-stream-first',
  /** @param {import('esbuild').PluginBuild} pluginBuild */
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\/early-stream\.js$/ }, (args) => ({
      path: join(args.resolveDir, 'early-stream.ts'),
      sideEffects: true,
    }));
  },
};
const result = await build({
  entryPoints: [join(root, 'src', 'viewer', 'page', 'main.ts')],
  plugins: [earlyStreamFirst],
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['chrome115', 'firefox115', 'safari16'],
  minify: process.env.PALIMPSEST_VIEWER_DEBUG !== '1',
  legalComments: 'none',
  charset: 'utf8',
  write: false,
  logLevel: 'warning',
});
// The HTML export inlines the script, where `</script`, `<script` or `<!--` would change how the
// HTML parser reads the element. In the bundle they occur only inside string and regular
// expression literals (markdown-it's HTML-block rules), where `\x3C` means the same `<`.
const script = (result.outputFiles[0]?.text ?? '').replace(/<(?=\/?script|!--)/gi, '\\x3C');
if (/<\/?script|<!--/i.test(script)) {
  throw new Error('the bundled page still holds <script, </script or <!--');
}
writeFileSync(join(out, 'page.js'), script);
// The page's styles, one file per part of the page, joined in this order (later rules win ties).
const STYLES = ['base', 'layout', 'conversation', 'trace', 'session', 'keys', 'trace-children'];
writeFileSync(
  join(out, 'page.css'),
  STYLES.map((name) =>
    readFileSync(join(root, 'src', 'viewer', 'page', 'styles', `${name}.css`), 'utf8'),
  ).join(''),
);
