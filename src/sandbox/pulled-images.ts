// The images Proctor pulled by digest or built for a task on this engine, remembered on disk
// (one small file per image under `<home>/cache/pulled`), with their daemon-local id, size
// and last use: the only images the disk budget ([images] max_gb) and `proctor prune --images`
// may remove. A built image (a task's Dockerfile, or the install layer on top of an image) is
// recorded by its local id, with the bundle folders whose jobs used it, so that one a queued
// or running job's bundle still needs is kept. Images a user pulled, tagged or built, the base
// images and Proctor's own fixtures are never recorded, so never removed. One file per image,
// written whole with write-then-rename, so that two processes of one home recording different
// images never lose each other's record; two recording the same image at once keep the later,
// which differs only in its times and the bundles it names.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** A built image names at most this many bundle folders; past it, it is `shared`. */
export const MAX_BUNDLES = 64;

/** A record file larger than this is corrupt by definition. */
const MAX_RECORD_BYTES = 8 * 1024 + MAX_BUNDLES * 4200;

const recordSchema = z
  .object({
    format: z.literal('proctor-pulled-v1'),
    /**
     * `repository@sha256:…`, as pulled: the reference removal untags; for a built image, its
     * local id.
     */
    reference: z.string().min(1).max(2048),
    localId: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    sizeBytes: z.number().int().min(0),
    /** When it was pulled, or first recorded as built. */
    pulledAt: z.number().int().min(0),
    usedAt: z.number().int().min(0),
    /** Present for a built image; a pulled one has none of the fields below. */
    kind: z.literal('built').optional(),
    /** The bundle folders (realpaths) whose jobs used a built image. */
    bundles: z.array(z.string().min(1).max(4096)).max(MAX_BUNDLES).optional(),
    /** More bundles used it than `bundles` holds: needed while any job is queued or running. */
    shared: z.literal(true).optional(),
  })
  .strict();

export type PulledImage = Omit<z.output<typeof recordSchema>, 'format'>;

export interface PulledImages {
  /** Every readable record (a corrupt or unreadable one is skipped, never an error). */
  list(): Promise<PulledImage[]>;
  /** Records a pull, or replaces the record of that reference. */
  record(image: PulledImage): Promise<void>;
  /**
   * Marks a recorded image as used now, and a built one as used by `bundle`; false, and
   * nothing written, for an image not recorded.
   */
  touch(reference: string, now: number, bundle?: string): Promise<boolean>;
  /** Drops the record (the image is gone, or no longer Proctor's alone). */
  forget(reference: string): Promise<void>;
}

/** Where a home records its pulls. */
export function pulledImagesDir(home: string): string {
  return join(home, 'cache', 'pulled');
}

const fileOf = (dir: string, reference: string) =>
  join(dir, `${createHash('sha256').update(reference).digest('hex').slice(0, 32)}.json`);

async function readRecord(file: string): Promise<PulledImage | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  if (text.length > MAX_RECORD_BYTES) return undefined;
  try {
    const parsed = recordSchema.safeParse(JSON.parse(text));
    if (!parsed.success) return undefined;
    const image: PulledImage & { format?: string } = { ...parsed.data };
    delete image.format;
    return image;
  } catch {
    return undefined;
  }
}

export function openPulledImages(dir: string): PulledImages {
  const write = async (image: PulledImage) => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = fileOf(dir, image.reference);
    const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temp, JSON.stringify({ format: 'proctor-pulled-v1', ...image }), {
      mode: 0o600,
    });
    await rename(temp, file);
  };
  return {
    async list() {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        return [];
      }
      const records = await Promise.all(
        names.filter((n) => n.endsWith('.json')).map((n) => readRecord(join(dir, n))),
      );
      return records.filter((r): r is PulledImage => r !== undefined);
    },
    record: write,
    async touch(reference, now, bundle) {
      const found = await readRecord(fileOf(dir, reference));
      if (found?.reference !== reference) return false;
      const bundles = found.bundles ?? [];
      const add = found.kind === 'built' && bundle !== undefined && !bundles.includes(bundle);
      if (found.usedAt >= now && !add) return true;
      const next: PulledImage = { ...found, usedAt: Math.max(found.usedAt, now) };
      if (add && bundles.length < MAX_BUNDLES && found.shared !== true) {
        next.bundles = [...bundles, bundle];
      } else if (add) {
        next.shared = true;
      }
      await write(next);
      return true;
    },
    async forget(reference) {
      await unlink(fileOf(dir, reference)).catch(() => undefined);
    },
  };
}
