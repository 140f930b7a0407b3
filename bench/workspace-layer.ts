// npm run bench:workspace-layer — a job's workspace set-up, the copy against the overlay
// (src/sandbox/overlay.ts), in the same run and interleaved (this machine is shared and noisy:
// compare the ratios), for two generated repositories built into images FROM
// debian:bookworm-slim with git (no network but the base image's apt mirror):
//   python  --py-files tracked files (default 2,000) of --py-kb KiB each, nothing ignored;
//   js      a small tracked source tree and a .gitignore'd node_modules of --nm-files files
//           (default 30,000) in packages of 25, --nm-mb MB in all (default 240): an installed
//           JavaScript project, as preact's or axios' images are.
// For each case and each way, --rounds set-ups (after one warm-up that prepares the template):
//   copy, disk     the copy into a disk volume (the solver's workspace before overlays);
//   copy, memory   the copy into a tmpfs volume (the evaluator's workspace before overlays);
//   overlay        the overlay on the template (the default now).
// A set-up is startWithWorkspace from its call to a started container with the checked tree (the
// time before the task's first command); `walk` is a `find` over the whole tree in it (reads
// through the overlay cost no more than from a copy); `remove` the container and its volumes.
// Target: overlay set-up <= 1 s for both cases on a quiet machine.
// Everything it makes is labelled (proctor.home=/proctor-bench/workspace-layer, a job id of its
// own; the images with proctor.bench) and removed at the end, on an error, or on Ctrl-C.
// Usage: npm run bench:workspace-layer [-- --rounds 5 --nm-files 30000 --nm-mb 240]
import { childRunner, commitAndBuild } from './generated-image.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  createDockerClient,
  createTemplateStore,
  execInContainer,
  pruneTemplates,
  removeContainer,
  removeOwned,
  removeVolume,
  startWithWorkspace,
  type Owner,
} from '../src/sandbox/index.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    'py-files': { type: 'string', default: '2000' },
    'py-kb': { type: 'string', default: '16' },
    'nm-files': { type: 'string', default: '30000' },
    'nm-mb': { type: 'string', default: '240' },
  },
});
const ROUNDS = Number(values.rounds);
const PY_FILES = Number(values['py-files']);
const PY_BYTES = Number(values['py-kb']) * 1024;
const NM_FILES = Number(values['nm-files']);
const NM_BYTES = Number(values['nm-mb']) * 1024 * 1024;
for (const [name, value] of Object.entries({ ROUNDS, PY_FILES, PY_BYTES, NM_FILES, NM_BYTES })) {
  if (!Number.isInteger(value) || value < 1) {
    console.error(`Expected ${name.toLowerCase()} to be an integer >= 1, got ${value}`);
    process.exit(2);
  }
}

const docker = createDockerClient(process.env['DOCKER_HOST']);
const run = randomBytes(4).toString('hex');
const home = '/proctor-bench/workspace-layer';
const imageLabel = `proctor.bench=workspace-layer-${run}`;
const temp = mkdtempSync(join(tmpdir(), 'proctor-bench-workspace-layer-'));
const { sh, children } = childRunner();
const owners: Owner[] = [];
const USER = { uid: 1000, gid: 1000 };

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length / 2) - 1)] ?? NaN;
};

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const child of children) child.kill('SIGKILL');
    for (let pass = 0; pass < 2; pass++) {
      for (const owner of owners) await removeOwned(docker, owner).catch(() => undefined);
    }
    await pruneTemplates(docker, home).catch(() => undefined);
    const images = await docker.listImages({ filters: { label: [imageLabel] } }).catch(() => []);
    for (const image of images) {
      await docker
        .getImage(image.Id)
        .remove({ force: true })
        .catch(() => undefined);
    }
    rmSync(temp, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void cleanup().finally(() => process.exit(130));
  });
}

/** Text of about `bytes` bytes, different for each `seed`. */
function text(seed: string, bytes: number): string {
  const line = `module.exports.${seed.replace(/[^a-z0-9]/gi, '_')} = function () { return 42; };\n`;
  return line.repeat(Math.max(1, Math.ceil(bytes / line.length))).slice(0, bytes);
}

/** Writes the case's repository, commits its tracked part, builds its image. */
async function buildCase(name: 'python' | 'js'): Promise<{ image: string; commit: string }> {
  const started = performance.now();
  const context = join(temp, name);
  const repo = join(context, 'repo');
  mkdirSync(repo, { recursive: true });
  if (name === 'python') {
    for (let i = 0; i < PY_FILES; i++) {
      const dir = join(repo, `pkg${String(Math.floor(i / 100)).padStart(3, '0')}`);
      if (i % 100 === 0) mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, `mod${i % 100}.py`),
        text(`py${i}`, PY_BYTES).replaceAll('module.exports.', '# '),
      );
    }
  } else {
    mkdirSync(join(repo, 'src'), { recursive: true });
    for (let i = 0; i < 200; i++)
      writeFileSync(join(repo, 'src', `m${i}.js`), text(`src${i}`, 2048));
    writeFileSync(join(repo, '.gitignore'), 'node_modules/\n');
    writeFileSync(join(repo, 'package.json'), '{ "name": "bench", "private": true }\n');
    // Sizes vary as in a real install: most files small, a few large.
    const average = NM_BYTES / NM_FILES;
    for (let i = 0; i < NM_FILES; i++) {
      const dir = join(repo, 'node_modules', `pkg${Math.floor(i / 25)}`, i % 25 < 5 ? '' : 'lib');
      if (i % 25 === 0 || i % 25 === 5) mkdirSync(dir, { recursive: true });
      const bytes = Math.max(64, Math.round(i % 10 === 0 ? average * 5.5 : average * 0.5));
      writeFileSync(join(dir, `f${i % 25}.js`), text(`nm${i}`, bytes));
    }
  }
  const tag = `proctor-bench-workspace-layer:${name}-${run}`;
  const commit = await commitAndBuild(sh, context, tag, imageLabel);
  rmSync(repo, { recursive: true, force: true });
  const image = (await docker.getImage(tag).inspect()).Id;
  const size = (await sh('docker', ['image', 'inspect', '-f', '{{.Size}}', image])).trim();
  console.log(
    `${name}: image built in ${((performance.now() - started) / 1000).toFixed(1)} s (${(Number(size) / 2 ** 20).toFixed(0)} MiB)`,
  );
  return { image, commit };
}

type Way = 'copy, disk' | 'copy, memory' | 'overlay';
const WAYS: Way[] = ['copy, disk', 'copy, memory', 'overlay'];

async function benchCase(name: 'python' | 'js'): Promise<void> {
  const { image, commit } = await buildCase(name);
  const templates = createTemplateStore();
  const times = new Map(
    WAYS.map((w) => [w, { setup: [] as number[], walk: [] as number[], remove: [] as number[] }]),
  );
  let files = 0;
  const once = async (way: Way, record: boolean) => {
    const owner: Owner = { job: `bench-layer-${run}-${owners.length}`, attempt: 1, home };
    owners.push(owner);
    const started = performance.now();
    const made = await startWithWorkspace(docker, {
      owner,
      role: 'evaluator',
      image,
      repoPath: '/repo',
      baseCommit: commit,
      history: 'none',
      ...USER,
      templates,
      layer: way === 'overlay' ? 'overlay' : 'copy',
      medium: way === 'copy, memory' ? 'memory' : 'disk',
      container: { workdir: '/repo', limits: { cpus: 1, memoryMb: 1024, pids: 256 } },
    });
    const setup = performance.now() - started;
    if (way === 'overlay' && made.medium !== 'overlay') {
      throw new Error(`no overlay on this engine: ${made.fallback ?? 'unknown reason'}`);
    }
    const walkStarted = performance.now();
    const walked = await execInContainer(docker, made.container.id, {
      cmd: ['sh', '-c', 'find . -type f | wc -l'],
      user: '1000:1000',
      workdir: '/repo',
      timeoutMs: 300_000,
      outputBytes: 1024,
    });
    const walk = performance.now() - walkStarted;
    files = Number(walked.stdout.trim());
    const removeStarted = performance.now();
    await removeContainer(made.container);
    for (const v of [made.workspace, made.assets, made.layerVolume]) {
      if (v !== undefined) await removeVolume(docker, v);
    }
    const remove = performance.now() - removeStarted;
    if (record) {
      const t = times.get(way)!;
      t.setup.push(setup);
      t.walk.push(walk);
      t.remove.push(remove);
    }
  };
  // The first prepares the template (a one-time cost per image), and warms the page cache.
  for (const way of WAYS) await once(way, false);
  for (let round = 0; round < ROUNDS; round++) for (const way of WAYS) await once(way, true);
  const overlay = median(times.get('overlay')!.setup);
  console.log(`\n${name}: ${files} files in the work tree, ${ROUNDS} interleaved rounds, medians`);
  console.log('  way            set-up ms   walk ms   remove ms   set-up vs overlay');
  for (const way of WAYS) {
    const t = times.get(way)!;
    const s = median(t.setup);
    console.log(
      `  ${way.padEnd(13)} ${s.toFixed(0).padStart(9)} ${median(t.walk).toFixed(0).padStart(9)} ${median(t.remove).toFixed(0).padStart(11)}   ${(s / overlay).toFixed(1).padStart(8)}×`,
    );
  }
  console.log(
    `  overlay set-up ${overlay.toFixed(0)} ms: ${overlay <= 1000 ? 'PASS' : 'MISS'} (target <= 1000 ms)`,
  );
}

try {
  const load = (await sh('cat', ['/proc/loadavg'])).split(' ').slice(0, 3).join(' ');
  console.log(`load average at start: ${load}`);
  await benchCase('python');
  await benchCase('js');
} finally {
  await cleanup();
}
