// Prepares the tools the tests need (.ci/test-tools: Chromium, runsc, docker-registry,
// iproute2, the Docker engine with runsc registered, the base images), installing what is
// missing, so that `npm test` alone works on a fresh machine; builds every fixture image of
// test/fixtures/images (fixture-images.ts) outside any test's limit; builds dist/ and the bin's bundle
// once before the tests, so that CLI tests run the real `bin/proctor.js` against the current
// sources, never a stale build; and starts the throw-away PostgreSQL cluster (.ci/postgres)
// unless PROCTOR_TEST_PG_URL already names one. The URL reaches the test workers through the
// environment.
// After the run, removes the workspace templates of the test homes (temp dirs, and
// /proctor-tests… of earlier runs) and the images' templates: they carry no job label, so no test's own cleanup takes them, and a temp
// home is never used again. Removes, too, the task images Proctor built during the run (a test's
// bundle hashes differently on every run, so each run would leave its own behind until the
// disk fills) and the untagged images the run's builds left: images the run made that are no
// fixture image and that no container uses. Another test run on this machine (another checkout,
// a CI clone) builds its own: each run leaves a marker while it runs, and the images made since
// the earliest other run still going began are left to that run's own clean-up.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDockerClient } from '../../src/sandbox/docker.js';
import { LABEL } from '../../src/sandbox/labels.js';
import { removeTemplate } from '../../src/sandbox/template.js';
import { bundleBin } from '../../scripts/bundle.js';
import { startTestPostgres } from './postgres-server.js';
import { buildFixtureImages } from './fixture-images.js';
import { prepareTestTools } from './test-tools.js';

/** Where each test run on this machine marks itself while it runs: `<pid>-<start in ms>`. */
const RUNS = join(tmpdir(), 'proctor-test-runs');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The start (in s) of the earliest other test run still going, Infinity when there is none;
 * the markers of runs that ended without their clean-up (killed) are removed. */
function otherRunsSince(own: string): number {
  let earliest = Infinity;
  for (const name of readdirSync(RUNS)) {
    if (name === own) continue;
    const [pid, start] = name.split('-').map(Number);
    if (pid === undefined || start === undefined || !Number.isSafeInteger(pid)) continue;
    if (alive(pid)) earliest = Math.min(earliest, Math.floor(start / 1000));
    else rmSync(join(RUNS, name), { force: true });
  }
  return earliest;
}

export default async function setup(): Promise<() => Promise<void>> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  // First: a missing tool fails the run at once, with its reason, before the build.
  prepareTestTools();
  // Then, with both base images there, every fixture image, before any test's clock starts: a
  // cold Go or Rust toolchain takes longer to build on a busy machine than a test may take.
  const started = Date.now();
  const runStarted = Math.floor(started / 1000);
  const marker = `${process.pid}-${started}`;
  mkdirSync(RUNS, { recursive: true });
  writeFileSync(join(RUNS, marker), '');
  const builds = await buildFixtureImages({ concurrency: 2 });
  const fresh = builds.filter((build) => !build.cached).length;
  process.stderr.write(
    `fixture images: ${builds.length} ready (${fresh} built) in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  await bundleBin();
  process.env.PROCTOR_TEST_PG_URL ||= startTestPostgres();
  return async () => {
    const docker = createDockerClient(process.env['DOCKER_HOST']);
    const { Volumes } = await docker.listVolumes({ filters: { label: [LABEL.template] } });
    for (const volume of Volumes ?? []) {
      const home = volume.Labels?.[LABEL.home] ?? '';
      // An image's template (every home's) made during the run: of a fixture image or a task
      // image of the run (one made before it may be a user's, of a real suite's image).
      const created = Date.parse((volume as { CreatedAt?: string }).CreatedAt ?? '') / 1000;
      const images = volume.Labels?.[LABEL.templateScope] === 'image' && created >= runStarted;
      if (!images && !home.startsWith('/proctor-tests') && !home.startsWith(tmpdir())) continue;
      // One in use (a test run of another checkout) is left: removeTemplate answers false.
      await removeTemplate(docker, volume.Name).catch(() => false);
    }
    rmSync(join(RUNS, marker), { force: true });
    const othersSince = otherRunsSince(marker);
    const images = await docker.listImages({ filters: { label: ['proctor.build'] } });
    for (const image of images) {
      if (image.Created < runStarted || image.Created >= othersSince) continue;
      const tags = (image.RepoTags ?? []).filter((tag) => tag !== '<none>:<none>');
      if (!tags.every((tag) => tag.startsWith('proctor-task:'))) continue;
      // Untagged by tag, then the id: the engine refuses while a container uses it.
      for (const tag of tags)
        await docker
          .getImage(tag)
          .remove()
          .catch(() => undefined);
      if (tags.length === 0)
        await docker
          .getImage(image.Id)
          .remove()
          .catch(() => undefined);
    }
  };
}
