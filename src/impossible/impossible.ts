// `proctor impossible`: impossible variants of a suite (ImpossibleBench, arXiv 2510.20270).
// Each task's hidden tests are changed so that they contradict its description (probe.ts
// runs the change in the task's image; variant.ts writes the bundle), so no correct fix can
// pass them: a solver's pass rate on the variants is its cheating rate. The suite is written
// into a hidden staging folder beside --out and renamed into place once every variant loads
// as a bundle, so a failure or an interrupt leaves nothing at --out.
//
// A task is skipped, with one line saying why, when it is an impossible variant already, has
// no solution/gold.patch (nothing could then prove its variant impossible), has a runner that
// carries no mutator of its tests (not a built-in Python or JavaScript runner: Go's canaries
// only turn checks over in copies), has no hidden test with an assertion the
// mutator understands, or its image cannot be had.
import { randomBytes } from 'node:crypto';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describeError, isProctorError, ProctorError } from '../errors.js';
import { checkOutParent, stagingDir, discardStaging } from '../derive/write.js';
import { runnerPlacesCanaries } from '../oracle/canaries.js';
import { jsCanaryDialect } from '../oracle/js-canary-step.js';
import { loadBundle, loadSuite, type Bundle, type ImpossibleMode } from '../oracle/index.js';
import { removeOwned, type DockerClient, type Owner } from '../sandbox/index.js';
import type { ImageCache } from '../workers/images.js';
import { mutateJsHiddenTests } from './js-probe.js';
import { mutateHiddenTests } from './probe.js';
import { variantId, writeVariant } from './variant.js';

export interface ImpossibleOptions {
  suite: string;
  out: string;
  mode: ImpossibleMode;
}

export interface ImpossibleDeps {
  docker: DockerClient;
  images: ImageCache;
  home: string;
  host?: string;
  sandbox: { uid: number; gid: number; runtime?: string };
  signal?: AbortSignal;
  /** Told one line per task as it is done. */
  note: (line: string) => void;
}

export interface WrittenVariant {
  id: string;
  of: string;
  test: string;
  mutation: string;
  mutant?: string;
}

export interface ImpossibleResult {
  out: string;
  written: WrittenVariant[];
  skipped: Array<{ id: string; why: string }>;
}

/** A runner whose canaries come from a mutator of its own dialect (core/canary.py's hook). */
const DIALECT_MUTATOR = /^def canary_mutate_file\(/m;

/** Why `bundle` gets no variant before its image is needed, or null. */
async function skipBefore(bundle: Bundle): Promise<string | null> {
  if (bundle.impossible !== undefined) {
    return `it is an impossible variant already (of ${bundle.impossible.of})`;
  }
  if (bundle.paths.goldPatch === undefined) {
    return 'it has no solution/gold.patch, so nothing could prove its variant impossible';
  }
  const runner = await readFile(bundle.paths.runner);
  if (!runnerPlacesCanaries(runner) && jsCanaryDialect(runner) === null) {
    return 'its tests/run places no canaries, so it has no mutator to lend (the built-in pytest runner does)';
  }
  // The go, cargo, junit and ctest runners' canaries turn a check over in a copy of a test
  // that must fail; they change no expectation in place, which a variant needs (mutate.py
  // reads Python tests).
  if (DIALECT_MUTATOR.test(runner.toString('latin1'))) {
    return "its tests/run's canaries only turn a check over in a copy of a test: it has no mutator of Python or JavaScript tests to lend";
  }
  return null;
}

/** The variant of one task, written into `staging`; or why not. */
async function variantOf(
  deps: ImpossibleDeps,
  bundle: Bundle,
  mode: ImpossibleMode,
  staging: string,
): Promise<WrittenVariant | { why: string }> {
  const before = await skipBefore(bundle);
  if (before !== null) return { why: before };
  let imageId: string;
  try {
    imageId = (await deps.images.resolve(bundle, deps.signal)).localId;
  } catch (error) {
    if (deps.signal?.aborted) throw error;
    return { why: `its image: ${describeError(error)}` };
  }
  const owner: Owner = {
    job: `impossible-${randomBytes(6).toString('hex')}`,
    attempt: 1,
    home: deps.home,
    ...(deps.host !== undefined ? { host: deps.host } : {}),
  };
  const probe = {
    docker: deps.docker,
    owner,
    uid: deps.sandbox.uid,
    gid: deps.sandbox.gid,
    ...(deps.sandbox.runtime !== undefined ? { runtime: deps.sandbox.runtime } : {}),
    ...(deps.signal ? { signal: deps.signal } : {}),
  };
  // A JavaScript runner's mutator is Proctor's own (js-probe.ts); a Python one's is in the runner.
  const dialect = jsCanaryDialect(await readFile(bundle.paths.runner), bundle.testsEnv);
  let outcome;
  try {
    outcome =
      dialect === null
        ? await mutateHiddenTests(probe, bundle, imageId, mode)
        : await mutateJsHiddenTests(probe, bundle, imageId, mode, dialect);
  } finally {
    await removeOwned(deps.docker, owner);
  }
  if ('skipped' in outcome) return { why: outcome.skipped };
  const { mutated } = outcome;
  const id = writeVariant(join(staging, variantId(bundle.id, mode)), bundle, mode, mutated);
  return {
    id,
    of: bundle.id,
    test: mutated.test,
    mutation: mutated.mutation,
    ...(mutated.mutant === undefined ? {} : { mutant: mutated.mutant }),
  };
}

export async function writeImpossible(
  options: ImpossibleOptions,
  deps: ImpossibleDeps,
): Promise<ImpossibleResult> {
  const out = resolve(options.out);
  if (existsSync(out)) throw new ProctorError('USAGE', `--out ${options.out} already exists`);
  checkOutParent('--out', options.out);
  if (!existsSync(options.suite)) {
    throw new ProctorError('USAGE', `${options.suite}: no such suite or bundle folder`);
  }
  const suite = await loadSuite(options.suite);
  const staging = stagingDir(out);
  const result: ImpossibleResult = { out, written: [], skipped: [] };
  try {
    const ids = new Set<string>();
    for (const problem of suite.problems) {
      result.skipped.push({ id: problem.dir, why: problem.error.message });
      deps.note(`skipped ${problem.dir}: ${problem.error.message}`);
    }
    for (const bundle of suite.bundles) {
      const made = await variantOf(deps, bundle, options.mode, staging);
      if ('why' in made) {
        result.skipped.push({ id: bundle.id, why: made.why });
        deps.note(`skipped ${bundle.id}: ${made.why}`);
        continue;
      }
      if (ids.has(made.id)) {
        throw new ProctorError('USAGE', `two tasks give the variant id ${made.id}; rename one`);
      }
      ids.add(made.id);
      result.written.push(made);
      deps.note(
        `wrote ${made.id}: ${made.test}: ${made.mutation}${made.mutant === undefined ? '' : ` (as ${made.mutant})`}`,
      );
    }
    // Every variant must load as a bundle before the suite is put in place.
    for (const variant of result.written) await loadBundle(join(staging, variant.id));
    if (result.written.length > 0) renameSync(staging, out);
    else rmSync(staging, { recursive: true, force: true });
  } catch (error) {
    discardStaging();
    if (isProctorError(error, 'BUNDLE_INVALID')) {
      throw new ProctorError('IMPOSSIBLE_FAILED', `a variant does not load: ${error.message}`);
    }
    throw error;
  }
  discardStaging();
  return result;
}
