// A batch's jobs as compact rows, for `proctor report`: one prepared statement a keyset page
// (batch_id = ? AND status = ? AND id > ? ORDER BY id: the batch-status index, no sort), only
// the columns a report reads, a solve's grade child added, payload and result left as
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
];

// A solve's newest grade child: its parent's id, then the child's columns.
type RawChild = [
  number,
  number,
  JobStatus,
  string | null,
  string | null,
  number | null,
  number | null,
  BatchJobRow['childOutcome'],
];

export function createBatchJobs(sqlite: Database.Database) {
  // Raw mode (arrays) and one object literal per row: better-sqlite3's own named-column
  // objects cost about twice as much at 100,000 rows (bench:report).
  const statement = sqlite
    .prepare<[string, JobStatus, number, number], RawRow>(
      `SELECT id, kind, status, parent_id, payload, result, error_code, started_at, finished_at,
         outcome
       FROM jobs WHERE batch_id = ? AND status = ? AND id > ? ORDER BY id LIMIT ?`,
    )
    .raw(true);
  // The grade children of a page's solves, in one read per page (not one per solve), and only
  // for a page that has solves: a LEFT JOIN on every row cost a grade batch about a third of
  // its read. The newest grade of each solve, by jobs_parent.
  const children = sqlite
    .prepare<[string], RawChild>(
      `SELECT parent_id, id, status, result, error_code, started_at, finished_at, outcome
       FROM jobs WHERE id IN (
         SELECT max(id) FROM jobs
         WHERE parent_id IN (SELECT value FROM json_each(?)) AND kind = 'grade'
         GROUP BY parent_id)`,
    )
    .raw(true);
  return (batchId: string, status: JobStatus, page: BatchJobPage = {}): BatchJobRow[] => {
    const { after, limit } = batchJobPage(page);
    const raw = statement.all(batchId, status, after, limit);
    const solves: number[] = [];
    for (const r of raw) if (r[1] === 'solve') solves.push(r[0]);
    const grades = new Map<number, RawChild>();
    if (solves.length > 0) {
      for (const c of children.all(JSON.stringify(solves))) grades.set(c[0], c);
    }
    const rows: BatchJobRow[] = new Array<BatchJobRow>(raw.length);
    for (let i = 0; i < raw.length; i++) {
      const r = raw[i] as RawRow;
      const c = grades.get(r[0]);
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
        childId: c ? c[1] : null,
        childStatus: c ? c[2] : null,
        childResult: c ? c[3] : null,
        childErrorCode: c ? c[4] : null,
        childStartedAt: c ? c[5] : null,
        childFinishedAt: c ? c[6] : null,
        childOutcome: c ? c[7] : null,
      };
    }
    return rows;
  };
}
