// Task validity on PostgreSQL: the latest judgement of each task id (see the SQLite twin).
import { MAX_PAGE, type TaskValidity } from '../store.js';
import { lockBlobs, pruneArtifacts } from './blobs.js';
import type { Queryable } from './sql.js';

const LATEST = `SELECT DISTINCT ON (task_id) task_id AS "taskId", content_hash AS "contentHash",
    bundle_path AS "bundlePath", validity, reason, detail, job_id AS "jobId",
    checked_at AS "checkedAt"
  FROM tasks ORDER BY task_id, checked_at DESC, content_hash COLLATE "C" DESC`;

export async function taskValidity(
  db: Queryable,
  limit: number,
): Promise<{ tasks: TaskValidity[]; counts: { valid: number; quarantined: number } }> {
  const bounded = Math.max(1, Math.min(MAX_PAGE, Math.floor(limit)));
  const { rows: tasks } = await db.query<TaskValidity>(
    `SELECT * FROM (${LATEST}) latest ORDER BY "checkedAt" DESC, "taskId" COLLATE "C" LIMIT $1`,
    [bounded],
  );
  const { rows } = await db.query<{ validity: 'valid' | 'quarantined'; n: number }>(
    `SELECT validity, count(*) AS n FROM (${LATEST}) latest GROUP BY validity`,
  );
  const counts = { valid: 0, quarantined: 0 };
  for (const { validity, n } of rows) counts[validity] = n;
  return { tasks, counts };
}

/**
 * Inside a transaction: deletes up to `limit` jobs that finished before `olderThan`, then their
 * artifacts that nothing still names, and the bytes of those (see pruneArtifacts); returns how
 * many jobs.
 */
export async function pruneFinished(
  db: Queryable,
  olderThan: number,
  limit: number,
): Promise<number> {
  await lockBlobs(db);
  const { rowCount } = await db.query(
    `DELETE FROM jobs WHERE id IN (
       SELECT id FROM jobs
       WHERE finished_at < $1 AND status IN ('done', 'failed', 'cancelled')
       LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [olderThan, limit],
  );
  // Also what earlier prunes left (a candidate whose grade has gone since): a few per job.
  await pruneArtifacts(db, 4 * limit);
  return rowCount ?? 0;
}

/** The judgement of one task id for exactly one bundle content, or undefined. */
export async function taskJudgement(
  db: Queryable,
  taskId: string,
  contentHash: string,
): Promise<TaskValidity | undefined> {
  const { rows } = await db.query<TaskValidity>(
    `SELECT task_id AS "taskId", content_hash AS "contentHash", bundle_path AS "bundlePath",
       validity, reason, detail, job_id AS "jobId", checked_at AS "checkedAt"
     FROM tasks WHERE task_id = $1 AND content_hash = $2`,
    [taskId, contentHash],
  );
  return rows[0];
}
