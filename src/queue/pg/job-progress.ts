// A running job's progress while it waits, on PostgreSQL (see the SQLite twin): written only
// while the job is running at the writer's attempt, read only while it still is.
import type { Lease } from '../store.js';
import { NOW, type Queryable, type TimeParam } from './sql.js';

export async function setProgress(
  db: Queryable,
  now: TimeParam,
  lease: Lease,
  progress: string | null,
): Promise<boolean> {
  if (progress === null) {
    await db.query('DELETE FROM job_progress WHERE job_id = $1 AND attempt = $2', [
      lease.id,
      lease.attempt,
    ]);
    const { rows } = await db.query(
      `SELECT 1 FROM jobs WHERE id = $1 AND attempt = $2 AND status = 'running'`,
      [lease.id, lease.attempt],
    );
    return rows.length > 0;
  }
  const { rowCount } = await db.query(
    `INSERT INTO job_progress (job_id, attempt, progress, updated_at)
     SELECT id, attempt, $4, ${NOW} FROM jobs
     WHERE id = $2 AND attempt = $3 AND status = 'running'
     ON CONFLICT (job_id) DO UPDATE SET
       attempt = excluded.attempt, progress = excluded.progress, updated_at = excluded.updated_at`,
    [now, lease.id, lease.attempt, progress],
  );
  return (rowCount ?? 0) > 0;
}

export async function readProgress(
  db: Queryable,
  jobIds: readonly number[],
): Promise<Map<number, string>> {
  const { rows } = await db.query<{ id: number; progress: string }>(
    `SELECT p.job_id AS id, p.progress FROM job_progress p
     JOIN jobs j ON j.id = p.job_id AND j.attempt = p.attempt AND j.status = 'running'
     WHERE p.job_id = ANY($1::bigint[])`,
    [[...jobIds]],
  );
  return new Map(rows.map((r) => [Number(r.id), r.progress]));
}
