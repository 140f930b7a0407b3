// The cost cap of a batch (`proctor solve --max-cost`) on PostgreSQL (see the SQLite twin,
// src/queue/sqlite/budget.ts): the batch's spend is `batches.spent_usd`, drawn on by every
// metered answer with one atomic UPDATE … RETURNING, whichever host metered it (the row lock
// orders concurrent draws; each adds once and returns the sum with those before it).
//
// A starting solve's check runs in one transaction: the UPDATE that settles the spend with
// what the batch's done solves recorded also locks the batch row (so two hosts at the cap do
// not both cancel, and draws wait the few milliseconds it holds), and at the cap it ends the
// batch's queued solves and the starting one (fenced on its lease) as cancelled with
// errorCode BUDGET. Running ones are stopped by their model proxies, which read the spend
// before every request.
import { ProctorError } from '../../errors.js';
import type { BudgetCheck, Lease } from '../store.js';
import { NOW, type Queryable, type TimeParam } from './sql.js';

// A solve's result records its cost as `costUsd` (null without prices, which adds nothing).
// The result is JSON text; a costUsd that is not a number counts as nothing, as SQLite's
// json_extract of a string would not add either.
const DONE_SPENT = `SELECT coalesce(sum(CASE WHEN jsonb_typeof(result::jsonb -> 'costUsd') = 'number'
    THEN (result::jsonb ->> 'costUsd')::double precision END), 0)
  FROM jobs WHERE batch_id = $1 AND kind = 'solve' AND status = 'done'`;

const END = `SET status = 'cancelled', finished_at = ${NOW}, updated_at = ${NOW},
    lease_owner = NULL, lease_expires_at = NULL, last_error = $2, error_code = 'BUDGET'`;

function noBatch(batchId: string): ProctorError {
  return new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
}

/** The batch's spend now. */
export async function spent(db: Queryable, batchId: string): Promise<number> {
  const { rows } = await db.query<{ spent: number }>(
    'SELECT spent_usd AS spent FROM batches WHERE id = $1',
    [batchId],
  );
  const row = rows[0];
  if (row === undefined) throw noBatch(batchId);
  return Number(row.spent);
}

/** Adds `usd` to the batch's spend in one statement; the spend after it. */
export async function draw(db: Queryable, batchId: string, usd: number): Promise<number> {
  const { rows } = await db.query<{ spent: number }>(
    `UPDATE batches SET spent_usd = spent_usd + $2 WHERE id = $1 RETURNING spent_usd AS spent`,
    [batchId, usd],
  );
  const row = rows[0];
  if (row === undefined) throw noBatch(batchId);
  return Number(row.spent);
}

/** Inside a transaction: the settled spend, and the cancels once it has reached the cap. */
export async function check(
  db: Queryable,
  batchId: string,
  capUsd: number,
  lease: Lease,
  now: TimeParam,
): Promise<BudgetCheck> {
  const { rows } = await db.query<{ spent: number }>(
    `UPDATE batches SET spent_usd = GREATEST(spent_usd, (${DONE_SPENT}))
     WHERE id = $1 RETURNING spent_usd AS spent`,
    [batchId],
  );
  const row = rows[0];
  if (row === undefined) throw noBatch(batchId);
  const spentUsd = Number(row.spent);
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
