// Resolved images, remembered per worker process: a suite of 1,000 baselines of one bundle
// builds (or pulls) its image once, and concurrent jobs of one image share the build in
// flight. A Dockerfile image's key is a hash of its build context (every path, mode and
// byte under environment/), so a changed context (a new lockfile) is a new key and a
// rebuild, while bundles that differ only in their tests share one image; a pinned image's
// key is its reference. The image is looked up again before each use, so one removed behind
// Proctor's back is resolved afresh rather than failing every later job.
import { createHash } from 'node:crypto';
import { lstat, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Bundle } from '../oracle/index.js';
import { resolveImage, type DockerClient, type ResolvedImage } from '../sandbox/index.js';
import { isNotFound } from '../sandbox/index.js';

export interface ImageCache {
  resolve(bundle: Bundle, signal?: AbortSignal): Promise<ResolvedImage>;
}

export function createImageCache(docker: DockerClient): ImageCache {
  const resolved = new Map<string, Promise<ResolvedImage>>();

  const stillThere = async (image: ResolvedImage) => {
    try {
      await docker.getImage(image.localId).inspect();
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  };

  return {
    async resolve(bundle, signal) {
      const key =
        bundle.environment.kind === 'image'
          ? `image:${bundle.environment.reference}`
          : `build:${await contextHash(bundle.environment.contextDir)}:${bundle.environment.dockerfile}`;
      const pending = resolved.get(key);
      if (pending) {
        const image = await pending.catch(() => undefined);
        if (image && (await stillThere(image))) return image;
        if (resolved.get(key) === pending) resolved.delete(key);
      }
      const next = resolveImage(docker, bundle.environment, {
        tag: `proctor-task:${bundle.id.slice(0, 100)}-${bundle.contentHash.slice(0, 12)}`,
        ...(signal ? { signal } : {}),
      });
      resolved.set(key, next);
      next.catch(() => {
        if (resolved.get(key) === next) resolved.delete(key);
      });
      return next;
    },
  };
}

/** SHA-256 over the sorted relative paths, modes and file bytes (a build refuses symlinks). */
async function contextHash(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const entries = (await readdir(dir, { recursive: true })).sort();
  for (const name of entries) {
    const path = join(dir, name);
    const info = await lstat(path);
    hash.update(`${name}\0${info.mode}\0`);
    if (info.isFile()) hash.update(await readFile(path));
    hash.update('\0');
  }
  return hash.digest('hex');
}
