// A task bundle on disk: the walk that checks every entry against the path rules (nothing
// special, no backslashes, no symlink leaving the bundle), reads that are bounded and never
// follow a final symlink or block on a FIFO, and the content hash that identifies a bundle's
// exact bytes (for idempotency keys, and to notice a bundle that changed under a batch).
import { createHash } from 'node:crypto';
import { constants, lstatSync, readdirSync, type BigIntStats } from 'node:fs';
import { open, readlink, realpath } from 'node:fs/promises';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { join, sep } from 'node:path';
import type { FileDigests } from './file-digests.js';

/** One thing wrong with a bundle: the file (relative to the bundle) and, in task.toml, the key. */
export interface BundleProblem {
  file: string;
  key?: string;
  message: string;
}

/** A regular file, folder or symlink of a bundle; anything else is a problem and kept as 'special'. */
export interface BundleEntry {
  /** Relative to the bundle, `/`-separated. */
  path: string;
  kind: 'file' | 'dir' | 'symlink' | 'special';
  mode: number;
  size: number;
  /** Its lstat by the walk: an unchanged file's digest is known by it (FileDigests). */
  stats: BigIntStats;
}

/** Entries lstat'ed by the walk between two turns of the event loop, and files hashed at once. */
const STAT_CHUNK = 256;
const HASH_CHUNK = 16;

/** Most entries (files, folders, symlinks) a bundle may hold. */
export const MAX_BUNDLE_ENTRIES = 50_000;
/** Most bytes of file content a bundle may hold; all of it is read to hash the bundle. 1 GiB. */
export const MAX_BUNDLE_BYTES = 1024 ** 3;
/** Longest relative path of an entry, in characters. */
export const MAX_BUNDLE_PATH = 4096;

/** Why `path` is not a normalised relative POSIX path inside the bundle, if it is not. */
export function relativePathProblem(path: string): string | undefined {
  if (path.includes('\0')) return 'must not contain NUL';
  if (path.includes('\\')) return 'must not contain backslashes (paths are POSIX)';
  if (path.startsWith('/')) return 'must be a relative path inside the bundle, not absolute';
  const parts = path.split('/');
  if (parts.includes('..')) return 'must not contain `..`';
  if (parts.some((part) => part === '' || part === '.')) {
    return 'must be a normalised relative path (no empty or `.` components)';
  }
  return undefined;
}

/** Why `path` is not a normalised absolute POSIX path other than `/`, if it is not. */
export function workdirProblem(path: string): string | undefined {
  if (path.includes('\0')) return 'must not contain NUL';
  if (path.includes('\\')) return 'must not contain backslashes (paths are POSIX)';
  if (!path.startsWith('/')) return 'must be an absolute POSIX path such as /repo';
  if (path === '/') return 'must not be /; the checkout needs a folder of its own';
  const parts = path.slice(1).split('/');
  if (parts.includes('..')) return 'must not contain `..`';
  if (parts.some((part) => part === '' || part === '.')) {
    return 'must be a normalised path (no `.`, `//` or trailing `/`)';
  }
  const top = parts[0] ?? '';
  if (top.startsWith('proctor'))
    return "must not be under /proctor*, where Proctor's own mounts go";
  if (['tmp', 'proc', 'sys', 'dev'].includes(top)) {
    return `must not be under /${top}, which every sandbox mounts itself`;
  }
  return undefined;
}

export interface WalkResult {
  /** Every entry by relative path, folders included. Symlinked folders are not descended. */
  entries: Map<string, BundleEntry>;
  problems: BundleProblem[];
  /** False when the walk stopped early (too many entries): `entries` is then partial. */
  complete: boolean;
}

/** True when `path` is strictly inside `base` (both real, absolute paths). */
export function isInside(path: string, base: string): boolean {
  return path.startsWith(base.endsWith(sep) ? base : `${base}${sep}`);
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}

function specialKind(stats: BigIntStats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'not a regular file, folder or symlink';
}

/**
 * Lists every entry under `root` (a realpath) without following symlinks, and reports each
 * entry that breaks the path rules. A symlink must be relative and resolve (by realpath) to
 * something strictly inside the bundle; under `environment/`, the build context, strictly
 * inside `environment/`, because the image builder refuses anything else and no evaluator
 * asset may reach a build.
 */
export async function walkBundle(root: string): Promise<WalkResult> {
  const entries = new Map<string, BundleEntry>();
  const problems: BundleProblem[] = [];
  const context = join(root, 'environment');
  let bytes = 0;

  // A large build context (a repository with its .git) is walked on every job, so the walk
  // lists and lstats synchronously: a thread-pool round trip per call costs several times the
  // call itself (4,400 entries on 2 busy cores: 60 ms this way, 200 ms through the pool). The
  // event loop gets a turn every STAT_CHUNK entries, so other jobs' streams and heartbeats
  // wait for one chunk (a few ms) at most.
  let sinceYield = 0;
  const base = root.endsWith(sep) ? root : `${root}${sep}`;
  const visit = async (dir: string): Promise<boolean> => {
    let names: string[];
    try {
      names = readdirSync(dir === '' ? root : base + dir).sort();
    } catch (error) {
      problems.push({
        file: dir === '' ? '.' : dir,
        message: `cannot be listed: ${errorCode(error)}`,
      });
      return true;
    }
    for (const name of names) {
      if (++sinceYield >= STAT_CHUNK) {
        sinceYield = 0;
        await yieldLoop();
      }
      const path = dir === '' ? name : `${dir}/${name}`;
      const problem = (message: string) => problems.push({ file: path, message });
      if (entries.size >= MAX_BUNDLE_ENTRIES) {
        problems.push({ file: '.', message: `holds more than ${MAX_BUNDLE_ENTRIES} entries` });
        return false;
      }
      // Node decodes a name that is not UTF-8 with U+FFFD, and could not open it again.
      if (name.includes('\uFFFD')) {
        problem('file name is not valid UTF-8');
        continue;
      }
      if (name.includes('\\')) problem('backslash in a path (paths are POSIX, `/`-separated)');
      if (path.length > MAX_BUNDLE_PATH) problem(`path longer than ${MAX_BUNDLE_PATH} characters`);
      const abs = base + path;
      let stats: BigIntStats;
      try {
        stats = lstatSync(abs, { bigint: true });
      } catch (error) {
        problem(`cannot be read: ${errorCode(error)}`);
        continue;
      }
      const entry = (kind: BundleEntry['kind']) =>
        entries.set(path, {
          path,
          kind,
          mode: Number(stats.mode),
          size: Number(stats.size),
          stats,
        });
      if (stats.isDirectory()) {
        entry('dir');
        if (!(await visit(path))) return false;
      } else if (stats.isFile()) {
        entry('file');
        bytes += Number(stats.size);
      } else if (stats.isSymbolicLink()) {
        entry('symlink');
        const within = path.startsWith('environment/') ? context : root;
        const message = await symlinkProblem(
          abs,
          within,
          within === root ? 'the bundle' : 'environment/',
        );
        if (message !== undefined) problem(message);
      } else {
        entry('special');
        problem(`is ${specialKind(stats)}; a bundle holds only files, folders and symlinks`);
      }
    }
    return true;
  };

  const complete = await visit('');
  if (bytes > MAX_BUNDLE_BYTES) {
    problems.push({ file: '.', message: `holds more than ${MAX_BUNDLE_BYTES} bytes of files` });
  }
  return { entries, problems, complete };
}

async function symlinkProblem(
  abs: string,
  within: string,
  withinName: string,
): Promise<string | undefined> {
  let target: string;
  try {
    target = await readlink(abs);
  } catch (error) {
    return `symlink cannot be read: ${errorCode(error)}`;
  }
  const shown = JSON.stringify(target);
  if (target.startsWith('/')) return `symlink to an absolute path ${shown}; it must be relative`;
  if (target.includes('\\')) return `symlink target ${shown} contains a backslash`;
  let real: string;
  try {
    real = await realpath(abs);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `dangling symlink (-> ${shown})`;
    if (code === 'ELOOP') return `symlink loop (-> ${shown})`;
    return `symlink -> ${shown} cannot be resolved: ${errorCode(error)}`;
  }
  return isInside(real, within) ? undefined : `symlink -> ${shown} leaves ${withinName}`;
}

/**
 * Why the file at `path` cannot serve as one of the files Proctor reads by name, or
 * undefined when it is a regular file of the walk. Named files must be regular files reached
 * through real folders: a symlink would be followed again at every later use, and those uses
 * (copies into the evaluator's tmpfs, the build) should see exactly what was checked.
 * Returns null when the walk already reported the entry (a FIFO, say).
 */
export function namedFileProblem(
  entries: Map<string, BundleEntry>,
  path: string,
): string | null | undefined {
  const entry = entries.get(path);
  if (entry?.kind === 'file') return undefined;
  if (entry?.kind === 'special') return null;
  if (entry?.kind === 'symlink') return 'must be a regular file, not a symlink';
  if (entry?.kind === 'dir') return 'is a folder, not a file';
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i += 1) {
    const parent = parts.slice(0, i).join('/');
    if (entries.get(parent)?.kind === 'symlink') {
      return `is reached through the symlink ${parent}; it must be a regular file in a real folder`;
    }
  }
  return 'missing';
}

export type ReadResult = { ok: true; bytes: Buffer } | { ok: false; message: string };

/**
 * Reads a regular file of at most `maxBytes` bytes. O_NOFOLLOW refuses a final symlink and
 * O_NONBLOCK keeps a FIFO swapped in after the walk from blocking the open; the type and size
 * are then checked on the open handle, so they describe the bytes that are read.
 */
export async function readRegular(path: string, maxBytes: number): Promise<ReadResult> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, message: 'missing' };
    if (code === 'ELOOP') return { ok: false, message: 'must be a regular file, not a symlink' };
    return { ok: false, message: `cannot be read: ${errorCode(error)}` };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { ok: false, message: 'must be a regular file' };
    if (stats.size > maxBytes) return { ok: false, message: `larger than ${maxBytes} bytes` };
    // One byte more than expected, to notice a file that grew since the stat.
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, stats.size + 1));
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) return { ok: false, message: `larger than ${maxBytes} bytes` };
    if (length > stats.size) return { ok: false, message: 'changed while it was read' };
    return { ok: true, bytes: buffer.subarray(0, length) };
  } finally {
    await handle.close();
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads a regular file of at most `maxBytes` bytes as UTF-8 text. */
export async function readUtf8(
  path: string,
  maxBytes: number,
): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
  const read = await readRegular(path, maxBytes);
  if (!read.ok) return read;
  try {
    return { ok: true, text: utf8.decode(read.bytes) };
  } catch {
    return { ok: false, message: 'is not valid UTF-8' };
  }
}

/** Reads a named file of the walk as UTF-8 text, or records why it cannot be used. */
export async function readText(
  root: string,
  entries: Map<string, BundleEntry>,
  file: string,
  maxBytes: number,
  problems: BundleProblem[],
): Promise<string | undefined> {
  const where = namedFileProblem(entries, file);
  if (where !== undefined) {
    if (where !== null) problems.push({ file, message: where });
    return undefined;
  }
  const read = await readUtf8(join(root, file), maxBytes);
  if (read.ok) return read.text;
  problems.push({ file, message: read.message });
  return undefined;
}

/** Checks a named file that Proctor copies but does not parse: regular, and not empty. */
export function checkCopied(
  entries: Map<string, BundleEntry>,
  file: string,
  problems: BundleProblem[],
  rules: { executable?: boolean } = {},
): boolean {
  const where = namedFileProblem(entries, file);
  if (where !== undefined) {
    if (where !== null) problems.push({ file, message: where });
    return false;
  }
  const entry = entries.get(file);
  if (entry?.size === 0) problems.push({ file, message: 'is empty' });
  if (rules.executable && entry !== undefined && (entry.mode & 0o111) === 0) {
    problems.push({ file, message: `not executable (chmod +x ${file})` });
  }
  return true;
}

/**
 * The SHA-256 of a regular file, read through a handle that does not follow a symlink; its
 * digest is recorded in `digests` against the fstat of that handle, taken before the read.
 */
async function hashFile(path: string, digests?: FileDigests): Promise<string> {
  const hash = createHash('sha256');
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  let stat;
  try {
    stat = await handle.stat({ bigint: true });
    if (!stat.isFile()) throw new Error(`${path} is no longer a regular file`);
    // Small files are most of a repository: no 1 MiB buffer each.
    const buffer = Buffer.alloc(Math.min(1024 * 1024, Number(stat.size) + 1));
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > MAX_BUNDLE_BYTES) throw new Error(`${path} grew past ${MAX_BUNDLE_BYTES} bytes`);
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  const digest = hash.digest('hex');
  digests?.set(path, stat, digest);
  return digest;
}

/**
 * SHA-256 over every file and symlink of the bundle, like a git tree: one record per entry,
 * in byte order of its relative path, holding a git-style mode (100644, 100755 for any execute
 * bit, 120000 for a symlink), the SHA-256 of its bytes (a symlink's: its target) and the path.
 * Only the execute bit of the mode counts, so that the same bundle checked out under another
 * umask hashes the same; folders do not count, so an empty folder changes nothing.
 */
export async function hashBundle(
  root: string,
  entries: Iterable<BundleEntry>,
  digests?: FileDigests,
): Promise<string> {
  // Byte order of the UTF-8 paths; each path is encoded once, not once per comparison.
  const hashed = [...entries]
    .filter((entry) => entry.kind === 'file' || entry.kind === 'symlink')
    .map((entry) => ({ entry, key: Buffer.from(entry.path) }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ entry }) => entry);
  const base = root.endsWith(sep) ? root : `${root}${sep}`;
  // A file whose walk lstat is the one its digest was recorded with is not opened at all
  // (FileDigests); the others are read a chunk at a time (each read holds up to 1 MiB).
  const digestsOf = hashed.map((entry) =>
    entry.kind === 'file' ? digests?.get(base + entry.path, entry.stats) : undefined,
  );
  const one = async (entry: BundleEntry) =>
    entry.kind === 'symlink'
      ? createHash('sha256')
          .update(await readlink(base + entry.path))
          .digest('hex')
      : hashFile(base + entry.path, digests);
  const missing = digestsOf.flatMap((digest, i) => (digest === undefined ? [i] : []));
  for (let i = 0; i < missing.length; i += HASH_CHUNK) {
    const chunk = missing.slice(i, i + HASH_CHUNK);
    const results = await Promise.all(chunk.map((k) => one(hashed[k] as BundleEntry)));
    chunk.forEach((k, j) => (digestsOf[k] = results[j]));
  }
  const tree = createHash('sha256').update('proctor-bundle-v1\0');
  hashed.forEach((entry, i) => {
    const mode =
      entry.kind === 'symlink' ? '120000' : (entry.mode & 0o111) === 0 ? '100644' : '100755';
    tree.update(`${mode} ${digestsOf[i] ?? ''} ${entry.path}\0`);
  });
  return tree.digest('hex');
}
