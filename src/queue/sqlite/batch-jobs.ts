// A batch's jobs as compact rows, for `proctor report`: one prepared statement a keyset page
// (batch_id = ? AND status = ? AND id > ? ORDER BY id: the batch-status index, no sort), only the columns a report reads, payload and result
// left as JSON text. No drizzle row mapping: at 100,000 jobs that mapping was the report's cost.
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
  const statement = sqlite.prepare<[string, JobStatus, number, number], BatchJobRow>(
    `SELECT id, kind, status, parent_id AS parentId, payload, result, error_code AS errorCode,
       started_at AS startedAt, finished_at AS finishedAt
     FROM jobs WHERE batch_id = ? AND status = ? AND id > ? ORDER BY id LIMIT ?`,
  );
  return (batchId: string, status: JobStatus, page: BatchJobPage = {}): BatchJobRow[] => {
    const { after, limit } = batchJobPage(page);
    return statement.all(batchId, status, after, limit);
  };
}
