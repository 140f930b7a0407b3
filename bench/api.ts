// npm run bench:api — the API under load, against a bare hono route in the same run: with
// 10,000 jobs in the table, `wrk` (Debian package) drives GET /api/jobs?limit=100 and the
// batch progress route, and then a hello-world hono route on the same server stack.
// Target: throughput ≥ 0.5× the bare route, p99 < 20 ms.
//
// This machine is shared and noisy, so the three routes take turns: each round runs each route
// for `--seconds`, a route's ratio is taken against the bare route of the same round, and the
// median over the rounds is printed. wrk runs one thread less than there are cores (at least
// one), so that the load generator does not take the server's core away from it.
// Usage: npm run bench:api [-- --seconds 4 --rounds 5 --connections 16]
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { startServer } from '../src/api/server.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { openSqliteJobStore } from '../src/queue/index.js';
import { createArtifactStore, createRedactor } from '../src/store/index.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
  },
});
const home = mkdtempSync(join(tmpdir(), 'proctor-bench-api-'));
const config = loadConfig(home);
const store = openSqliteJobStore(config.dbPath, { clock: systemClock });
const { batch } = await store.enqueueBatch({
  label: 'bench',
  jobs: Array.from({ length: 10_000 }, (_, i) => ({
    kind: 'noop' as const,
    payload: { tag: `job ${i}` },
  })),
});
const server = await startServer({
  port: 0,
  store,
  artifacts: createArtifactStore({
    root: join(home, 'artifacts'),
    redactor: createRedactor(),
    clock: systemClock,
  }),
  config,
  secrets: [],
});
const bare = new Hono().get('/hello', (c) => c.json({ hello: 'world' }));
const bareServer = await new Promise<ReturnType<typeof serve>>((resolve) => {
  const s = serve({ fetch: bare.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
});
const barePort = (bareServer.address() as AddressInfo).port;

// wrk runs as a child while this process serves: spawnSync would block the event loop.
const run = promisify(execFile);
const cores = availableParallelism();
const threads = Math.max(1, cores - 1);
// With two cores or more, this process (the servers) keeps core 0 and wrk gets the others, so
// that the two do not take turns on one core: otherwise the figures would measure the
// scheduler as much as the server.
const pinned =
  cores >= 2 &&
  (await run('taskset', ['-p', '-c', '0', String(process.pid)]).then(
    () => true,
    () => false,
  ));
async function wrk(url: string) {
  const args = [
    `-t${threads}`,
    `-c${values.connections}`,
    `-d${values.seconds}s`,
    '--latency',
    url,
  ];
  const r = pinned
    ? await run('taskset', ['-c', `1-${cores - 1}`, 'wrk', ...args])
    : await run('wrk', args);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1]);
  const p99raw = /\s99%\s+([\d.]+)(us|ms|s)/.exec(r.stdout);
  const unit = { us: 0.001, ms: 1, s: 1000 }[(p99raw?.[2] ?? 'ms') as 'us' | 'ms' | 's'];
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(r.stdout)?.[1] ?? 0);
  return { rps, p99: Number(p99raw?.[1]) * unit, non2xx };
}

const base = `http://127.0.0.1:${server.port}`;
const routes = [
  ['GET /api/jobs?limit=100', `${base}/api/jobs?limit=100`],
  [`GET /api/batches/${batch?.id}`, `${base}/api/batches/${batch?.id}`],
  ['bare hono GET /hello', `http://127.0.0.1:${barePort}/hello`],
] as const;
type Run = Awaited<ReturnType<typeof wrk>>;
const runs: Run[][] = routes.map(() => []);
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [i, [, url]] of routes.entries()) runs[i]!.push(await wrk(url));
}
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const bareRuns = runs[routes.length - 1]!;
console.log(
  `10,000 jobs; wrk -t${threads} -c${values.connections} -d${values.seconds}s, ` +
    `${values.rounds} interleaved rounds; medians${pinned ? '; server on core 0, wrk on the rest' : ''}`,
);
console.log(['route', 'req/s', 'p99 ms', 'vs bare', 'ratios per round', 'non-2xx'].join('\t'));
for (const [i, [route]] of routes.entries()) {
  const own = runs[i]!;
  const ratios = own.map((r, round) => r.rps / bareRuns[round]!.rps);
  console.log(
    [
      route,
      median(own.map((r) => r.rps)).toFixed(0),
      median(own.map((r) => r.p99)).toFixed(2),
      median(ratios).toFixed(2),
      ratios.map((r) => r.toFixed(2)).join(' '),
      own.reduce((sum, r) => sum + r.non2xx, 0),
    ].join('\t'),
  );
}
await server.close();
bareServer.close();
await store.close();
rmSync(home, { recursive: true, force: true });
