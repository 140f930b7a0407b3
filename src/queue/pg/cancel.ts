// Cooperative cancel on PostgreSQL, as on SQLite: a queued job becomes cancelled at once; a
// running one gets cancel_requested_at, which its worker (on whichever host) sees at its next
// heartbeat or cancel poll. The rows are locked in id order first, so that a claim, a
// heartbeat or another cancel cannot change them between the read and the writes.
import type { CancelOutcome } from '../constants.js';
import { planCancel } from '../cancel-plan.js';
import { NOW, type Queryable, type TimeParam } from './sql.js';

const CHUNK = 500;

/** Runs inside a transaction. */
export async function cancelJobs(
  db: Queryable,
  ids: number[],
  now: TimeParam,
): Promise<Map<number, CancelOutcome>> {
  const outcomes = new Map<number, CancelOutcome>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const { rows } = await db.query<{
      id: number;
      status: string;
      cancelRequestedAt: number | null;
    }>(
      `SELECT id, status, cancel_requested_at AS "cancelRequestedAt" FROM jobs
       WHERE id = ANY($1) ORDER BY id FOR UPDATE`,
      [chunk],
    );
    const { queued, running } = planCancel(rows, outcomes);
    if (queued.length > 0) {
      await db.query(
        `UPDATE jobs SET status = 'cancelled', finished_at = ${NOW}, updated_at = ${NOW},
           last_error = 'cancelled before it started', error_code = 'CANCELLED'
         WHERE id = ANY($2) AND status = 'queued'`,
        [now, queued],
      );
    }
    if (running.length > 0) {
      await db.query(
        `UPDATE jobs SET cancel_requested_at = ${NOW}, updated_at = ${NOW}
         WHERE id = ANY($2) AND status = 'running'`,
        [now, running],
      );
    }
  }
  for (const id of ids) if (!outcomes.has(id)) outcomes.set(id, 'not_found');
  return outcomes;
}

export async function batchJobIds(db: Queryable, batchId: string): Promise<number[]> {
  const { rows } = await db.query<{ id: number }>(
    `SELECT id FROM jobs WHERE batch_id = $1 AND status IN ('queued', 'running') ORDER BY id`,
    [batchId],
  );
  return rows.map((r) => r.id);
}
