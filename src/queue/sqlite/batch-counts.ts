// Batch progress from the `batch_counts` row that SQLite triggers keep (the batch_counts
// migration): counts by status, first start and last finish, in one primary-key read however
// large the batch, instead of counting its jobs on every progress read. The recent-finish
// count walks the finished-time index from the window's start, so it costs the jobs finished
// in the window, not the batch. The table is not in schema.ts (drizzle never writes it), so
// this module reads it with its own prepared statements.
import type Database from 'better-sqlite3';
import type { StatusCounts } from '../store.js';
import { emptyCounts } from './list.js';

interface CountsRow {
  queued: number;
  running: number;
  done: number;
  failed: number;
  cancelled: number;
  firstStartedAt: number | null;
  lastFinishedAt: number | null;
}

export interface BatchCounts {
  counts: StatusCounts;
  firstStartedAt: number | null;
  lastFinishedAt: number | null;
  finishedInWindow: number;
}

export function createBatchCounts(sqlite: Database.Database) {
  const row = sqlite.prepare<[string], CountsRow>(
    'SELECT queued, running, done, failed, cancelled, first_started_at AS firstStartedAt, last_finished_at AS lastFinishedAt FROM batch_counts WHERE batch_id = ?',
  );
  // INDEXED BY: the planner would otherwise pick the batch index (an equality beats a range
  // without statistics) and scan every job of the batch.
  const recent = sqlite
    .prepare<[number, string], number>(
      'SELECT count(*) FROM jobs INDEXED BY jobs_finished WHERE finished_at >= ? AND batch_id = ?',
    )
    .pluck();
  return (batchId: string, since: number): BatchCounts => {
    const found = row.get(batchId);
    const counts = emptyCounts();
    if (found) {
      counts.queued = found.queued;
      counts.running = found.running;
      counts.done = found.done;
      counts.failed = found.failed;
      counts.cancelled = found.cancelled;
    }
    return {
      counts,
      firstStartedAt: found?.firstStartedAt ?? null,
      lastFinishedAt: found?.lastFinishedAt ?? null,
      finishedInWindow: recent.get(since, batchId) ?? 0,
    };
  };
}
