// The record of pulled images (pure file logic, a real temp dir): one file per image, last use
// moved forward only, a forgotten image gone, and a corrupt or foreign file skipped rather than
// an error or a candidate for removal.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_BUNDLES, openPulledImages } from '../../src/sandbox/pulled-images.js';
import { tempDir } from '../helpers/temp.js';

const image = (n: number) => ({
  reference: `r/x${n}@sha256:${String(n).repeat(64)}`,
  localId: `sha256:${'a'.repeat(63)}${n}`,
  sizeBytes: 1000 * n,
  pulledAt: 10,
  usedAt: 10,
});

describe('pulled images', () => {
  it('records, marks use (never backwards) and forgets each image in a file of its own', async () => {
    const dir = join(tempDir(), 'pulled');
    const pulled = openPulledImages(dir);
    expect(await pulled.list()).toEqual([]);
    await pulled.record(image(1));
    await pulled.record(image(2));
    await pulled.touch(image(1).reference, 50);
    await pulled.touch(image(1).reference, 20);
    await pulled.touch('r/never@sha256:' + '9'.repeat(64), 60);
    const listed = (await pulled.list()).sort((a, b) => a.sizeBytes - b.sizeBytes);
    expect(listed).toEqual([{ ...image(1), usedAt: 50 }, image(2)]);
    expect(readdirSync(dir)).toHaveLength(2);
    await pulled.forget(image(1).reference);
    expect(await pulled.list()).toEqual([image(2)]);
  });

  it('skips a corrupt, foreign or oversized record', async () => {
    const dir = join(tempDir(), 'pulled');
    const pulled = openPulledImages(dir);
    await pulled.record(image(3));
    writeFileSync(join(dir, 'a.json'), '{not json');
    writeFileSync(join(dir, 'b.json'), JSON.stringify({ ...image(4), format: 'other' }));
    writeFileSync(
      join(dir, 'c.json'),
      JSON.stringify({ format: 'proctor-pulled-v1', ...image(5), localId: 'latest' }),
    );
    writeFileSync(join(dir, 'd.json'), ' '.repeat(9000));
    expect(await pulled.list()).toEqual([image(3)]);
  });

  it('names the bundles that used a built image, once each, and marks it shared past the limit', async () => {
    const dir = join(tempDir(), 'pulled');
    const pulled = openPulledImages(dir);
    const id = `sha256:${'b'.repeat(64)}`;
    const built = { reference: id, localId: id, sizeBytes: 5, pulledAt: 10, usedAt: 10 };
    expect(await pulled.touch(id, 20, '/s/t1')).toBe(false);
    await pulled.record({ ...built, kind: 'built', bundles: ['/s/t1'] });
    expect(await pulled.touch(id, 20, '/s/t1')).toBe(true);
    expect(await pulled.touch(id, 15, '/s/t2')).toBe(true);
    expect(await pulled.list()).toEqual([
      { ...built, usedAt: 20, kind: 'built', bundles: ['/s/t1', '/s/t2'] },
    ]);
    for (let n = 3; n <= MAX_BUNDLES + 1; n++) await pulled.touch(id, 30, `/s/t${n}`);
    const [record] = await pulled.list();
    expect(record?.bundles).toHaveLength(MAX_BUNDLES);
    expect(record?.shared).toBe(true);
    // A pulled image's record names no bundle.
    await pulled.record(image(6));
    await pulled.touch(image(6).reference, 40, '/s/t1');
    expect((await pulled.list()).find((r) => r.reference === image(6).reference)).toEqual({
      ...image(6),
      usedAt: 40,
    });
  });
});
