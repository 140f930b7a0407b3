// Input artifacts on PostgreSQL (see src/queue/sqlite/inputs.ts for what they are). SQLite has
// one writer, so there an enqueue and the sweep of unreferenced inputs cannot interleave; here
// they take an advisory lock (shared by enqueues, exclusive for the sweep), so the sweep never
// deletes an input that a job being enqueued at that moment is about to name.
import { ProctorError } from '../../errors.js';
import type { ArtifactRecord, RegisteredArtifact } from '../store.js';
import { holdBlobs, storeContents } from './blobs.js';
import { ARTIFACT_COLUMNS, NOW, type Queryable, type TimeParam } from './sql.js';

/** The advisory lock key of input registration ("inputs" in ASCII). */
const INPUTS_LOCK = 115923054064755;

/** Runs inside the enqueue's transaction. */
export async function registerInputs(
  db: Queryable,
  inputs: readonly ArtifactRecord[],
  reused: readonly string[],
  now: TimeParam,
): Promise<void> {
  if (inputs.length === 0 && reused.length === 0) return;
  await db.query(`SELECT pg_advisory_xact_lock_shared(${INPUTS_LOCK})`);
  if (inputs.length > 0) await holdBlobs(db);
  if (reused.length > 0) {
    const { rows } = await db.query<{ id: string }>(
      'SELECT id FROM artifacts WHERE id = ANY($1) AND job_id IS NULL AND attempt IS NULL',
      [[...reused]],
    );
    const found = new Set(rows.map((r) => r.id));
    const missing = reused.find((id) => !found.has(id));
    if (missing !== undefined) {
      throw new ProctorError(
        'ARTIFACT_NOT_FOUND',
        `input artifact ${missing} was removed before its job was enqueued`,
        { data: { artifact: missing } },
      );
    }
  }
  await addInputs(db, inputs, now);
}

/** Inside a transaction that holds the blobs (holdBlobs): the rows and the bytes they carry. */
export async function addInputs(
  db: Queryable,
  records: readonly ArtifactRecord[],
  now: TimeParam,
): Promise<void> {
  await storeArtifacts(db, records, null, now);
}

/**
 * Inside a transaction that holds the blobs: the bytes `records` carry, then their rows, owned
 * by a job's attempt or (inputs) by none. The bytes go first, so no row names missing ones.
 */
export async function storeArtifacts(
  db: Queryable,
  records: readonly ArtifactRecord[],
  owner: { id: number; attempt: number } | null,
  now: TimeParam,
): Promise<void> {
  if (records.length === 0) return;
  await storeContents(db, records, now);
  await db.query(
    `INSERT INTO artifacts (id, job_id, attempt, name, media_type, sha256, size, rel_path,
       created_at)
     SELECT r.id, $2::bigint, $3::integer, r.name, r.media_type, r.sha256, r.size, r.rel_path,
       ${NOW}
     FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[], $9::text[])
       AS r(id, name, media_type, sha256, size, rel_path)`,
    [
      now,
      owner?.id ?? null,
      owner?.attempt ?? null,
      records.map((r) => r.id),
      records.map((r) => r.name),
      records.map((r) => r.mediaType),
      records.map((r) => r.sha256),
      records.map((r) => r.size),
      records.map((r) => r.relPath),
    ],
  );
}

export async function findInputs(
  db: Queryable,
  name: string,
  sha256s: readonly string[],
): Promise<RegisteredArtifact[]> {
  const wanted = [...new Set(sha256s)];
  if (wanted.length === 0) return [];
  const { rows } = await db.query<RegisteredArtifact>(
    `SELECT DISTINCT ON (sha256) ${ARTIFACT_COLUMNS} FROM artifacts
     WHERE job_id IS NULL AND attempt IS NULL AND name = $1 AND sha256 = ANY($2)
     ORDER BY sha256, created_at, id`,
    [name, wanted],
  );
  // As SQLite answers: oldest first.
  return rows.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Runs inside its own transaction. */
export async function takeUnreferencedInputs(
  db: Queryable,
  olderThan: number,
  limit: number,
): Promise<ArtifactRecord[]> {
  await db.query(`SELECT pg_advisory_xact_lock(${INPUTS_LOCK})`);
  const { rows } = await db.query<ArtifactRecord>(
    `DELETE FROM artifacts WHERE id IN (
       SELECT id FROM artifacts
       WHERE job_id IS NULL AND attempt IS NULL AND created_at < $1
         AND id NOT IN (
           SELECT payload::jsonb ->> 'candidate' FROM jobs
           WHERE kind = 'grade' AND payload::jsonb ->> 'candidate' IS NOT NULL)
       LIMIT $2)
     RETURNING id, name, media_type AS "mediaType", sha256, size, rel_path AS "relPath"`,
    [olderThan, limit],
  );
  return rows;
}
