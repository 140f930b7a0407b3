// npm run bench:queue — queue throughput, Proctor against plainjob and a raw better-sqlite3
// loop, in one run (this machine is shared and noisy: compare ratios, not absolutes).
//
// For each synchronous setting (NORMAL, which plainjob hard-codes, and FULL, Proctor's default):
//   (a) Proctor: one enqueueBatch of N no-op jobs, then the real worker pool drains them;
//   (b) plainjob: addMany of N jobs, then one worker drains them (processAll);
//   (c) raw: one INSERT transaction, then a loop of one claim UPDATE … RETURNING and one
//       fenced complete per job, each its own commit — the floor any queue pays.
// Each figure is the median of --runs interleaved runs, each on a fresh database.
// Usage: npm run bench:queue [-- --jobs 50000 --concurrency 64 --runs 3]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { better, defineQueue, defineWorker, JobStatus } from 'plainjob';
import { systemClock } from '../src/clock.js';
import { silentLogger } from '../src/logger.js';
import { openSqliteJobStore, type Synchronous } from '../src/queue/index.js';
import { createWorkerPool, noopHandler, type JobHandler } from '../src/workers/index.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '50000' },
    concurrency: { type: 'string', default: '64' },
    runs: { type: 'string', default: '3' },
  },
});
let N = Number(values.jobs);
const CONCURRENCY = Number(values.concurrency);
const RUNS = Number(values.runs);

/** The median of each figure over runs. */
function median(runs: Figures[]): Figures {
  const mid = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  return {
    enqueuePerSec: mid(runs.map((r) => r.enqueuePerSec)),
    processPerSec: mid(runs.map((r) => r.processPerSec)),
  };
}

interface Figures {
  enqueuePerSec: number;
  processPerSec: number;
}

const dirs: string[] = [];
function freshDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'proctor-bench-'));
  dirs.push(dir);
  return join(dir, 'queue.db');
}

async function proctor(sync: Synchronous): Promise<Figures> {
  const store = openSqliteJobStore(freshDb(), { clock: systemClock, synchronous: sync });
  const jobs = Array.from({ length: N }, () => ({ kind: 'noop' as const, payload: {} }));
  let t = performance.now();
  await store.enqueueBatch({ jobs });
  const enqueueMs = performance.now() - t;

  let finished = 0;
  let allFinished!: () => void;
  const done = new Promise<void>((resolve) => (allFinished = resolve));
  const handler: JobHandler = async (context) => {
    const output = await noopHandler(context);
    if (++finished === N) allFinished();
    return output;
  };
  const pool = createWorkerPool({
    store,
    clock: systemClock,
    logger: silentLogger,
    handlers: { noop: handler },
    concurrency: { noop: CONCURRENCY },
  });
  t = performance.now();
  await pool.start();
  await done;
  await pool.stop({ graceMs: 60_000 }); // waits for the last fenced completions to commit
  const processMs = performance.now() - t;
  const counts = await store.countByStatus();
  if (counts.done !== N) throw new Error(`proctor finished ${counts.done} of ${N}`);
  await store.close();
  return { enqueuePerSec: (N * 1000) / enqueueMs, processPerSec: (N * 1000) / processMs };
}

async function plainjob(sync: Synchronous): Promise<Figures> {
  const db = new Database(freshDb());
  const connection = better(db);
  const quiet = { error() {}, warn() {}, info() {}, debug() {} };
  const queue = defineQueue({ connection, logger: quiet });
  db.pragma(`synchronous = ${sync === 'full' ? 'FULL' : 'NORMAL'}`);
  const data = Array.from({ length: N }, () => ({}));
  let t = performance.now();
  queue.addMany('bench', data);
  const enqueueMs = performance.now() - t;
  const worker = defineWorker('bench', async () => {}, { queue, logger: quiet, pollIntervall: 5 });
  t = performance.now();
  // plainjob's own processAll (not exported by its build): run until nothing is pending.
  void worker.start();
  while (
    queue.countJobs({ status: JobStatus.Pending }) +
      queue.countJobs({ status: JobStatus.Processing }) >
    0
  ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await worker.stop();
  const processMs = performance.now() - t;
  queue.close();
  return { enqueuePerSec: (N * 1000) / enqueueMs, processPerSec: (N * 1000) / processMs };
}

function raw(sync: Synchronous): Figures {
  const db = new Database(freshDb());
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sync === 'full' ? 'FULL' : 'NORMAL'}`);
  db.exec(`CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0, payload TEXT NOT NULL, attempt INTEGER NOT NULL DEFAULT 0,
    lease_expires_at INTEGER, created_at INTEGER NOT NULL);
    CREATE INDEX jobs_claim ON jobs (kind, priority DESC, id) WHERE status = 'queued';`);
  const insert = db.prepare(
    "INSERT INTO jobs (kind, status, payload, created_at) VALUES ('noop', 'queued', '{}', ?)",
  );
  let t = performance.now();
  db.transaction(() => {
    for (let i = 0; i < N; i++) insert.run(Date.now());
  })();
  const enqueueMs = performance.now() - t;
  const claim =
    db.prepare(`UPDATE jobs SET status = 'running', attempt = attempt + 1, lease_expires_at = ?
    WHERE id = (SELECT id FROM jobs WHERE status = 'queued' AND kind = 'noop' ORDER BY priority DESC, id LIMIT 1)
    RETURNING id, attempt`);
  const complete = db.prepare(
    "UPDATE jobs SET status = 'done' WHERE id = ? AND attempt = ? AND status = 'running'",
  );
  t = performance.now();
  for (;;) {
    const job = claim.get(Date.now() + 60_000) as { id: number; attempt: number } | undefined;
    if (!job) break;
    complete.run(job.id, job.attempt);
  }
  const processMs = performance.now() - t;
  db.close();
  return { enqueuePerSec: (N * 1000) / enqueueMs, processPerSec: (N * 1000) / processMs };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(9);
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`.padStart(7);

console.log(
  `queue benchmark: ${N.toLocaleString('en-US')} no-op jobs, median of ${RUNS} runs, Proctor pool concurrency ${CONCURRENCY}, node ${process.version}`,
);
try {
  // Warm-up: one small round of each system, so that no system pays JIT start-up alone.
  const measured = N;
  N = Math.min(5_000, measured);
  await proctor('normal');
  await plainjob('normal');
  raw('normal');
  N = measured;
  for (const sync of ['normal', 'full'] as const) {
    // Runs interleave (proctor, plainjob, raw, proctor, …) so that a noisy spell on this
    // shared machine hits every system alike.
    const runs: Record<'p' | 'j' | 'r', Figures[]> = { p: [], j: [], r: [] };
    for (let i = 0; i < RUNS; i++) {
      runs.p.push(await proctor(sync));
      runs.j.push(await plainjob(sync));
      runs.r.push(raw(sync));
    }
    const [p, j, r] = [median(runs.p), median(runs.j), median(runs.r)];
    console.log(
      `\nsynchronous=${sync.toUpperCase()}${sync === 'full' ? ' (Proctor default)' : ' (plainjob default)'}`,
    );
    console.log(
      'system     enqueue/s  process/s  enqueue vs plainjob  process vs plainjob  process vs raw',
    );
    console.log(
      `proctor    ${fmt(p.enqueuePerSec)}  ${fmt(p.processPerSec)}  ${ratio(p.enqueuePerSec, j.enqueuePerSec).padStart(19)}  ${ratio(p.processPerSec, j.processPerSec).padStart(19)}  ${ratio(p.processPerSec, r.processPerSec).padStart(14)}`,
    );
    console.log(`plainjob   ${fmt(j.enqueuePerSec)}  ${fmt(j.processPerSec)}`);
    console.log(`raw loop   ${fmt(r.enqueuePerSec)}  ${fmt(r.processPerSec)}`);
  }
} finally {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
