// Removing recorded images to keep the engine's disk under a budget ([images] max_gb), and all
// of them that nothing needs (`proctor prune --images`). Only images Proctor recorded
// (pulled-images.ts: pulled by digest, or built for a task) are ever candidates; the caller
// names what queued or running jobs need (pinned references, and bundle folders), and those are
// never removed. The rest go least recently used first until the recorded images fit. A pulled
// image's removal untags the digest reference the pull made; a built one's untags every
// `proctor-task:` tag it has (each home that found it tagged it for its own lookups). Neither
// is forced: the engine refuses while a container uses the image, and keeps the image when
// someone else has tagged it (then it is no longer Proctor's alone and is forgotten).
import { describeError } from '../errors.js';
import type { DockerClient } from './docker.js';
import { isNotFound } from './docker.js';
import type { PulledImage, PulledImages } from './pulled-images.js';

export interface EvictionOutcome {
  reference: string;
  localId: string;
  sizeBytes: number;
  usedAt: number;
  /** `built` for an image a build made for a task, with the bundle folders that used it. */
  kind?: 'built';
  bundles?: string[];
  action: 'removed' | 'kept';
  /** Why: `least recently used`, `needed by a queued or running job`, the engine's refusal… */
  detail: string;
}

export interface EvictionResult {
  /** Bytes of recorded images on the engine before and after. */
  beforeBytes: number;
  afterBytes: number;
  freedBytes: number;
  /** One line per recorded image that was looked at (all of them, when over budget). */
  images: EvictionOutcome[];
}

/** What queued and running jobs need. */
export interface NeededSet {
  /** The pinned references (`repository@sha256:…`) of their bundles' images. */
  references: ReadonlySet<string>;
  /** Their bundle folders (realpaths), which a built image's record names. */
  bundles: ReadonlySet<string>;
}

export interface EvictOptions {
  /** Remove until the recorded images' sizes add up to at most this. 0 removes all it may. */
  keepBytes: number;
  needed: () => Promise<NeededSet>;
}

/** The repository every task image a build made is tagged in (workers/images.ts). */
export const TASK_REPOSITORY = 'proctor-task';

function isNeeded(image: PulledImage, needed: NeededSet): boolean {
  if (image.kind !== 'built') return needed.references.has(image.reference);
  if (image.shared === true) return needed.bundles.size > 0;
  return (image.bundles ?? []).some((bundle) => needed.bundles.has(bundle));
}

/** Untags what Proctor gave the image: the pull's reference, or a build's task tags. */
async function untag(docker: DockerClient, image: PulledImage): Promise<void> {
  if (image.kind !== 'built') {
    await docker.getImage(image.reference).remove();
    return;
  }
  const info = await docker.getImage(image.localId).inspect();
  const all = (info.RepoTags ?? []).filter((t) => t !== '<none>:<none>');
  // An image no one tagged (a Dockerfile's, under its install layer, found by its label).
  if (all.length === 0) await docker.getImage(image.localId).remove();
  for (const tag of all.filter((t) => t.startsWith(`${TASK_REPOSITORY}:`))) {
    await docker.getImage(tag).remove();
  }
}

async function stillThere(docker: DockerClient, image: PulledImage) {
  try {
    const info = await docker.getImage(image.localId).inspect();
    return { ...image, sizeBytes: info.Size };
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export async function evictImages(
  docker: DockerClient,
  pulled: PulledImages,
  options: EvictOptions,
): Promise<EvictionResult> {
  const present: PulledImage[] = [];
  for (const image of await pulled.list()) {
    const found = await stillThere(docker, image);
    // Removed behind Proctor's back: nothing to free, nothing to remember.
    if (found === undefined) await pulled.forget(image.reference);
    else present.push(found);
  }
  const beforeBytes = present.reduce((sum, i) => sum + i.sizeBytes, 0);
  if (beforeBytes <= options.keepBytes) {
    return { beforeBytes, afterBytes: beforeBytes, freedBytes: 0, images: [] };
  }
  const needed = await options.needed();
  // Least recently used first; ties by reference, so the order is the same on every run.
  present.sort((a, b) => a.usedAt - b.usedAt || (a.reference < b.reference ? -1 : 1));
  let total = beforeBytes;
  const images: EvictionOutcome[] = [];
  for (const image of present) {
    const outcome = (action: 'removed' | 'kept', detail: string) =>
      images.push({ ...image, action, detail });
    if (total <= options.keepBytes) {
      outcome('kept', 'within the budget');
    } else if (isNeeded(image, needed)) {
      outcome('kept', 'needed by a queued or running job');
    } else {
      try {
        await untag(docker, image);
      } catch (error) {
        if (!isNotFound(error)) {
          outcome('kept', `the engine refused: ${describeError(error).split('\n')[0]}`);
          continue;
        }
      }
      if ((await stillThere(docker, image)) === undefined) {
        total -= image.sizeBytes;
        await pulled.forget(image.reference);
        outcome('removed', 'least recently used');
      } else {
        // Another tag, or an image built on it, keeps it: it is not Proctor's to remove.
        await pulled.forget(image.reference);
        outcome('kept', 'still tagged or used as a parent elsewhere; no longer tracked');
      }
    }
  }
  return { beforeBytes, afterBytes: total, freedBytes: beforeBytes - total, images };
}
