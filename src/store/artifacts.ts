// The artifact store: what Proctor keeps for a job (patches, logs, transcripts, reports). One
// interface, ArtifactStore, with two implementations: this file's, which keeps files under
// `<home>/artifacts/` (a SQLite home), and the PostgreSQL one (src/queue/pg/artifacts.ts),
// which keeps the bytes in the database, content-addressed, so that every host reads them.
//
// The file store gives each artifact a fresh directory named by a random UUID, so a new
// artifact can never replace or alias an earlier one, whatever its name or content:
//
//   <root>/<uuid>/<safe file name>      directories 0700, files 0600
//
// write() only puts bytes on disk and returns their record; the caller registers it with
// `JobStore.complete(lease, result, records)` in the same transaction as the job's fenced
// completion, and calls discard() when that fails (see registerOrDiscard). Reads trust
// nothing on disk: they recheck the record's shape, containment under the root, that the file
// is a regular file and not a symbolic link, its size and its SHA-256, and refuse with
// ARTIFACT_INVALID (or ARTIFACT_NOT_FOUND) otherwise.
import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, opendir, realpath, rename, rm, utimes } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Clock } from '../clock.js';
import { ProctorError } from '../errors.js';
import { isTextMediaType, redactDocument } from './redact-document.js';
import type { Redactor } from './redact.js';

/** What the `artifacts` table holds of an artifact besides its job, attempt and time. */
export interface ArtifactRecord {
  /** The UUID that names its directory. */
  id: string;
  /** The name it was written with (shown to users, used for downloads). */
  name: string;
  mediaType: string;
  /** Lowercase hex SHA-256 of the stored bytes (after redaction). */
  sha256: string;
  size: number;
  /** `<id>/<safe file name>`, relative to the store's root. */
  relPath: string;
  /**
   * The bytes themselves, on a record a database-backed store wrote and has not yet
   * registered: the JobStore that registers the record (a completion, an enqueue's inputs)
   * stores them in the same transaction, content-addressed. Never set by the file store, and
   * never on a record read back from a JobStore.
   */
  content?: Buffer;
}

export interface ArtifactInput {
  /** 1–200 characters; no `/`, `\`, `..`, NUL or other control characters. */
  name: string;
  /** `type/subtype`, optionally with parameters; at most 200 characters. */
  mediaType: string;
  bytes: Buffer | string;
  /** Pass the content through the redactor first. Default: true for text media types. */
  redact?: boolean;
}

/** How the caller finds registered artifacts (implemented over the `artifacts` table). */
export interface ArtifactIndex {
  getArtifact(id: string): Promise<ArtifactRecord | undefined>;
}

export interface ArtifactDownload {
  /**
   * The bytes, already verified once before this was returned, and hashed again while they
   * flow: if they changed on disk in between, the stream errors with ARTIFACT_INVALID before
   * its last chunk, so a client never receives a complete body of different bytes. Destroy it
   * if it is not consumed, to release the file handle.
   */
  stream: Readable;
  size: number;
}

export interface ArtifactStoreOptions {
  /** The directory holding every artifact, normally `<home>/artifacts`; created 0700 if missing. */
  root: string;
  redactor: Redactor;
  /** Stamps each artifact directory's mtime, which sweep() compares against. */
  clock: Clock;
  /** Largest artifact write() accepts and read() returns by default. Default 256 MiB. */
  maxBytes?: number;
}

export interface ArtifactStore {
  /** Where the bytes live: the file store's directory, or `postgresql` for the database. */
  readonly root: string;
  write(input: ArtifactInput): Promise<ArtifactRecord>;
  /** Deletes this artifact's own file and directory, nothing else; missing is not an error. */
  discard(record: ArtifactRecord): Promise<void>;
  /** The verified bytes. `maxBytes` defaults to the store's `maxBytes`. */
  read(record: ArtifactRecord, options?: { maxBytes?: number }): Promise<Buffer>;
  open(record: ArtifactRecord): Promise<ArtifactDownload>;
  /**
   * `length` bytes from `offset` (fewer at the end), verified: the whole file is hashed as it
   * is read, but only the slice is kept, so memory stays bounded by `length` however large
   * the artifact. With `utf8`, a slice that would end inside a UTF-8 character ends before it
   * instead (the next slice starts there), so that each slice decodes on its own.
   */
  readSlice(
    record: ArtifactRecord,
    slice: { offset: number; length: number; utf8?: boolean },
  ): Promise<Buffer>;
  /**
   * Deletes artifact directories that no registered artifact owns and that are older than
   * `olderThanMs` (default 24 h): the leftovers of a crash between write() and registration.
   * Stops after `limit` removals (default: no limit), so a periodic sweep is bounded.
   * Returns how many it removed. Entries not named like an artifact are left alone.
   */
  sweep(index: ArtifactIndex, options?: { olderThanMs?: number; limit?: number }): Promise<number>;
}

export const DEFAULT_MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;
export const MAX_ARTIFACT_NAME_LENGTH = 200;
const DEFAULT_SWEEP_AGE_MS = 24 * 60 * 60 * 1000;
const CHUNK_BYTES = 64 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SHA256 = /^[0-9a-f]{64}$/;
const SAFE_FILE_NAME = /^[A-Za-z0-9_+-][A-Za-z0-9._+-]{0,199}$/;
const MEDIA_TYPE = /^[a-z0-9][\w!#$&^.+-]*\/[a-z0-9][\w!#$&^.+-]*(?:[ \t]*;[\x20-\x7e]*)?$/i;

const invalid = (message: string) => new ProctorError('ARTIFACT_INVALID', message);

/**
 * What every store does before it keeps an input: checks its name and media type, redacts it
 * (text by default), and refuses it with ARTIFACT_INVALID when the stored bytes would exceed
 * `maxBytes`. Returns the bytes to store and their SHA-256.
 */
export function prepareArtifact(
  input: ArtifactInput,
  redactor: Redactor,
  maxBytes: number,
): { name: string; bytes: Buffer; sha256: string } {
  const name = validateArtifactName(input.name);
  const { mediaType } = input;
  if (typeof mediaType !== 'string' || mediaType.length > 200 || !MEDIA_TYPE.test(mediaType)) {
    throw invalid(
      `Expected artifact \`mediaType\` to be type/subtype, got \`${String(mediaType).slice(0, 80)}\``,
    );
  }
  const redact = input.redact ?? isTextMediaType(mediaType);
  const bytes = redact
    ? Buffer.from(redactDocument(redactor, mediaType, input.bytes), 'utf8')
    : Buffer.isBuffer(input.bytes)
      ? input.bytes
      : Buffer.from(input.bytes, 'utf8');
  if (bytes.length > maxBytes) {
    throw invalid(`artifact ${name} is ${bytes.length} bytes, more than the limit of ${maxBytes}`);
  }
  return { name, bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** A slice request's offset and length, both integers >= 0; USAGE otherwise. */
export function checkSlice(slice: { offset: number; length: number }): {
  offset: number;
  length: number;
} {
  const { offset, length } = slice;
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 0) {
    throw new ProctorError(
      'USAGE',
      `Expected a slice with integer offset and length >= 0, got ${String(offset)} and ${String(length)}`,
    );
  }
  return { offset, length };
}

/** Throws ARTIFACT_INVALID unless `name` is an acceptable artifact name. */
export function validateArtifactName(name: unknown): string {
  const shown = JSON.stringify(name)?.slice(0, 80) ?? String(name);
  if (typeof name !== 'string' || name === '') {
    throw invalid(`Expected artifact \`name\` to be a non-empty string, got \`${shown}\``);
  }
  if (name.length > MAX_ARTIFACT_NAME_LENGTH) {
    throw invalid(`Expected artifact \`name\` to be at most 200 characters, got ${name.length}`);
  }
  // eslint-disable-next-line no-control-regex
  if (/[/\\\x00-\x1f\x7f]/.test(name) || name.includes('..')) {
    throw invalid(
      `Expected artifact \`name\` without \`/\`, \`\\\`, \`..\` or control characters, got \`${shown}\``,
    );
  }
  return name;
}

/** The on-disk form of a valid name: ASCII letters, digits, `._+-`, never starting with `.`. */
export function safeFileName(name: string): string {
  return name.replace(/[^A-Za-z0-9._+-]/g, '_').replace(/^\./, '_');
}

/** The record's directory and file, or ARTIFACT_INVALID when it could point anywhere else. */
export function locate(record: ArtifactRecord): { id: string; file: string } {
  const { id, relPath, sha256, size } = record;
  if (typeof id !== 'string' || !UUID.test(id)) {
    throw invalid(`artifact id \`${String(id).slice(0, 80)}\` is not a UUID`);
  }
  const parts = typeof relPath === 'string' ? relPath.split('/') : [];
  const [dir, file] = parts;
  if (parts.length !== 2 || dir !== id || file === undefined || !SAFE_FILE_NAME.test(file)) {
    throw invalid(
      `artifact ${id}: rel_path \`${String(relPath).slice(0, 300)}\` is not \`${id}/<file>\``,
    );
  }
  if (typeof sha256 !== 'string' || !SHA256.test(sha256)) {
    throw invalid(`artifact ${id}: sha256 is not 64 lowercase hex digits`);
  }
  if (!Number.isSafeInteger(size) || size < 0) {
    throw invalid(`artifact ${id}: size \`${String(size)}\` is not an integer >= 0`);
  }
  return { id, file };
}

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code;

export function createArtifactStore(options: ArtifactStoreOptions): ArtifactStore {
  const { root, redactor, clock } = options;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_ARTIFACT_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw invalid(`Expected \`maxBytes\` to be an integer >= 0, got \`${String(maxBytes)}\``);
  }
  let rootReady: Promise<void> | undefined;
  const ensureRoot = () =>
    (rootReady ??= mkdir(root, { recursive: true, mode: 0o700 }).then(
      () => undefined,
      (error: unknown) => {
        rootReady = undefined;
        throw error;
      },
    ));

  async function fsyncPath(path: string): Promise<void> {
    const handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async function write(input: ArtifactInput): Promise<ArtifactRecord> {
    const { name, bytes, sha256 } = prepareArtifact(input, redactor, maxBytes);
    const { mediaType } = input;
    const id = randomUUID();
    const file = safeFileName(name);
    const dir = join(root, id);
    await ensureRoot();
    // Not recursive: an existing directory fails with EEXIST instead of being reused.
    await mkdir(dir, { mode: 0o700 });
    try {
      const temp = join(dir, `.tmp-${randomUUID()}`);
      const flags =
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
      const handle = await open(temp, flags, 0o600);
      try {
        await handle.chmod(0o600); // whatever the umask
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, join(dir, file));
      const stamp = clock.now() / 1000;
      await utimes(dir, stamp, stamp);
      await fsyncPath(dir);
      await fsyncPath(root);
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw new ProctorError(
        'INTERNAL',
        `cannot write artifact ${name}: ${errno(error) ?? String(error)}`,
        {
          cause: error,
        },
      );
    }
    return { id, name, mediaType, sha256, size: bytes.length, relPath: `${id}/${file}` };
  }

  async function discard(record: ArtifactRecord): Promise<void> {
    const { id, file } = locate(record);
    const dir = join(root, id);
    const stat = await lstat(dir).catch((error: unknown) => {
      if (errno(error) === 'ENOENT') return undefined;
      throw error;
    });
    if (stat === undefined) return;
    // A symbolic link in its place is removed as a link; nothing it points to is touched.
    if (!stat.isDirectory()) {
      await rm(dir, { force: true });
      return;
    }
    await rm(join(dir, file), { force: true });
    await rm(dir, { recursive: true, force: true });
  }

  /** Opens the record's file after every check that does not need its bytes. */
  async function openChecked(record: ArtifactRecord): Promise<{ handle: FileHandle; id: string }> {
    const { id, file } = locate(record);
    const dir = join(root, id);
    const path = join(dir, file);
    const missing = () =>
      new ProctorError('ARTIFACT_NOT_FOUND', `artifact ${id} is missing on disk`);
    const lstatOrMissing = (p: string) =>
      lstat(p).catch((error: unknown) => {
        throw errno(error) === 'ENOENT' || errno(error) === 'ENOTDIR' ? missing() : error;
      });
    const dirStat = await lstatOrMissing(dir);
    if (!dirStat.isDirectory())
      throw invalid(`artifact ${id}: its directory is not a plain directory`);
    const fileStat = await lstatOrMissing(path);
    if (fileStat.isSymbolicLink()) throw invalid(`artifact ${id}: ${file} is a symbolic link`);
    if (!fileStat.isFile()) throw invalid(`artifact ${id}: ${file} is not a regular file`);
    const [realRoot, realFile] = await Promise.all([realpath(root), realpath(path)]);
    if (realFile !== join(realRoot, id, file)) {
      throw invalid(`artifact ${id}: ${file} resolves outside its directory`);
    }
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      if (errno(error) === 'ENOENT') throw missing();
      if (errno(error) === 'ELOOP') throw invalid(`artifact ${id}: ${file} is a symbolic link`);
      throw error;
    }
    try {
      // The file opened must be the one checked above, not a replacement.
      const opened = await handle.stat();
      if (!opened.isFile() || opened.ino !== fileStat.ino || opened.dev !== fileStat.dev) {
        throw invalid(`artifact ${id}: ${file} was replaced while being opened`);
      }
      if (opened.size !== record.size) {
        throw invalid(
          `artifact ${id}: ${file} is ${opened.size} bytes on disk, registered as ${record.size}`,
        );
      }
      return { handle, id };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Reads the whole file in chunks, hashing it; the callback sees each chunk. */
  async function hashFile(
    handle: FileHandle,
    size: number,
    onChunk?: (chunk: Buffer) => void,
  ): Promise<{ sha256: string; bytes: number }> {
    const hash = createHash('sha256');
    let position = 0;
    // Reads one byte past `size`, so that a file that grew is noticed.
    for (;;) {
      const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(1, size + 1 - position)));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      position += bytesRead;
      onChunk?.(chunk);
      if (position > size) break;
    }
    return { sha256: hash.digest('hex'), bytes: position };
  }

  function checkDigest(record: ArtifactRecord, id: string, got: { sha256: string; bytes: number }) {
    if (got.bytes !== record.size) {
      throw invalid(`artifact ${id}: read ${got.bytes} bytes, registered as ${record.size}`);
    }
    if (got.sha256 !== record.sha256) {
      throw invalid(`artifact ${id}: SHA-256 of the bytes on disk does not match its registration`);
    }
  }

  async function read(record: ArtifactRecord, opts: { maxBytes?: number } = {}): Promise<Buffer> {
    const limit = opts.maxBytes ?? maxBytes;
    if (Number.isSafeInteger(record.size) && record.size > limit) {
      throw invalid(
        `artifact ${String(record.id)} is ${record.size} bytes, more than the limit of ${limit}`,
      );
    }
    return verifiedRange(record, 0, Number.POSITIVE_INFINITY);
  }

  /**
   * Bytes `offset` to `offset + length` of the artifact (fewer at its end), verified: the
   * whole file is hashed as it is read, but only the range is kept.
   */
  async function verifiedRange(
    record: ArtifactRecord,
    offset: number,
    length: number,
  ): Promise<Buffer> {
    const { handle, id } = await openChecked(record);
    try {
      // openChecked has matched the file's size against record.size.
      const start = Math.min(offset, record.size);
      const kept = Buffer.alloc(Math.min(length, record.size - start));
      let position = 0;
      const got = await hashFile(handle, record.size, (chunk) => {
        // The part of this chunk, which starts at `position`, that falls inside the range.
        const from = Math.max(start, position);
        const to = Math.min(start + kept.length, position + chunk.length);
        if (from < to) chunk.copy(kept, from - start, from - position, to - position);
        position += chunk.length;
      });
      checkDigest(record, id, got);
      return kept;
    } finally {
      await handle.close();
    }
  }

  async function readSlice(
    record: ArtifactRecord,
    slice: { offset: number; length: number; utf8?: boolean },
  ): Promise<Buffer> {
    const { offset, length } = checkSlice(slice);
    const kept = await verifiedRange(record, offset, length);
    const end = Math.min(offset, record.size) + kept.length;
    return slice.utf8 === true && end < record.size ? kept.subarray(0, utf8Cut(kept)) : kept;
  }

  async function openDownload(record: ArtifactRecord): Promise<ArtifactDownload> {
    const { handle, id } = await openChecked(record);
    try {
      checkDigest(record, id, await hashFile(handle, record.size));
    } catch (error) {
      await handle.close();
      throw error;
    }
    async function* verified(): AsyncGenerator<Buffer> {
      const hash = createHash('sha256');
      let held: Buffer | undefined;
      let position = 0;
      for (;;) {
        const buffer = Buffer.alloc(CHUNK_BYTES);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
        if (bytesRead === 0) break;
        const chunk = buffer.subarray(0, bytesRead);
        hash.update(chunk);
        position += bytesRead;
        if (position > record.size) checkDigest(record, id, { sha256: '', bytes: position });
        // Hold back the newest chunk until the digest of everything is known.
        if (held) yield held;
        held = chunk;
      }
      checkDigest(record, id, { sha256: hash.digest('hex'), bytes: position });
      if (held) yield held;
    }
    const stream = Readable.from(verified(), { objectMode: false });
    // On end, error or destroy, even before the first read (a generator that never started
    // would not run its own finally block).
    stream.once('close', () => void handle.close().catch(() => undefined));
    return { stream, size: record.size };
  }

  async function sweep(
    index: ArtifactIndex,
    opts: { olderThanMs?: number; limit?: number } = {},
  ): Promise<number> {
    const cutoff = clock.now() - (opts.olderThanMs ?? DEFAULT_SWEEP_AGE_MS);
    const limit = opts.limit ?? Number.POSITIVE_INFINITY;
    await ensureRoot();
    let removed = 0;
    // Read entry by entry, so a bounded sweep of a large store stops early.
    for await (const entry of await opendir(root)) {
      if (removed >= limit) break;
      if (!entry.isDirectory() || !UUID.test(entry.name)) continue;
      const dir = join(root, entry.name);
      const stat = await lstat(dir).catch(() => undefined);
      if (stat === undefined || stat.mtimeMs >= cutoff) continue;
      if ((await index.getArtifact(entry.name)) !== undefined) continue;
      await rm(dir, { recursive: true, force: true });
      removed += 1;
    }
    return removed;
  }

  return { root, write, discard, read, readSlice, open: openDownload, sweep };
}

/**
 * Where to cut `bytes`, a slice followed by more bytes, so that it does not end inside a
 * UTF-8 character: before the last character's first byte when that character is incomplete.
 * A slice holding no character start in its last four bytes is not cut (it is not UTF-8, or
 * too short to hold a whole character, and cutting would stop a reader making progress).
 */
export function utf8Cut(bytes: Uint8Array): number {
  for (let i = bytes.length - 1; i >= Math.max(0, bytes.length - 4); i--) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte
    const needed = byte < 0x80 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return i + needed <= bytes.length || i === 0 ? bytes.length : i;
  }
  return bytes.length;
}

/**
 * Runs `register` (normally `() => store.complete(lease, result, records)`) and, when it
 * returns false (the lease was lost) or throws, discards exactly these records' bytes.
 */
export async function registerOrDiscard(
  store: ArtifactStore,
  records: readonly ArtifactRecord[],
  register: () => Promise<boolean>,
): Promise<boolean> {
  let registered = false;
  try {
    registered = await register();
    return registered;
  } finally {
    if (!registered) {
      // Best effort: a leftover is only disk space, and sweep() removes it later.
      await Promise.allSettled(records.map((record) => store.discard(record)));
    }
  }
}
