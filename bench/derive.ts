// npm run bench:derive — `proctor derive` on a large generated repository against the four
// runner runs alone.
//
// Generates (locally, deterministically) a Python project of --files files and about --mb MB:
// modules of generated code, a few dozen pytest files, and a fix commit that changes one
// module and adds a test. Then, interleaved, --runs times each:
//   derive (cold)  derive() into a new bundle with a fresh home: the snapshot, the image build
//                  of a new context (layers cached by the engine), the four states in the
//                  oracle's sandbox (repeat 1), classification, the atomic write;
//   derive (warm)  the same with the home's context records kept: the image is found, not built;
//   raw runner     the built-in pytest runner run four times with plain `docker run --rm` on
//                  the derived image (base; base + gold; base + hidden; base + hidden + gold),
//                  the patches applied by `git apply` from a bind mount: no volumes, no
//                  hardening, no assets, no report checks.
// and prints the medians and their ratios. derive() is the command's core; the CLI then runs
// `baseline --gold` on the bundle, which is the oracle's own cost (bench:oracle).
// The base has --commits commits of history (default 20,000, as the derive speed target's generated
// repository), which derive never reads: the snapshot holds the base tree alone.
// Usage: npm run bench:derive [-- --files 2000 --mb 35 --runs 3 --commits 20000]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { derive, type DeriveOptions } from '../src/derive/derive.js';
import { createDockerClient, removeOwned, requireDocker } from '../src/sandbox/index.js';
import { createImageCache } from '../src/workers/index.js';
import { createGenerator } from './generate.js';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '2000' },
    mb: { type: 'string', default: '35' },
    runs: { type: 'string', default: '3' },
    commits: { type: 'string', default: '20000' },
  },
});
const FILES = Number(values.files);
const BYTES = Number(values.mb) * 1024 * 1024;
const RUNS = Number(values.runs);
const COMMITS = Number(values.commits);

const docker = createDockerClient(process.env['DOCKER_HOST']);
await requireDocker(docker, process.env['DOCKER_HOST'] ?? '/var/run/docker.sock');

const root = mkdtempSync(join(tmpdir(), 'proctor-bench-derive-'));
const repo = join(root, 'repo');
const env = join(root, 'env');
const images = new Set<string>();

const git = (args: string[], input?: string) =>
  execFileSync('git', args, {
    ...(input !== undefined ? { input } : {}),
    cwd: repo,
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'bench',
      GIT_AUTHOR_EMAIL: 'bench@example.invalid',
      GIT_COMMITTER_NAME: 'bench',
      GIT_COMMITTER_EMAIL: 'bench@example.invalid',
      GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
      GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
    },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  }).trim();

const { module } = createGenerator(12345);

function write(path: string, text: string) {
  mkdirSync(join(repo, path, '..'), { recursive: true });
  writeFileSync(join(repo, path), text);
}

const TESTS = 40;
/** --commits commits of history before the base (as the derive speed target's repository has), each
 * changing one small file, written by `git fast-import` in one go. */
function history() {
  const parts: string[] = [];
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  for (let i = 1; i <= COMMITS; i++) {
    parts.push(
      'commit refs/heads/main\n',
      `mark :${i}\n`,
      `committer bench <bench@example.invalid> ${1_600_000_000 + i} +0000\n`,
      data(`history ${i}`),
      i > 1 ? `from :${i - 1}\n` : '',
      'M 100644 inline history.txt\n',
      data(`${i}\n`),
    );
  }
  git(['fast-import', '--quiet'], parts.join(''));
  git(['reset', '-q', '--hard', 'main']);
}

function generate() {
  mkdirSync(repo, { recursive: true });
  git(['init', '-q', '-b', 'main']);
  if (COMMITS > 0) history();
  const per = Math.floor(BYTES / FILES);
  for (let i = 0; i < FILES - TESTS - 2; i++) write(`pkg/sub${i % 50}/mod${i}.py`, module(per));
  write('pkg/__init__.py', '');
  write('pkg/calc.py', 'def div(a, b):\n    return a / b\n');
  for (let i = 0; i < TESTS; i++) {
    const body = Array.from(
      { length: 5 },
      (_, k) => `def test_${i}_${k}():\n    assert div(${k + 2}, 1) == ${k + 2}\n`,
    );
    write(`tests/test_t${i}.py`, `from pkg.calc import div\n\n\n${body.join('\n\n')}`);
  }
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'base']);
  const base = git(['rev-parse', 'HEAD']);
  write('pkg/calc.py', 'def div(a, b):\n    return None if b == 0 else a / b\n');
  write(
    'tests/test_t0.py',
    `from pkg.calc import div\n\n\ndef test_zero():\n    assert div(1, 0) is None\n`,
  );
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'div: None for zero\n\nDividing by zero raised.']);
  return { base, fix: git(['rev-parse', 'HEAD']) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function runDerive(home: string, out: string, commits: { base: string; fix: string }) {
  const options: DeriveOptions = {
    repo,
    ...commits,
    environment: env,
    out,
    runner: 'pytest',
    repeat: 1,
    workdir: '/repo',
  };
  const started = performance.now();
  const result = await derive(options, {
    docker,
    images: createImageCache(docker, { dir: join(home, 'cache', 'contexts') }),
    home,
    sandbox: { uid: 1000, gid: 1000 },
    note: () => undefined,
  });
  const ms = performance.now() - started;
  await removeOwned(docker, { job: 'none', attempt: 1, home });
  return { ms, result };
}

/** The four states with plain docker run: the runner alone, on the derived image. */
function rawFour(image: string, bundle: string): number {
  const script = String.raw`set -e
cp -r /repo /tmp/w && cd /tmp/w
export GIT_DIR=/nonexistent
case "$1" in
  gold) git apply /b/solution/gold.patch ;;
  hidden) git apply /b/tests/hidden.patch ;;
  both) git apply /b/solution/gold.patch; git apply /b/tests/hidden.patch ;;
esac
printf '.\n' > /tmp/list
/b/tests/run /tmp/list /tmp/report > /dev/null || true
test -s /tmp/report`;
  const started = performance.now();
  for (const state of ['base', 'gold', 'hidden', 'both']) {
    execFileSync('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      '-v',
      `${bundle}:/b:ro`,
      '--tmpfs',
      '/tmp:exec,size=1g',
      image,
      'sh',
      '-c',
      script,
      'raw',
      state,
    ]);
  }
  return performance.now() - started;
}

try {
  writeFileSync(
    join((mkdirSync(env, { recursive: true }), env), 'Dockerfile'),
    'FROM debian:bookworm-slim\nRUN apt-get update \\\n && apt-get install -y --no-install-recommends git python3 python3-pytest nodejs \\\n && rm -rf /var/lib/apt/lists/*\n',
  );
  const commits = generate();
  const du = execFileSync('du', ['-sm', '--exclude=.git', repo], { encoding: 'utf8' });
  const gitMb = execFileSync('du', ['-sm', join(repo, '.git')], { encoding: 'utf8' });
  console.log(
    `repository: ${FILES} files, ${du.split('\t')[0]} MB (work tree), ${git(['rev-list', '--count', 'HEAD'])} commits (.git ${gitMb.split('\t')[0]} MB) in ${repo}`,
  );
  const warmHome = join(root, 'warm-home');
  const first = await runDerive(warmHome, join(root, 'out-first'), commits);
  console.log(
    `derived ${first.result.bundle.id}: ${first.result.classified.existing.length} existing, ${first.result.classified.hidden.length} hidden`,
  );
  const image = (
    await createImageCache(docker, { dir: join(warmHome, 'cache', 'contexts') }).resolve(
      first.result.bundle,
    )
  ).localId;
  images.add(image);
  const cold: number[] = [];
  const warm: number[] = [];
  const raw: number[] = [];
  const steps: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Each cold run's home is new; the engine's layer cache still holds the apt layer, as on
    // any machine that built the environment once.
    const coldRun = await runDerive(join(root, `cold-${i}`), join(root, `out-cold-${i}`), commits);
    cold.push(coldRun.ms);
    const warmRun = await runDerive(warmHome, join(root, `out-warm-${i}`), commits);
    warm.push(warmRun.ms);
    const t = warmRun.result.timings;
    steps.push(
      `  warm run ${i + 1}: snapshot ${s(t['snapshot'] ?? 0)}, image ${s(t['image'] ?? 0)}, four states ${s(t['runs'] ?? 0)} (of which the runner ${s(t['runner'] ?? 0)})`,
    );
    raw.push(rawFour(image, first.result.bundle.dir));
  }
  const [c, w, r] = [median(cold), median(warm), median(raw)];
  console.log(`\nmedian of ${RUNS}:`);
  console.log(
    `  derive, cold home (snapshot + build + four states)  ${s(c)}   ${(c / r).toFixed(2)}× raw`,
  );
  console.log(
    `  derive, warm home (image found)                     ${s(w)}   ${(w / r).toFixed(2)}× raw`,
  );
  for (const line of steps) console.log(line);
  console.log(`  raw: the runner four times with docker run          ${s(r)}`);
} finally {
  rmSync(root, { recursive: true, force: true });
  for (const image of images) {
    await docker
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
  }
}
