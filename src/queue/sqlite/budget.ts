// The cost cap of a batch (`proctor solve --max-cost`). The batch's spend is its own column,
// `batches.spent_usd`: every metered model answer of its solves draws on it with one atomic
// UPDATE … RETURNING (drawCost), whichever process metered it, and every model request reads
// it first (batchSpent), so the solves of a batch stop together at the cap in any process.
//
// Each solve checks the cap as it starts (check): one write transaction settles the spend with
// what the batch's done solves recorded (a batch begun before the column existed), and once
// it has reached the cap, ends the batch's queued solves and the starting one as cancelled with
// errorCode BUDGET, so no solve of the batch starts after the cap is reached.
import type Database from 'better-sqlite3';
import { ProctorError } from '../../errors.js';
import type { BudgetCheck, Lease } from '../store.js';

// A solve's result records its cost as `costUsd` (null without prices, which adds nothing).
const DONE_SPENT = `SELECT coalesce(sum(json_extract(result, '$.costUsd')), 0)
  FROM jobs WHERE batch_id = @batch AND kind = 'solve' AND status = 'done'`;

const SETTLE = `UPDATE batches SET spent_usd = max(spent_usd, (${DONE_SPENT}))
  WHERE id = @batch RETURNING spent_usd`;

// One statement: the read of the spend and its write cannot be split by another writer.
const DRAW = `UPDATE batches SET spent_usd = spent_usd + @usd WHERE id = @batch RETURNING spent_usd`;

const END = `
  SET status = 'cancelled', finished_at = @now, updated_at = @now, lease_owner = NULL,
      lease_expires_at = NULL, last_error = @error, error_code = 'BUDGET'`;

function noBatch(batchId: string): ProctorError {
  return new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
}

// Statements are prepared on first use: a store opened on a database migrated only to an earlier
// version (before spent_usd) must still open, and the column is there once the store migrates.
function lazy<T>(make: () => T): () => T {
  let made: T | undefined;
  return () => (made ??= make());
}

export function createBudgetOps(sqlite: Database.Database) {
  const settle = lazy(() => sqlite.prepare<{ batch: string }, number>(SETTLE).pluck());
  const draw = lazy(() => sqlite.prepare<{ batch: string; usd: number }, number>(DRAW).pluck());
  const read = lazy(() =>
    sqlite.prepare<[string], number>('SELECT spent_usd FROM batches WHERE id = ?').pluck(),
  );
  const cancelQueued = lazy(() =>
    sqlite.prepare(
      `UPDATE jobs ${END} WHERE batch_id = @batch AND kind = 'solve' AND status = 'queued'`,
    ),
  );
  const endStarting = lazy(() =>
    sqlite.prepare(
      `UPDATE jobs ${END} WHERE id = @id AND attempt = @attempt AND status = 'running'`,
    ),
  );
  return {
    /** The batch's spend now. */
    spent(batchId: string): number {
      const spent = read().get(batchId);
      if (spent === undefined) throw noBatch(batchId);
      return spent;
    },
    /** Inside a write transaction: adds `usd` to the batch's spend; the spend after it. */
    draw(batchId: string, usd: number): number {
      const spent = draw().get({ batch: batchId, usd });
      if (spent === undefined) throw noBatch(batchId);
      return spent;
    },
    /** Inside a write transaction: the settled spend, and the cancels once it reached the cap. */
    check(batchId: string, capUsd: number, lease: Lease, now: number): BudgetCheck {
      const spentUsd = settle().get({ batch: batchId });
      if (spentUsd === undefined) throw noBatch(batchId);
      if (spentUsd < capUsd) return { spentUsd, stopped: false, cancelled: 0 };
      const error = `BUDGET: the batch has spent $${spentUsd.toFixed(4)}, reaching its cost cap of $${capUsd}`;
      const params = { now, error, batch: batchId, id: lease.id, attempt: lease.attempt };
      const starting = endStarting().run(params).changes;
      const cancelled = cancelQueued().run(params).changes;
      return { spentUsd, stopped: true, cancelled: cancelled + starting };
    },
  };
}
