// A batch's jobs as compact rows, for `proctor report`: one prepared statement a keyset page
// (batch_id = ? AND status = ? AND id > ? ORDER BY id: the batch-status index, no sort), only
// the columns a report reads, a solve's grade child joined in, payload and result left as
// JSON text. No drizzle row mapping: at 100,000 jobs that mapping was the report's cost.
import type Database from 'better-sqlite3';
import { ProctorError } from '../../errors.js';
import type { JobStatus } from '../constants.js';
import { MAX_BATCH_JOB_PAGE, type BatchJobRow } from '../store.js';

export interface BatchJobPage {
  after?: number;
  limit?: number;
}

/** Checks a page request; USAGE for a limit or cursor out of range. */
export function batchJobPage(page: BatchJobPage): { after: number; limit: number } {
  const after = page.after ?? 0;
  const limit = page.limit ?? MAX_BATCH_JOB_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_BATCH_JOB_PAGE) {
    throw new ProctorError(
      'USAGE',
      `batch job page limit must be an integer from 1 to ${MAX_BATCH_JOB_PAGE}, got ${limit}`,
    );
  }
  if (!Number.isSafeInteger(after) || after < 0) {
    throw new ProctorError('USAGE', `batch job page: after must be a job id >= 0, got ${after}`);
  }
  return { after, limit };
}

export function createBatchJobs(sqlite: Database.Database) {
  // A solve's grade child is joined here rather than looked up per solve: one read for a
  // batch of 100,000 solves instead of 100,000. The correlated max(id) walks jobs_parent.
  const statement = sqlite.prepare<[string, JobStatus, number, number], BatchJobRow>(
    `SELECT j.id, j.kind, j.status, j.parent_id AS parentId, j.payload, j.result,
       j.error_code AS errorCode, j.started_at AS startedAt, j.finished_at AS finishedAt,
       j.outcome, c.id AS childId, c.status AS childStatus, c.result AS childResult,
       c.error_code AS childErrorCode, c.started_at AS childStartedAt,
       c.finished_at AS childFinishedAt, c.outcome AS childOutcome
     FROM jobs j
     LEFT JOIN jobs c ON j.kind = 'solve' AND c.id = (
       SELECT max(g.id) FROM jobs g WHERE g.parent_id = j.id AND g.kind = 'grade')
     WHERE j.batch_id = ? AND j.status = ? AND j.id > ? ORDER BY j.id LIMIT ?`,
  );
  return (batchId: string, status: JobStatus, page: BatchJobPage = {}): BatchJobRow[] => {
    const { after, limit } = batchJobPage(page);
    return statement.all(batchId, status, after, limit);
  };
}
