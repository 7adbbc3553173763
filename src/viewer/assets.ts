/**
 * The bundled page (dist/viewer/assets/page.js and page.css, built by `npm run build` with
 * esbuild). Both the sources (src/viewer/) and the build (dist/viewer/) sit two levels below
 * the package root, so one relative path finds the bundle from either.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ViewerError } from './errors.js';

/** The page's script and stylesheet. */
export interface PageAssets {
  readonly script: string;
  readonly style: string;
}

const directory = new URL('../../dist/viewer/assets/', import.meta.url);
let cached: PageAssets | undefined;

/**
 * Reads the bundle once per process.
 *
 * @throws ViewerError (`NOT_BUILT`) when the bundle is missing (the package was not built).
 */
export function pageAssets(): PageAssets {
  if (cached !== undefined) return cached;
  try {
    cached = {
      script: readFileSync(new URL('page.js', directory), 'utf8'),
      style: readFileSync(new URL('page.css', directory), 'utf8'),
    };
  } catch (error) {
    throw new ViewerError(
      'NOT_BUILT',
      `the viewer's page is not built: expected ${fileURLToPath(directory)}page.js, found none (run npm run build)`,
      { cause: error },
    );
  }
  return cached;
}
