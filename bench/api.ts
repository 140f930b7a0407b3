// npm run bench:api — the API under load, against a bare hono route in the same run: with
// 10,000 jobs in the table, `wrk` (Debian package) drives GET /api/jobs?limit=100 and the
// batch progress route, and then a hello-world hono route on the same server stack.
// Target: throughput ≥ 0.5× the bare route, p99 < 20 ms.
// Usage: npm run bench:api [-- --seconds 10 --connections 16]
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
    seconds: { type: 'string', default: '10' },
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
async function wrk(url: string) {
  const r = await run('wrk', [
    '-t2',
    `-c${values.connections}`,
    `-d${values.seconds}s`,
    '--latency',
    url,
  ]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1]);
  const p99raw = /\s99%\s+([\d.]+)(us|ms|s)/.exec(r.stdout);
  const unit = { us: 0.001, ms: 1, s: 1000 }[(p99raw?.[2] ?? 'ms') as 'us' | 'ms' | 's'];
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(r.stdout)?.[1] ?? 0);
  return { rps, p99: Number(p99raw?.[1]) * unit, non2xx };
}

const base = `http://127.0.0.1:${server.port}`;
const rows = [
  ['GET /api/jobs?limit=100', await wrk(`${base}/api/jobs?limit=100`)],
  [`GET /api/batches/${batch?.id}`, await wrk(`${base}/api/batches/${batch?.id}`)],
  ['bare hono GET /hello', await wrk(`http://127.0.0.1:${barePort}/hello`)],
] as const;
const bareRps = rows[2][1].rps;
console.log(`10,000 jobs; wrk -t2 -c${values.connections} -d${values.seconds}s`);
console.log(['route', 'req/s', 'p99 ms', 'vs bare', 'non-2xx'].join('\t'));
for (const [route, r] of rows) {
  console.log(
    [route, r.rps.toFixed(0), r.p99.toFixed(2), (r.rps / bareRps).toFixed(2), r.non2xx].join('\t'),
  );
}
await server.close();
bareServer.close();
await store.close();
rmSync(home, { recursive: true, force: true });
