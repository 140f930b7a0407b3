// Input artifacts: files no job produced but jobs read (a grade's candidate patch). They are
// registered in the transaction that enqueues their jobs, found again by content so that the
// same bytes are stored once, and unregistered by the workers' sweep once no job names them.
//
// An input row has neither job nor attempt; an artifact a job produced keeps its attempt even
// after its job is pruned, so the two never mix. The one payload field naming an input is a
// grade's `candidate`.
import type Database from 'better-sqlite3';
import { ProctorError } from '../../errors.js';
import type { ArtifactRecord, RegisteredArtifact } from '../store.js';

/** SQLite's default limit on bound parameters is far above this. */
const LOOKUP_CHUNK = 500;

const COLUMNS =
  'id, job_id AS jobId, attempt, name, media_type AS mediaType, sha256, size, rel_path AS relPath, created_at AS createdAt';

export function createInputOps(sqlite: Database.Database) {
  const insert = sqlite.prepare(
    'INSERT INTO artifacts (id, job_id, attempt, name, media_type, sha256, size, rel_path, created_at) VALUES (?, NULL, NULL, ?, ?, ?, ?, ?, ?)',
  );
  const exists = sqlite.prepare(
    'SELECT 1 FROM artifacts WHERE id = ? AND job_id IS NULL AND attempt IS NULL',
  );
  // NOT IN over a subquery that is not correlated: SQLite reads the grade payloads once per
  // sweep, not once per artifact. NULLs are left out of it, since `x NOT IN (…, NULL)` is never
  // true.
  const takeUnreferenced = sqlite.prepare(
    `DELETE FROM artifacts WHERE id IN (
       SELECT id FROM artifacts
       WHERE job_id IS NULL AND attempt IS NULL AND created_at < ?
         AND id NOT IN (
           SELECT json_extract(payload, '$.candidate') FROM jobs
           WHERE kind = 'grade' AND json_extract(payload, '$.candidate') IS NOT NULL)
       LIMIT ?)
     RETURNING id, name, media_type AS mediaType, sha256, size, rel_path AS relPath`,
  );

  /** Runs inside the enqueue's write transaction. */
  function register(
    inputs: readonly ArtifactRecord[],
    reused: readonly string[],
    now: number,
  ): void {
    for (const id of reused) {
      if (exists.get(id) === undefined) {
        throw new ProctorError(
          'ARTIFACT_NOT_FOUND',
          `input artifact ${id} was removed before its job was enqueued`,
          { data: { artifact: id } },
        );
      }
    }
    for (const r of inputs) insert.run(r.id, r.name, r.mediaType, r.sha256, r.size, r.relPath, now);
  }

  function find(name: string, sha256s: readonly string[]): RegisteredArtifact[] {
    const wanted = [...new Set(sha256s)];
    const found = new Map<string, RegisteredArtifact>();
    for (let start = 0; start < wanted.length; start += LOOKUP_CHUNK) {
      const chunk = wanted.slice(start, start + LOOKUP_CHUNK);
      const rows = sqlite
        .prepare(
          `SELECT ${COLUMNS} FROM artifacts WHERE job_id IS NULL AND attempt IS NULL AND name = ? AND sha256 IN (${chunk.map(() => '?').join(', ')}) ORDER BY created_at, id`,
        )
        .all(name, ...chunk) as RegisteredArtifact[];
      for (const row of rows) if (!found.has(row.sha256)) found.set(row.sha256, row);
    }
    return [...found.values()];
  }

  function unreferenced(olderThan: number, limit: number): ArtifactRecord[] {
    return takeUnreferenced.all(olderThan, limit) as ArtifactRecord[];
  }

  return { register, find, unreferenced };
}
