// Batch progress on PostgreSQL from the striped `batch_counts` rows that statement triggers
// keep (drizzle-pg/0003_batch_counts.sql): counts by status, first start and last finish as
// the sums, min and max over at most 16 rows per batch, however large the batch, instead of
// counting its jobs on every progress read. The recent-finish count walks the finished-time
// index from the window's start, so it costs the jobs finished in the window, not the batch
// (as on SQLite, src/queue/sqlite/batch-counts.ts).
import type { StatusCounts } from '../store.js';
import { NOW, type Queryable, type TimeParam } from './sql.js';

export interface BatchCounts {
  counts: StatusCounts;
  firstStartedAt: number | null;
  lastFinishedAt: number | null;
  finishedInWindow: number;
}

const READ = `SELECT coalesce(sum(queued), 0)::int AS queued, coalesce(sum(running), 0)::int AS running,
    coalesce(sum(done), 0)::int AS done, coalesce(sum(failed), 0)::int AS failed,
    coalesce(sum(cancelled), 0)::int AS cancelled,
    min(first_started_at) AS "firstStartedAt", max(last_finished_at) AS "lastFinishedAt",
    (SELECT count(*)::int FROM jobs
      WHERE finished_at >= ${NOW} - $3 AND batch_id = $2) AS "finishedInWindow"
  FROM batch_counts WHERE batch_id = $2`;

export async function readBatchCounts(
  db: Queryable,
  batchId: string,
  windowMs: number,
  now: TimeParam,
): Promise<BatchCounts> {
  const { rows } = await db.query<StatusCounts & Omit<BatchCounts, 'counts'>>(READ, [
    now,
    batchId,
    windowMs,
  ]);
  const row = rows[0];
  return {
    counts: {
      queued: row?.queued ?? 0,
      running: row?.running ?? 0,
      done: row?.done ?? 0,
      failed: row?.failed ?? 0,
      cancelled: row?.cancelled ?? 0,
    },
    firstStartedAt: row?.firstStartedAt ?? null,
    lastFinishedAt: row?.lastFinishedAt ?? null,
    finishedInWindow: row?.finishedInWindow ?? 0,
  };
}
