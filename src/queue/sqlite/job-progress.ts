// A running job's progress while it waits (JobStore.setProgress and jobProgress): one row per
// job in `job_progress`, written only while the job is running at the writer's attempt, and
// read only while it still is, so a row left by a crashed worker is never shown for the
// attempt after it.
import type Database from 'better-sqlite3';
import { checkProgress, checkProgressIds, type Lease } from '../store.js';

export function createProgressOps(sqlite: Database.Database) {
  // Prepared on first use, so that a store can be opened over a database of a migration before
  // this table (as tests of older databases do) and use everything else.
  let statements:
    | {
        upsert: Database.Statement;
        clear: Database.Statement;
        held: Database.Statement;
      }
    | undefined;
  const prepared = () =>
    (statements ??= {
      upsert: sqlite.prepare(
        `INSERT INTO job_progress (job_id, attempt, progress, updated_at)
         SELECT id, attempt, ?, ? FROM jobs WHERE id = ? AND attempt = ? AND status = 'running'
         ON CONFLICT (job_id) DO UPDATE SET
           attempt = excluded.attempt, progress = excluded.progress, updated_at = excluded.updated_at`,
      ),
      clear: sqlite.prepare('DELETE FROM job_progress WHERE job_id = ? AND attempt = ?'),
      held: sqlite
        .prepare(`SELECT 1 FROM jobs WHERE id = ? AND attempt = ? AND status = 'running'`)
        .pluck(),
    });
  return {
    /** Synchronous: the caller runs it in the write batcher. */
    set(lease: Lease, progress: string | null, now: number): boolean {
      checkProgress(progress);
      const { upsert, clear, held } = prepared();
      if (progress === null) {
        clear.run(lease.id, lease.attempt);
        return held.get(lease.id, lease.attempt) !== undefined;
      }
      return upsert.run(progress, now, lease.id, lease.attempt).changes > 0;
    },
    read(jobIds: readonly number[]): Map<number, string> {
      checkProgressIds(jobIds);
      if (jobIds.length === 0) return new Map();
      const rows = sqlite
        .prepare(
          `SELECT p.job_id AS id, p.progress AS progress FROM job_progress p
           JOIN jobs j ON j.id = p.job_id AND j.attempt = p.attempt AND j.status = 'running'
           WHERE p.job_id IN (${jobIds.map(() => '?').join(', ')})`,
        )
        .all(...jobIds) as { id: number; progress: string }[];
      return new Map(rows.map((r) => [r.id, r.progress]));
    },
  };
}
