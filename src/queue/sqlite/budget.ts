// The cost cap of a batch (`proctor solve --max-cost`), checked by each solve as it starts: one
// transaction sums the spend of the batch's finished solves and, once it has reached the cap,
// ends the batch's queued solves and the starting one as cancelled with errorCode BUDGET, so
// no solve of the batch starts after the cap is reached. Running ones are left to finish.
import type Database from 'better-sqlite3';
import type { BudgetCheck, Lease } from '../store.js';

// A solve's result records its cost as `costUsd` (null without prices, which adds nothing).
const SPENT = `
  SELECT coalesce(sum(json_extract(result, '$.costUsd')), 0) AS spent
  FROM jobs
  WHERE batch_id = ? AND kind = 'solve' AND status = 'done'`;

const END = `
  SET status = 'cancelled', finished_at = @now, updated_at = @now, lease_owner = NULL,
      lease_expires_at = NULL, last_error = @error, error_code = 'BUDGET'`;

export function createBudgetCheck(sqlite: Database.Database) {
  const spent = sqlite.prepare(SPENT).pluck();
  const cancelQueued = sqlite.prepare(
    `UPDATE jobs ${END} WHERE batch_id = @batch AND kind = 'solve' AND status = 'queued'`,
  );
  const endStarting = sqlite.prepare(
    `UPDATE jobs ${END} WHERE id = @id AND attempt = @attempt AND status = 'running'`,
  );
  const spentOf = (batchId: string) => Number(spent.get(batchId));
  return {
    /** The batch's spend so far. */
    spent: spentOf,
    /** Inside a write transaction: the spend, and the cancels once it has reached the cap. */
    stop: (batchId: string, capUsd: number, lease: Lease, now: number): BudgetCheck => {
      const spentUsd = spentOf(batchId);
      if (spentUsd < capUsd) return { spentUsd, stopped: false, cancelled: 0 };
      const error = `BUDGET: the batch has spent $${spentUsd.toFixed(4)}, reaching its cost cap of $${capUsd}`;
      const params = { now, error, batch: batchId, id: lease.id, attempt: lease.attempt };
      const starting = endStarting.run(params).changes;
      const cancelled = cancelQueued.run(params).changes;
      return { spentUsd, stopped: true, cancelled: cancelled + starting };
    },
  };
}
