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
// (startedAt to finishedAt), the runner's part of it (its `tests` step), the overhead
// (job − tests) in seconds, the ratio job / tests, and whether it is within the target:
// job time ≤ tests' time + 1.5 s.
//
// Like for like: the raw run gets the grade's own limits (the bundle's cpus, memory_mb and
// pids; cpus 1 by default), where SWE-bench's harness starts its containers with none
// (`--raw-limits none` does so too). On this shared machine the load moves by several times
// within a minute, so `--repeat N` alternates the raw run and the grade N times and prints
// the median of the N overheads (each one a raw run and the grade right after it), and each
// round's line with every step of its grade job (its `timings`).
//
// A SWE-bench Multilingual row (one with an eval_script) is run raw by its own eval script,
// in the same image with the same limits, after the gold patch: the script's steps from the
// test patch on (the build it does, then its test command between `: '>>>>> Start Test
// Output'` and `: '>>>>> End Test Output'`); its resets after the end are left out. The tests'
// time is that whole stretch (the build as well: a grade builds too), `cmd` the test command
// alone. Steps that cannot run here are changed, each printed with the row: `npm install`
// (no registry in a container; the image's install ran `npm ci`) and `git submodule update`
// (no network; jq then configures with Debian's libonig, `--with-oniguruma=yes`, as its image
// does) are dropped, `mvnd test -pl M -Dtest=C#m` (no mvnd nor Maven's dependencies
// offline) becomes javac over M's sources and JUnit's console launcher on the same tests
// (Debian's junit5), which is what the junit runner's fallback does, and `./mvnw` (whose
// download of Maven a container cannot make) becomes `mvn -o` with the image's install as its
// local repository, `/opt/m2`, as in SWE-bench's image (the image's Maven is the version the
// wrapper names; javaparser's pom finds a test agent's jar by the local repository's path).
// --per-language keeps the first chosen row of each language (repository table below).
//
// --pulled: each task measured on its built image is measured again on a pulled one. Its built
// image is re-laid out as SWE-bench's published images are (bench/import-pulled.ts: the
// repository's clone at /testbed at base_commit, the install committed on top as a setup
// commit), pushed to a registry the bench starts on 127.0.0.1 (Debian's docker-registry) and
// imported with `--images`; the first grade on it (pull and template) is printed apart, then the
// same rounds as the built image's, and the ratios of the two. The registry, its storage and
// every image it served are removed at the end.
//
// Usage: npm run bench:import -- --repos DIR [--rows FILE] [--environment DIR] [--n 5]
//                                [--only ID...]   (ids separated by commas or spaces)
//                                [--repeat 1] [--raw-limits job|none] [--per-language]
//                                [--pulled]
// --rows defaults to the committed SWE-bench Lite rows (datasets/swebench/lite.jsonl), and
// without --environment each row's environment comes from the repository's catalog
// (environments/), as `proctor import swebench` takes them (docs/suites.md). --repos, the
// rows' repositories (mirrors fetched outside the repository), is required. Rows of a
// repository whose runner Proctor lacks show as quarantined in the baseline.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadBundle } from '../src/oracle/bundle.js';
import { BENCH_LABEL, relayAsSweBench, type Relaid } from './import-pulled.js';
import { dockerCli, launchRegistry } from './local-registry.js';
import { sweTemplate } from './swebench-layout.js';

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

// `--only a b` as the CLI takes it: the words after --only are more ids (the bench takes no
// other positional argument).
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rows: { type: 'string', default: join(ROOT, 'datasets/swebench/lite.jsonl') },
    repos: { type: 'string' },
    environment: { type: 'string' },
    n: { type: 'string', default: '5' },
    only: { type: 'string', multiple: true },
    repeat: { type: 'string', default: '1' },
    'raw-limits': { type: 'string', default: 'job' },
    'per-language': { type: 'boolean', default: false },
    pulled: { type: 'boolean', default: false },
  },
});
if (values.repos === undefined) {
  console.error(
    "bench:import: pass --repos DIR, the rows' repositories as DIR/<owner>__<name> (with --rows FILE and --environment DIR for rows and environments other than the committed ones)",
  );
  process.exit(2);
}
const repeat = Number(values.repeat);
if (!Number.isInteger(repeat) || repeat < 1) throw new Error(`--repeat must be a whole number ≥ 1`);
const rawLimits = values['raw-limits'];
if (rawLimits !== 'job' && rawLimits !== 'none')
  throw new Error(`--raw-limits must be job or none`);

interface Row {
  instance_id: string;
  repo: string;
  base_commit: string;
  patch: string;
  test_patch: string;
  /** SWE-bench Multilingual's own eval script (its image's commands for this row). */
  eval_script?: string;
}

// The language of SWE-bench Multilingual's repositories (its paper's table); the Python ones
// of SWE-bench's other sets are Python.
const LANGUAGE: Record<string, string> = {
  'fmtlib/fmt': 'C++',
  'nlohmann/json': 'C++',
  'jqlang/jq': 'C',
  'redis/redis': 'C',
  'valkey-io/valkey': 'C',
  'micropython/micropython': 'C',
  'google/gson': 'Java',
  'apache/druid': 'Java',
  'apache/lucene': 'Java',
  'javaparser/javaparser': 'Java',
  'projectlombok/lombok': 'Java',
  'reactivex/rxjava': 'Java',
  'axios/axios': 'JavaScript',
  'babel/babel': 'JavaScript',
  'facebook/docusaurus': 'JavaScript',
  'immutable-js/immutable-js': 'JavaScript',
  'mrdoob/three.js': 'JavaScript',
  'preactjs/preact': 'JavaScript',
  'vuejs/core': 'TypeScript',
};
const languageOf = (repo: string) =>
  LANGUAGE[repo] ??
  (/^(caddyserver|gin-gonic|gohugoio|hashicorp|prometheus)\//.test(repo)
    ? 'Go'
    : /^(astral-sh|burntsushi|nushell|sharkdp|tokio-rs|uutils)\//.test(repo)
      ? 'Rust'
      : 'Python');

const START = ": '>>>>> Start Test Output'";
const END = ": '>>>>> End Test Output'";
const JUNIT_JAR = '/usr/share/java/junit-platform-console-standalone.jar';

/** `mvnd test -pl M -Dtest=ID && …` as javac over M's sources and JUnit's console launcher. */
function javacInstead(line: string): string {
  const module = /-pl\s+(\S+)/.exec(line)?.[1] ?? '.';
  const selects = [...line.matchAll(/-Dtest=(\S+)/g)].map((m) => {
    const id = (m[1] ?? '').replace(/\)$/, '');
    return id.includes('#') ? `--select-method '${id}'` : `--select-class '${id}'`;
  });
  const dirs = ['src/main/java', 'src/main/java-templates', 'src/test/java']
    .map((d) => `${module}/${d}`)
    .join(' ');
  const resources = ['src/main/resources', 'src/test/resources'].map((d) => `${module}/${d}`);
  return [
    // find exits 1 when one of the folders is absent (gson before java-templates): not a failure.
    `(mkdir -p /tmp/proctor-raw/classes && { find ${dirs} -name '*.java' ! -name module-info.java 2>/dev/null; true; } > /tmp/proctor-raw/sources`,
    `&& javac -nowarn -encoding UTF-8 -d /tmp/proctor-raw/classes -cp "${JUNIT_JAR}:$PROCTOR_JUNIT_CLASSPATH" @/tmp/proctor-raw/sources`,
    `&& java -jar ${JUNIT_JAR} -cp "/tmp/proctor-raw/classes:${resources.join(':')}:$PROCTOR_JUNIT_CLASSPATH" --disable-banner ${selects.join(' ')}) | cat`,
  ].join(' ');
}

/**
 * The raw run of a Multilingual row: the gold patch, then its eval script up to the end of its
 * test output, with the offline changes (each named in `changes`) and the timestamps.
 */
function rawFromEval(row: Row): { script: string; changes: string[] } {
  const lines = (row.eval_script ?? '').split('\n');
  const changes: string[] = [];
  const out: string[] = [
    'cat > /tmp/gold.patch <<"PROCTOR_GOLD_PATCH"',
    row.patch.replace(/\n$/, ''),
    'PROCTOR_GOLD_PATCH',
    'git -C /testbed apply /tmp/gold.patch || { echo "PROCTOR_GOLD_FAILED"; exit 3; }',
  ];
  let delimiter: string | null = null;
  let started = false;
  for (const line of lines) {
    const heredoc = /^git apply -v - <<'([A-Za-z0-9_]+)'$/.exec(line);
    if (heredoc?.[1]) delimiter = heredoc[1];
    if (line === delimiter) {
      out.push(line, 'PROCTOR_T0=$(date +%s%N)');
      delimiter = null;
      continue;
    }
    if (line === START) {
      out.push(line, 'PROCTOR_T1=$(date +%s%N)');
      started = true;
      continue;
    }
    if (line === END) {
      out.push('PROCTOR_RC=$?', 'PROCTOR_T2=$(date +%s%N)', line);
      out.push(
        'echo "PROCTOR_TESTS_NS $((PROCTOR_T2 - PROCTOR_T0)) cmd $((PROCTOR_T2 - PROCTOR_T1)) rc $PROCTOR_RC"',
      );
      break;
    }
    const bare = line.trim();
    if (!started && /^npm (install|ci)\b/.test(bare)) {
      changes.push(`dropped \`${bare}\``);
      continue;
    }
    if (!started && /^git submodule update\b/.test(bare)) {
      changes.push(`dropped \`${bare}\``);
      continue;
    }
    if (!started && bare.includes('--with-oniguruma=builtin')) {
      changes.push("--with-oniguruma=builtin → yes (the submodule is absent; Debian's libonig)");
      out.push(line.replace('--with-oniguruma=builtin', '--with-oniguruma=yes'));
      continue;
    }
    if (/^\(?\.\/mvnw /.test(bare)) {
      changes.push("./mvnw → mvn -o, local repository /opt/m2 (the image's Maven and install)");
      out.push(line.replaceAll('./mvnw ', 'MAVEN_ARGS= mvn -o -Dmaven.repo.local=/opt/m2 '));
      continue;
    }
    if (started && /\bmvnd test\b/.test(bare)) {
      changes.push('mvnd test → javac + JUnit console launcher on the same tests');
      out.push(javacInstead(bare));
      continue;
    }
    out.push(line);
  }
  if (!out.some((l) => l.startsWith('echo "PROCTOR_TESTS_NS'))) {
    throw new Error(`${row.instance_id}: its eval_script has no test output markers`);
  }
  return { script: out.join('\n'), changes: [...new Set(changes)] };
}

const rows = readFileSync(resolve(values.rows), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as Row);
if (positionals.length > 0 && values.only === undefined) {
  console.error(`bench:import: unexpected ${positionals.join(' ')} (ids go after --only)`);
  process.exit(2);
}
const only = [...(values.only ?? []), ...positionals]
  .flatMap((v) => v.split(/[\s,]+/))
  .filter((v) => v !== '');
const picked = only.length
  ? rows.filter((row) => only.includes(row.instance_id))
  : rows.slice(0, Number(values.n));
const chosen = values['per-language']
  ? picked.filter(
      (row, i) =>
        picked.findIndex((other) => languageOf(other.repo) === languageOf(row.repo)) === i,
    )
  : picked;
if (chosen.length === 0) throw new Error(`no rows chosen from ${values.rows}`);
for (const row of chosen) {
  if (!row.eval_script && !TEST_CMD[row.repo])
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
  ...(values.environment !== undefined ? ['--environment', resolve(values.environment)] : []),
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
  result: {
    verdict: string;
    reason?: string;
    detail?: string;
    image?: { localId?: string };
    timings?: Record<string, number>;
  };
}

const lines: string[] = [];
let within = 0;
let measured = 0;
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};
const seconds = (ms: number, width = 6) => (ms / 1000).toFixed(2).padStart(width);
const load = () => loadavg()[0]?.toFixed(1) ?? '?';

/** One `proctor grade` of the gold patch: the job's time, the runner's, and the job's steps. */
interface Graded {
  image: string;
  verdict: string;
  jobMs: number;
  runnerMs: number;
  timings: Record<string, number>;
}

function gradeGold(id: string, bundle: string): Graded {
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
  const timings = job.result.timings ?? {};
  if (job.result.verdict !== 'PASS') {
    // A gold patch that does not pass is the bench's to explain, not to average.
    console.log(
      `  ${id}: the gold grade (job ${jobId}) is ${job.result.verdict} ${job.result.reason ?? ''}: ${job.result.detail ?? ''}`,
    );
    console.log(proctor('status', jobId, '--log').stdout.slice(-4000));
  }
  return {
    image,
    verdict: job.result.verdict,
    jobMs: job.finishedAt - job.startedAt,
    runnerMs: timings.tests ?? (timings.existing ?? 0) + (timings.hidden ?? 0),
    timings,
  };
}

/** A measured task: its image, and the medians of its rounds. */
interface Measured {
  image: string;
  jobMs: number;
  testsMs: number;
  overhead: number;
}

/**
 * Rounds of one task's raw run and gold grade; its line in `lines`. `image` is the task's
 * image when a grade already named it (a pulled task's first use), else the first grade does.
 */
async function measure(
  row: Row,
  id: string,
  bundle: string,
  kind: string,
  known: string | null,
): Promise<Measured | null> {
  const { limits } = await loadBundle(bundle);
  const limitArgs =
    rawLimits === 'job'
      ? [
          '--cpus',
          String(limits.cpus),
          '--memory',
          `${limits.memoryMb}m`,
          '--memory-swap',
          `${limits.memoryMb}m`,
          '--pids-limit',
          String(limits.pids),
        ]
      : [];

  // SWE-bench's eval script, reduced to its test step: patches in, test_cmd on the test files.
  const files = [...row.test_patch.matchAll(/^diff --git a\/.* b\/(.*)$/gm)]
    .map((m) => m[1] ?? '')
    .filter((f) => !NON_TEST_EXTS.some((ext) => f.endsWith(ext)));
  const fromEval = row.eval_script ? rawFromEval(row) : null;
  const script =
    fromEval?.script ??
    [
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
  const rounds: Array<{
    cmdMs: number;
    testsMs: number;
    rawMs: number;
    jobMs: number;
    runnerMs: number;
    rc: string;
    verdict: string;
    timings: Record<string, number>;
    load: string;
    gradeFirst: boolean;
  }> = [];
  // The image: the baseline built it (or a first use pulled it); the first grade names it.
  let image: string | null = known;
  let unfinished: string | null = null;
  for (let round = 0; round < repeat; round++) {
    const before = load();
    // Grade first in even rounds (the first one learns the image from it), raw first in odd.
    const gradeFirst: boolean = round % 2 === 0;
    const grade: Graded | null = gradeFirst ? gradeGold(id, bundle) : null;
    image = grade?.image ?? image;
    const name = `proctor-bench-import-${process.pid}-${kind}-${id.replace(/[^a-z0-9-]/g, '-')}`;
    containers.push(name);
    const raw = run(
      'docker',
      [
        'run',
        '--rm',
        '-i',
        '--name',
        name,
        '--label',
        BENCH_LABEL,
        '--network',
        'none',
        ...limitArgs,
        image ?? '',
        // The script is saved first and run with no stdin: a test command that reads stdin
        // would otherwise eat the rest of `bash -s`'s script.
        'bash',
        '-c',
        'cat > /tmp/proctor-raw.sh && exec bash /tmp/proctor-raw.sh </dev/null',
      ],
      script,
    );
    containers.pop();
    const match = /PROCTOR_TESTS_NS (\d+)(?: cmd (\d+))? rc (\d+)/.exec(raw.stdout);
    if (!match) {
      // One row's failed raw run does not lose the others' figures.
      unfinished = `${id.padEnd(26)} ${kind.padEnd(6)} not measured: the raw run did not finish (exit ${raw.status}): ${raw.stderr.slice(-300).replace(/\s+/g, ' ')}`;
      break;
    }
    const graded: Graded = grade ?? gradeGold(id, bundle);
    rounds.push({
      cmdMs: Number(match[2] ?? match[1]) / 1e6,
      testsMs: Number(match[1]) / 1e6,
      rawMs: raw.ms,
      jobMs: graded.jobMs,
      runnerMs: graded.runnerMs,
      rc: match[3] ?? '?',
      verdict: graded.verdict,
      timings: graded.timings,
      load: `${before}-${load()}`,
      gradeFirst,
    });
  }
  if (unfinished !== null) {
    lines.push(unfinished);
    console.log(unfinished);
    return null;
  }
  const overheads = rounds.map((r) => r.jobMs - r.testsMs);
  const overhead = median(overheads);
  const testsMs = median(rounds.map((r) => r.testsMs));
  const jobMs = median(rounds.map((r) => r.jobMs));
  const ratio = median(rounds.map((r) => r.jobMs / r.testsMs));
  measured += 1;
  if (overhead <= TARGET_MS) within += 1;
  const last = rounds[rounds.length - 1];
  if (repeat > 1) {
    for (const [index, r] of rounds.entries()) {
      lines.push(
        `  ${id} ${kind} round ${index + 1}: tests ${seconds(r.testsMs)} s  job ${seconds(r.jobMs)} s  ` +
          `runner ${seconds(r.runnerMs)} s  overhead ${seconds(r.jobMs - r.testsMs)} s  ` +
          `(${r.gradeFirst ? 'grade first' : 'raw first'}, load ${r.load}); steps (ms): ` +
          Object.entries(r.timings)
            .map(([step, ms]) => `${step} ${ms}`)
            .join(', '),
      );
    }
  }
  lines.push(
    `${id.padEnd(26)} ${kind.padEnd(6)} ${languageOf(row.repo).padEnd(10)} tests ${seconds(testsMs, 7)} s  ` +
      `cmd ${seconds(median(rounds.map((r) => r.cmdMs)), 7)} s  raw run ${seconds(median(rounds.map((r) => r.rawMs)), 7)} s  ` +
      `job ${seconds(jobMs, 7)} s  runner ${seconds(median(rounds.map((r) => r.runnerMs)), 7)} s  ` +
      `overhead ${seconds(overhead)} s  ratio ${ratio.toFixed(3)}  ` +
      `${overhead <= TARGET_MS ? 'ok' : 'OVER'} (grade ${last?.verdict ?? '?'}, raw rc ${last?.rc ?? '?'}, ` +
      `raw limits ${rawLimits === 'job' ? `cpus ${limits.cpus}, memory ${limits.memoryMb} MiB, pids ${limits.pids}` : 'none'}; ` +
      `job: ${Object.entries(last?.timings ?? {})
        .filter(([key]) =>
          [
            'workspace',
            'template',
            'container',
            'apply',
            'hidden_apply',
            'collect',
            'cleanup',
          ].includes(key),
        )
        .map(([key, ms]) => `${key} ${(ms / 1000).toFixed(2)}`)
        .join(', ')}; load ${rounds.map((r) => r.load).join(' ')})` +
      (fromEval?.changes.length
        ? `\n${' '.repeat(27)}raw changes: ${fromEval.changes.join('; ')}`
        : ''),
  );
  console.log(lines[lines.length - 1]);
  if (image === null) return null;
  return { image, jobMs, testsMs, overhead };
}

const built = new Map<string, Measured>();
const firstUses: string[] = [];
const ratios: string[] = [];
for (const row of chosen) {
  const id = taskId(row.instance_id);
  const state = sweep.tasks.find((t) => t.task === id);
  if (state?.validity !== 'valid') {
    lines.push(
      `${id.padEnd(26)} not measured: baseline ${state?.validity ?? 'missing'} ${state?.reason ?? ''}`,
    );
    continue;
  }
  const result = await measure(row, id, join(suite, id), 'built', null);
  if (result) built.set(row.instance_id, result);
}
if (values.pulled) await measurePulled(resolve(values.repos));

/**
 * --pulled: each task measured on its built image again on that image re-laid out as
 * SWE-bench's are, pushed to a registry the bench starts on 127.0.0.1 and imported with
 * `--images`: its first grade (pull and template) apart, then the same rounds as the built one.
 */
async function measurePulled(repos: string): Promise<void> {
  const ready = chosen.filter((row) => built.has(row.instance_id));
  if (ready.length === 0) {
    console.log('--pulled: no task was measured on its built image, so none is re-laid out');
    return;
  }
  const registryDir = join(home, 'registry');
  mkdirSync(registryDir);
  const registry = await launchRegistry(registryDir);
  console.log(`--pulled: a registry on ${registry.host}`);
  const pulledImages: string[] = [];
  try {
    const relaid = new Map<string, Relaid>();
    for (const row of ready) {
      const builtImage = built.get(row.instance_id)?.image ?? '';
      const { environment } = await loadBundle(join(suite, taskId(row.instance_id)));
      const made = await relayAsSweBench({
        builtImage,
        mirror: join(repos, row.repo.replace('/', '__')),
        instanceId: row.instance_id,
        baseCommit: row.base_commit,
        install: environment.install?.command,
        workdir: home,
        host: registry.host,
      });
      relaid.set(row.instance_id, made);
      console.log(
        `  ${taskId(row.instance_id)}: re-laid out in ${seconds(made.buildMs)} s, pushed in ${seconds(made.pushMs)} s as ${made.name}@${made.digest}`,
      );
    }
    const pulledSuite = join(home, 'pulled');
    const imported = proctor(
      'import',
      'swebench',
      resolve(values.rows),
      '--images',
      sweTemplate(registry.host),
      '--out',
      pulledSuite,
      '--only',
      ...ready.map((row) => row.instance_id),
    );
    process.stdout.write(imported.stdout);
    for (const row of ready) {
      const id = taskId(row.instance_id);
      const bundle = join(pulledSuite, id);
      const before = load();
      const first = gradeGold(id, bundle);
      pulledImages.push(first.image);
      const step = (key: string) => seconds(first.timings[key] ?? 0);
      firstUses.push(
        `${id.padEnd(26)} first use: job ${seconds(first.jobMs)} s  image (pull) ${step('image')} s  ` +
          `template ${step('template')} s  runner ${seconds(first.runnerMs)} s  grade ${first.verdict}  ` +
          `(re-layout build ${seconds(relaid.get(row.instance_id)?.buildMs ?? 0)} s, push ${seconds(relaid.get(row.instance_id)?.pushMs ?? 0)} s; load ${before}-${load()})`,
      );
      console.log(firstUses[firstUses.length - 1]);
      const pulled = await measure(row, id, bundle, 'pulled', first.image);
      const local = built.get(row.instance_id);
      if (pulled && local) {
        ratios.push(
          `${id.padEnd(26)} pulled / built: job ${(pulled.jobMs / local.jobMs).toFixed(3)}  ` +
            `job / tests (of the medians) ${(pulled.jobMs / pulled.testsMs).toFixed(3)} vs ${(local.jobMs / local.testsMs).toFixed(3)}  ` +
            `overhead ${seconds(pulled.overhead)} s vs ${seconds(local.overhead)} s`,
        );
      }
    }
  } finally {
    // Nothing the bench pulled or pushed stays: the references into the registry go (which
    // removes the pulled images), then the registry and its storage.
    await registry.dropReferences();
    for (const image of pulledImages) await dockerCli('rmi', image).catch(() => undefined);
    await registry.stop();
  }
}

console.log(
  `\nper task: SWE-bench's test command in the same image (raw limits: ${rawLimits}), against the gold grade's job` +
    (repeat > 1 ? ` (medians of ${repeat} rounds)` : ''),
);
for (const line of lines) console.log(line);
if (values.pulled) {
  console.log('\nfirst use of each pulled image (its pull and template, reported apart):');
  for (const line of firstUses) console.log(line);
  console.log('\nthe same task, pulled against built (medians):');
  for (const line of ratios) console.log(line);
}
console.log(`\n${within} of ${measured} measured tasks within tests' time + ${TARGET_MS / 1000} s`);
writeFileSync(
  join(tmpdir(), 'proctor-bench-import-last.txt'),
  [...lines, ...firstUses, ...ratios].join('\n') + '\n',
);
