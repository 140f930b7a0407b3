// npm run bench:oracle — the oracle's speed, against the raw baseline in the same run (this
// machine is shared and noisy: compare ratios, not absolutes).
//
//  (a) grade wall time per example: `proctor grade BUNDLE --patch solution/gold.patch --wait`
//      (the whole command: start-up, database, in-process worker, image check, evaluation,
//      oracle log) against bench/oracle-baseline.sh, the minimal raw docker steps (volume,
//      copy, apply, the runner twice). Interleaved, median of --runs. Target: ≤ 1.25×.
//  (b) a sweep of --sweep baseline jobs (copies of the examples) at concurrency 2: wall time
//      against the ideal, the sum of the jobs' evaluation times (containers, from each job's
//      result) divided by 2. Target: ≥ 85 % efficiency.
// Usage: npm run bench:oracle [-- --runs 5 --sweep 40]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const EXAMPLES = join(ROOT, 'examples');
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    sweep: { type: 'string', default: '40' },
  },
});
const RUNS = Number(values.runs);
const SWEEP = Number(values.sweep);

const temp: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'proctor-bench-oracle-'));
  temp.push(dir);
  return dir;
}

function timed(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const started = performance.now();
  const result = spawnSync(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const ms = performance.now() - started;
  if (result.status !== 0 && result.status !== 1) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  }
  return { ms, stdout: result.stdout, status: result.status };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const bundles = readdirSync(EXAMPLES, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => join(EXAMPLES, e.name))
  .sort();

// (a) one grade per example, Proctor against the raw script.
console.log(`(a) grade wall time, median of ${RUNS} interleaved runs (after one warm-up each)`);
const rows: string[][] = [];
for (const bundle of bundles) {
  const gold = join(bundle, 'solution/gold.patch');
  const home = tempDir();
  const proctor = () =>
    timed(process.execPath, [
      join(ROOT, 'bin/proctor.js'),
      '--home',
      home,
      'grade',
      bundle,
      '--patch',
      gold,
      '--wait',
    ]);
  const raw = () => timed('bash', [join(ROOT, 'bench/oracle-baseline.sh'), bundle, gold]);
  const warm = proctor();
  if (warm.status !== 0)
    throw new Error(`the gold patch of ${bundle} does not pass:\n${warm.stdout}`);
  raw();
  const p: number[] = [];
  const r: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    p.push(proctor().ms);
    r.push(raw().ms);
  }
  const [pm, rm] = [median(p), median(r)];
  rows.push([
    bundle.split('/').at(-1) ?? bundle,
    pm.toFixed(0),
    rm.toFixed(0),
    (pm / rm).toFixed(2),
  ]);
}
console.log(['example', 'proctor ms', 'raw ms', 'ratio'].join('\t'));
for (const row of rows) console.log(row.join('\t'));

// (b) a sweep of baseline jobs at concurrency 2.
const suite = tempDir();
for (let i = 0; i < SWEEP; i++) {
  const source = bundles[i % bundles.length] as string;
  const dir = join(suite, `t${String(i).padStart(3, '0')}`);
  cpSync(source, dir, { recursive: true });
  const toml = join(dir, 'task.toml');
  writeFileSync(toml, readFileSync(toml, 'utf8').replace(/^id = "([^"]+)"/m, `id = "$1-${i}"`));
}
const home = tempDir();
writeFileSync(join(home, 'proctor.toml'), '[workers]\nbaseline = 2\ngrade = 2\nsolve = 1\n');
const sweep = timed(process.execPath, [
  join(ROOT, 'bin/proctor.js'),
  '--home',
  home,
  'baseline',
  suite,
  '--wait',
  '--json',
]);
const summary = JSON.parse(sweep.stdout) as { batch: string; tasks: Array<{ validity: string }> };
const status = timed(process.execPath, [
  join(ROOT, 'bin/proctor.js'),
  '--home',
  home,
  'status',
  '--batch',
  summary.batch,
  '--json',
  '--limit',
  '200',
]);
const jobs = (
  JSON.parse(status.stdout) as { jobs: Array<{ result: { timings?: { total?: number } } }> }
).jobs;
const containerMs = jobs.reduce((sum, job) => sum + (job.result.timings?.total ?? 0), 0);
const ideal = containerMs / 2;
const valid = summary.tasks.filter((t) => t.validity === 'valid').length;
console.log(`\n(b) sweep of ${SWEEP} baseline jobs at concurrency 2 (${valid} valid)`);
console.log(
  `wall ${(sweep.ms / 1000).toFixed(1)} s; sum of evaluation times ${(containerMs / 1000).toFixed(1)} s; ideal ${(ideal / 1000).toFixed(1)} s; efficiency ${((ideal / sweep.ms) * 100).toFixed(0)} %`,
);

for (const dir of temp) rmSync(dir, { recursive: true, force: true });
