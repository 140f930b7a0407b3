// Resolved images, remembered per worker process and, for Dockerfile builds, on disk under
// `<home>/cache/contexts`: a suite of 1,000 baselines of one bundle builds (or pulls) its image
// once, concurrent jobs of one image share the build in flight, and a later process whose
// context is unchanged takes the image it recorded without reading the context or building.
// A Dockerfile image's key is a hash of its build context (every path, mode and byte under
// environment/), so a changed context (a new lockfile) is a new key and a rebuild, while
// bundles that differ only in their tests share one image; an unchanged context is known by
// a stat of its files alone (src/sandbox/context-cache.ts). A pinned image's key is its
// reference. The image is looked up again before each use, so one removed behind Proctor's
// back is resolved afresh rather than failing every later job.
//
// A built image carries its context's hash and Dockerfile as labels (`proctor.context`,
// `proctor.dockerfile`, set at build time, so they win over any the Dockerfile sets), and a
// home with no record for a hash takes an image of the engine that carries them: one built by
// another home on this engine, or built elsewhere and moved here with `docker save | docker
// load` (a host without the network its build needs). With [environment] install the image
// is the install layer on top (src/sandbox/install.ts), recorded and labelled under the
// Dockerfile's path plus a digest of the install (installSuffix). The label names the bytes it was
// built from, as the record does; whoever can put an image in the engine can run anything
// there anyway. Where the cache records images (`pulled`, pulled-images.ts), a built image is
// recorded on its first use in the home, and each job adds its bundle folder to the record, so
// that the disk budget keeps it for that bundle's queued jobs.
import { createHash } from 'node:crypto';
import PQueue from 'p-queue';
import type { Bundle } from '../oracle/index.js';
import {
  IMAGE_TIMEOUT_HINT,
  LABEL,
  createContextCache,
  resolveImage,
  type BuildTrust,
  type ContextCacheOptions,
  type ContextListing,
  type DockerClient,
  type ResolvedImage,
} from '../sandbox/index.js';
import { isNotFound } from '../sandbox/index.js';
import { TASK_REPOSITORY, evictImages, type EvictionResult } from '../sandbox/image-evict.js';
import type { PulledImages } from '../sandbox/pulled-images.js';
import type { PullProgress } from '../pull-progress.js';
import { pinnedReference, type NeededImages } from './needed-images.js';

export interface ImageCacheOptions {
  /** Pulls at once in this process (`[workers] pulls`). Default 2. */
  pulls?: number;
  /** Told how far each pull has come (at most once a second, and at its end). */
  onPullProgress?: (progress: PullProgress) => void;
  /** The host's CA bundle and proxy settings, offered to every build (build-trust.ts). */
  trust?: BuildTrust;
  /** Wall time of one build or pull, in ms (`[images] timeout_minutes`). Default 15 minutes. */
  timeoutMs?: number;
  /**
   * Where pulls, and the images builds made for tasks, are recorded with their last use: the
   * images a budget may remove.
   */
  pulled?: PulledImages;
  /**
   * The disk budget ([images] max_gb, needs `pulled`): before each pull and after each job
   * (settle), recorded images nothing queued or running needs are removed, least recently
   * used first, until the recorded images fit in `maxBytes`. Default: no budget.
   */
  budget?: { maxBytes: number; needed: NeededImages };
  /** Told what each eviction that removed or kept anything did. */
  onEviction?: (result: EvictionResult) => void;
  /** Told of an eviction, or a record of a pull or a use, that failed (jobs go on). */
  onEvictionError?: (error: unknown) => void;
  /** Milliseconds since the epoch, for last use. Default Date.now. */
  now?: () => number;
}

/**
 * What of a bundle names its image: its environment, and its id and hash for the tag; its
 * folder, when known, is recorded as needing a built image (pulled-images.ts).
 */
export type ImageBundle = Pick<Bundle, 'id' | 'contentHash' | 'environment'> &
  Partial<Pick<Bundle, 'dir'>>;

export interface ImageCache {
  /**
   * The bundle's image. `listing`: the walk of its build context that loaded the bundle
   * (loadBundleWithListing), taken instead of listing the context again.
   */
  resolve(
    bundle: ImageBundle,
    signal?: AbortSignal,
    listing?: ContextListing,
    onPull?: (progress: PullProgress) => void,
  ): Promise<ResolvedImage>;
  /**
   * After a job: keeps the recorded images within the budget (nothing without one). Never
   * rejects; an eviction that fails is told to onEvictionError and tried after the next job.
   */
  settle(): Promise<void>;
}

/**
 * With [environment] install, what runs is the install layer: the command, work tree and base
 * commit it was made with are part of the name it is recorded and labelled under, beside the
 * Dockerfile's path (`environment/Dockerfile` alone names the image without it).
 */
function installSuffix(env: ImageBundle['environment']): string {
  if (env.install === undefined) return '';
  const { command, workdir, baseCommit } = env.install;
  const digest = createHash('sha256').update([command, workdir, baseCommit].join('\0'));
  return `+install-${digest.digest('hex').slice(0, 16)}`;
}

const builtName = (env: ImageBundle['environment']) =>
  env.kind === 'dockerfile' ? `${env.dockerfile}${installSuffix(env)}` : installSuffix(env);

/**
 * The tag a build of the bundle gets: its id and 12 hex digits of what the image is built from,
 * the context's hash and the Dockerfile with its install (`hash`, `built`), so that a change to
 * the bundle's tests keeps the tag its image already has; without a context, the bundle's
 * content hash.
 */
function taskTag(
  bundle: ImageBundle,
  hash: string | undefined,
  built: string,
): { repo: string; tag: string } {
  const from =
    hash === undefined
      ? bundle.contentHash
      : createHash('sha256').update(`${hash}\0${built}`).digest('hex');
  return { repo: TASK_REPOSITORY, tag: `${bundle.id.slice(0, 100)}-${from.slice(0, 12)}` };
}
const tagName = (t: { repo: string; tag: string }) => `${t.repo}:${t.tag}`;

export function createImageCache(
  docker: DockerClient,
  contexts: ContextCacheOptions,
  options: ImageCacheOptions = {},
): ImageCache {
  const resolved = new Map<string, Promise<ResolvedImage>>();
  // Pulls share the network and the disk: a suite of new images pulls a few at a time, the
  // rest of its jobs waiting for room rather than all competing for the registry.
  const pulls = new PQueue({ concurrency: options.pulls ?? 2 });
  const pullLimit = <T>(pull: () => Promise<T>) => pulls.add<T>(pull);
  const records = createContextCache(contexts);
  const now = options.now ?? Date.now;
  // Those waiting on a pull of one pinned reference, each told of its progress: jobs of one
  // image share the pull in flight.
  const watchers = new Map<string, Set<(progress: PullProgress) => void>>();
  const tell = (progress: PullProgress) => {
    options.onPullProgress?.(progress);
    for (const watcher of watchers.get(progress.image) ?? []) watcher(progress);
  };
  // One eviction at a time in this process; a second asked for meanwhile runs after it.
  let evicting: Promise<void> = Promise.resolve();
  const evict = () => {
    const { budget, pulled } = options;
    if (!budget || !pulled) return Promise.resolve();
    const next = evicting.then(async () => {
      const result = await evictImages(docker, pulled, {
        keepBytes: budget.maxBytes,
        needed: budget.needed,
      });
      if (result.images.length > 0) options.onEviction?.(result);
    });
    evicting = next.catch(() => undefined);
    return next;
  };
  // The budget is kept as well as it can be: an eviction that fails never fails a job's pull.
  const evictQuietly = () => evict().catch((error: unknown) => options.onEvictionError?.(error));
  const onPulled = options.pulled
    ? async (image: { reference: string; localId: string; sizeBytes: number }) => {
        const at = now();
        // Unrecorded (a full disk), the image is only never the budget's to remove.
        await options.pulled
          ?.record({ ...image, pulledAt: at, usedAt: at })
          .catch((error: unknown) => options.onEvictionError?.(error));
      }
    : undefined;

  const stillThere = async (localId: string) => {
    try {
      await docker.getImage(localId).inspect();
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  };

  /** The newest image of the engine labelled as built from this context and Dockerfile. */
  const labelled = async (hash: string, dockerfile: string) => {
    const images = await docker.listImages({
      filters: { label: [`${LABEL.context}=${hash}`] },
    });
    const found = images
      .filter((i) => i.Labels?.[LABEL.dockerfile] === dockerfile)
      .filter((i) => /^sha256:[0-9a-f]{64}$/.test(i.Id))
      .sort((a, b) => b.Created - a.Created || (a.Id < b.Id ? -1 : 1));
    return found[0]?.Id;
  };

  /**
   * The image a build of this bundle tagged (taskTag), when its labels name this context and
   * Dockerfile: one inspect, where the label query scans every image of the engine (half a
   * second on an engine of a few hundred images, once per task of a home's first sweep).
   */
  const tagged = async (bundle: ImageBundle, hash: string, dockerfile: string) => {
    try {
      const info = await docker.getImage(tagName(taskTag(bundle, hash, dockerfile))).inspect();
      const labels = info.Config?.Labels ?? {};
      const ours = labels[LABEL.context] === hash && labels[LABEL.dockerfile] === dockerfile;
      return ours && /^sha256:[0-9a-f]{64}$/.test(info.Id) ? info.Id : undefined;
    } catch {
      // Not there, or a tag the engine refuses: the label query answers (and says why).
      return undefined;
    }
  };

  /** The label query's image, tagged so that the next home's lookup is one inspect; a tag
   * refused (a name in use meanwhile) only leaves the next lookup to the query. */
  const labelledAndTagged = async (bundle: ImageBundle, hash: string, built: string) => {
    const found = await labelled(hash, built);
    if (found !== undefined) {
      await docker
        .getImage(found)
        .tag(taskTag(bundle, hash, built))
        .catch(() => undefined);
    }
    return found;
  };

  const fresh = async (bundle: ImageBundle, hash: string | undefined, signal?: AbortSignal) => {
    const env = bundle.environment;
    const built = builtName(env);
    if (hash !== undefined && env.kind === 'dockerfile') {
      const recorded = await records.image(hash, built);
      const known =
        recorded !== undefined && (await stillThere(recorded))
          ? recorded
          : ((await tagged(bundle, hash, built)) ?? (await labelledAndTagged(bundle, hash, built)));
      if (known !== undefined) {
        if (known !== recorded) await records.rememberImage(hash, built, known);
        const image: ResolvedImage = {
          localId: known,
          identity: { portable: false, kind: 'local_build', imageId: known },
        };
        return image;
      }
    }
    const image = await resolveImage(docker, env, {
      // An image's bundle has no context hash: its tag follows the bundle's content.
      tag: tagName(taskTag(bundle, hash, built)),
      ...(hash !== undefined && env.kind === 'dockerfile'
        ? { labels: { [LABEL.context]: hash, [LABEL.dockerfile]: built } }
        : {}),
      ...(signal ? { signal } : {}),
      trust: options.trust ?? {},
      ...(options.timeoutMs !== undefined
        ? { timeoutMs: options.timeoutMs, timeoutHint: IMAGE_TIMEOUT_HINT }
        : {}),
      pullLimit,
      onPullProgress: tell,
      ...(onPulled ? { onPulled, beforePull: evictQuietly } : {}),
    });
    if (hash !== undefined && env.kind === 'dockerfile') {
      await records.rememberImage(hash, built, image.localId);
    }
    return image;
  };

  /** Resolves, telling `onPull` of a pull of the bundle's pinned image, and marks its use. */
  const watched = async (
    bundle: ImageBundle,
    signal: AbortSignal | undefined,
    listing: ContextListing | undefined,
    onPull: ((progress: PullProgress) => void) | undefined,
  ) => {
    const env = bundle.environment;
    const pinned = env.kind === 'image' ? pinnedReference(env.reference) : undefined;
    if (pinned === undefined || onPull === undefined) {
      return use(bundle, pinned, await cached(bundle, signal, listing));
    }
    const set = watchers.get(pinned) ?? new Set();
    watchers.set(pinned, set);
    set.add(onPull);
    try {
      return use(bundle, pinned, await cached(bundle, signal, listing));
    } finally {
      set.delete(onPull);
      if (set.size === 0 && watchers.get(pinned) === set) watchers.delete(pinned);
    }
  };

  const use = async (bundle: ImageBundle, pinned: string | undefined, image: ResolvedImage) => {
    // A last use not written (a full disk) only makes the image look older to the budget.
    if (pinned !== undefined) {
      await options.pulled
        ?.touch(pinned, now())
        .catch((error: unknown) => options.onEvictionError?.(error));
    }
    // What a build made for a task (a Dockerfile's image, an install layer) is the budget's
    // too, recorded on its first use with the bundles that use it.
    const env = bundle.environment;
    if (env.kind === 'dockerfile' || env.install !== undefined) {
      await recordBuilt(image.localId, bundle.dir).catch((error: unknown) =>
        options.onEvictionError?.(error),
      );
    }
    return image;
  };

  const recordBuilt = async (localId: string, dir: string | undefined) => {
    const pulled = options.pulled;
    if (!pulled) return;
    const at = now();
    if (await pulled.touch(localId, at, dir)) return;
    const info = await docker.getImage(localId).inspect();
    await pulled.record({
      reference: localId,
      localId,
      sizeBytes: info.Size,
      pulledAt: at,
      usedAt: at,
      kind: 'built',
      ...(dir === undefined ? {} : { bundles: [dir] }),
    });
  };

  const cached = async (
    bundle: ImageBundle,
    signal: AbortSignal | undefined,
    listing: ContextListing | undefined,
  ): Promise<ResolvedImage> => {
    const env = bundle.environment;
    const hash =
      env.kind === 'dockerfile' ? (await records.state(env.contextDir, listing)).hash : undefined;
    const key =
      env.kind === 'image'
        ? `image:${env.reference}${installSuffix(env)}`
        : `build:${hash}:${builtName(env)}`;
    const pending = resolved.get(key);
    if (pending) {
      const image = await pending.catch(() => undefined);
      if (image && (await stillThere(image.localId))) return image;
      if (resolved.get(key) === pending) resolved.delete(key);
    }
    const next = fresh(bundle, hash, signal);
    resolved.set(key, next);
    next.catch(() => {
      if (resolved.get(key) === next) resolved.delete(key);
    });
    return next;
  };

  return {
    resolve: watched,
    settle: evictQuietly,
  };
}
