// The listing of the build context a bundle load hands to the image cache: it is the listing
// the cache would take itself (one stat record serves both), so a job walks environment/ once,
// and a change under environment/ is seen through it.
import { utimesSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundleWithListing } from '../../src/oracle/bundle.js';
import { createContextCache } from '../../src/sandbox/context-cache.js';
import { copyBundle } from '../helpers/bundles.js';
import { tempDir } from '../helpers/temp.js';

/** Past the racy-clean window: as if the load came 10 s after the bundle was written. */
const later = <T extends { listedAt: number }>(listing: T): T => ({
  ...listing,
  listedAt: listing.listedAt + 10_000,
});

describe('the build context listing of a bundle load', () => {
  it('is the one the context cache takes itself, and shows a change under environment/', async () => {
    const dir = copyBundle();
    const hashed: string[] = [];
    const cache = createContextCache({
      dir: tempDir(),
      now: () => Date.now() + 10_000,
      onHash: (d) => hashed.push(d),
    });
    const { bundle, listing } = await loadBundleWithListing(dir);
    if (bundle.environment.kind !== 'dockerfile' || listing === undefined) {
      throw new Error('the shell task is a Dockerfile bundle');
    }
    const { contextDir } = bundle.environment;
    expect(listing.dir).toBe(contextDir);
    expect(listing.entries.map((e) => e.path)).toEqual([
      'Dockerfile',
      'repo',
      'repo/lib.sh',
      'repo/tests',
      'repo/tests/t_add.sh',
      'repo/tests/t_add_negative.sh',
    ]);
    // The cache's own listing records the folder; the load's listing matches that record.
    const own = await cache.state(contextDir);
    expect(await cache.state(contextDir, later(listing))).toEqual({
      hash: own.hash,
      hashed: false,
    });

    const lib = join(contextDir, 'repo/lib.sh');
    const text = await readFile(lib, 'utf8');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lib, old, old);
    writeFileSync(lib, text.replace(/.$/s, text.endsWith('X') ? 'Y' : 'X'));
    utimesSync(lib, old, old);
    const changed = await loadBundleWithListing(dir);
    const state = await cache.state(contextDir, later(changed.listing ?? listing));
    expect(state.hashed).toBe(true);
    expect(state.hash).not.toBe(own.hash);
    expect(hashed).toEqual([contextDir, contextDir]);
  });

  it('is absent for a bundle that names a pinned image', async () => {
    const dir = copyBundle({
      editToml: (toml) =>
        toml.replace(/^dockerfile = .*$/m, `image = "alpine@sha256:${'a'.repeat(64)}"`),
    });
    const { bundle, listing } = await loadBundleWithListing(dir);
    expect(bundle.environment.kind).toBe('image');
    expect(listing).toBeUndefined();
  });
});
