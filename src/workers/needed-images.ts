// The images that queued and running jobs need, of every batch: what the disk budget and
// `proctor prune --images` must never remove. A job names its bundle, and the bundle's
// task.toml names its image (`[environment] image`, digest-pinned), so this reads the
// queued and running jobs a page at a time and the task.toml of each distinct bundle, once
// per process while the file's size and mtime are unchanged. A built image's record names the
// bundle folders whose jobs used it, so their realpaths are needed too. A bundle that cannot
// be read needs nothing here: its job fails when it loads the bundle.
import { readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { MAX_PAGE, type JobStore } from '../queue/index.js';
import { parseImageReference } from '../sandbox/index.js';
import type { NeededSet } from '../sandbox/image-evict.js';

/** A task.toml larger than this names no image we would read (the loader refuses it too). */
const MAX_TASK_TOML = 1024 * 1024;

export type NeededImages = () => Promise<NeededSet>;

/** `repository@sha256:…` of a digest-pinned reference, the form pulls record. */
export function pinnedReference(reference: string): string {
  const ref = parseImageReference(reference);
  return `${ref.repository}@${ref.digest}`;
}

export function createNeededImages(store: Pick<JobStore, 'listJobs'>): NeededImages {
  const seen = new Map<string, { key: string; image: string | undefined }>();

  const imageOf = async (bundle: string): Promise<string | undefined> => {
    const file = join(bundle, 'task.toml');
    try {
      const info = await stat(file);
      const key = `${info.size}:${info.mtimeMs}`;
      const known = seen.get(file);
      if (known?.key === key) return known.image;
      let image: string | undefined;
      if (info.size <= MAX_TASK_TOML) {
        const raw = parseToml(await readFile(file, 'utf8')) as {
          environment?: { image?: unknown };
        };
        const named = raw.environment?.image;
        if (typeof named === 'string') image = pinnedReference(named);
      }
      seen.set(file, { key, image });
      return image;
    } catch {
      return undefined;
    }
  };

  return async () => {
    const bundles = new Set<string>();
    for (const status of ['running', 'queued'] as const) {
      let cursor: string | undefined;
      do {
        const page = await store.listJobs(
          { status },
          { limit: MAX_PAGE, order: 'asc', ...(cursor ? { cursor } : {}) },
        );
        for (const job of page.items) {
          const bundle = (job.payload as { bundle?: unknown } | null)?.bundle;
          if (typeof bundle === 'string') bundles.add(bundle);
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    }
    const references = new Set<string>();
    const folders = new Set<string>();
    for (const bundle of bundles) {
      const image = await imageOf(bundle);
      if (image !== undefined) references.add(image);
      folders.add(await realpath(bundle).catch(() => bundle));
    }
    return { references, bundles: folders };
  };
}
