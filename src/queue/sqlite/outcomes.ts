// Reads over the outcome classes of a batch: counts by class, and the jobs a retry re-runs.
// Both see only each job's current attempt: a job that a retry re-ran is superseded by it
// (the retry's idempotency key names the job it re-runs, and the unique key index finds it),
// and a finished solve counts as its grade (its child), whose class is the attempt's.
import type Database from 'better-sqlite3';
import { OUTCOME_CLASSES, type OutcomeClass } from '../constants.js';
import { RETRY_KEY_PREFIX } from '../store.js';

const CHILD = `(SELECT c.%s FROM jobs c WHERE c.parent_id = j.id AND c.kind = 'grade' ORDER BY c.id DESC LIMIT 1)`;
const child = (column: string) => CHILD.replace('%s', column);

/** The class of the attempt a batch job stands for: its own, or for a done solve its grade's. */
const CLASS = `COALESCE(j.outcome, CASE WHEN j.kind = 'solve' AND j.status = 'done' THEN ${child('outcome')} END)`;
const CURRENT = `NOT EXISTS (SELECT 1 FROM jobs r WHERE r.idempotency_key = '${RETRY_KEY_PREFIX}' || j.id)`;
const CANCELLED = `(j.status = 'cancelled' OR (j.kind = 'solve' AND j.status = 'done' AND ${child('status')} = 'cancelled'))`;

export function createOutcomeOps(sqlite: Database.Database) {
  const counts = sqlite.prepare(
    `SELECT cls, count(*) AS n FROM (SELECT ${CLASS} AS cls FROM jobs j WHERE j.batch_id = ? AND ${CURRENT}) WHERE cls IS NOT NULL GROUP BY cls`,
  );
  const superseded = sqlite
    .prepare(`SELECT count(*) FROM jobs j WHERE j.batch_id = ? AND NOT ${CURRENT}`)
    .pluck();
  const retryable = sqlite
    .prepare(
      `SELECT j.id FROM jobs j WHERE j.batch_id = ? AND ${CURRENT} AND (${CLASS} = 'error' OR (? AND ${CANCELLED})) ORDER BY j.id`,
    )
    .pluck();

  return {
    counts(batchId: string): Record<OutcomeClass, number> & { superseded: number } {
      const result = Object.fromEntries(OUTCOME_CLASSES.map((c) => [c, 0])) as Record<
        OutcomeClass,
        number
      >;
      for (const row of counts.all(batchId) as Array<{ cls: OutcomeClass; n: number }>) {
        result[row.cls] = row.n;
      }
      return { ...result, superseded: superseded.get(batchId) as number };
    },

    /** Ids of the batch's current jobs of class error (and cancelled ones, if asked), by id. */
    retryable(batchId: string, cancelled: boolean): number[] {
      return retryable.all(batchId, cancelled ? 1 : 0) as number[];
    },
  };
}
