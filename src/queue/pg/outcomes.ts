// Reads over the outcome classes of a batch on PostgreSQL (see the SQLite twin,
// src/queue/sqlite/outcomes.ts): counts by class, and the jobs a retry re-runs. Both see only
// each job's current attempt: a job that a retry re-ran is superseded by it (the retry's
// idempotency key names the job it re-runs, and the unique key index finds it), and a
// finished solve counts as its grade (its child), whose class is the attempt's.
import { OUTCOME_CLASSES, type OutcomeClass } from '../constants.js';
import { RETRY_KEY_PREFIX, type OutcomeCounts } from '../store.js';
import { JOB_COLUMNS, type JobRecord, type Queryable } from './sql.js';

const child = (column: string) =>
  `(SELECT c.${column} FROM jobs c WHERE c.parent_id = j.id AND c.kind = 'grade' ORDER BY c.id DESC LIMIT 1)`;

/** The class of the attempt a batch job stands for: its own, or for a done solve its grade's. */
const CLASS = `COALESCE(j.outcome, CASE WHEN j.kind = 'solve' AND j.status = 'done' THEN ${child('outcome')} END)`;
const CURRENT = `NOT EXISTS (SELECT 1 FROM jobs r WHERE r.idempotency_key = '${RETRY_KEY_PREFIX}' || j.id)`;
const CANCELLED = `(j.status = 'cancelled' OR (j.kind = 'solve' AND j.status = 'done' AND ${child('status')} = 'cancelled'))`;

export async function countByOutcome(db: Queryable, batchId: string): Promise<OutcomeCounts> {
  const { rows } = await db.query<{ cls: OutcomeClass; n: number }>(
    `SELECT cls, count(*)::int AS n FROM (SELECT ${CLASS} AS cls FROM jobs j
       WHERE j.batch_id = $1 AND ${CURRENT}) classes
     WHERE cls IS NOT NULL GROUP BY cls`,
    [batchId],
  );
  const result = Object.fromEntries(OUTCOME_CLASSES.map((c) => [c, 0])) as Record<
    OutcomeClass,
    number
  >;
  for (const row of rows) result[row.cls] = Number(row.n);
  const superseded = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs j WHERE j.batch_id = $1 AND NOT ${CURRENT}`,
    [batchId],
  );
  return { ...result, superseded: Number(superseded.rows[0]?.n ?? 0) };
}

/** The batch's current jobs of class error (and cancelled ones, if asked), by id. */
export async function listRetryable(
  db: Queryable,
  batchId: string,
  cancelled: boolean,
): Promise<JobRecord[]> {
  const { rows } = await db.query<JobRecord>(
    `SELECT ${JOB_COLUMNS} FROM jobs j WHERE j.batch_id = $1 AND ${CURRENT}
       AND (${CLASS} = 'error' OR ($2::boolean AND ${CANCELLED})) ORDER BY j.id`,
    [batchId, cancelled],
  );
  return rows;
}
