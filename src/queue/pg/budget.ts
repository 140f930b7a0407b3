// The cost cap of a batch (`proctor solve --max-cost`) on PostgreSQL, checked by each solve as
// it starts (see the SQLite twin, src/queue/sqlite/budget.ts). Below the cap a plain read
// decides; at the cap one transaction locks the batch row (so two hosts at the cap do not both
// cancel), sums the spend of the batch's done solves again and ends the batch's queued solves
// and the starting one (fenced on its lease) as cancelled with errorCode BUDGET. Running ones
// are left to finish.
import type { BudgetCheck, Lease } from '../store.js';
import { NOW, type Queryable, type TimeParam } from './sql.js';

// A solve's result records its cost as `costUsd` (null without prices, which adds nothing).
// The result is JSON text; a costUsd that is not a number counts as nothing, as SQLite's
// json_extract of a string would not add either.
const SPENT = `SELECT coalesce(sum(CASE WHEN jsonb_typeof(result::jsonb -> 'costUsd') = 'number'
    THEN (result::jsonb ->> 'costUsd')::double precision END), 0) AS spent
  FROM jobs WHERE batch_id = $1 AND kind = 'solve' AND status = 'done'`;

const END = `SET status = 'cancelled', finished_at = ${NOW}, updated_at = ${NOW},
    lease_owner = NULL, lease_expires_at = NULL, last_error = $2, error_code = 'BUDGET'`;

/** The batch's spend so far. */
export async function spent(db: Queryable, batchId: string): Promise<number> {
  const { rows } = await db.query<{ spent: number }>(SPENT, [batchId]);
  return Number(rows[0]?.spent ?? 0);
}

/** Inside a transaction: the spend, and the cancels once it has reached the cap. */
export async function stop(
  db: Queryable,
  batchId: string,
  capUsd: number,
  lease: Lease,
  now: TimeParam,
): Promise<BudgetCheck> {
  await db.query('SELECT 1 FROM batches WHERE id = $1 FOR UPDATE', [batchId]);
  const spentUsd = await spent(db, batchId);
  if (spentUsd < capUsd) return { spentUsd, stopped: false, cancelled: 0 };
  const error = `BUDGET: the batch has spent $${spentUsd.toFixed(4)}, reaching its cost cap of $${capUsd}`;
  const starting = await db.query(
    `UPDATE jobs ${END} WHERE id = $3 AND attempt = $4 AND status = 'running'`,
    [now, error, lease.id, lease.attempt],
  );
  // Locked in id order first, like every write that touches several rows.
  const queued = await db.query(
    `WITH q AS (SELECT id FROM jobs WHERE batch_id = $3 AND kind = 'solve' AND status = 'queued'
       ORDER BY id FOR UPDATE)
     UPDATE jobs j ${END} FROM q WHERE j.id = q.id`,
    [now, error, batchId],
  );
  return {
    spentUsd,
    stopped: true,
    cancelled: (starting.rowCount ?? 0) + (queued.rowCount ?? 0),
  };
}
