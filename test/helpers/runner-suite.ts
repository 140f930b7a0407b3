// The set-up every built-in runner's test file makes before its tests: Docker there, the
// runner's fixture image built, a bundle made from a RepoBundleSpec and loaded, its image
// resolved and its gold patch read; and a grade over them (gradeIn in the file's scope).
import { readFileSync } from 'node:fs';
import { beforeAll } from 'vitest';
import { loadBundle, type Bundle } from '../../src/oracle/bundle.js';
import { canaryCoverage, type CanaryCoverage } from '../../src/oracle/canary-coverage.js';
import type { Evaluation } from '../../src/oracle/evaluate.js';
import type { DockerClient } from '../../src/sandbox/docker.js';
import { requireDocker, resolveImage } from '../../src/sandbox/index.js';
import { fixtureImage, type DockerScope } from './docker.js';
import { gradeIn } from './grade.js';
import { makeRepoBundle, type RepoBundleSpec } from './repo-bundles.js';

export interface RunnerSuite {
  /** The bundle's folder. */
  readonly dir: string;
  readonly bundle: Bundle;
  /** The bundle's image, by local id. */
  readonly imageId: string;
  /** solution/gold.patch. */
  readonly gold: Buffer;
  /** `task` graded against `candidate` (null: a baseline) in `image` (default: imageId). */
  readonly grade: (task: Bundle, candidate: Buffer | null, image?: string) => Promise<Evaluation>;
  /** The bundle's canary coverage, as validate measures it: a probe of its image (uid 1000). */
  readonly coverage: () => Promise<CanaryCoverage | null>;
}

interface Made {
  dir: string;
  bundle: Bundle;
  imageId: string;
  gold: Buffer;
}

/**
 * Registers the file's beforeAll (within `timeout`) that builds test/fixtures/images/`image` and
 * the bundle of `spec`; the suite's fields are there once it ran (reading one before throws).
 */
export function runnerSuite(
  docker: DockerClient,
  scope: DockerScope,
  { image, spec }: { image: string; spec: RepoBundleSpec | (() => RepoBundleSpec) },
  timeout = 300_000,
): RunnerSuite {
  let made: Made | undefined;
  const get = (): Made => {
    if (!made) throw new Error(`the ${image} runner suite's beforeAll has not run`);
    return made;
  };
  beforeAll(async () => {
    await requireDocker(docker);
    await fixtureImage(image);
    const dir = await makeRepoBundle(typeof spec === 'function' ? spec() : spec);
    const bundle = await loadBundle(dir);
    const imageId = (await resolveImage(docker, bundle.environment)).localId;
    const gold = readFileSync(bundle.paths.goldPatch ?? '');
    made = { dir, bundle, imageId, gold };
  }, timeout);
  return {
    get dir() {
      return get().dir;
    },
    get bundle() {
      return get().bundle;
    },
    get imageId() {
      return get().imageId;
    },
    get gold() {
      return get().gold;
    },
    grade: (task, candidate, image = get().imageId) =>
      gradeIn(docker, scope, image, task, candidate),
    coverage: () =>
      canaryCoverage(docker, get().bundle, get().imageId, {
        owner: scope.owner(),
        uid: 1000,
        gid: 1000,
      }),
  };
}
