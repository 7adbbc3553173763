/**
 * A throwaway PostgreSQL server for the tests: a fresh cluster in the OS temp folder, started on
 * a free loopback port as the `postgres` user (when the tests run as root, which the server
 * refuses to be), and removed when stopped. The machine image ships PostgreSQL 15 (`initdb`,
 * `pg_ctl`, `postgres` on the PATH or in /usr/lib/postgresql/<version>/bin).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running server: its connection URL and how to stop and restart it. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** `pg_ctl restart -m immediate`: every backend is killed, as a crash would. */
  restartImmediate(): void;
  stop(): void;
}

/** Where `initdb` and `pg_ctl` are, or undefined when this machine has no PostgreSQL. */
export function postgresBinaries(): string | undefined {
  const candidates = ['/usr/local/bin', '/usr/bin'];
  const lib = '/usr/lib/postgresql';
  if (existsSync(lib)) {
    for (const version of readdirSync(lib).sort().reverse())
      candidates.push(join(lib, version, 'bin'));
  }
  return candidates.find(
    (dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')),
  );
}

/** A TCP port nobody listens on now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a fresh cluster; throws when there are no binaries. */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBinaries();
  if (bin === undefined) throw new Error('no PostgreSQL binaries (initdb, pg_ctl) on this machine');
  const root = mkdtempSync(join(tmpdir(), 'palimpsest-pg-'));
  const dataDir = join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  const account = asRoot ? postgresAccount() : undefined;
  if (account !== undefined) {
    chownSync(root, account.uid, account.gid);
    chmodSync(root, 0o700);
  }
  const run = (tool: string, args: string[]): string =>
    execFileSync(
      account === undefined ? join(bin, tool) : 'runuser',
      account === undefined ? args : ['-u', 'postgres', '--', join(bin, tool), ...args],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
  run('initdb', [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '-A',
    'trust',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    '-h 127.0.0.1',
    `-k ${root}`,
    '-c max_connections=200',
    '-c shared_buffers=64MB',
  ].join(' ');
  const start = (): void => {
    run('pg_ctl', [
      '-D',
      dataDir,
      '-l',
      join(root, 'server.log'),
      '-w',
      '-t',
      '60',
      '-o',
      options,
      'start',
    ]);
  };
  start();
  const watchdog = stopWhenOrphaned(process.pid, root, dataDir, bin, account !== undefined);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    restartImmediate: () => {
      // With its log file named, as at start: the server must not inherit pg_ctl's stdout, which
      // execFileSync would otherwise wait on for as long as the server runs.
      run('pg_ctl', [
        '-D',
        dataDir,
        '-l',
        join(root, 'server.log'),
        '-m',
        'immediate',
        '-w',
        '-t',
        '60',
        '-o',
        options,
        'restart',
      ]);
    },
    stop: () => {
      watchdog.kill();
      try {
        run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

/**
 * A detached shell that stops the server and removes its folder once `pid` is gone: a test run
 * killed before its teardown (a timeout, ^C, kill -9) must not leave a server running.
 */
function stopWhenOrphaned(
  pid: number,
  root: string,
  dataDir: string,
  bin: string,
  asPostgres: boolean,
): ChildProcess {
  const pgCtl = `${asPostgres ? 'runuser -u postgres -- ' : ''}'${join(bin, 'pg_ctl')}'`;
  const script = `while kill -0 ${pid} 2>/dev/null; do sleep 1; done; ${pgCtl} -D '${dataDir}' -m immediate -w -t 30 stop >/dev/null 2>&1; rm -rf '${root}'`;
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return child;
}

function postgresAccount(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}
