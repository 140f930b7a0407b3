// npm run bench:template — the first use of an image: its workspace template made as a copy of
// the image's work tree, against one made over the image's own layers (a layered template,
// src/sandbox/image-layers.ts), for each task of a suite, in the same run and alternating, so
// that the shared machine's load falls on both alike.
//
// For each task: `proctor validate --json` builds its image (or finds it built) and names its
// local id; then --rounds times, each kind in turn, a fresh template store prepares the
// template the evaluator asks for (history none, the task's work tree and setup commit), timed
// from the call to the ready template, and the template volume is removed again. Printed per
// task: the median of each kind, the ratio layered / copy, the work tree's size (`du -sk` in
// the copy's `ready` line), and, for the layered kind, why it was not layered if it was not.
// Usage: npm run bench:template [-- --suite DIR --rounds 3]
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadSuite } from '../src/oracle/bundle.js';
import { createDockerClient } from '../src/sandbox/docker.js';
import { createTemplateStore, removeTemplate } from '../src/sandbox/template.js';

const ROOT = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    suite: { type: 'string', default: join(ROOT, 'examples') },
    rounds: { type: 'string', default: '3' },
  },
});
const ROUNDS = Number(values.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
  console.error(`bench:template: --rounds must be a whole number >= 1, got ${values.rounds}`);
  process.exit(2);
}
const suiteDir = resolve(values.suite ?? '');
const suite = await loadSuite(suiteDir).catch((error: unknown) => {
  console.error(`bench:template: ${suiteDir} is not a suite: ${String(error)}`);
  process.exit(2);
});
const home = mkdtempSync(join(tmpdir(), 'proctor-bench-template-'));
const validated = spawnSync(
  process.execPath,
  [join(ROOT, 'bin/proctor.js'), '--home', home, 'validate', suiteDir, '--json'],
  { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
);
const results = (() => {
  try {
    return (JSON.parse(validated.stdout) as { results?: Array<{ dir: string; localId?: string }> })
      .results;
  } catch {
    return undefined;
  }
})();
if (validated.status !== 0 || results === undefined) {
  console.error(`bench:template: the suite does not validate:\n${validated.stdout.slice(-3000)}`);
  console.error(validated.stderr.slice(-3000));
  process.exit(1);
}

const docker = createDockerClient();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const seconds = (ms: number) => (ms / 1000).toFixed(2);
console.log(
  `bench:template: ${suite.bundles.length} tasks of ${suiteDir}, ${ROUNDS} rounds, load ${loadavg()[0]?.toFixed(1)}`,
);
const totals = { copy: 0, layered: 0 };
for (const bundle of suite.bundles) {
  const image = results.find((r) => resolve(r.dir) === resolve(bundle.dir))?.localId;
  if (image === undefined) {
    console.error(`bench:template: proctor validate named no image for ${bundle.dir}`);
    process.exit(1);
  }
  const times = { copy: [] as number[], layered: [] as number[] };
  let sizeKb: number | undefined;
  let refused: string | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ['copy', 'layered'] as const) {
      const store = createTemplateStore();
      const owner = { job: `bench-template-${randomBytes(4).toString('hex')}`, attempt: 1, home };
      const spec = {
        owner,
        image,
        repoPath: bundle.workdir,
        baseCommit: bundle.baseCommit,
        uid: 1000,
        gid: 1000,
        history: 'none' as const,
        ...(bundle.setupCommit ? { setupCommit: true } : {}),
        layered: kind === 'layered',
      };
      const started = performance.now();
      const made = await store.acquire(docker, spec);
      times[kind].push(performance.now() - started);
      if (kind === 'copy') sizeKb = made.sizeKb;
      else refused = store.layerRefusal(image, bundle.workdir);
      await removeTemplate(docker, made.volume);
    }
  }
  const copy = median(times.copy);
  const layered = median(times.layered);
  totals.copy += copy;
  totals.layered += layered;
  console.log(
    `${bundle.id.padEnd(34)} copy ${seconds(copy).padStart(6)} s  layered ${seconds(layered).padStart(6)} s  ` +
      `layered/copy ${(layered / copy).toFixed(2)}  tree ${sizeKb === undefined ? '?' : Math.round(sizeKb / 1024)} MB` +
      (refused === undefined ? '' : `  (copied: ${refused})`),
  );
}
console.log(
  `all tasks: copy ${seconds(totals.copy)} s, layered ${seconds(totals.layered)} s, layered/copy ${(totals.layered / totals.copy).toFixed(2)}; load ${loadavg()[0]?.toFixed(1)}`,
);
rmSync(home, { recursive: true, force: true });
