// A build context's hash, and the images built from it, remembered on disk so that an
// unchanged context is never read again: a later resolve, in this process or another, lists
// the folder with lstat only (path, type, mode, size, mtime and ctime in ns, inode, device),
// and when that fingerprint equals the one recorded beside the hash, the hash is taken as is.
// Anything else (a changed, added or removed entry, a missing, unreadable or corrupt record)
// costs one full hash, never a stale image.
//
// What is trusted, and its limit: a write to a file moves its ctime to the kernel's current
// time, and no user call can set a ctime back (utimes restores mtime only), so a rewrite of
// the same size with its mtime restored is still caught by ctime; an editor's
// write-and-rename is caught by the inode too. Not caught: a change that leaves size, mtime
// and ctime all equal, which needs the system clock set back or the block device written
// beneath the file system, and file systems whose ctime is not kept (some network and FUSE
// mounts). Racy clean, as git has it: a timestamp has a coarse tick, so a change made in the
// tick of the listing could leave the stat equal; a fingerprint is recorded only when every
// entry's ctime is at least RACY_MS older than the listing, so a later change always moves a
// ctime past the recorded one. (ctime rather than mtime: it is always the kernel's time,
// while an mtime can be anything a tar or `touch -d` set, future ones included.)
//
// A caller that has just listed the folder itself (a bundle load walks environment/ with
// lstat anyway) hands that listing to state(), so that a job walks its context once.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, type BigIntStats } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describeError } from '../errors.js';
import { imageInvalid } from './daemon.js';

/** A ctime this close to the listing (ms) is not trusted (see the header). */
export const RACY_MS = 2_000;
/** A record file larger than this is corrupt by definition: records hold two hashes. */
const MAX_RECORD_BYTES = 16 * 1024;
const FORMAT = 'proctor-context-v1';

export interface ContextCacheOptions {
  /** The folder of records (created on first write), e.g. `<home>/cache/contexts`. */
  dir: string;
  /** Wall-clock ms, compared with file ctimes. Default Date.now. */
  now?: () => number;
  /** Most records kept; the least recently written go first. Default 256. */
  maxRecords?: number;
  /** Most entries a context may hold. Default 50_000, as for a build. */
  maxEntries?: number;
  /** Called each time a context's bytes are read in full: tests and benches count it. */
  onHash?: (contextDir: string) => void;
}

export interface ContextState {
  /** SHA-256 over every entry's path, kind, mode and bytes (a symlink's: its target). */
  hash: string;
  /** Whether this call read the context's bytes (false: the stat record vouched for them). */
  hashed: boolean;
}

export interface ContextCache {
  /**
   * The context's hash, from its stat record when the folder is unchanged. `listing`, when
   * it is of `contextDir`, stands for the folder's own listing (see ContextListing).
   */
  state(contextDir: string, listing?: ContextListing): Promise<ContextState>;
  /** The image last built from a context of this hash with this Dockerfile, if recorded. */
  image(hash: string, dockerfile: string): Promise<string | undefined>;
  /** Records that `imageId` was built from a context of this hash with this Dockerfile. */
  rememberImage(hash: string, dockerfile: string, imageId: string): Promise<void>;
}

/** One entry of a context's listing: its path (relative, `/`-separated), kind and lstat. */
export interface ContextEntry {
  path: string;
  kind: 'dir' | 'file' | 'symlink' | 'other';
  stat: string;
  ctimeMs: number;
}

/**
 * Every entry under `dir` (symlinks not followed), each with its lstat, sorted by path (see
 * contextListing): a listing taken by the caller is trusted as the cache's own listing taken
 * at `listedAt` would be, so `listedAt` must be read before the first lstat.
 */
export interface ContextListing {
  dir: string;
  /** Wall-clock ms, read before the first lstat of the listing. */
  listedAt: number;
  entries: readonly ContextEntry[];
}

/** The entry of `path` (relative to the context) with its lstat. */
export function contextEntry(path: string, s: BigIntStats): ContextEntry {
  const kind = s.isDirectory()
    ? 'dir'
    : s.isFile()
      ? 'file'
      : s.isSymbolicLink()
        ? 'symlink'
        : 'other';
  return {
    path,
    kind,
    stat: `${s.mode} ${s.size} ${s.mtimeNs} ${s.ctimeNs} ${s.ino} ${s.dev}`,
    ctimeMs: Number(s.ctimeNs / 1_000_000n),
  };
}

/** A listing of `entries` (in any order; sorted here by path, as the fingerprint needs). */
export function contextListing(
  dir: string,
  listedAt: number,
  entries: ContextEntry[],
): ContextListing {
  return { dir, listedAt, entries: entries.sort(byPath) };
}

const byPath = (a: ContextEntry, b: ContextEntry) =>
  a.path < b.path ? -1 : a.path > b.path ? 1 : 0;

export function createContextCache(options: ContextCacheOptions): ContextCache {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 50_000;
  const keyOf = (text: string) => createHash('sha256').update(text).digest('hex');
  const statFile = (contextDir: string) => join(options.dir, `stat-${keyOf(contextDir)}.json`);
  const imageFile = (hash: string) => join(options.dir, `image-${hash}.json`);

  // A record is only a shortcut: one that cannot be written (a full disk, a read-only home)
  // costs the next resolve a hash, so the failure is not the job's.
  const write = async (file: string, value: unknown) => {
    try {
      await mkdir(options.dir, { recursive: true });
      await writeAtomically(file, `${JSON.stringify(value)}\n`);
      await prune(options.dir, options.maxRecords ?? 256, now());
    } catch {
      // Nothing to undo: the old record, if any, fingerprints an older state of the folder.
    }
  };

  return {
    async state(contextDir, given) {
      const file = statFile(contextDir);
      const list = async (): Promise<ContextListing> => {
        if (given?.dir === contextDir) {
          if (given.entries.length > maxEntries) throw tooMany(contextDir, maxEntries);
          return given;
        }
        const listedAt = now();
        return contextListing(contextDir, listedAt, await scan(contextDir, maxEntries));
      };
      const [{ entries, listedAt }, record] = await Promise.all([list(), readRecord(file)]);
      const fingerprint = fingerprintOf(entries);
      if (
        record?.['format'] === FORMAT &&
        record['dir'] === contextDir &&
        record['fingerprint'] === fingerprint &&
        typeof record['hash'] === 'string' &&
        /^[0-9a-f]{64}$/.test(record['hash'])
      ) {
        return { hash: record['hash'], hashed: false };
      }
      options.onHash?.(contextDir);
      const hash = await hashEntries(contextDir, entries);
      // A racy listing is not recorded: the next resolve hashes again, by then out of the tick.
      if (entries.every((e) => e.ctimeMs < listedAt - RACY_MS)) {
        await write(file, { format: FORMAT, dir: contextDir, fingerprint, hash });
      } else await unlink(file).catch(() => undefined);
      return { hash, hashed: true };
    },
    async image(hash, dockerfile) {
      const record = await readRecord(imageFile(hash));
      const images = record?.['format'] === FORMAT ? record['images'] : undefined;
      const id = (images as Record<string, unknown> | undefined)?.[dockerfile];
      return typeof id === 'string' && /^sha256:[0-9a-f]{64}$/.test(id) ? id : undefined;
    },
    async rememberImage(hash, dockerfile, imageId) {
      const record = await readRecord(imageFile(hash));
      const old = record?.['format'] === FORMAT ? record['images'] : undefined;
      const images = {
        ...(typeof old === 'object' && old !== null ? old : {}),
        [dockerfile]: imageId,
      };
      await write(imageFile(hash), { format: FORMAT, images });
    },
  };
}

const tooMany = (root: string, maxEntries: number) =>
  imageInvalid(`the build context ${root} holds more than ${maxEntries} entries`);

/** Every entry under `root` with its stat as a string, in no order; bounded. */
async function scan(root: string, maxEntries: number): Promise<ContextEntry[]> {
  const entries: ContextEntry[] = [];
  const visit = async (dir: string): Promise<void> => {
    const children = await readdir(join(root, dir), { withFileTypes: true });
    if (entries.length + children.length > maxEntries) throw tooMany(root, maxEntries);
    const subdirs: string[] = [];
    // Every lstat and folder in parallel: the thread pool overlaps them (2x on 2,000 files).
    await Promise.all(
      children.map(async (child) => {
        const path = dir === '' ? child.name : `${dir}/${child.name}`;
        const entry = contextEntry(path, await lstat(join(root, path), { bigint: true }));
        if (entry.kind === 'dir') subdirs.push(path);
        entries.push(entry);
      }),
    );
    await Promise.all(subdirs.map(visit));
  };
  try {
    await visit('');
  } catch (error) {
    if (error instanceof Error && 'code' in error && typeof error.code === 'string') {
      throw imageInvalid(`the build context ${root} cannot be read: ${describeError(error)}`);
    }
    throw error;
  }
  return entries;
}

function fingerprintOf(entries: readonly ContextEntry[]): string {
  const hash = createHash('sha256');
  for (const e of entries) hash.update(`${e.path}\0${e.kind} ${e.stat}\0`);
  return hash.digest('hex');
}

/** The content hash, over the listed entries (not a second listing, so it matches the stat). */
async function hashEntries(root: string, entries: readonly ContextEntry[]): Promise<string> {
  const hash = createHash('sha256').update(`${FORMAT}\0`);
  for (const e of entries) {
    const mode = e.stat.slice(0, e.stat.indexOf(' '));
    hash.update(`${e.path}\0${e.kind} ${mode}\0`);
    const abs = join(root, e.path);
    if (e.kind === 'symlink') hash.update(await readlink(abs));
    else if (e.kind === 'file') {
      for await (const chunk of createReadStream(abs)) hash.update(chunk as Buffer);
    }
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** A record's JSON object, or undefined when missing, oversized or not JSON: a re-hash. */
async function readRecord(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    const handle = await open(file, 'r');
    try {
      const buffer = Buffer.alloc(MAX_RECORD_BYTES + 1);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      if (bytesRead > MAX_RECORD_BYTES) return undefined;
      const value: unknown = JSON.parse(buffer.subarray(0, bytesRead).toString('utf8'));
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : undefined;
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/** Write-then-rename: a reader sees the old record or the new one, never half of one. */
async function writeAtomically(file: string, text: string): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/** Keeps the newest `max` records; leftovers of a crashed write go once a minute old. */
async function prune(dir: string, max: number, now: number): Promise<void> {
  const names = await readdir(dir);
  const aged = await Promise.all(
    names.map(async (name) => {
      const info = await stat(join(dir, name)).catch(() => undefined);
      return { name, at: info?.mtimeMs ?? 0 };
    }),
  );
  const records = aged.filter((r) => r.name.endsWith('.json')).sort((a, b) => b.at - a.at);
  const stale = aged.filter((r) => r.name.endsWith('.tmp') && r.at < now - 60_000);
  for (const r of [...records.slice(max), ...stale]) {
    await unlink(join(dir, r.name)).catch(() => undefined);
  }
}
