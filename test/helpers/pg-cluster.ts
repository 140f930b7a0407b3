// A PostgreSQL cluster of one test's own, for tests that stop or restart the server (never the
// shared cluster of .ci/postgres, which every other test uses): initdb in a temp folder, its own
// unix socket folder and port, stopped and deleted after the test. As root, the server runs as
// the postgres user (initdb and postgres refuse root), as in .ci/postgres.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onCleanup } from './temp.js';

export interface TestCluster {
  /** postgres://… of the cluster's `postgres` database, on its unix socket. */
  url: string;
  /** pg_ctl stop -m fast (clients are cut off; the server is gone until start). */
  stop(): void;
  start(): void;
  /** pg_ctl restart -m fast. */
  restart(): void;
}

function pgBin(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b));
  const last = versions.at(-1);
  if (last === undefined) throw new Error('no PostgreSQL server binaries in /usr/lib/postgresql');
  return `/usr/lib/postgresql/${last}/bin`;
}

export function startTestCluster(): TestCluster {
  const bin = pgBin();
  const dir = mkdtempSync(join(tmpdir(), 'proctor-pgc-'));
  chmodSync(dir, 0o755);
  const root = process.getuid?.() === 0;
  const owner = root ? Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })) : -1;
  if (root) chownSync(dir, owner, owner);
  const as = (cmd: string, args: string[]) =>
    root
      ? execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { stdio: 'pipe' })
      : execFileSync(cmd, args, { stdio: 'pipe' });
  const data = join(dir, 'data');
  as(`${bin}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
  const ctl = (...args: string[]) =>
    as(`${bin}/pg_ctl`, ['-D', data, '-w', '-t', '60', '-l', join(dir, 'log'), ...args]);
  // Unix socket only, in the cluster's own folder: the port only names the socket file there,
  // so no two clusters (nor the shared one) can collide on it.
  const port = 56000 + Math.floor(Math.random() * 4000);
  const options = `-p ${port} -k ${dir} -c listen_addresses='' -c fsync=off -c max_connections=100`;
  const start = () => ctl('-o', options, 'start');
  start();
  let running = true;
  onCleanup(() => {
    if (running) ctl('-m', 'immediate', 'stop');
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: `postgres://postgres@localhost:${port}/postgres?host=${dir}`,
    stop: () => {
      ctl('-m', 'fast', 'stop');
      running = false;
    },
    start: () => {
      start();
      running = true;
    },
    restart: () => {
      ctl('-m', 'fast', '-o', options, 'restart');
      running = true;
    },
  };
}
