// [environment].history in task.toml, and bundle loads that remember file digests.
import { renameSync, utimesSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { loadBundle } from '../../src/oracle/bundle.js';
import { createFileDigests, type FileDigests } from '../../src/oracle/file-digests.js';
import { copyBundle } from '../helpers/bundles.js';

async function withHistory(line: string) {
  const dir = copyBundle();
  const toml = join(dir, 'task.toml');
  const text = await readFile(toml, 'utf8');
  writeFileSync(toml, text.replace(/^(workdir = .*)$/m, `$1\n${line}`));
  return dir;
}

describe('[environment] history', () => {
  it('is full when absent, and none when set so', async () => {
    expect((await loadBundle(copyBundle())).history).toBeUndefined();
    expect((await loadBundle(await withHistory('history = "full"'))).history).toBeUndefined();
    expect((await loadBundle(await withHistory('history = "none"'))).history).toBe('none');
  });

  it('refuses any other value, naming the key', async () => {
    for (const bad of ['history = "shallow"', 'history = 1', 'history = ""']) {
      const error = await loadBundle(await withHistory(bad)).catch((e: unknown) => e);
      expect(isProctorError(error, 'BUNDLE_INVALID')).toBe(true);
      expect((error as Error).message).toContain('environment.history');
    }
  });
});

describe('bundle loads with remembered digests', () => {
  it('hash the same bundle the same, and see a changed file of the same size and mtime', async () => {
    const dir = copyBundle();
    const old = new Date(Date.now() - 60_000);
    const file = join(dir, 'description.md');
    utimesSync(file, old, old);
    const digests = createFileDigests();
    const first = await loadBundle(dir, { digests });
    expect((await loadBundle(dir, { digests })).contentHash).toBe(first.contentHash);
    const text = await readFile(file, 'utf8');
    // Same size and mtime: only the ctime (and the inode's change) tells.
    writeFileSync(file, text.replace(/.$/s, text.endsWith('X') ? 'Y' : 'X'));
    utimesSync(file, old, old);
    const changed = await loadBundle(dir, { digests });
    expect(changed.contentHash).not.toBe(first.contentHash);
    expect(changed.contentHash).toBe((await loadBundle(dir)).contentHash);
  });

  it('read no file of an unchanged bundle again, and only a rewritten or replaced one', async () => {
    const dir = copyBundle();
    // Past the racy window: as if the loads came 10 s after the bundle was written.
    const remembered = createFileDigests({ nowNs: () => BigInt(Date.now() + 10_000) * 1_000_000n });
    const read: string[] = [];
    // Each digest recorded is a file read whole: set is called after every read, and only then.
    const digests: FileDigests = {
      get: (path, stat) => remembered.get(path, stat),
      set: (path, stat, digest) => {
        read.push(path.slice(dir.length + 1));
        remembered.set(path, stat, digest);
      },
    };
    const first = await loadBundle(dir, { digests });
    expect(read).toContain('environment/repo/lib.sh');
    read.length = 0;
    expect((await loadBundle(dir, { digests })).contentHash).toBe(first.contentHash);
    expect(read).toEqual([]);

    const old = new Date(Date.now() - 60_000);
    const lib = join(dir, 'environment/repo/lib.sh');
    const text = await readFile(lib, 'utf8');
    const flipped = text.replace(/.$/s, text.endsWith('X') ? 'Y' : 'X');
    utimesSync(lib, old, old);
    // In place, same size, mtime restored: only the ctime moves.
    writeFileSync(lib, flipped);
    utimesSync(lib, old, old);
    const rewritten = await loadBundle(dir, { digests });
    expect(read).toEqual(['environment/repo/lib.sh']);
    expect(rewritten.contentHash).not.toBe(first.contentHash);
    expect(rewritten.contentHash).toBe((await loadBundle(dir)).contentHash);

    // Write-and-rename of the old bytes, same size and mtime: a new inode.
    read.length = 0;
    writeFileSync(`${lib}.new`, text);
    utimesSync(`${lib}.new`, old, old);
    renameSync(`${lib}.new`, lib);
    expect((await loadBundle(dir, { digests })).contentHash).toBe(first.contentHash);
    expect(read).toEqual(['environment/repo/lib.sh']);
  });

  it('remember nothing written in the last two seconds, and start afresh past the bound', async () => {
    const now = 10_000_000_000n;
    const digests = createFileDigests({ limit: 2, nowNs: () => now });
    const stat = (mtimeNs: bigint, ino = 1n) =>
      ({ dev: 1n, ino, size: 5n, mtimeNs, ctimeNs: mtimeNs }) as never;
    digests.set('/racy', stat(now - 1_000_000_000n), 'r');
    expect(digests.get('/racy', stat(now - 1_000_000_000n))).toBeUndefined();
    digests.set('/a', stat(1n), 'a');
    expect(digests.get('/a', stat(1n))).toBe('a');
    expect(digests.get('/a', stat(1n, 2n))).toBeUndefined();
    digests.set('/b', stat(1n), 'b');
    digests.set('/c', stat(1n), 'c');
    expect(digests.get('/a', stat(1n))).toBeUndefined();
    expect(digests.get('/c', stat(1n))).toBe('c');
  });
});
