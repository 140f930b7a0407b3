// Task validity as baselines left it: the latest judgement of each task id.
import type Database from 'better-sqlite3';
import { MAX_PAGE, type TaskValidity } from '../store.js';

// The newest row of each task id (ties broken by content hash, so the answer is stable).
const LATEST = `
  SELECT task_id AS taskId, content_hash AS contentHash, bundle_path AS bundlePath, validity,
         reason, detail, job_id AS jobId, checked_at AS checkedAt
  FROM (
    SELECT *, row_number() OVER (
      PARTITION BY task_id ORDER BY checked_at DESC, content_hash DESC
    ) AS n
    FROM tasks
  )
  WHERE n = 1`;

export function taskValidity(
  sqlite: Database.Database,
  limit: number,
): { tasks: TaskValidity[]; counts: { valid: number; quarantined: number } } {
  const bounded = Math.max(1, Math.min(MAX_PAGE, Math.floor(limit)));
  const tasks = sqlite
    .prepare(`${LATEST} ORDER BY checkedAt DESC, taskId LIMIT ?`)
    .all(bounded) as TaskValidity[];
  const counts = { valid: 0, quarantined: 0 };
  const rows = sqlite
    .prepare(`SELECT validity, count(*) AS n FROM (${LATEST}) GROUP BY validity`)
    .all() as Array<{ validity: 'valid' | 'quarantined'; n: number }>;
  for (const { validity, n } of rows) counts[validity] = n;
  return { tasks, counts };
}

export function taskJudgement(
  sqlite: Database.Database,
  taskId: string,
  contentHash: string,
): TaskValidity | undefined {
  return sqlite
    .prepare(
      `SELECT task_id AS taskId, content_hash AS contentHash, bundle_path AS bundlePath, validity,
              reason, detail, job_id AS jobId, checked_at AS checkedAt
       FROM tasks WHERE task_id = ? AND content_hash = ?`,
    )
    .get(taskId, contentHash) as TaskValidity | undefined;
}
