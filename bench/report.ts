// npm run bench:report — `proctor report` of one 100,000-job batch, against a raw SELECT scan of
// the same rows (the floor: read every row once, no parsing), in one run on this machine.
//
// The batch is inserted straight into a real, migrated SQLite home (one transaction of raw
// INSERTs; the batch_counts triggers fire as they would for enqueues), as finished grades with
// results shaped like the oracle's: 40 % PASS, the rest FAIL with a reason, 2 % failed on a
// machine error, a few still queued. Figures (median of --runs):
//   raw scan       SELECT id, status, payload, result FROM jobs WHERE batch_id = ? (iterate)
//   report (lib)   loadBatch + summary + table text, in-process through the JobStore
//   report (cli)   the real binary, `proctor report BATCH` and `--format jsonl --out FILE`,
//                  start-up included (the 2 s target is for both)
//   progress       batchProgress (the trigger-kept row) against counting the batch's jobs
// Usage: npm run bench:report [-- --jobs 100000 --runs 3 --keep]  (--keep: leave the seeded
// home in place and print its path, for `node --cpu-prof bin/proctor.js --home DIR report …`)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from '../src/clock.js';
import { openSqliteJobStore } from '../src/queue/index.js';
import { loadBatch, summaryLines } from '../src/results/index.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '3' },
    // Keeps the seeded home and prints its path, to profile the bin against it.
    keep: { type: 'boolean', default: false },
  },
});
const N = Number(values.jobs);
const RUNS = Number(values.runs);
const ROOT = new URL('..', import.meta.url).pathname;

const REASONS = ['HIDDEN_FAILED', 'EXISTING_FAILED', 'APPLY_FAILED', 'TIMEOUT', 'TESTS_MISSING'];

function result(i: number) {
  const pass = i % 5 < 2;
  const task = `task-${String(i).padStart(6, '0')}`;
  return JSON.stringify({
    verdict: pass ? 'PASS' : 'FAIL',
    reason: pass ? 'PASS' : REASONS[i % REASONS.length],
    detail: pass
      ? '12 existing and 3 hidden tests passed'
      : 'hidden phase: 2 tests not passed: tests/test_x.py::test_a (failed), tests/test_x.py::test_b (error)',
    testsHash: (i % 16).toString(16).repeat(64),
    task: {
      id: task,
      contentHash: 'c'.repeat(64),
      source: {
        dataset: 'SWE-bench/SWE-bench_Lite',
        instance_id: `org__repo-${i}`,
        repo: 'org/repo',
      },
    },
    image: {
      portable: false,
      kind: 'local_build',
      imageId: `sha256:${'d'.repeat(64)}`,
      localId: `sha256:${'d'.repeat(64)}`,
    },
    diffSha256: 'e'.repeat(64),
    log: '00000000-0000-4000-8000-000000000000',
    timings: { image: 12, workspace: 230, apply: 40, existing: 1200, hidden: 900, cleanup: 80 },
  });
}

function seed(home: string): string {
  const store = openSqliteJobStore(join(home, 'proctor.db'), { clock: systemClock });
  const { sqlite } = store.database;
  const batchId = 'b_bench00000000000000';
  const insert = sqlite.prepare(
    `INSERT INTO jobs (batch_id, kind, status, payload, attempt, run_at, created_at, updated_at, started_at, finished_at, result, error_code, last_error)
     VALUES (?, 'grade', ?, ?, 1, 0, 0, 0, ?, ?, ?, ?, ?)`,
  );
  sqlite.transaction(() => {
    sqlite
      .prepare(
        "INSERT INTO batches (id, request_hash, label, total, created_at) VALUES (?, 'h', 'bench', ?, 0)",
      )
      .run(batchId, N);
    for (let i = 0; i < N; i++) {
      const payload = JSON.stringify({
        bundle: `/suites/lite/task-${String(i).padStart(6, '0')}`,
        candidate: '00000000-0000-4000-8000-000000000001',
      });
      const start = 1_000_000 + i * 10;
      if (i % 1000 === 999) insert.run(batchId, 'queued', payload, null, null, null, null, null);
      else if (i % 50 === 7) {
        insert.run(batchId, 'failed', payload, start, start + 5_000, null, 'DOCKER_ERROR', 'gone');
      } else
        insert.run(
          batchId,
          'done',
          payload,
          start,
          start + 2_000 + (i % 997),
          result(i),
          null,
          null,
        );
    }
  })();
  // The attempt column's CHECK is satisfied; a queued job with attempt 1 is a released one.
  void store.close();
  return batchId;
}

// The CPU time (user + sys) of the CLI runs, from the waited-for children's times in
// /proc/self/stat (Linux; null elsewhere): on a shared, loaded machine it says more than wall
// time does.
const TICK_MS =
  1000 / (Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100);
function childrenCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of proc(5), cutime and cstime; this array starts at field 3.
    return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
  } catch {
    return null;
  }
}

/** Runs the bin, pushing its CPU time onto `cpu` when known. */
function cli(args: string[], cpu: number[]) {
  const before = childrenCpuMs();
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/proctor.js'), ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  const after = childrenCpuMs();
  if (before !== null && after !== null) cpu.push(after - before);
}

const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function time(fn: () => unknown): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const home = mkdtempSync(join(tmpdir(), 'proctor-bench-report-'));
try {
  const batchId = seed(home);
  const store = openSqliteJobStore(join(home, 'proctor.db'), { clock: systemClock });
  const { sqlite } = store.database;
  const scan = sqlite.prepare('SELECT id, status, payload, result FROM jobs WHERE batch_id = ?');
  const countScan = sqlite.prepare(
    'SELECT status, count(*) AS n FROM jobs WHERE batch_id = ? GROUP BY status',
  );
  const figures = { raw: [] as number[], lib: [] as number[], table: [] as number[] };
  const cpu = { table: [] as number[], jsonl: [] as number[] };
  const extra = { jsonl: [] as number[], progress: [] as number[], countScan: [] as number[] };
  let lines = 0;
  for (let run = 0; run < RUNS; run++) {
    figures.raw.push(
      await time(() => {
        let n = 0;
        for (const row of scan.iterate(batchId)) if (row) n++;
        if (n !== N) throw new Error(`scanned ${n} rows`);
      }),
    );
    figures.lib.push(
      await time(async () => {
        const loaded = await loadBatch(store, batchId);
        lines = summaryLines(loaded.summary).length;
      }),
    );
    figures.table.push(await time(() => cli(['--home', home, 'report', batchId], cpu.table)));
    extra.jsonl.push(
      await time(() =>
        cli(
          [
            '--home',
            home,
            'report',
            batchId,
            '--format',
            'jsonl',
            '--out',
            join(home, 'rows.jsonl'),
          ],
          cpu.jsonl,
        ),
      ),
    );
    extra.progress.push(await time(() => store.batchProgress(batchId)));
    extra.countScan.push(await time(() => countScan.all(batchId)));
  }
  await store.close();
  const raw = median(figures.raw);
  const row = (name: string, ms: number) =>
    console.log(
      `${name.padEnd(34)}${ms.toFixed(1).padStart(10)} ms${(ms / raw).toFixed(2).padStart(9)}× raw`,
    );
  console.log(
    `report of one ${N.toLocaleString('en')}-job batch (median of ${RUNS}; ${lines} table lines)`,
  );
  row('raw SELECT scan (baseline)', raw);
  row('report, in-process (load + summary)', median(figures.lib));
  row('proctor report (cli, table)', median(figures.table));
  row('proctor report --format jsonl --out', median(extra.jsonl));
  if (cpu.table.length > 0 && cpu.jsonl.length > 0) {
    console.log(
      `cpu (user+sys) of the cli runs: table ${median(cpu.table).toFixed(0)} ms, jsonl ${median(cpu.jsonl).toFixed(0)} ms`,
    );
  }
  const progress = median(extra.progress);
  const counted = median(extra.countScan);
  console.log(
    `batchProgress (trigger-kept row)  ${progress.toFixed(3).padStart(10)} ms; counting the batch: ${counted.toFixed(1)} ms (${(counted / progress).toFixed(0)}× slower)`,
  );
  // The target: a report of a 100,000-job batch in <= 2 s, end to end through
  // the CLI, for the table and for the jsonl rows alike.
  const missed: string[] = [];
  for (const [name, ms] of [
    ['table', median(figures.table)],
    ['jsonl', median(extra.jsonl)],
  ] as const) {
    console.log(
      ms <= 2000
        ? `target met (${name}): ${ms.toFixed(0)} ms <= 2000 ms`
        : `TARGET MISSED (${name}): ${ms.toFixed(0)} ms > 2000 ms`,
    );
    if (ms > 2000) missed.push(name);
  }
  if (missed.length > 0) process.exitCode = 1;
} finally {
  if (values.keep) console.log(`kept ${home} (batch b_bench00000000000000)`);
  else rmSync(home, { recursive: true, force: true });
}
