// A batch's jobs as compact rows on PostgreSQL (`listBatchJobs`): keyset-paged SELECTs (one
// status at a time, as SQLite's) of the columns a report reads, a solve's newest grade child
// joined in the same query, payload and result as their JSON text.
import type { JobStatus } from '../constants.js';
import { batchJobPage, type BatchJobPage } from '../sqlite/batch-jobs.js';
import type { BatchJobRow } from '../store.js';
import type { Queryable } from './sql.js';

export async function listBatchJobRows(
  db: Queryable,
  batchId: string,
  status: JobStatus,
  page: BatchJobPage = {},
): Promise<BatchJobRow[]> {
  const { after, limit } = batchJobPage(page);
  const { rows } = await db.query<BatchJobRow>(
    `SELECT j.id, j.kind, j.status, j.parent_id AS "parentId", j.payload, j.result,
       j.error_code AS "errorCode", j.started_at AS "startedAt", j.finished_at AS "finishedAt",
       j.outcome, c.id AS "childId", c.status AS "childStatus", c.result AS "childResult",
       c.error_code AS "childErrorCode", c.started_at AS "childStartedAt",
       c.finished_at AS "childFinishedAt", c.outcome AS "childOutcome"
     FROM jobs j
     LEFT JOIN jobs c ON j.kind = 'solve' AND c.id = (
       SELECT max(g.id) FROM jobs g WHERE g.parent_id = j.id AND g.kind = 'grade')
     WHERE j.batch_id = $1 AND j.status = $2 AND j.id > $3 ORDER BY j.id LIMIT $4`,
    [batchId, status, after, limit],
  );
  return rows;
}
