// Image identity (seed 003, "The prepared image is inspected once"). A task's image becomes two
// things: the daemon-local image id that every later Docker call uses (a tag can move under
// us, an id cannot), and the identity Proctor persists: the registry manifest digest of a
// prebuilt image (portable), or `local_build` for a Dockerfile built on this daemon (valid
// here only). The repository's commit is read with git inside the image, because labels
// and other image-authored metadata are not commit authority.
import { ProctorError, describeError } from '../errors.js';
import { buildDockerfile } from './build.js';
import { deadline, dockerFailure, followJson, imageInvalid, inspectImage } from './daemon.js';
import type { BuildTrust } from './build-trust.js';
import type { DockerClient } from './docker.js';
import type { Owner } from './labels.js';
import { parseImageReference } from './image-reference.js';
import { isRateLimited, isRefused, isUnreachable, registryAnswer } from './distribution.js';
import { createPullTracker, type PullProgress } from '../pull-progress.js';
import { buildInstallLayer, type InstallSpec } from './install.js';
import { runToCompletion, type RunResult } from './run.js';

export { parseImageReference };
export type { ImageReference } from './image-reference.js';

/** `install`: [environment] install, a generated layer on top of the image (install.ts). */
export type ImageSource =
  | { kind: 'image'; reference: string; install?: InstallSpec }
  | { kind: 'dockerfile'; contextDir: string; dockerfile: string; install?: InstallSpec };

export type ImageIdentity =
  | { portable: true; digest: string; reference: string }
  | { portable: false; kind: 'local_build'; imageId: string };

export interface ResolvedImage {
  /** The daemon-local image id (sha256:…): the only name later Docker calls may use. */
  localId: string;
  identity: ImageIdentity;
  /** A build's output, its head and tail (`buildLogBytes` in all); absent for prebuilt images. */
  buildLog?: string;
}

/** A build or pull that ran out of time says where its limit is set. */
export const IMAGE_TIMEOUT_HINT = '`[images] timeout_minutes` in proctor.toml sets the limit';

export interface ResolveImageOptions {
  /** Wall time for one pull or build, in ms. Default 900_000 (15 minutes). */
  timeoutMs?: number;
  /** Said after a timeout's message: where the limit is set (`[images] timeout_minutes`). */
  timeoutHint?: string;
  /** Aborts a pull or build in flight (the daemon cancels it when the request closes). */
  signal?: AbortSignal;
  /** A tag for a built image, for humans and cache pruning only; never used to address it. */
  tag?: string;
  /** More labels for a built image (the build's own label, `proctor.build`, always goes on). */
  labels?: Record<string, string>;
  /** Bytes of build output kept, half from the start and half from the end. Default 65_536. */
  buildLogBytes?: number;
  /** Most entries a build context may hold. Default 50_000. */
  maxContextFiles?: number;
  /** The host's CA bundle and proxy settings, offered to every RUN step (build-trust.ts). */
  trust?: BuildTrust;
  /**
   * Runs each pull when there is room: a process's limit on pulls at once (the worker's
   * `[workers] pulls`, default 2). Without one, a pull starts at once.
   */
  pullLimit?: <T>(pull: () => Promise<T>) => Promise<T>;
  /** Called as a pull goes (at most once a second, and at its end) with how far it has come. */
  onPullProgress?: (progress: PullProgress) => void;
  /** Milliseconds since the epoch, for the pull's rate. Default Date.now. */
  now?: () => number;
  /**
   * Runs in the pull's slot just before a pull starts (the disk budget's eviction); its
   * failure fails the pull.
   */
  beforePull?: () => Promise<void>;
  /** Told of each image this call pulled (not one found present), with its local id and size. */
  onPulled?: (image: { reference: string; localId: string; sizeBytes: number }) => Promise<void>;
}

export interface RepositoryHeadOptions {
  /** Labels the probe container, so that a crashed Proctor's leftovers are found. */
  owner: Owner;
  /** The numeric, non-zero identity git runs as. */
  uid: number;
  gid: number;
  /** Wall time for the probe container, in ms. Default 60_000. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Bytes of stdout and of stderr kept (head and tail). Default 65_536. */
  outputBytes?: number;
  /** An OCI runtime such as `runsc`. Default: the engine's. */
  runtime?: string;
}

const invalid = imageInvalid;

/** `debian` and `docker.io/library/debian` name one repository; RepoDigests use the short form. */
function canonicalRepository(name: string): string {
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  const isDomain = first.includes('.') || first.includes(':') || first === 'localhost';
  let [domain, path] = isDomain ? [first, name.slice(slash + 1)] : ['docker.io', name];
  if (domain === 'index.docker.io') domain = 'docker.io';
  if (domain === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  return `${domain}/${path}`;
}

export async function resolveImage(
  docker: DockerClient,
  source: ImageSource,
  options: ResolveImageOptions = {},
): Promise<ResolvedImage> {
  if (source.install === undefined) {
    return source.kind === 'image'
      ? resolveReference(docker, source.reference, options)
      : buildDockerfile(docker, source, options);
  }
  // The labels and tag name the image jobs run, the install layer; the image under it is the
  // engine's to cache like any other parent.
  const plain: ResolveImageOptions = { ...options };
  delete plain.labels;
  delete plain.tag;
  const base =
    source.kind === 'image'
      ? await resolveReference(docker, source.reference, plain)
      : await buildDockerfile(docker, source, plain);
  return buildInstallLayer(docker, base, source.install, options);
}

async function resolveReference(
  docker: DockerClient,
  reference: string,
  options: ResolveImageOptions,
): Promise<ResolvedImage> {
  const ref = parseImageReference(reference);
  // The tag is dropped here: it only ever names the image for humans.
  const pinned = `${ref.repository}@${ref.digest}`;
  let info = await inspectImage(docker, pinned);
  if (!info) {
    const pull = async () => {
      // Another job may have pulled it while this one waited for room.
      if (await inspectImage(docker, pinned)) return;
      await options.beforePull?.();
      const d = deadline(options.timeoutMs ?? 900_000, options.signal, options.timeoutHint);
      const now = options.now ?? Date.now;
      const tracker = createPullTracker(pinned, now);
      // A first word at once: the job is pulling now, no longer waiting for a pull slot.
      options.onPullProgress?.(tracker.snapshot());
      let told = now();
      try {
        const stream = await docker.pull(pinned, { abortSignal: d.signal });
        await followJson(stream, d.signal, (event) => {
          if (typeof event['error'] === 'string') throw new Error(event['error']);
          if (tracker.event(event) && options.onPullProgress && now() - told >= 1000) {
            told = now();
            options.onPullProgress(tracker.snapshot());
          }
        });
        options.onPullProgress?.(tracker.snapshot());
      } catch (error) {
        throw await pullFailure(docker, error, d, reference, pinned);
      }
      const pulled = await inspectImage(docker, pinned);
      if (pulled && options.onPulled) {
        await options.onPulled({ reference: pinned, localId: pulled.Id, sizeBytes: pulled.Size });
      }
    };
    await (options.pullLimit ? options.pullLimit(pull) : pull());
    info = await inspectImage(docker, pinned);
  }
  // The daemon found it by digest, but the seed's rule is ours to check: the declared manifest
  // must be in RepoDigests under the same repository, whatever the image store resolves.
  const found = info?.RepoDigests ?? [];
  const wanted = `${canonicalRepository(ref.repository)}@${ref.digest}`;
  const matches = found.some((entry) => {
    const at = entry.lastIndexOf('@');
    return `${canonicalRepository(entry.slice(0, at))}@${entry.slice(at + 1)}` === wanted;
  });
  if (!info || !matches || !/^sha256:[0-9a-f]{64}$/.test(info.Id)) {
    throw invalid(
      `image ${reference}: manifest digest ${ref.digest} is not among the image's RepoDigests (found: ${found.join(', ') || 'none'})`,
      { reference, found },
    );
  }
  return { localId: info.Id, identity: { portable: true, digest: ref.digest, reference } };
}

/**
 * One line for a failed pull. A manifest the registry does not have is the bundle's fault
 * (IMAGE_INVALID, with the digests the tag has here); anything else is the machine's, retried
 * as a Docker failure, never the candidate's: a registry that throttles, refuses or cannot be
 * reached says so with its own answer.
 */
async function pullFailure(
  docker: DockerClient,
  error: unknown,
  d: ReturnType<typeof deadline>,
  reference: string,
  pinned: string,
): Promise<ProctorError> {
  if (d.signal.aborted) return d.failure(error, `pulling ${pinned}`);
  const answer = registryAnswer(error);
  if (isRateLimited(answer)) {
    return new ProctorError(
      'DOCKER_ERROR',
      `pulling ${pinned}: the registry is rate-limiting: ${answer}`,
      { cause: error },
    );
  }
  if (isUnreachable(answer)) {
    return new ProctorError(
      'DOCKER_ERROR',
      `pulling ${pinned}: the registry cannot be reached: ${answer}`,
      { cause: error },
    );
  }
  if (/manifest unknown|not found/i.test(describeError(error))) {
    const ref = parseImageReference(reference);
    const found = ref.tag
      ? ((await inspectImage(docker, `${ref.repository}:${ref.tag}`))?.RepoDigests ?? [])
      : [];
    return invalid(
      `image ${reference}: the registry has no manifest ${ref.digest} (${describeError(error)}); ` +
        `digests found${ref.tag ? ` for tag ${ref.tag}` : ''}: ${found.join(', ') || 'none'}`,
      { reference, found },
    );
  }
  if (isRefused(answer)) {
    return new ProctorError('DOCKER_ERROR', `pulling ${pinned}: the registry refused: ${answer}`, {
      cause: error,
    });
  }
  return d.failure(error, `pulling ${pinned}`);
}

/** `git rev-parse HEAD` inside the image, in a hardened, networkless, read-only probe. */
export async function readRepositoryHead(
  docker: DockerClient,
  localId: string,
  workdir: string,
  options: RepositoryHeadOptions,
): Promise<string> {
  const probe = await runGitProbe(docker, localId, workdir, ['rev-parse', '--verify', 'HEAD'], {
    what: `reading HEAD at ${workdir} in ${localId}`,
    options,
  });
  return headFrom(probe.exitCode, probe.stdout, probe.stderr, workdir, localId);
}

export interface RepositoryCommit {
  head: string;
  /** HEAD's parents, in order: one for a plain commit, none for a root commit. */
  parents: string[];
  /** The paths HEAD changes against its first parent (none listed for a merge). */
  changed: string[];
}

/**
 * HEAD of the work tree inside the image with its parents and the files it changes, in the
 * same probe as readRepositoryHead: what a setup commit on top of the base commit is checked by.
 */
export async function readRepositoryCommit(
  docker: DockerClient,
  localId: string,
  workdir: string,
  options: RepositoryHeadOptions,
): Promise<RepositoryCommit> {
  const args = ['log', '-1', '--format=%H %P', '--name-only', '--no-renames', '-z', 'HEAD'];
  const probe = await runGitProbe(docker, localId, workdir, args, {
    what: `reading HEAD's commit at ${workdir} in ${localId}`,
    options,
  });
  // `HEAD PARENT…` NUL, then (after a newline) NUL-terminated paths.
  const [line = '', ...rest] = probe.stdout.split('\0');
  const [head = '', ...parents] = line.trim().split(' ').filter(Boolean);
  headFrom(probe.exitCode, head, probe.stderr, workdir, localId);
  const changed = rest.map((path) => path.replace(/^\n/, '')).filter((path) => path !== '');
  return { head, parents, changed };
}

async function runGitProbe(
  docker: DockerClient,
  localId: string,
  workdir: string,
  args: string[],
  { what, options }: { what: string; options: RepositoryHeadOptions },
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  if (!workdir.startsWith('/') || workdir.includes('\0') || workdir.split('/').includes('..')) {
    throw invalid(
      `repository path must be absolute without .. or NUL, got ${JSON.stringify(workdir)}`,
    );
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  let result: RunResult;
  try {
    // runToCompletion creates through the profile, attaches before start (LogConfig is none,
    // so output not read live is gone), bounds it, and always removes the container.
    result = await runToCompletion(
      docker,
      {
        owner: options.owner,
        role: 'probe',
        image: localId,
        // The tree belongs to the image's owner, not to the probe's uid: -c safe.directory for
        // newer git, and an explicit GIT_DIR (below), which no git refuses for its owner, for
        // older ones (bullseye's 2.30) whose security updates check the owner but ignore -c.
        cmd: ['git', '-c', 'safe.directory=*', '-C', workdir, ...args],
        uid: options.uid,
        gid: options.gid,
        workdir: '/',
        // LC_ALL=C keeps git's messages in the English that headFrom classifies.
        env: { HOME: '/tmp', LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_DIR: '.git' },
        ...(options.runtime ? { runtime: options.runtime } : {}),
      },
      {
        timeoutMs,
        outputBytes: options.outputBytes ?? 65_536,
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
  } catch (error) {
    // Without an init process, the engine itself fails to exec a missing binary.
    if (/executable file not found/i.test(describeError(error)))
      return { exitCode: 127, stdout: '', stderr: '' };
    throw dockerFailure(error, what);
  }
  if (result.timedOut)
    throw new ProctorError('DOCKER_ERROR', `${what} timed out after ${timeoutMs} ms`);
  if (result.exitCode === null) throw new ProctorError('DOCKER_ERROR', `${what} was aborted`);
  return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
}

function headFrom(status: number, out: string, err: string, workdir: string, image: string) {
  const head = out.trim();
  if (status === 0 && /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(head)) return head;
  const data = { status, stderr: err };
  const detail = err.trim().split('\n')[0] ?? '';
  if (status === 127 || /exec: "?git"?|exec git failed/.test(err)) {
    throw invalid(`git is not installed in the image ${image}`, data);
  }
  if (/Needed a single revision|unknown revision|ambiguous argument/.test(err)) {
    throw invalid(`the git work tree at ${workdir} has no commit at HEAD (${detail})`, data);
  }
  if (status !== 0) throw invalid(`no git work tree at ${workdir} in ${image}: ${detail}`, data);
  throw invalid(
    `git rev-parse HEAD at ${workdir} printed no commit id: ${JSON.stringify(head.slice(0, 80))}`,
    data,
  );
}
