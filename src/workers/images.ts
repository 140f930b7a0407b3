// Resolved images, remembered per worker process: a suite of 1,000 baselines of one bundle
// builds (or pulls) its image once, and concurrent jobs of one bundle share the build in
// flight. The key is the bundle's content hash, so a changed build context (a new lockfile)
// is a new key and a rebuild; the image is looked up again before each use, so one removed
// behind Proctor's back is resolved afresh rather than failing every later job.
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
      const key = `${bundle.contentHash}:${JSON.stringify(bundle.environment)}`;
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
