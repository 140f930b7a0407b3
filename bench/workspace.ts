// npm run bench:workspace — grades of a large generated repository against its tests run
// with plain `docker run`, with a one-commit history and with a long one.
//
// Generates (locally, deterministically; cached under --cache between runs) a Python project
// of about --files files and --mb MB with a small pytest suite and a bug, and --commits commits
// of history written with `git fast-import` (one generated stream, not one `git commit` per
// commit). Two task bundles share the work tree: `one` (a single commit) and `full` (every
// commit). For each variant, in a fresh Proctor home, through the installed bin:
//   first grade   the gold patch, run by a `proctor worker` on the home (as a server or a
//                 sweep runs jobs): the image is built (layers cached by the engine) and the
//                 workspace template prepared; its `template` timing is the first-use cost;
//   warm grades   --runs more: job time (the job's started_at to finished_at), runner time
//                 (the two phases' runner execs), overhead (job - runner), workspace init;
//   raw           --runs plain `docker run --rm` of the same runner on the same image, in the
//                 image's own /repo, with both patches applied by git apply;
// then a sweep of --sweep grades of the full-history variant at concurrency 2 under one
// `proctor worker`: efficiency = (sum of job times / 2) / wall (first start to last finish).
// Targets: job <= runner + 1.5 s warm, whatever the history; workspace init <= 1 s; sweep
// >= 90 %.
// Usage: npm run bench:workspace [-- --files 2000 --mb 35 --commits 20000 --runs 3 --sweep 20]
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createGenerator } from './generate.js';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin/proctor.js');
const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '2000' },
    mb: { type: 'string', default: '35' },
    commits: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '3' },
    sweep: { type: 'string', default: '20' },
    cache: { type: 'string', default: join(tmpdir(), 'proctor-bench-workspace-cache') },
  },
});
const FILES = Number(values.files);
const BYTES = Number(values.mb) * 1024 * 1024;
const COMMITS = Number(values.commits);
const RUNS = Number(values.runs);
const SWEEP = Number(values.sweep);
const HISTORY_FILES = 500;
const TESTS = 40;
const cache = join(values.cache, `v2-${FILES}-${values.mb}-${COMMITS}`);
const temp = mkdtempSync(join(tmpdir(), 'proctor-bench-workspace-'));
const homes: string[] = [];
const stops: Array<() => Promise<void>> = [];

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
};
const git = (cwd: string, args: string[], input?: string | Buffer) =>
  execFileSync('git', args, {
    cwd,
    env: GIT_ENV,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    ...(input === undefined ? {} : { input }),
  }).trim();

const { random, module } = createGenerator(4242);
/** One version of a history file: 6 KB of numbers, different in every commit. */
const noise = () =>
  Array.from({ length: 96 }, () => Math.floor(random() * 1e16).toString(36)).join('\n') + '\n';

const RUNNER = readFileSync(join(ROOT, 'examples/py-duration-parse/tests/run'));
const CALC = 'def div(a, b):\n    return a / b\n';
const CALC_FIXED = 'def div(a, b):\n    return None if b == 0 else a / b\n';

/** The work tree's files at the base commit (path -> content), history files excluded. */
function baseTree(): Map<string, string> {
  const files = new Map<string, string>();
  const modules = FILES - HISTORY_FILES - TESTS - 2;
  const per = Math.floor((BYTES - HISTORY_FILES * 6000) / modules);
  for (let i = 0; i < modules; i++) files.set(`pkg/sub${i % 50}/mod${i}.py`, module(per));
  files.set('pkg/__init__.py', '');
  files.set('pkg/calc.py', CALC);
  for (let i = 0; i < TESTS; i++) {
    const body = Array.from(
      { length: 5 },
      (_, k) => `def test_${i}_${k}():\n    assert div(${k + 2}, 1) == ${k + 2}\n`,
    );
    files.set(`tests/test_t${i}.py`, `from pkg.calc import div\n\n\n${body.join('\n\n')}`);
  }
  return files;
}

/** A fast-import stream: the base tree, then COMMITS - 1 commits each rewriting a history file. */
function stream(files: Map<string, string>): Buffer {
  const parts: Buffer[] = [];
  const push = (text: string) => parts.push(Buffer.from(text));
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  let time = 1_600_000_000;
  const commit = (mark: number, message: string, body: string) => {
    push(`commit refs/heads/main\nmark :${mark}\n`);
    push(`author bench <bench@example.invalid> ${time} +0000\n`);
    push(`committer bench <bench@example.invalid> ${time++} +0000\n`);
    push(data(message));
    if (mark > 1) push(`from :${mark - 1}\n`);
    push(body);
  };
  const initial: string[] = [];
  for (const [path, text] of files) initial.push(`M 100644 inline ${path}\n${data(text)}`);
  for (let h = 0; h < HISTORY_FILES; h++) {
    initial.push(`M 100644 inline history/h${h}.txt\n${data(noise())}`);
  }
  commit(1, 'initial import', initial.join(''));
  for (let i = 2; i <= COMMITS; i++) {
    commit(i, `change ${i}`, `M 100644 inline history/h${i % HISTORY_FILES}.txt\n${data(noise())}`);
  }
  push('done\n');
  return Buffer.concat(parts);
}

interface Variant {
  name: 'one' | 'full';
  bundle: string;
  base: string;
}

function writeBundle(name: 'one' | 'full', repo: string): Variant {
  const bundle = join(cache, `bundle-${name}`);
  const base = git(repo, ['rev-parse', 'HEAD']);
  mkdirSync(join(bundle, 'environment'), { recursive: true });
  mkdirSync(join(bundle, 'tests'), { recursive: true });
  mkdirSync(join(bundle, 'solution'), { recursive: true });
  cpSync(repo, join(bundle, 'environment/repo'), { recursive: true });
  writeFileSync(
    join(bundle, 'environment/Dockerfile'),
    'FROM debian:bookworm-slim\nRUN apt-get update \\\n && apt-get install -y --no-install-recommends git python3 python3-pytest \\\n && rm -rf /var/lib/apt/lists/*\nCOPY repo/ /repo/\n',
  );
  writeFileSync(
    join(bundle, 'task.toml'),
    `schema = 1\nid = "bench-workspace-${name}"\n\n[environment]\ndockerfile = "environment/Dockerfile"\nworkdir = "/repo"\nbase_commit = "${base}"\n\n[grading]\ndeny = ["tests/**"]\n\n[limits]\ntest_seconds = 300\n`,
  );
  writeFileSync(join(bundle, 'description.md'), 'div(a, 0) should return None.\n');
  writeFileSync(join(bundle, 'tests/run'), RUNNER, { mode: 0o755 });
  const existing: string[] = [];
  for (let i = 0; i < TESTS; i++) {
    for (let k = 0; k < 5; k++) existing.push(`tests/test_t${i}.py::test_${i}_${k}`);
  }
  writeFileSync(join(bundle, 'tests/existing.txt'), existing.join('\n') + '\n');
  writeFileSync(join(bundle, 'tests/hidden.txt'), 'tests/test_t0.py::test_zero\n');
  // The patches, from the repository itself; then the tree is clean again.
  writeFileSync(join(repo, 'pkg/calc.py'), CALC_FIXED);
  writeFileSync(join(bundle, 'solution/gold.patch'), git(repo, ['diff']) + '\n');
  git(repo, ['checkout', '--', '.']);
  const t0 = join(repo, 'tests/test_t0.py');
  writeFileSync(
    t0,
    readFileSync(t0, 'utf8') + '\n\ndef test_zero():\n    assert div(1, 0) is None\n',
  );
  writeFileSync(join(bundle, 'tests/hidden.patch'), git(repo, ['diff']) + '\n');
  git(repo, ['checkout', '--', '.']);
  return { name, bundle, base };
}

function generate(): Variant[] {
  const done = join(cache, 'done');
  if (existsSync(done)) {
    return JSON.parse(readFileSync(done, 'utf8')) as Variant[];
  }
  rmSync(cache, { recursive: true, force: true });
  const full = join(cache, 'repo-full');
  const one = join(cache, 'repo-one');
  mkdirSync(full, { recursive: true });
  const started = performance.now();
  git(full, ['init', '-q', '-b', 'main']);
  git(full, ['fast-import', '--quiet'], stream(baseTree()));
  git(full, ['reset', '-q', '--hard', 'main']);
  git(full, ['gc', '-q']);
  mkdirSync(one, { recursive: true });
  cpSync(full, one, { recursive: true, filter: (src) => !src.startsWith(join(full, '.git')) });
  git(one, ['init', '-q', '-b', 'main']);
  git(one, ['add', '-A']);
  git(one, ['commit', '-q', '-m', 'base']);
  const variants = [writeBundle('one', one), writeBundle('full', full)];
  console.log(`generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  writeFileSync(done, JSON.stringify(variants));
  return variants;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function proctor(home: string, args: string[]): string {
  const result = spawnSync(process.execPath, [BIN, '--home', home, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0 && result.status !== 1) {
    throw new Error(`proctor ${args.join(' ')}: exit ${result.status}: ${result.stderr}`);
  }
  return result.stdout;
}

interface JobRow {
  id: number;
  status: string;
  startedAt: number;
  finishedAt: number;
  result: { verdict: string; timings: Record<string, number> };
}

function job(home: string, id: number): JobRow {
  // A status read can meet the worker's write lock past busy_timeout on a loaded host: retry.
  for (let attempt = 1; ; attempt++) {
    try {
      const out = JSON.parse(proctor(home, ['status', String(id), '--json'])) as {
        jobs: JobRow[];
      };
      const row = out.jobs[0];
      if (!row) throw new Error(`no job ${id}`);
      return row;
    } catch (error) {
      if (attempt >= 5) throw error;
    }
  }
}

/** Enqueues `n` grades of the gold patch. */
function enqueue(home: string, variant: Variant, n: number): number[] {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const out = proctor(home, [
      'grade',
      variant.bundle,
      '--patch',
      join(variant.bundle, 'solution/gold.patch'),
    ]);
    const id = /^job (\d+):/m.exec(out)?.[1];
    if (id === undefined) throw new Error(`grade printed no job id: ${out}`);
    ids.push(Number(id));
  }
  return ids;
}

/** Waits for the jobs to end; throws unless every one passed. */
async function finished(home: string, ids: number[]): Promise<JobRow[]> {
  for (;;) {
    const rows = ids.map((id) => job(home, id));
    if (rows.every((r) => r.status !== 'queued' && r.status !== 'running')) {
      const bad = rows.find((r) => r.status !== 'done' || r.result.verdict !== 'PASS');
      if (bad) throw new Error(`job ${bad.id}: ${JSON.stringify(bad).slice(0, 2000)}`);
      return rows;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function grade(home: string, variant: Variant): Promise<JobRow> {
  const rows = await finished(home, enqueue(home, variant, 1));
  return rows[0] as JobRow;
}

/** A long-lived `proctor worker` on the home, as a sweep or a server runs jobs. */
function startWorker(home: string) {
  const worker = spawn(process.execPath, [BIN, '--home', home, 'worker'], { stdio: 'ignore' });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  return async () => {
    worker.kill('SIGTERM');
    await exited;
  };
}

function imageOf(home: string, row: JobRow): string {
  void home;
  return (row.result as unknown as { image: { localId: string } }).image.localId;
}

/** The runner's two phases with plain docker run, on the image's own /repo. */
function raw(image: string, bundle: string): number {
  const script = String.raw`set -e
cd /repo
export GIT_DIR=/nonexistent
git apply /b/solution/gold.patch
/b/tests/run /b/tests/existing.txt /tmp/existing.xml > /dev/null || true
git apply /b/tests/hidden.patch
/b/tests/run /b/tests/hidden.txt /tmp/hidden.xml > /dev/null || true
test -s /tmp/existing.xml && test -s /tmp/hidden.xml`;
  const started = performance.now();
  execFileSync('docker', [
    'run',
    '--rm',
    '--network',
    'none',
    '-v',
    `${bundle}:/b:ro`,
    image,
    'sh',
    '-c',
    script,
  ]);
  return performance.now() - started;
}

const runnerMs = (row: JobRow) =>
  (row.result.timings['existing'] ?? 0) + (row.result.timings['hidden'] ?? 0);
const jobMs = (row: JobRow) => row.finishedAt - row.startedAt;

function newHome(): string {
  const home = mkdtempSync(join(temp, 'home-'));
  homes.push(home);
  writeFileSync(join(home, 'proctor.toml'), '[workers]\nbaseline = 2\ngrade = 2\nsolve = 1\n');
  return home;
}

try {
  const variants = generate();
  const du = (dir: string) =>
    execFileSync('du', ['-sm', dir], { encoding: 'utf8' }).split('\t')[0] ?? '?';
  const full = variants.find((v) => v.name === 'full') as Variant;
  console.log(
    `repository: ${FILES} files, work tree ${execFileSync('du', ['-sm', '--exclude=.git', join(full.bundle, 'environment/repo')], { encoding: 'utf8' }).split('\t')[0]} MB; .git ${du(join(full.bundle, 'environment/repo/.git'))} MB with ${COMMITS} commits (full) / one commit (one)`,
  );
  const lines: string[] = [];
  let sweepHome = '';
  for (const variant of variants) {
    const home = newHome();
    const stop = startWorker(home);
    stops.push(stop);
    const first = await grade(home, variant);
    const image = imageOf(home, first);
    const warm: JobRow[] = [];
    const raws: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      warm.push(await grade(home, variant));
      raws.push(raw(image, variant.bundle));
    }
    const j = median(warm.map(jobMs));
    const r = median(warm.map(runnerMs));
    const w = median(warm.map((row) => row.result.timings['workspace'] ?? NaN));
    const rawMs = median(raws);
    const t = first.result.timings;
    for (const row of warm) {
      const steps = Object.entries(row.result.timings)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      // What the job spends outside the evaluation: the bundle, the image, the log, the row.
      const outside = jobMs(row) - (row.result.timings['total'] ?? 0);
      console.log(
        `  ${variant.name}: warm job's steps (ms): ${steps}; outside evaluate ${outside}`,
      );
    }
    lines.push(
      `${variant.name.padEnd(5)} runner ${s(r)}  job ${s(j)}  overhead ${s(j - r)} (target <= 1.50 s: ${j - r <= 1500 ? 'met' : 'MISSED'})  workspace init ${s(w)} (target <= 1 s: ${w <= 1000 ? 'met' : 'MISSED'})  first use: template ${s(t['template'] ?? 0)}, job ${s(jobMs(first))}  raw docker run ${s(rawMs)} (job ${(j / rawMs).toFixed(2)}× raw)`,
    );
    console.log(lines.at(-1));
    if (variant.name === 'full') sweepHome = home;
    else await stop();
  }
  if (SWEEP > 0) {
    const rows = await finished(sweepHome, enqueue(sweepHome, full, SWEEP));
    const sum = rows.reduce((total, r) => total + jobMs(r), 0);
    const wall =
      Math.max(...rows.map((r) => r.finishedAt)) - Math.min(...rows.map((r) => r.startedAt));
    const efficiency = sum / 2 / wall;
    lines.push(
      `sweep: ${SWEEP} grades (full history) at concurrency 2: sum of job times ${s(sum)}, ideal ${s(sum / 2)}, wall ${s(wall)}, efficiency ${(efficiency * 100).toFixed(0)} % (target >= 90 %: ${efficiency >= 0.9 ? 'met' : 'MISSED'})`,
    );
    console.log(lines.at(-1));
  }
} finally {
  for (const stop of stops) await stop();
  for (const home of homes) {
    // The templates of the bench's homes, and nothing else of the engine's.
    spawnSync(process.execPath, [BIN, '--home', home, 'prune'], { stdio: 'ignore' });
  }
  rmSync(temp, { recursive: true, force: true });
}
