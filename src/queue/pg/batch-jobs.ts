// A batch's jobs as compact rows on PostgreSQL (`listBatchJobs`): keyset-paged SELECTs (one status at a time, as SQLite's) of
// the columns a report reads, payload and result as their JSON text.
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
    `SELECT id, kind, status, parent_id AS "parentId", payload, result,
       error_code AS "errorCode", started_at AS "startedAt", finished_at AS "finishedAt"
     FROM jobs WHERE batch_id = $1 AND status = $2 AND id > $3 ORDER BY id LIMIT $4`,
    [batchId, status, after, limit],
  );
  return rows;
}
