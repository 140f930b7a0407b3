// npm run bench:oracle — the oracle's speed, against the raw baseline in the same run (this
// machine is shared and noisy: compare ratios, not absolutes).
//
//  (a) grade wall time per example: `proctor grade BUNDLE --patch solution/gold.patch --wait`
//      (the whole command: start-up, database, in-process worker, image check, evaluation,
//      oracle log) against bench/oracle-baseline.sh, the minimal raw docker steps (volume,
//      copy, apply, the runner twice) in the image Proctor built (its `grade --json` names it),
//      each raw run checked to succeed. Interleaved, median of --runs. Target: ≤ 1.25×.
//  (b) a sweep of --sweep baseline jobs (copies of the examples) at concurrency 2: wall time
//      against the ideal, the sum of the jobs' evaluation times (containers, from each job's
//      result) divided by 2. Target: ≥ 85 % efficiency.
//  (c) the integrity layers (docs/threat-model.md): a generated pytest task graded with the built-in
//      runner as it is (protocol 2: sentinels, the collector exec, tripwires, the base
//      configuration check, the canaries' step and mutants) against the same task with the
//      runner as it was before them (bench/fixtures/pytest-run-v1), same image, interleaved,
//      median of --runs. Target: the layers cost ≤ 10 % of a grade.
//  (d) the integrity layers per dialect: for each example whose runner speaks protocol 2, the
//      gold patch graded with the example's runner as it is (every layer on) and with the same
//      runner less its protocol-2 and canary lines (bench/oracle-layers.ts: a plain run of the
//      same tests, the plain report format), the order swapped each round, medians of --rounds;
//      per dialect the grade time on and off, the difference, its share of the grade with the
//      layers, and the steps of the job's timings that make it. Target: ≤ 10 %. With --suite
//      DIR, the same on the bundles of a suite folder (real rows, `proctor import swebench`)
//      instead of the examples.
// Usage: npm run bench:oracle [-- --runs 5 --sweep 40 --rounds 3 --parts a,b,c,d
//        --examples py-duration-parse,go-text-ellipsis --suite DIR]
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { BUILTIN_RUNNERS, runnerSource } from '../src/runners/index.js';
import {
  layerRow,
  layerTable,
  median,
  plainRunner,
  rawFailures,
  roundOrder,
  type GradeSample,
} from './oracle-layers.js';

const ROOT = join(import.meta.dirname, '..');
const EXAMPLES = join(ROOT, 'examples');
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    sweep: { type: 'string', default: '40' },
    parts: { type: 'string', default: 'a,b,c,d' },
    rounds: { type: 'string', default: '3' },
    // Part (d) on these examples only (names under examples/, comma-separated).
    examples: { type: 'string' },
    // Part (d) on the bundles of this suite folder instead of the examples.
    suite: { type: 'string' },
  },
});
const PARTS = new Set(values.parts.split(','));
const LAYERED_RUNNER = await runnerSource('pytest');
const RUNS = Number(values.runs);
const LAYER_TESTS = 100;
const GIT_DATE = '2024-01-01T00:00:00+0000';
const SWEEP = Number(values.sweep);
const ROUNDS = Number(values.rounds);
for (const [flag, n] of [
  ['--runs', RUNS],
  ['--sweep', SWEEP],
  ['--rounds', ROUNDS],
] as const) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} takes a whole number ≥ 1`);
}

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

/** The whole `proctor grade BUNDLE --patch PATCH --wait` command in `home`, timed. */
function grade(home: string, bundle: string, patch: string, extra: string[] = []) {
  return timed(process.execPath, [
    join(ROOT, 'bin/proctor.js'),
    '--home',
    home,
    'grade',
    bundle,
    '--patch',
    patch,
    '--wait',
    ...extra,
  ]);
}

/** The local image id a `grade --json` result names (its last JSON line), if any. */
function gradedImage(stdout: string): string | undefined {
  const line = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .at(-1);
  if (line === undefined) return undefined;
  const parsed = JSON.parse(line) as { image?: { localId?: unknown } };
  return typeof parsed.image?.localId === 'string' ? parsed.image.localId : undefined;
}

const bundles = readdirSync(EXAMPLES, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => join(EXAMPLES, e.name))
  .sort();

// (a) one grade per example, Proctor against the raw script.
if (PARTS.has('a')) {
  console.log(`(a) grade wall time, median of ${RUNS} interleaved runs (after one warm-up each)`);
  const rows: string[][] = [];
  for (const bundle of bundles) {
    const gold = join(bundle, 'solution/gold.patch');
    const home = tempDir();
    const proctor = () => grade(home, bundle, gold);
    const warm = grade(home, bundle, gold, ['--json']);
    if (warm.status !== 0)
      throw new Error(`the gold patch of ${bundle} does not pass:\n${warm.stdout}`);
    // The raw script runs in the image Proctor built: a plain `docker build` of an environment
    // that installs from a registry lacks the build's trust root behind a proxy, and fails.
    const image = gradedImage(warm.stdout);
    if (image === undefined) throw new Error(`proctor grade --json named no image for ${bundle}`);
    const raw = () => {
      const run = timed('bash', [join(ROOT, 'bench/oracle-baseline.sh'), bundle, gold], {
        ORACLE_BASELINE_IMAGE: image,
      });
      if (run.status !== 0) throw new Error(`the raw script failed on ${bundle}`);
      const failing = rawFailures(run.stdout);
      if (failing.length > 0) {
        throw new Error(`the raw script did not pass the gold patch of ${bundle}: ${failing}`);
      }
      return run;
    };
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
}

// (b) a sweep of baseline jobs at concurrency 2.
if (PARTS.has('b')) {
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
}

// (c) the integrity layers: the built-in pytest runner with them, and as it was before them.
if (PARTS.has('c')) {
  const {
    bundles: [layered, plain],
    gold,
  } = layerBundles();
  const home = tempDir();
  for (const bundle of [layered, plain]) {
    const warm = grade(home, bundle, gold);
    if (warm.status !== 0)
      throw new Error(`the gold patch of ${bundle} does not pass:\n${warm.stdout}`);
  }
  const withLayers: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    withLayers.push(grade(home, layered, gold).ms);
    without.push(grade(home, plain, gold).ms);
  }
  const [w, o] = [median(withLayers), median(without)];
  console.log(
    `\n(c) the integrity layers: a pytest task of ${LAYER_TESTS} tests, gold patch, median of ${RUNS} interleaved grades`,
  );
  console.log(['runner', 'grade ms'].join('\t'));
  console.log(['with the layers', w.toFixed(0)].join('\t'));
  console.log(['before them (v1)', o.toFixed(0)].join('\t'));
  console.log(`cost ${(((w - o) / o) * 100).toFixed(1)} % of a grade (target ≤ 10 %)`);
}

// (d) the integrity layers per dialect: each example's gold patch, its runner with and without
// the layers' markers.
if (PARTS.has('d')) {
  const dialects = await Promise.all(
    BUILTIN_RUNNERS.map(async (name) => ({ name, bytes: await runnerSource(name) })),
  );
  const skipped: string[] = [];
  // The hidden run's repository is made whatever the runner: its step's median per example.
  const testTree: string[] = [];
  const layerBundles = values.suite === undefined ? bundles : suiteBundles(values.suite);
  const names = layerBundles.map((b) => b.split('/').at(-1) ?? b);
  const chosen = values.examples === undefined ? names : values.examples.split(',');
  const unknown = chosen.filter((name) => !names.includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `--examples: no bundle named ${unknown.join(', ')} under ${values.suite ?? 'examples/'}`,
    );
  }
  const home = tempDir();
  const root = tempDir();
  // A row as soon as its example is measured: a long run on a busy machine shows its progress.
  console.log(
    `\n(d) the integrity layers per dialect: the gold patch, each example's runner with its layers (on) and less its protocol-2 and canary lines (off), median of ${ROUNDS} rounds, the order swapped each round (after one warm-up each)`,
  );
  console.log(layerTable([])[0]);
  for (const bundle of layerBundles) {
    const example = bundle.split('/').at(-1) ?? bundle;
    if (!chosen.includes(example)) continue;
    const runner = readFileSync(join(bundle, 'tests/run'));
    let plain: Buffer;
    try {
      plain = plainRunner(runner);
    } catch (error) {
      skipped.push(`${example}: ${(error as Error).message}`);
      continue;
    }
    const dialect = dialects.find((d) => d.bytes.equals(runner))?.name ?? 'custom';
    const on = copyBundle(bundle, join(root, `${example}-on`), 'layers-on', runner);
    const off = copyBundle(bundle, join(root, `${example}-off`), 'layers-off', plain);
    const gold = join(bundle, 'solution/gold.patch');
    // The warm-up: the image and its template once, and both sides must pass.
    for (const dir of [on, off]) timedGrade(home, dir, gold);
    const samples: Record<'on' | 'off', GradeSample[]> = { on: [], off: [] };
    for (let i = 0; i < ROUNDS; i++) {
      for (const side of roundOrder(i))
        samples[side].push(timedGrade(home, side === 'on' ? on : off, gold));
    }
    console.log(layerTable([layerRow(example, dialect, samples.on, samples.off)])[1]);
    testTree.push(`${dialect} ${median(samples.on.map((s) => s.timings['test_tree'] ?? 0))} ms`);
  }
  for (const line of skipped) console.log(`skipped ${line}`);
  console.log(
    `Not taken off this way (they run in both): the screen of the diff (in the worker, before any container), the ID lists handed over on stdin, the hidden run's repository (test_tree, median a grade: ${testTree.join(', ') || 'none measured'}), and whatever a runner does in its own plain run (its tripwires, its collector thread).`,
  );
}

for (const dir of temp) rmSync(dir, { recursive: true, force: true });

/** The bundle folders of a suite folder (those with a task.toml), sorted. */
function suiteBundles(suite: string): string[] {
  const dirs = readdirSync(suite, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(suite, e.name, 'task.toml')))
    .map((e) => join(suite, e.name))
    .sort();
  if (dirs.length === 0) throw new Error(`--suite ${suite}: no bundle folder (with a task.toml)`);
  return dirs;
}

/** A copy of `bundle` in `dir` with the id `<id>-<suffix>` and `runner` as tests/run. */
function copyBundle(bundle: string, dir: string, suffix: string, runner: Buffer): string {
  cpSync(bundle, dir, { recursive: true });
  const toml = join(dir, 'task.toml');
  const text = readFileSync(toml, 'utf8');
  const renamed = text.replace(/^id = "([^"]+)"/m, `id = "$1-${suffix}"`);
  if (renamed === text) throw new Error(`${toml}: no id line to rename`);
  writeFileSync(toml, renamed);
  writeFileSync(join(dir, 'tests/run'), runner, { mode: 0o755 });
  return dir;
}

/** `proctor grade --wait --json` of the gold patch: its wall time and the job's timings. */
function timedGrade(home: string, bundle: string, patch: string): GradeSample {
  const run = timed(process.execPath, [
    join(ROOT, 'bin/proctor.js'),
    '--home',
    home,
    'grade',
    bundle,
    '--patch',
    patch,
    '--wait',
    '--json',
  ]);
  const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
  const result =
    line === undefined
      ? undefined
      : (JSON.parse(line) as { verdict?: string; timings?: Record<string, number> });
  if (result?.verdict !== 'PASS' || result.timings === undefined) {
    throw new Error(`the gold patch of ${bundle} does not pass:\n${run.stdout}`);
  }
  return { ms: run.ms, timings: result.timings };
}

/**
 * Two copies of one generated pytest task (a calc module with a bug, LAYER_TESTS tests in
 * five files, a hidden test file), one with the built-in runner and one with the runner as it
 * was before the integrity layers; their environment/ is the same, so they share one image.
 */
function layerBundles(): { bundles: [string, string]; gold: string } {
  const root = tempDir();
  const repo: Record<string, string> = {
    'calc.py': 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n',
  };
  const existing: string[] = [];
  for (let f = 0; f < 5; f++) {
    const lines = ['from calc import mul', ''];
    for (let t = 0; t < LAYER_TESTS / 5; t++) {
      lines.push('', `def test_mul_${t}():`, `    assert mul(${t}, ${f}) == ${t * f}`, '');
      existing.push(`tests/test_mul_${f}.py::test_mul_${t}`);
    }
    repo[`tests/test_mul_${f}.py`] = lines.join('\n');
  }
  repo['tests/__init__.py'] = '';
  const work = join(root, 'work');
  writeTree(work, repo);
  gitIn(work, ['init', '-q', '-b', 'main'], ['add', '-A'], ['commit', '-q', '-m', 'base']);
  const head = gitOut(work, ['rev-parse', 'HEAD']).trim();
  writeTree(work, {
    'tests/test_hidden.py':
      'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n',
  });
  gitIn(work, ['add', '-A']);
  const hidden = gitOut(work, ['diff', '--cached', '--binary', '--full-index']);
  gitIn(work, ['reset', '-q', '--hard', 'HEAD'], ['clean', '-q', '-fdx']);
  writeTree(work, {
    'calc.py': 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n',
  });
  const gold = join(root, 'gold.patch');
  writeFileSync(gold, gitOut(work, ['diff', '--binary', '--full-index']));
  const make = (name: string, runner: Buffer): string => {
    const dir = join(root, name);
    writeTree(join(dir, 'environment/repo'), repo);
    writeFileSync(
      join(dir, 'environment/Dockerfile'),
      `FROM debian:bookworm-slim
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pytest git >/dev/null && rm -rf /var/lib/apt/lists/*
COPY repo/ /repo/
RUN cd /repo && git init -q -b main && git add -A && GIT_AUTHOR_DATE='${GIT_DATE}' GIT_COMMITTER_DATE='${GIT_DATE}' git -c user.name=bench -c user.email=bench@example.invalid commit -q -m base
`,
    );
    writeTree(join(dir, 'tests'), {
      'hidden.patch': hidden,
      'existing.txt': existing.map((id) => `${id}\n`).join(''),
      'hidden.txt': 'tests/test_hidden.py::test_add\n',
    });
    writeFileSync(join(dir, 'tests/run'), runner, { mode: 0o755 });
    writeFileSync(join(dir, 'description.md'), 'Make add add.\n');
    writeFileSync(
      join(dir, 'task.toml'),
      `schema = 1\nid = "${name}"\n\n[environment]\ndockerfile = "environment/Dockerfile"\nworkdir = "/repo"\nbase_commit = "${head}"\n\n[grading]\ndeny = ["tests/**", "**/conftest.py"]\n`,
    );
    return dir;
  };
  return {
    bundles: [
      // As written into a bundle: with its shared parts (the canary mutator) included.
      make('layers-on', LAYERED_RUNNER),
      make('layers-off', readFileSync(join(ROOT, 'bench/fixtures/pytest-run-v1'))),
    ],
    gold,
  };
}

function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

function gitOut(cwd: string, args: string[]): string {
  const result = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env['PATH'],
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_DATE: GIT_DATE,
      GIT_COMMITTER_DATE: GIT_DATE,
      GIT_AUTHOR_NAME: 'bench',
      GIT_AUTHOR_EMAIL: 'bench@example.invalid',
      GIT_COMMITTER_NAME: 'bench',
      GIT_COMMITTER_EMAIL: 'bench@example.invalid',
    },
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

function gitIn(cwd: string, ...commands: string[][]): void {
  for (const args of commands) gitOut(cwd, args);
}
