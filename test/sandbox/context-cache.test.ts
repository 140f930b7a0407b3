// The build context's stat record, on real files: an unchanged folder is not read again, in
// this cache or another over the same records; any change of bytes, paths, mode or symlink
// target is hashed again; a racy, corrupt or unwritable record only ever costs a hash. A
// caller's own listing of the folder stands for the cache's, under the same rules.
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  contextEntry,
  contextListing,
  createContextCache,
  type ContextCacheOptions,
  type ContextEntry,
  type ContextListing,
} from '../../src/sandbox/context-cache.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

/** Past the racy-clean window: as if the listing came 10 s after the files were written. */
const later = () => Date.now() + 10_000;

function setup(files: Record<string, string> = { Dockerfile: 'FROM scratch\n', 'a.txt': 'aaaa' }) {
  const root = tempDir();
  const context = join(root, 'environment');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(context, path, '..'), { recursive: true });
    writeFileSync(join(context, path), text);
  }
  const hashed: string[] = [];
  const dir = join(root, 'cache');
  const cache = (options: Partial<ContextCacheOptions> = {}) =>
    createContextCache({ dir, now: later, onHash: (d) => hashed.push(d), ...options });
  return { context, dir, hashed, cache };
}

/** The caller's listing of `context` (as a bundle load takes it), taken at `listedAt`. */
function listingOf(context: string, listedAt = later()): ContextListing {
  const entries: ContextEntry[] = [];
  const visit = (dir: string) => {
    // Reversed: the listing sorts what it is given.
    for (const name of readdirSync(join(context, dir)).reverse()) {
      const path = dir === '' ? name : `${dir}/${name}`;
      const entry = contextEntry(path, lstatSync(join(context, path), { bigint: true }));
      entries.push(entry);
      if (entry.kind === 'dir') visit(path);
    }
  };
  visit('');
  return contextListing(context, listedAt, entries);
}

/** Waits until the kernel's timestamp tick has moved past `file`'s ctime. */
async function pastCtimeOf(file: string, scratch: string): Promise<void> {
  const before = statSync(file, { bigint: true }).ctimeNs;
  await waitFor(() => {
    writeFileSync(scratch, randomUUID());
    return statSync(scratch, { bigint: true }).ctimeNs > before;
  });
  unlinkSync(scratch);
}

describe('the build context stat record', () => {
  it('does not read an unchanged context again, in this cache or a new one (another process)', async () => {
    const { context, hashed, cache } = setup();
    const first = await cache().state(context);
    const again = await cache().state(context);
    const same = cache();
    await same.state(context);
    expect(first.hashed).toBe(true);
    expect(again).toEqual({ hash: first.hash, hashed: false });
    expect((await same.state(context)).hashed).toBe(false);
    expect(hashed).toEqual([context]);
  });

  it('hashes again a file rewritten in place with the same size and its mtime restored (ctime moves)', async () => {
    const { context, hashed, cache } = setup();
    const file = join(context, 'a.txt');
    utimesSync(file, 1_600_000_000, 1_600_000_000);
    const first = await cache().state(context);
    await pastCtimeOf(file, join(context, '..', 'scratch'));
    const before = statSync(file, { bigint: true });
    writeFileSync(file, 'bbbb');
    utimesSync(file, 1_600_000_000, 1_600_000_000);
    const after = statSync(file, { bigint: true });
    // Only the ctime tells: same size, same mtime to the ns, same inode.
    expect([after.size, after.mtimeNs, after.ino]).toEqual([
      before.size,
      before.mtimeNs,
      before.ino,
    ]);
    const second = await cache().state(context);
    expect(second.hashed).toBe(true);
    expect(second.hash).not.toBe(first.hash);
    expect(hashed).toHaveLength(2);
  });

  it("hashes again a file replaced by an editor's write-and-rename of the same size and mtime", async () => {
    const { context, cache } = setup();
    const file = join(context, 'a.txt');
    utimesSync(file, 1_600_000_000, 1_600_000_000);
    const first = await cache().state(context);
    writeFileSync(`${file}.new`, 'cccc');
    utimesSync(`${file}.new`, 1_600_000_000, 1_600_000_000);
    renameSync(`${file}.new`, file);
    const second = await cache().state(context);
    expect(second.hashed).toBe(true);
    expect(second.hash).not.toBe(first.hash);
  });

  it('hashes again on an added file, a removed file, a changed mode and a retargeted symlink', async () => {
    const { context, hashed, cache } = setup({
      Dockerfile: 'FROM scratch\n',
      'a.txt': 'a',
      'b.txt': 'b',
    });
    symlinkSync('a.txt', join(context, 'link'));
    const hashes = [(await cache().state(context)).hash];
    const changes = [
      () => writeFileSync(join(context, 'added.txt'), 'new'),
      () => unlinkSync(join(context, 'b.txt')),
      () => chmodSync(join(context, 'a.txt'), 0o755),
      () => {
        unlinkSync(join(context, 'link'));
        symlinkSync('Dockerfile', join(context, 'link'));
      },
    ];
    for (const change of changes) {
      change();
      const state = await cache().state(context);
      expect(state.hashed).toBe(true);
      hashes.push(state.hash);
      // And the new state is recorded: the next look is a stat check again.
      expect((await cache().state(context)).hashed).toBe(false);
    }
    expect(new Set(hashes).size).toBe(hashes.length);
    expect(hashed).toHaveLength(1 + changes.length);
  });

  it('hashes again, and keeps the hash, when the mtime alone moves (touch)', async () => {
    const { context, cache } = setup();
    const first = await cache().state(context);
    utimesSync(join(context, 'a.txt'), 1_500_000_000, 1_500_000_000);
    expect(await cache().state(context)).toEqual({ hash: first.hash, hashed: true });
  });

  it.each([
    ['truncated JSON', (text: string) => text.slice(0, text.length / 2)],
    ['JSON of another shape', () => '[1, 2, 3]'],
    [
      'a record of another fingerprint',
      (text: string) => text.replace(/"fingerprint":"[0-9a-f]/, '"fingerprint":"x'),
    ],
    [
      'a hash that is not one',
      (text: string) => text.replace(/"hash":"[0-9a-f]+"/, '"hash":"../../etc"'),
    ],
    ['an oversized file', (text: string) => text + ' '.repeat(20_000)],
  ])('hashes again over a corrupt record: %s', async (_, corrupt) => {
    const { context, dir, hashed, cache } = setup();
    const first = await cache().state(context);
    const [name] = readdirSync(dir).filter((n) => n.startsWith('stat-'));
    const file = join(dir, name ?? 'missing');
    writeFileSync(file, corrupt(readFileSync(file, 'utf8')));
    expect(await cache().state(context)).toEqual({ hash: first.hash, hashed: true });
    expect((await cache().state(context)).hashed).toBe(false);
    expect(hashed).toHaveLength(2);
  });

  it('does not trust a listing whose files changed within the racy-clean window', async () => {
    const { context, hashed, cache } = setup();
    const now = { now: () => Date.now() };
    await cache(now).state(context);
    expect((await cache(now).state(context)).hashed).toBe(true);
    expect(hashed).toHaveLength(2);
  });

  it('still answers, hashing every time, when the cache folder cannot be written', async () => {
    const { context, dir, cache } = setup();
    writeFileSync(dir, 'a file where the folder should be');
    const first = await cache().state(context);
    expect(await cache().state(context)).toEqual({ hash: first.hash, hashed: true });
  });

  it('keeps at most maxRecords records', async () => {
    const { dir, cache } = setup();
    for (let i = 0; i < 4; i++) {
      const other = setup({ Dockerfile: `FROM scratch\n# ${i}\n` });
      await cache({ maxRecords: 2 }).state(other.context);
    }
    expect(readdirSync(dir)).toHaveLength(2);
  });

  it("takes a caller's listing for its own: one record either way, a changed entry hashed again", async () => {
    const { context, hashed, cache } = setup({
      Dockerfile: 'FROM scratch\n',
      'sub/b.txt': 'b',
      'a.txt': 'a',
    });
    const scanned = await cache().state(context);
    // The record the cache's own listing wrote vouches for the caller's listing, and back.
    const before = listingOf(context);
    expect(await cache().state(context, before)).toEqual({ hash: scanned.hash, hashed: false });
    writeFileSync(join(context, 'sub/b.txt'), 'c');
    // The listing stands for the folder: one taken before the change answers as of then.
    expect(await cache().state(context, before)).toEqual({ hash: scanned.hash, hashed: false });
    const changed = await cache().state(context, listingOf(context));
    expect(changed.hashed).toBe(true);
    expect(changed.hash).not.toBe(scanned.hash);
    expect(await cache().state(context)).toEqual({ hash: changed.hash, hashed: false });
    expect(hashed).toEqual([context, context]);
  });

  it("lists the folder itself when the listing is of another folder, and bounds a caller's", async () => {
    const { context, hashed, cache } = setup();
    const other = setup({ Dockerfile: 'FROM scratch\n# other\n' });
    const own = await cache().state(context);
    // The other folder's listing is ignored: the answer is this folder's recorded hash.
    expect(await cache().state(context, listingOf(other.context))).toEqual({
      hash: own.hash,
      hashed: false,
    });
    expect(hashed).toEqual([context]);
    await expect(cache({ maxEntries: 1 }).state(context, listingOf(context))).rejects.toThrow(
      /holds more than 1 entries/,
    );
  });

  it("does not record a caller's listing taken within the racy-clean window", async () => {
    const { context, hashed, cache } = setup();
    await cache().state(context, listingOf(context, Date.now()));
    expect((await cache().state(context, listingOf(context, Date.now()))).hashed).toBe(true);
    expect(hashed).toHaveLength(2);
  });

  it('remembers the image built from a hash and Dockerfile, and refuses a corrupt one', async () => {
    const { dir, cache } = setup();
    const hash = 'a'.repeat(64);
    const id = `sha256:${'b'.repeat(64)}`;
    await cache().rememberImage(hash, 'Dockerfile', id);
    await cache().rememberImage(hash, 'other/Dockerfile', `sha256:${'c'.repeat(64)}`);
    expect(await cache().image(hash, 'Dockerfile')).toBe(id);
    expect(await cache().image('d'.repeat(64), 'Dockerfile')).toBeUndefined();
    writeFileSync(
      join(dir, `image-${hash}.json`),
      '{"format":"proctor-context-v1","images":{"Dockerfile":"latest"}}',
    );
    expect(await cache().image(hash, 'Dockerfile')).toBeUndefined();
  });
});
