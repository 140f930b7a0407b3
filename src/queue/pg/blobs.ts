// The SQL of artifact bytes on PostgreSQL (`artifact_blobs`, content-addressed by SHA-256), run
// inside the transactions that register or unregister the `artifacts` rows naming them: the
// fenced completion and the enqueue of inputs store bytes, retention and the input sweep
// remove the bytes no row names. See src/queue/pg/artifacts.ts for the store that reads them.
//
// Removals hold BLOBS_LOCK exclusively, and every transaction that registers rows naming
// blobs holds it shared, so a removal never deletes a blob that a concurrent registration has
// just found present (ON CONFLICT DO NOTHING) but not yet named.
import { ProctorError } from '../../errors.js';
import type { ArtifactRecord } from '../../store/index.js';
import { NOW, type Queryable, type TimeParam } from './sql.js';

const invalid = (message: string) => new ProctorError('ARTIFACT_INVALID', message);

/** The advisory lock key of blob removal ("blobs" in ASCII). */
const BLOBS_LOCK = 422726034035;

/**
 * Taken by a transaction that will register artifact rows, before it locks any row: no removal
 * runs until it ends. Before any row lock, so that it waits for a removal while holding none
 * (and a removal, which takes its lock first too, never waits on it): the two cannot deadlock.
 */
export async function holdBlobs(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock_shared(${BLOBS_LOCK})`);
}

/** The first statement of a transaction that removes blobs (see holdBlobs). */
export async function lockBlobs(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(${BLOBS_LOCK})`);
}

/**
 * Inside a registering transaction that holds the blobs (holdBlobs): stores the bytes of the
 * records that carry them, once per digest. Call it after the fence, before the rows' insert.
 */
export async function storeContents(
  db: Queryable,
  records: readonly ArtifactRecord[],
  now: TimeParam,
): Promise<void> {
  const seen = new Set<string>();
  for (const record of records) {
    const { content } = record;
    if (content === undefined || seen.has(record.sha256)) continue;
    seen.add(record.sha256);
    if (content.length !== record.size) {
      throw invalid(`artifact ${record.id}: ${content.length} bytes, registered as ${record.size}`);
    }
    // One statement per blob: its bytes go as one binary parameter, never as hex text.
    await db.query(
      `INSERT INTO artifact_blobs (sha256, size, bytes, created_at) VALUES ($2, $3, $4, ${NOW})
       ON CONFLICT (sha256) DO NOTHING`,
      [now, record.sha256, record.size, content],
    );
  }
}

/**
 * Inside a transaction that took lockBlobs first: deletes the blobs among `sha256s` (or,
 * without them, up to `limit` of all blobs) that no artifacts row names. Returns how many.
 */
export async function removeUnnamedBlobs(
  db: Queryable,
  sha256s: readonly string[] | undefined,
  limit: number,
): Promise<number> {
  if (sha256s !== undefined && sha256s.length === 0) return 0;
  const among = sha256s === undefined ? '' : 'AND b.sha256 = ANY($2)';
  const { rowCount } = await db.query(
    `DELETE FROM artifact_blobs WHERE sha256 IN (
       SELECT b.sha256 FROM artifact_blobs b
       WHERE NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256) ${among}
       LIMIT $1)`,
    sha256s === undefined ? [limit] : [limit, [...new Set(sha256s)]],
  );
  return rowCount ?? 0;
}

/**
 * Retention, inside the prune's transaction (which took lockBlobs first) after its jobs went
 * (their rows' job link is now NULL): deletes up to `limit` artifact rows of pruned jobs that no remaining job names (a
 * solve's candidate stays while its grade does), then the blobs no row names any more.
 */
export async function pruneArtifacts(db: Queryable, limit: number): Promise<number> {
  const { rows } = await db.query<{ sha256: string }>(
    `DELETE FROM artifacts WHERE id IN (
       SELECT id FROM artifacts
       WHERE job_id IS NULL AND attempt IS NOT NULL
         AND id NOT IN (
           SELECT payload::jsonb ->> 'candidate' FROM jobs
           WHERE kind = 'grade' AND payload::jsonb ->> 'candidate' IS NOT NULL)
       LIMIT $1)
     RETURNING sha256`,
    [limit],
  );
  await removeUnnamedBlobs(
    db,
    rows.map((r) => r.sha256),
    rows.length,
  );
  return rows.length;
}
