/**
 * `palimpsest view [ID] [--port N] [--open]`: serves the web viewer on 127.0.0.1 over the store
 * until Ctrl-C, and prints the page's URL (with its token). With ID it opens on that session,
 * which must exist.
 */
import { spawn } from 'node:child_process';
import { startViewerServer, ViewerError } from '../../viewer/index.js';
import type { CliContext } from '../context.js';
import { safeLine } from '../terminal.js';

/** The command that opens a URL in the desktop's browser, per platform. */
function opener(): { command: string; args: string[] } {
  if (process.platform === 'darwin') return { command: 'open', args: [] };
  if (process.platform === 'win32') return { command: 'cmd', args: ['/c', 'start', ''] };
  return { command: 'xdg-open', args: [] };
}

function parsePort(text: string | undefined): number {
  if (text === undefined) return 0;
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65_535) {
    throw new ViewerError(
      'INVALID_PORT',
      `--port expects an integer from 0 to 65535, found '${text}'`,
    );
  }
  return Number(text);
}

/** `palimpsest view`: serves until SIGINT or SIGTERM, then closes the server and the store. */
export async function viewCommand(
  context: CliContext,
  id: string | undefined,
  options: { port?: string; open?: boolean },
): Promise<void> {
  const port = parsePort(options.port);
  await context.withReader(async (store) => {
    // A mistyped id fails here (exit code 3) rather than as an error page.
    if (id !== undefined) await store.summarize(id);
    const server = await startViewerServer({ store, port });
    const url = id === undefined ? server.url : `${server.url}#/s/${encodeURIComponent(id)}`;
    context.terminal.line(url);
    context.terminal.note(
      `serving ${safeLine(context.printableStoreUrl, 200)} on 127.0.0.1:${server.port} until Ctrl-C`,
    );
    if (options.open === true) {
      const { command, args } = opener();
      const child = spawn(command, [...args, url], { stdio: 'ignore', detached: true });
      child.on('error', () =>
        context.terminal.note(`could not start ${command}; open the URL yourself`),
      );
      child.unref();
    }
    await new Promise<void>((resolve) => {
      const stop = (): void => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
  });
}
