// A quarantine reaches every finished grade of its task, whichever came first, on PostgreSQL:
// the same marks as SQLite's (sqlite/quarantine.ts says why), in the completion's transaction.
// Under READ COMMITTED a baseline's transaction and a grade's running at once would each miss
// the other's uncommitted row, so both first take a transaction advisory lock on the task id:
// the second to take it starts its next statement after the first committed, and sees it.
import type { Queryable, TimeParam } from './sql.js';
import { NOW } from './sql.js';

/** The advisory lock namespace of task quarantines (two-key form: never a one-key lock). */
const TASK_LOCK_SPACE = 0x7175_6172; // "quar"

// Finished grades, and solves that failed (a solve that passed is judged by its grade), that
// name the task and its content in their result; locked in id order, as every write of
// several rows is here.
const MARK = (which: string) => `WITH marked AS (
    SELECT j.id, t.reason, t.job_id FROM jobs j JOIN tasks t
      ON t.task_id = (j.result::jsonb -> 'task' ->> 'id')
     AND t.content_hash = (j.result::jsonb -> 'task' ->> 'contentHash')
    WHERE j.status = 'done' AND j.kind IN ('grade', 'solve')
      AND (j.kind = 'grade' OR (j.result::jsonb ->> 'verdict') IS DISTINCT FROM 'PASS')
      AND j.outcome IS DISTINCT FROM 'invalid_task'
      AND t.validity = 'quarantined' AND ${which}
    ORDER BY j.id FOR UPDATE OF j)
  UPDATE jobs j SET outcome = 'invalid_task', updated_at = ${NOW},
    result = jsonb_set(j.result::jsonb, '{quarantined}',
      jsonb_build_object('reason', marked.reason, 'job', marked.job_id))::text
  FROM marked WHERE j.id = marked.id`;

const OF_TASK = MARK('t.task_id = $2 AND t.content_hash = $3');
const OF_JOB = MARK('j.id = $2');

/** Serialises the quarantine marks of one task id until the transaction ends. */
export async function lockTask(db: Queryable, taskId: string): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(${TASK_LOCK_SPACE}, hashtext($1))`, [taskId]);
}

/** After a quarantine of (taskId, contentHash) is recorded: marks its finished grades. */
export async function markTask(
  db: Queryable,
  taskId: string,
  contentHash: string,
  now: TimeParam,
): Promise<void> {
  await db.query(OF_TASK, [now, taskId, contentHash]);
}

/** After a grade or solve completed: marks it when its task is already quarantined. */
export async function markJob(db: Queryable, id: number, now: TimeParam): Promise<void> {
  await db.query(OF_JOB, [now, id]);
}

/** The task id a grade's or solve's result names, if any. */
export function resultTaskId(result: unknown): string | undefined {
  const task = (result as { task?: { id?: unknown } } | null)?.task;
  return typeof task?.id === 'string' ? task.id : undefined;
}
