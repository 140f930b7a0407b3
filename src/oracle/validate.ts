// Validation of bundles and suites: the static checks of format 1 (every problem with its
// file and key), then, with Docker, the image identity (digest in RepoDigests, or a build)
// and the base commit, read with git inside the image. Used by `proctor validate` and the API.
import { randomUUID } from 'node:crypto';
import { ProctorError, describeError, isProctorError } from '../errors.js';
import type { DockerClient } from '../sandbox/docker.js';
import { readRepositoryHead, resolveImage, type ImageIdentity } from '../sandbox/image.js';
import { loadSuite, type Bundle, type LoadBundleOptions } from './bundle.js';

export interface ValidationDeps {
  /** Without a client only the static checks run. */
  docker?: DockerClient;
  home: string;
  uid: number;
  gid: number;
  runtime?: string;
  signal?: AbortSignal;
}

export type ValidationResult =
  | { ok: true; dir: string; id: string; identity?: ImageIdentity; localId?: string }
  | { ok: false; dir: string; id?: string; problems: string[] };

function problemsOf(error: unknown): string[] {
  if (isProctorError(error, 'BUNDLE_INVALID')) {
    const problems = (error.data?.['problems'] ?? []) as Array<{
      file: string;
      key?: string;
      message: string;
    }>;
    if (problems.length > 0)
      return problems.map((p) => `${p.file}: ${p.key ? `${p.key}: ` : ''}${p.message}`);
  }
  return [describeError(error)];
}

/** Checks what a Docker engine can check of one statically valid bundle. */
async function checkWithDocker(
  bundle: Bundle,
  docker: DockerClient,
  deps: ValidationDeps,
): Promise<ValidationResult> {
  try {
    const resolved = await resolveImage(docker, bundle.environment, {
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    const head = await readRepositoryHead(docker, resolved.localId, bundle.workdir, {
      owner: { job: `validate-${randomUUID()}`, attempt: 1, home: deps.home },
      uid: deps.uid,
      gid: deps.gid,
      ...(deps.runtime ? { runtime: deps.runtime } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    if (head !== bundle.baseCommit) {
      return {
        ok: false,
        dir: bundle.dir,
        id: bundle.id,
        problems: [
          `task.toml: environment.base_commit: is ${bundle.baseCommit}, but HEAD of ${bundle.workdir} in the image is ${head}`,
        ],
      };
    }
    return {
      ok: true,
      dir: bundle.dir,
      id: bundle.id,
      identity: resolved.identity,
      localId: resolved.localId,
    };
  } catch (error) {
    if (isProctorError(error, 'DOCKER_UNAVAILABLE')) throw error;
    const key =
      bundle.environment.kind === 'image' ? 'environment.image' : 'environment.dockerfile';
    return {
      ok: false,
      dir: bundle.dir,
      id: bundle.id,
      problems: [`task.toml: ${key}: ${describeError(error)}`],
    };
  }
}

/** Validates every bundle found under each path (a bundle or a suite), in order. */
export async function validatePaths(
  paths: string[],
  deps: ValidationDeps,
  options: LoadBundleOptions = {},
  onResult: (result: ValidationResult) => void = () => {},
): Promise<ValidationResult[]> {
  const results: ValidationResult[] = [];
  const emit = (result: ValidationResult) => {
    results.push(result);
    onResult(result);
  };
  for (const path of paths) {
    let suite;
    try {
      suite = await loadSuite(path, options);
    } catch (error) {
      if (!(error instanceof ProctorError)) throw error;
      emit({ ok: false, dir: path, problems: problemsOf(error) });
      continue;
    }
    for (const { dir, error } of suite.problems)
      emit({ ok: false, dir, problems: problemsOf(error) });
    for (const bundle of suite.bundles) {
      emit(
        deps.docker
          ? await checkWithDocker(bundle, deps.docker, deps)
          : { ok: true, dir: bundle.dir, id: bundle.id },
      );
    }
  }
  return results;
}
