// The full check of a statically valid bundle, with Docker: its image resolved (the digest in
// RepoDigests, or a build) and `git rev-parse HEAD` inside it equal to base_commit. A worker
// runs it as a `validate` job; `proctor validate` runs it in its own process. The API never
// does: it answers the static checks and enqueues validate jobs.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describeError, isProctorError, isRetryable } from '../errors.js';
import {
  createTemplateStore,
  IMAGE_TIMEOUT_HINT,
  readRepositoryCommit,
  readRepositoryHead,
  resolveImage,
  type BuildTrust,
  type DockerClient,
  type ImageIdentity,
  type Owner,
  type RepositoryCommit,
  type ResolvedImage,
} from '../sandbox/index.js';
import { runtimeRefusal } from '../sandbox/overlay.js';
import { pathsTouchedBy } from './diff-filter.js';
import type { Bundle, LoadBundleOptions } from './bundle.js';
import { canaryCoverage, type CanaryCoverage } from './canary-coverage.js';
import { integrityLayers, integrityWarnings } from './integrity.js';
import { checkStatic } from './validate.js';

export interface ImageCheckDeps {
  docker: DockerClient;
  /** How to resolve the bundle's image; default resolveImage (a worker passes its cache). */
  resolve?: (bundle: Bundle, signal?: AbortSignal) => Promise<ResolvedImage>;
  /** Labels the probe container, so that a crashed process's leftovers are found. */
  owner: Owner;
  uid: number;
  gid: number;
  runtime?: string;
  signal?: AbortSignal;
  /** The host's CA bundle and proxy settings, offered to the build (without `resolve`). */
  trust?: BuildTrust;
  /** Wall time of the build or pull, in ms (without `resolve`; `[images] timeout_minutes`). */
  imageTimeoutMs?: number;
}

export type ImageCheck =
  | {
      ok: true;
      identity: ImageIdentity;
      localId: string;
      /** HEAD, when it is a setup commit on the base commit ([environment] setup_commit). */
      setupCommit?: string;
    }
  | { ok: false; problems: string[] };

/**
 * Checks the image and base commit of one bundle. A failure that will recur (the image does
 * not build, its digest is wrong, HEAD differs) is a problem of the bundle; one of the
 * machinery (the engine went away, a timeout) is thrown, for the caller to retry or report.
 */
export async function checkImage(bundle: Bundle, deps: ImageCheckDeps): Promise<ImageCheck> {
  const key = bundle.environment.kind === 'image' ? 'environment.image' : 'environment.dockerfile';
  let resolved: ResolvedImage;
  try {
    resolved = deps.resolve
      ? await deps.resolve(bundle, deps.signal)
      : await resolveImage(deps.docker, bundle.environment, {
          ...(deps.signal ? { signal: deps.signal } : {}),
          ...(deps.trust ? { trust: deps.trust } : {}),
          ...(deps.imageTimeoutMs !== undefined
            ? { timeoutMs: deps.imageTimeoutMs, timeoutHint: IMAGE_TIMEOUT_HINT }
            : {}),
        });
  } catch (error) {
    if (isRetryable(error)) throw error;
    return { ok: false, problems: [`task.toml: ${key}: ${describeError(error)}`] };
  }
  const probe = {
    owner: deps.owner,
    uid: deps.uid,
    gid: deps.gid,
    ...(deps.runtime ? { runtime: deps.runtime } : {}),
    ...(deps.signal ? { signal: deps.signal } : {}),
  };
  let head: string;
  let setup: string | undefined;
  try {
    if (bundle.setupCommit) {
      const commit = await readRepositoryCommit(
        deps.docker,
        resolved.localId,
        bundle.workdir,
        probe,
      );
      head = commit.head;
      if (head !== bundle.baseCommit) {
        const problem = setupCommitProblem(
          bundle,
          commit,
          pathsTouchedBy(await readFile(bundle.paths.hiddenPatch)),
        );
        if (problem !== undefined) return { ok: false, problems: [problem] };
        setup = head;
      }
    } else head = await readRepositoryHead(deps.docker, resolved.localId, bundle.workdir, probe);
  } catch (error) {
    if (isRetryable(error)) throw error;
    return { ok: false, problems: [`task.toml: ${key}: ${describeError(error)}`] };
  }
  if (setup === undefined && head !== bundle.baseCommit) {
    return {
      ok: false,
      problems: [
        `task.toml: environment.base_commit: is ${bundle.baseCommit}, but HEAD of ${bundle.workdir} in the image is ${head}`,
      ],
    };
  }
  return {
    ok: true,
    identity: resolved.identity,
    localId: resolved.localId,
    ...(setup === undefined ? {} : { setupCommit: setup }),
  };
}

/**
 * Why the image's HEAD is not a setup commit the task may be graded on, or undefined when it
 * is. What is checked, from the image's own git (content-addressed: no label, no message, no
 * author is read, since anyone can write those): HEAD's only parent is base_commit, so the
 * base's history is the tree's and nothing later is; and HEAD changes none of the files the
 * hidden test patch touches, so the hidden tests run exactly as base_commit plus the test patch
 * have them (SWE-bench's eval script checks those files out of base_commit before it applies
 * the test patch, which comes to the same for such a commit). What the commit does change (the
 * install's edits to tracked files) is the environment's, like the image's own packages.
 */
export function setupCommitProblem(
  bundle: Pick<Bundle, 'baseCommit' | 'workdir'>,
  commit: RepositoryCommit,
  hiddenPaths: readonly string[],
): string | undefined {
  const where = `HEAD of ${bundle.workdir} in the image is ${commit.head}`;
  if (commit.parents.length !== 1 || commit.parents[0] !== bundle.baseCommit) {
    const parents =
      commit.parents.length === 0 ? 'no parent' : `parent ${commit.parents.join(' and ')}`;
    return `task.toml: environment.base_commit: is ${bundle.baseCommit}, but ${where} (${parents}), neither the base commit nor one setup commit on it`;
  }
  const hidden = new Set(hiddenPaths);
  const touched = commit.changed.filter((path) => hidden.has(path));
  if (touched.length > 0) {
    return `task.toml: environment.setup_commit: ${where}, whose setup commit changes what tests/hidden.patch touches: ${touched.join(', ')}`;
  }
  return undefined;
}

export interface ValidationDeps {
  /** Without a client only the static checks run. */
  docker?: DockerClient;
  /**
   * How to resolve a bundle's image; default resolveImage. The CLI passes the worker's image
   * cache, so that the image it checks is the one every grade of the task runs.
   */
  resolve?: (bundle: Bundle, signal?: AbortSignal) => Promise<ResolvedImage>;
  home: string;
  /** The host identity its probe containers are labelled with; default the hostname. */
  host?: string;
  uid: number;
  gid: number;
  runtime?: string;
  signal?: AbortSignal;
  /** The host's CA bundle and proxy settings, offered to every image build. */
  trust?: BuildTrust;
  /** Wall time of one image build or pull, in ms (`[images] timeout_minutes`). */
  imageTimeoutMs?: number;
}

export type ValidationResult =
  | {
      ok: true;
      dir: string;
      id: string;
      identity?: ImageIdentity;
      localId?: string;
      /** The task's integrity layers (integrityLayers): `screen`, `conftest-denied`, … */
      layers: string[];
      /** What the task could do better; a warning never makes a bundle invalid. */
      warnings: string[];
      /**
       * Which hidden tests the canaries cover (canary-coverage.ts), with Docker only; null when
       * the runner places none.
       */
      canaries?: CanaryCoverage | null;
    }
  | { ok: false; dir: string; id?: string; problems: string[] };

/**
 * Validates every bundle found under each path, in order, in this process: the static checks,
 * then (with a client) the image check. An engine failure other than an unreachable engine
 * is reported as the bundle's problem, since nobody will retry it.
 */
export async function validatePaths(
  paths: string[],
  deps: ValidationDeps,
  options: LoadBundleOptions = {},
  onResult: (result: ValidationResult) => void = () => {},
): Promise<ValidationResult[]> {
  const results: ValidationResult[] = [];
  for (const found of await checkStatic(paths, options)) {
    let result: ValidationResult;
    if (!found.ok) result = found;
    else {
      const integrity = {
        layers: await integrityLayers(found.bundle),
        warnings: await integrityWarnings(found.bundle),
      };
      if (!deps.docker) result = { ok: true, dir: found.dir, id: found.id, ...integrity };
      else result = await fullCheck(found.bundle, deps.docker, deps, integrity);
    }
    results.push(result);
    onResult(result);
  }
  return results;
}

/**
 * The evaluator's workspace template of the image, made now, with the image: it is the image's
 * (template.ts: templateScope), so the first grade of the image, in any home, makes none. Only
 * where the grade would take it: a task that names no workspace medium, a runtime that reads
 * overlays, an image whose layers make one. One that cannot be made now is the first grade's
 * to make, as before: validate says nothing of it.
 */
async function prepareEvaluatorTemplate(
  docker: DockerClient,
  bundle: Bundle,
  image: string,
  deps: ValidationDeps,
  owner: Owner,
): Promise<void> {
  if (bundle.workspace !== undefined || runtimeRefusal(deps.runtime) !== undefined) return;
  await createTemplateStore()
    .acquire(docker, {
      owner,
      image,
      repoPath: bundle.workdir,
      baseCommit: bundle.baseCommit,
      uid: deps.uid,
      gid: deps.gid,
      // As the evaluator asks for it (evaluate.ts).
      history: 'none',
      ...(bundle.setupCommit ? { setupCommit: true } : {}),
      layered: true,
      layeredOnly: true,
      ...(deps.runtime ? { runtime: deps.runtime } : {}),
    })
    .catch(() => undefined);
}

async function fullCheck(
  bundle: Bundle,
  docker: DockerClient,
  deps: ValidationDeps,
  integrity: { layers: string[]; warnings: string[] },
): Promise<ValidationResult> {
  const where = { dir: bundle.dir, id: bundle.id };
  const owner = {
    job: `validate-${randomUUID()}`,
    attempt: 1,
    home: deps.home,
    ...(deps.host !== undefined ? { host: deps.host } : {}),
  };
  try {
    const check = await checkImage(bundle, {
      docker,
      ...(deps.resolve ? { resolve: deps.resolve } : {}),
      owner,
      uid: deps.uid,
      gid: deps.gid,
      ...(deps.runtime ? { runtime: deps.runtime } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.trust ? { trust: deps.trust } : {}),
      ...(deps.imageTimeoutMs !== undefined ? { imageTimeoutMs: deps.imageTimeoutMs } : {}),
    });
    if (!check.ok) return { ok: false, ...where, problems: check.problems };
    const canaries = await canaryCoverage(docker, bundle, check.localId, {
      owner,
      uid: deps.uid,
      gid: deps.gid,
      ...(deps.runtime ? { runtime: deps.runtime } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    await prepareEvaluatorTemplate(docker, bundle, check.localId, deps, owner);
    return {
      ok: true,
      ...where,
      identity: check.identity,
      localId: check.localId,
      ...integrity,
      canaries,
    };
  } catch (error) {
    if (isProctorError(error, 'DOCKER_UNAVAILABLE')) throw error;
    const key =
      bundle.environment.kind === 'image' ? 'environment.image' : 'environment.dockerfile';
    return { ok: false, ...where, problems: [`task.toml: ${key}: ${describeError(error)}`] };
  }
}
