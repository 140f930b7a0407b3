// The images Proctor pulled by digest on this engine, remembered on disk (one small file per
// image under `<home>/cache/pulled`), with their daemon-local id, size and last use: the
// only images the disk budget ([images] max_gb) and `proctor prune --images` may remove.
// Images a user pulled, tagged or built, the base images and Proctor's own builds are never
// recorded, so never removed. One file per image, written whole with write-then-rename, so
// that two processes of one home recording different images never lose each other's record;
// two recording the same image at once keep the later, which differs only in its times.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** A record file larger than this is corrupt by definition. */
const MAX_RECORD_BYTES = 8 * 1024;

const recordSchema = z
  .object({
    format: z.literal('proctor-pulled-v1'),
    /** `repository@sha256:…`, as pulled: the reference removal untags. */
    reference: z.string().min(1).max(2048),
    localId: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    sizeBytes: z.number().int().min(0),
    pulledAt: z.number().int().min(0),
    usedAt: z.number().int().min(0),
  })
  .strict();

export type PulledImage = Omit<z.output<typeof recordSchema>, 'format'>;

export interface PulledImages {
  /** Every readable record (a corrupt or unreadable one is skipped, never an error). */
  list(): Promise<PulledImage[]>;
  /** Records a pull, or replaces the record of that reference. */
  record(image: PulledImage): Promise<void>;
  /** Marks a recorded image as used now; nothing for an image not recorded. */
  touch(reference: string, now: number): Promise<void>;
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
    const { reference, localId, sizeBytes, pulledAt, usedAt } = parsed.data;
    return { reference, localId, sizeBytes, pulledAt, usedAt };
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
    async touch(reference, now) {
      const found = await readRecord(fileOf(dir, reference));
      if (found && found.reference === reference && found.usedAt < now) {
        await write({ ...found, usedAt: now });
      }
    },
    async forget(reference) {
      await unlink(fileOf(dir, reference)).catch(() => undefined);
    },
  };
}
