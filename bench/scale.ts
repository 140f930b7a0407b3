// npm run bench:scale — (a) the claim race: P processes × S slots drain N no-op jobs from one
// queue, each job claimed and completed exactly once; jobs/s for the PostgreSQL store, for a
// raw SQL loop on the same PostgreSQL (the same claim CTE and fenced update, one claim and one
// finish per job, without the store around them), and for the SQLite store (P processes on
// one file), in one run; with --compare-counts also for the PostgreSQL store without its
// batch_counts triggers, to price them.
// (c) wake-up latency: one store listens (LISTEN), another enqueues one job at a time; the
// time from the enqueue call to the listener hearing its kind, p50 and p99, beside the
// enqueue's own round trip (the part of it that is not NOTIFY).
// (b) container jobs on 1 and on 3 namespace hosts, each with its own dockerd: bench/scale-hosts.ts,
// run last (it needs root; `tsx bench/scale-hosts.ts` runs it alone, with its own options).
//
// PostgreSQL is the throw-away cluster of .ci/postgres (fsync=off: compare ratios, and the
// SQLite figure, which fsyncs with synchronous=FULL, only as a shape). Each case gets a fresh
// database. Usage: npm run bench:scale [-- --jobs 20000 --processes 3 --slots 8 --samples 200
// --compare-counts]
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { systemClock } from '../src/clock.js';
import { openSqliteJobStore, type JobStore } from '../src/queue/index.js';
import { openPgJobStore } from '../src/queue/pg/store.js';
import { benchScaleHosts } from './scale-hosts.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    jobs: { type: 'string', default: '20000' },
    processes: { type: 'string', default: '3' },
    slots: { type: 'string', default: '8' },
    samples: { type: 'string', default: '200' },
    // Also race the PostgreSQL store with its batch_counts triggers dropped, to price them.
    'compare-counts': { type: 'boolean', default: false },
  },
});
const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
type Case = 'postgres' | 'raw-postgres' | 'sqlite' | 'postgres-no-counts';

// ---- child: drain the queue with S slots, print the ids it completed --------------------
async function child(kind: Case, target: string, slots: number): Promise<void> {
  const owner = `bench-${process.pid}`;
  const done: number[] = [];
  let drain: () => Promise<void>;
  let close: () => Promise<void>;
  if (kind === 'raw-postgres') {
    const pool = new pg.Pool({ connectionString: target, max: slots });
    const claim = `WITH next AS (SELECT id FROM jobs WHERE status = 'queued' AND kind = 'noop'
        AND run_at <= floor(extract(epoch from now()) * 1000)::bigint
        ORDER BY priority DESC, run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
      UPDATE jobs j SET status = 'running', attempt = j.attempt + 1, lease_owner = $1,
        lease_expires_at = floor(extract(epoch from now()) * 1000)::bigint + 60000
      FROM next WHERE j.id = next.id RETURNING j.id, j.attempt`;
    const complete = `UPDATE jobs SET status = 'done', lease_owner = NULL, lease_expires_at = NULL,
        finished_at = floor(extract(epoch from now()) * 1000)::bigint
      WHERE id = $1 AND attempt = $2 AND status = 'running'`;
    drain = async () => {
      for (;;) {
        const { rows } = await pool.query<{ id: string; attempt: number }>(claim, [owner]);
        const row = rows[0];
        if (!row) return;
        await pool.query(complete, [row.id, row.attempt]);
        done.push(Number(row.id));
      }
    };
    close = () => pool.end();
  } else {
    const store: JobStore =
      kind === 'postgres' || kind === 'postgres-no-counts'
        ? openPgJobStore(target, { maxConnections: slots, migrate: false })
        : openSqliteJobStore(target, { clock: systemClock });
    drain = async () => {
      for (;;) {
        const [job] = await store.claim('noop', owner, 1, 60_000);
        if (!job) return;
        if (!(await store.complete(job, null))) throw new Error(`lost job ${job.id}`);
        done.push(job.id);
      }
    };
    close = () => store.close();
  }
  process.stdout.write('ready\n');
  // Start together: the parent writes one line to every child at once.
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  await Promise.all(Array.from({ length: slots }, drain));
  await close();
  process.stdout.write(`done ${done.join(',')}\n`);
}

// ---- parent -------------------------------------------------------------------------------
async function prepare(
  kind: Case,
  jobs: number,
): Promise<{ target: string; cleanup: () => Promise<void> }> {
  const jobsList = Array.from({ length: jobs }, () => ({ kind: 'noop' as const, payload: {} }));
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'proctor-bench-scale-'));
    const path = join(dir, 'proctor.db');
    const store = openSqliteJobStore(path, { clock: systemClock });
    await store.enqueueBatch({ jobs: jobsList });
    await store.close();
    return {
      target: path,
      cleanup: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const base = execFileSync('bash', [join(ROOT, '.ci/postgres')], { encoding: 'utf8' }).trim();
  const name = `proctor_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const store = openPgJobStore(url.toString());
  if (jobs > 0) await store.enqueueBatch({ jobs: jobsList });
  else await store.migrate();
  await store.close();
  if (kind === 'postgres-no-counts') {
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    for (const t of ['insert', 'update', 'delete'])
      await client.query(`DROP TRIGGER batch_counts_${t} ON jobs`);
    await client.end();
  }
  return {
    target: url.toString(),
    cleanup: () => admin(`DROP DATABASE ${name} WITH (FORCE)`),
  };
}

async function race(kind: Case, jobs: number, processes: number, slots: number) {
  const { target, cleanup } = await prepare(kind, jobs);
  try {
    const children = Array.from({ length: processes }, () => {
      const c = spawn(
        process.execPath,
        ['--import', 'tsx', SELF, 'child', kind, target, String(slots)],
        {
          cwd: ROOT,
          stdio: ['pipe', 'pipe', 'inherit'],
        },
      );
      let out = '';
      c.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => c.on('exit', resolve));
      return { c, out: () => out, exited };
    });
    while (!children.every((ch) => ch.out().includes('ready'))) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const start = process.hrtime.bigint();
    for (const ch of children) ch.c.stdin.end('go\n');
    const codes = await Promise.all(children.map((ch) => ch.exited));
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (codes.some((code) => code !== 0))
      throw new Error(`a ${kind} child failed: ${codes.join(',')}`);
    const ids = children.flatMap((ch) =>
      (/done (.*)/.exec(ch.out())?.[1] ?? '').split(',').filter(Boolean).map(Number),
    );
    const unique = new Set(ids).size;
    if (ids.length !== jobs || unique !== jobs) {
      throw new Error(
        `${kind}: ${ids.length} completions of ${unique} distinct jobs, expected ${jobs} once each`,
      );
    }
    return { seconds, perSec: jobs / seconds };
  } finally {
    await cleanup();
  }
}

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;

async function wakeupLatency(samples: number): Promise<void> {
  const { target, cleanup } = await prepare('postgres', 0);
  const listener = openPgJobStore(target, { migrate: false });
  const producer = openPgJobStore(target, { migrate: false });
  try {
    let heard: (() => void) | undefined;
    const stop = await listener.subscribe!(() => heard?.());
    const wake: number[] = [];
    const roundTrip: number[] = [];
    for (let i = 0; i < samples; i++) {
      const arrived = new Promise<void>((resolve) => (heard = resolve));
      const start = process.hrtime.bigint();
      await producer.enqueue({ kind: 'noop', payload: {} });
      const enqueued = process.hrtime.bigint();
      await arrived;
      const woke = process.hrtime.bigint();
      roundTrip.push(Number(enqueued - start) / 1e6);
      wake.push(Number(woke - start) / 1e6);
    }
    await stop();
    const ms = (x: number) => `${x.toFixed(2)} ms`;
    console.log(`(c) wake-up latency over ${samples} enqueues (enqueue call to listener)`);
    console.log(
      `  enqueue to wake-up  p50 ${ms(percentile(wake, 50))}  p99 ${ms(percentile(wake, 99))}`,
    );
    console.log(
      `  enqueue round trip  p50 ${ms(percentile(roundTrip, 50))}  p99 ${ms(percentile(roundTrip, 99))}`,
    );
  } finally {
    await listener.close();
    await producer.close();
    await cleanup();
  }
}

async function main(): Promise<void> {
  const jobs = Number(values.jobs);
  const processes = Number(values.processes);
  const slots = Number(values.slots);
  console.log(`(a) claim race: ${processes} processes x ${slots} slots drain ${jobs} no-op jobs`);
  const results: Array<[Case, { seconds: number; perSec: number }]> = [];
  const cases: Case[] = ['raw-postgres', 'postgres', 'sqlite'];
  if (values['compare-counts']) cases.push('postgres-no-counts');
  for (const kind of cases) {
    const result = await race(kind, jobs, processes, slots);
    results.push([kind, result]);
    console.log(
      `  ${kind.padEnd(18)} ${result.seconds.toFixed(2).padStart(7)} s  ${Math.round(result.perSec).toString().padStart(6)} jobs/s  (each job exactly once)`,
    );
  }
  const by = Object.fromEntries(results) as unknown as Record<Case, { perSec: number }>;
  console.log(
    `  PostgreSQL store / raw SQL: ${(by.postgres.perSec / by['raw-postgres'].perSec).toFixed(2)}x; PostgreSQL store / SQLite store: ${(by.postgres.perSec / by.sqlite.perSec).toFixed(2)}x; target >= 1000 jobs/s: ${by.postgres.perSec >= 1000 ? 'met' : 'NOT met'}`,
  );
  if (values['compare-counts']) {
    console.log(
      `  batch_counts triggers: PostgreSQL store with / without them: ${(by.postgres.perSec / by['postgres-no-counts'].perSec).toFixed(2)}x`,
    );
  }
  await wakeupLatency(Number(values.samples));
  await benchScaleHosts({ jobs: 200, slots: 4, hosts: 3, rounds: 3 });
}

if (positionals[0] === 'child') {
  await child(positionals[1] as Case, positionals[2] as string, Number(positionals[3]));
} else {
  await main();
}
