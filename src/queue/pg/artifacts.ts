// Artifacts in PostgreSQL: the ArtifactStore of a home whose queue is a database URL, so that
// any host, and the loopback API on any of them, reads any job's log, transcript or candidate.
// Bytes live in `artifact_blobs`, keyed by their SHA-256 (the same bytes stored twice are one
// row); `artifacts` rows name them, as on SQLite.
//
// write() stores nothing: it redacts and bounds the input exactly as the file store does and
// returns a record that carries its bytes (`content`). The JobStore call that registers the
// record inserts them, ON CONFLICT DO NOTHING, in the same transaction (storeContents, called
// from the fenced completion and from the enqueue of inputs), after the fence: a late finish
// from a host whose lease was reclaimed writes neither the row nor the bytes, and a crash
// mid-finish leaves neither. So nothing can be orphaned by a write, and discard() of a record
// that was never registered has nothing to remove.
//
// Blobs go when no row names them any more (retention prunes jobs, the input sweep unregisters
// inputs), under a lock that keeps a concurrent registration safe (src/queue/pg/blobs.ts).
//
// Reads trust nothing: the blob's size and SHA-256 are checked against the record before a
// byte is returned.
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { ProctorError } from '../../errors.js';
import {
  checkSlice,
  locateArtifact,
  prepareArtifact,
  safeFileName,
  utf8Cut,
  type ArtifactRecord,
  type ArtifactStore,
  type Redactor,
} from '../../store/index.js';
import { lockBlobs, removeUnnamedBlobs } from './blobs.js';
import { inTransaction } from './db.js';
import { MAX_BLOB_BYTES } from './schema.js';

export { MAX_BLOB_BYTES };

export interface PgArtifactStoreOptions {
  /** The job store's pool, once connected (and migrated). */
  pool: () => Promise<pg.Pool>;
  redactor: Redactor;
  /** Largest artifact write() accepts. Default and most: MAX_BLOB_BYTES (16 MiB). */
  maxBytes?: number;
}

const invalid = (message: string) => new ProctorError('ARTIFACT_INVALID', message);

export function createPgArtifactStore(options: PgArtifactStoreOptions): ArtifactStore {
  const { redactor } = options;
  const maxBytes = options.maxBytes ?? MAX_BLOB_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0 || maxBytes > MAX_BLOB_BYTES) {
    throw invalid(
      `Expected \`maxBytes\` to be an integer from 0 to ${MAX_BLOB_BYTES}, got \`${String(maxBytes)}\``,
    );
  }

  /** The record's bytes from the database, checked against its size and SHA-256. */
  async function verified(record: ArtifactRecord): Promise<Buffer> {
    const { id } = locateArtifact(record);
    const db = await options.pool();
    const { rows } = await db.query<{ bytes: Buffer }>(
      'SELECT bytes FROM artifact_blobs WHERE sha256 = $1',
      [record.sha256],
    );
    const bytes = rows[0]?.bytes;
    if (bytes === undefined) {
      throw new ProctorError('ARTIFACT_NOT_FOUND', `artifact ${id} has no bytes in the database`);
    }
    if (bytes.length !== record.size) {
      throw invalid(
        `artifact ${id}: ${bytes.length} bytes in the database, registered as ${record.size}`,
      );
    }
    if (createHash('sha256').update(bytes).digest('hex') !== record.sha256) {
      throw invalid(`artifact ${id}: SHA-256 of the bytes in the database does not match`);
    }
    return bytes;
  }

  return {
    root: 'postgresql',

    // Nothing to wait for: the bytes travel with the record to the registering transaction.
    write: (input) =>
      Promise.resolve().then(() => {
        const { name, bytes, sha256 } = prepareArtifact(input, redactor, maxBytes);
        const id = randomUUID();
        return {
          id,
          name,
          mediaType: input.mediaType,
          sha256,
          size: bytes.length,
          relPath: `${id}/${safeFileName(name)}`,
          content: bytes,
        };
      }),

    // Unregistered, a record's bytes were never stored; registered and since unregistered,
    // its blob goes unless another row names the same bytes.
    async discard(record) {
      locateArtifact(record);
      await inTransaction(await options.pool(), async (q) => {
        await lockBlobs(q);
        await removeUnnamedBlobs(q, [record.sha256], 1);
      });
    },

    async read(record, opts = {}) {
      const limit = opts.maxBytes ?? maxBytes;
      if (Number.isSafeInteger(record.size) && record.size > limit) {
        throw invalid(
          `artifact ${String(record.id)} is ${record.size} bytes, more than the limit of ${limit}`,
        );
      }
      return verified(record);
    },

    // A blob is at most 16 MiB, so the whole of it is fetched and verified, and the slice cut.
    async readSlice(record, slice) {
      const { offset, length } = checkSlice(slice);
      const bytes = await verified(record);
      const start = Math.min(offset, bytes.length);
      const kept = Buffer.from(bytes.subarray(start, Math.min(bytes.length, start + length)));
      const end = start + kept.length;
      return slice.utf8 === true && end < bytes.length ? kept.subarray(0, utf8Cut(kept)) : kept;
    },

    async open(record) {
      const bytes = await verified(record);
      return {
        stream: Readable.from(bytes.length > 0 ? [bytes] : [], { objectMode: false }),
        size: bytes.length,
      };
    },

    // Nothing is ever written outside a registering transaction, so the only leftovers are
    // blobs whose rows went (a discard that failed): removed here, `limit` at most.
    async sweep(_index, opts = {}) {
      const limit = opts.limit ?? 10_000;
      return inTransaction(await options.pool(), async (q) => {
        await lockBlobs(q);
        return removeUnnamedBlobs(q, undefined, limit);
      });
    },
  };
}
