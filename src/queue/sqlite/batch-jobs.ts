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

// A page's row as better-sqlite3 hands it back in raw mode: the columns in SELECT order.
type RawRow = [
  number,
  BatchJobRow['kind'],
  JobStatus,
  number | null,
  string,
  string | null,
  string | null,
  number | null,
  number | null,
  BatchJobRow['outcome'],
  number | null,
  JobStatus | null,
  string | null,
  string | null,
  number | null,
  number | null,
  BatchJobRow['childOutcome'],
];

export function createBatchJobs(sqlite: Database.Database) {
  // A solve's grade child is joined here rather than looked up per solve: one read for a
  // batch of 100,000 solves instead of 100,000. The correlated max(id) walks jobs_parent.
  // Raw mode (arrays) and one object literal per row: better-sqlite3's own named-column
  // objects cost about twice as much at 100,000 rows (bench:report).
  const statement = sqlite
    .prepare<[string, JobStatus, number, number], RawRow>(
      `SELECT j.id, j.kind, j.status, j.parent_id, j.payload, j.result, j.error_code,
       j.started_at, j.finished_at, j.outcome, c.id, c.status, c.result, c.error_code,
       c.started_at, c.finished_at, c.outcome
     FROM jobs j
     LEFT JOIN jobs c ON j.kind = 'solve' AND c.id = (
       SELECT max(g.id) FROM jobs g WHERE g.parent_id = j.id AND g.kind = 'grade')
     WHERE j.batch_id = ? AND j.status = ? AND j.id > ? ORDER BY j.id LIMIT ?`,
    )
    .raw(true);
  return (batchId: string, status: JobStatus, page: BatchJobPage = {}): BatchJobRow[] => {
    const { after, limit } = batchJobPage(page);
    const raw = statement.all(batchId, status, after, limit);
    const rows: BatchJobRow[] = new Array<BatchJobRow>(raw.length);
    for (let i = 0; i < raw.length; i++) {
      const r = raw[i] as RawRow;
      rows[i] = {
        id: r[0],
        kind: r[1],
        status: r[2],
        parentId: r[3],
        payload: r[4],
        result: r[5],
        errorCode: r[6],
        startedAt: r[7],
        finishedAt: r[8],
        outcome: r[9],
        childId: r[10],
        childStatus: r[11],
        childResult: r[12],
        childErrorCode: r[13],
        childStartedAt: r[14],
        childFinishedAt: r[15],
        childOutcome: r[16],
      };
    }
    return rows;
  };
}
