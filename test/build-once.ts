/**
 * Vitest global setup: the CLI tests run the built binary (dist/cli/main.js) and the viewer tests
 * the bundled page, so build the package once before the run when dist/ is missing or older than
 * any source file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

function newestSource(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export default function setup(): void {
  const binary = join(root, 'dist', 'cli', 'main.js');
  const page = join(root, 'dist', 'viewer', 'assets', 'page.js');
  const newest = newestSource(join(root, 'src'));
  const built = (file: string): boolean => existsSync(file) && statSync(file).mtimeMs >= newest;
  if (built(binary) && built(page)) return;
  execFileSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  // The viewer's page, bundled for the browser (the second half of npm run build).
  execFileSync(process.execPath, [join(root, 'scripts', 'bundle-viewer.mjs')], {
    cwd: root,
    stdio: 'inherit',
  });
}
