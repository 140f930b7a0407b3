// npm run bench:import — imported SWE-bench rows, graded by Proctor against SWE-bench's own test
// command run raw in the same image (this machine is shared and noisy: compare within a run).
//
// For N rows (default 5, sympy's): `proctor import swebench` them into a temporary suite,
// `proctor baseline SUITE --gold --wait`, then per task that the baseline found valid one
// `proctor grade TASK --patch solution/gold.patch --wait` (its image is built by then), and one
// raw `docker run` of the same image doing what SWE-bench's eval script does: apply the test
// patch and the gold patch in the work tree, then run SWE-bench's test_cmd for the repository
// on the files the test patch touches (swebench/harness/test_spec/python.py
// get_test_directives: NON_TEST_EXTS left out). Printed per task: the tests' time (the test
// command alone, timed inside the container), the raw run's wall time, the grade job's time
// (startedAt to finishedAt), the overhead (job − tests) and whether it is within the target:
// job time ≤ tests' time + 1.5 s.
//
// Usage: npm run bench:import -- [--rows FILE] [--repos DIR] [--environment DIR] [--n 5]
//                                [--only ID...]   (ids separated by commas or spaces)
// Defaults: --rows /work/rows/sympy.jsonl --repos /work/rows/repos --environment /work/rows/env.
// Rows of a repository whose runner Proctor lacks (sympy before its runner lands) show as
// quarantined in the baseline; use requests or flask rows (--rows …/flask.jsonl) then.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const PROCTOR = join(ROOT, 'bin/proctor.js');
const TARGET_MS = 1500;
// swebench/harness/constants/__init__.py NON_TEST_EXTS ("csv" without its dot, as there).
const NON_TEST_EXTS = [
  '.json',
  '.png',
  'csv',
  '.txt',
  '.md',
  '.jpg',
  '.jpeg',
  '.pkl',
  '.yml',
  '.yaml',
  '.toml',
];
// swebench/harness/constants/python.py: test_cmd per repository (every version of these).
const SYMPY_CMD =
  "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose";
const TEST_CMD: Record<string, string> = {
  'sympy/sympy': SYMPY_CMD,
  'psf/requests': 'pytest -rA',
  'pallets/flask': 'pytest -rA',
};

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '/work/rows/sympy.jsonl' },
    repos: { type: 'string', default: '/work/rows/repos' },
    environment: { type: 'string', default: '/work/rows/env' },
    n: { type: 'string', default: '5' },
    only: { type: 'string', multiple: true },
  },
});

interface Row {
  instance_id: string;
  repo: string;
  patch: string;
  test_patch: string;
}

const rows = readFileSync(resolve(values.rows), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as Row);
const only = (values.only ?? []).flatMap((v) => v.split(/[\s,]+/)).filter((v) => v !== '');
const chosen = only.length
  ? rows.filter((row) => only.includes(row.instance_id))
  : rows.slice(0, Number(values.n));
if (chosen.length === 0) throw new Error(`no rows chosen from ${values.rows}`);
for (const row of chosen) {
  if (!TEST_CMD[row.repo])
    throw new Error(`${row.instance_id}: no SWE-bench test_cmd known for ${row.repo}`);
}

const home = mkdtempSync(join(tmpdir(), 'proctor-bench-import-'));
const suite = join(home, 'suite');
const containers: string[] = [];
function cleanup() {
  if (containers.length) spawnSync('docker', ['rm', '-f', ...containers], { encoding: 'utf8' });
  rmSync(home, { recursive: true, force: true });
}
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));

function run(command: string, args: string[], input?: string) {
  const started = performance.now();
  const result = spawnSync(command, args, {
    cwd: ROOT,
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  return { ...result, ms: performance.now() - started };
}

function proctor(...args: string[]) {
  const result = run(process.execPath, [PROCTOR, '--home', home, ...args]);
  if (result.status !== 0 && result.status !== 1) {
    throw new Error(`proctor ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  }
  return result;
}

/** The bundle id import gives an instance: lower-cased, other characters as `-`. */
function taskId(instanceId: string) {
  return instanceId.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
}

console.log(`bench:import: ${chosen.length} rows from ${values.rows}`);
const imported = proctor(
  'import',
  'swebench',
  resolve(values.rows),
  '--repos',
  resolve(values.repos),
  '--environment',
  resolve(values.environment),
  '--out',
  suite,
  '--only',
  ...chosen.map((row) => row.instance_id),
);
process.stdout.write(imported.stdout);

const baseline = proctor('baseline', suite, '--gold', '--wait', '--json');
const sweep = JSON.parse(baseline.stdout) as {
  tasks: Array<{ task: string; validity: string; reason: string; detail?: string }>;
};
console.log(`baseline --gold: ${(baseline.ms / 1000).toFixed(1)} s`);
for (const task of sweep.tasks) {
  console.log(
    `  ${task.task}  ${task.validity}  ${task.reason}${task.detail ? `  ${task.detail.slice(0, 160)}` : ''}`,
  );
}

interface Job {
  startedAt: number;
  finishedAt: number;
  result: { verdict: string; image?: { localId?: string }; timings?: Record<string, number> };
}

const lines: string[] = [];
let within = 0;
let measured = 0;
for (const row of chosen) {
  const id = taskId(row.instance_id);
  const state = sweep.tasks.find((t) => t.task === id);
  if (state?.validity !== 'valid') {
    lines.push(
      `${id.padEnd(26)} not measured: baseline ${state?.validity ?? 'missing'} ${state?.reason ?? ''}`,
    );
    continue;
  }
  const bundle = join(suite, id);
  const graded = proctor(
    'grade',
    bundle,
    '--patch',
    join(bundle, 'solution/gold.patch'),
    '--wait',
    '--json',
  );
  // --json with --wait: the result as one JSON line (with its job id), then the gate line.
  const first = graded.stdout.split('\n').find((line) => line.startsWith('{'));
  if (!first) throw new Error(`${id}: grade printed no result: ${graded.stderr.slice(-500)}`);
  const jobId = String((JSON.parse(first) as { job: number }).job);
  const status = JSON.parse(proctor('status', jobId, '--json').stdout) as { jobs: Job[] };
  const job = status.jobs[0];
  if (!job) throw new Error(`${id}: no job ${jobId}`);
  const image = job.result.image?.localId;
  if (!image) throw new Error(`${id}: grade job ${jobId} names no image`);
  const jobMs = job.finishedAt - job.startedAt;

  // SWE-bench's eval script, reduced to its test step: patches in, test_cmd on the test files.
  const files = [...row.test_patch.matchAll(/^diff --git a\/.* b\/(.*)$/gm)]
    .map((m) => m[1] ?? '')
    .filter((f) => !NON_TEST_EXTS.some((ext) => f.endsWith(ext)));
  const script = [
    'set -e',
    'cd /testbed',
    'cat > /tmp/test.patch <<"PROCTOR_TEST_PATCH"',
    row.test_patch.replace(/\n$/, ''),
    'PROCTOR_TEST_PATCH',
    'cat > /tmp/gold.patch <<"PROCTOR_GOLD_PATCH"',
    row.patch.replace(/\n$/, ''),
    'PROCTOR_GOLD_PATCH',
    'git apply /tmp/test.patch /tmp/gold.patch',
    's=$(date +%s%N)',
    'set +e',
    `${TEST_CMD[row.repo]} ${files.join(' ')} >/tmp/out 2>&1`,
    'rc=$?',
    'e=$(date +%s%N)',
    'echo "PROCTOR_TESTS_NS $((e - s)) rc $rc"',
  ].join('\n');
  const name = `proctor-bench-import-${process.pid}-${id.replace(/[^a-z0-9-]/g, '-')}`;
  containers.push(name);
  const raw = run(
    'docker',
    ['run', '--rm', '-i', '--name', name, '--network', 'none', image, 'bash', '-s'],
    script,
  );
  containers.pop();
  const match = /PROCTOR_TESTS_NS (\d+) rc (\d+)/.exec(raw.stdout);
  if (!match) throw new Error(`${id}: the raw run did not finish: ${raw.stderr.slice(-500)}`);
  const testsMs = Number(match[1]) / 1e6;
  const overhead = jobMs - testsMs;
  measured += 1;
  if (overhead <= TARGET_MS) within += 1;
  lines.push(
    `${id.padEnd(26)} tests ${(testsMs / 1000).toFixed(2).padStart(7)} s  raw run ${(raw.ms / 1000).toFixed(2).padStart(7)} s  ` +
      `job ${(jobMs / 1000).toFixed(2).padStart(7)} s  overhead ${(overhead / 1000).toFixed(2).padStart(6)} s  ` +
      `${overhead <= TARGET_MS ? 'ok' : 'OVER'} (grade ${job.result.verdict}, raw rc ${match[2]}; job: ${Object.entries(
        job.result.timings ?? {},
      )
        .filter(([key]) =>
          ['workspace', 'template', 'container', 'existing', 'hidden', 'cleanup'].includes(key),
        )
        .map(([key, ms]) => `${key} ${(ms / 1000).toFixed(1)}`)
        .join(', ')})`,
  );
}

console.log(`\nper task: SWE-bench's test command in the same image, against the gold grade's job`);
for (const line of lines) console.log(line);
console.log(`\n${within} of ${measured} measured tasks within tests' time + ${TARGET_MS / 1000} s`);
writeFileSync(join(tmpdir(), 'proctor-bench-import-last.txt'), lines.join('\n') + '\n');
