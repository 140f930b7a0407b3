// Reads what a report needs from the JobStore: the batch, every job of it (keyset pages of
// MAX_PAGE, so memory grows with the batch but no query does), and each solve's grade child
// (children carry no batch id; a solve has at most a few). Nothing SQLite-specific: any
// JobStore serves.
import { ProctorError } from '../errors.js';
import { JOB_STATUSES } from '../queue/constants.js';
import {
  MAX_BATCH_JOB_PAGE,
  type Batch,
  type BatchJobRow,
  type Job,
  type JobStore,
} from '../queue/store.js';
import { attemptRows, type AttemptJob, type ReportRow } from './rows.js';
import { summarise, type BatchSummary } from './summary.js';

export interface LoadedBatch {
  batch: Batch;
  rows: ReportRow[];
  summary: BatchSummary;
}

const slim = (job: Job): AttemptJob => ({
  id: job.id,
  kind: job.kind,
  status: job.status,
  payload: job.payload,
  result: job.result,
  errorCode: job.errorCode,
  startedAt: job.startedAt,
  finishedAt: job.finishedAt,
  parentId: job.parentId,
});

function json(row: BatchJobRow, column: 'payload' | 'result', text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProctorError(
      'DB_UNREADABLE',
      `job ${row.id}: its stored ${column} is not JSON (${JSON.stringify(text.slice(0, 40))})`,
    );
  }
}

/**
 * Every job of a batch, one status at a time: keyset pages of compact rows (`listBatchJobs`:
 * each page walks the (batch_id, status) index in id order, with no sort), each payload and
 * result parsed once here. Statuses go in the order jobs move through them, so a job that
 * moves on while the pages are read is seen again rather than missed (kept once, by id). A
 * row whose stored JSON does not parse fails the report with DB_UNREADABLE naming the job.
 */
export async function batchJobs(store: JobStore, batchId: string): Promise<AttemptJob[]> {
  const jobs = new Map<number, AttemptJob>();
  for (const status of JOB_STATUSES) {
    let after = 0;
    for (;;) {
      const page = await store.listBatchJobs(batchId, status, { after, limit: MAX_BATCH_JOB_PAGE });
      for (const row of page) {
        jobs.set(row.id, {
          id: row.id,
          kind: row.kind,
          status: row.status,
          payload: json(row, 'payload', row.payload),
          result: row.result === null ? null : json(row, 'result', row.result),
          errorCode: row.errorCode,
          startedAt: row.startedAt,
          finishedAt: row.finishedAt,
          parentId: row.parentId,
        });
      }
      const last = page.at(-1);
      if (last === undefined || page.length < MAX_BATCH_JOB_PAGE) break;
      after = last.id;
    }
  }
  return [...jobs.values()];
}

/** Each passed solve's newest grade child. */
async function gradeChildren(store: JobStore, jobs: readonly AttemptJob[]) {
  const children = new Map<number, AttemptJob>();
  for (const job of jobs) {
    if (job.kind !== 'solve' || job.status !== 'done') continue;
    const page = await store.listJobs({ parentId: job.id, kind: 'grade' }, { limit: 1 });
    const child = page.items[0];
    if (child) children.set(job.id, slim(child));
  }
  return children;
}

export async function loadBatch(store: JobStore, batchId: string): Promise<LoadedBatch> {
  const batch = await store.getBatch(batchId);
  if (!batch) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
  const jobs = await batchJobs(store, batchId);
  const children = await gradeChildren(store, jobs);
  const rows = attemptRows(batchId, jobs, children);
  const progress = await store.batchProgress(batchId);
  // A solve's grade is not in the batch: its queued or running state counts here too.
  let unfinished = progress.counts.queued + progress.counts.running;
  for (const child of children.values()) {
    if (child.status === 'queued' || child.status === 'running') unfinished++;
  }
  const summary = summarise({
    batch: batchId,
    label: batch.label,
    rows,
    // The batch's suite is not recorded on this branch: tasks are counted from its jobs.
    suiteTasks: null,
    unfinishedJobs: unfinished,
  });
  return { batch, rows, summary };
}
