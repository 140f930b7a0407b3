// Reads what a report needs from the JobStore: the batch, every job of it (keyset pages of
// MAX_PAGE, so memory grows with the batch but no query does), and each solve's grade child
// (children carry no batch id; a solve has at most a few). Nothing SQLite-specific: any
// JobStore serves.
import { ProctorError } from '../errors.js';
import { JOB_STATUSES } from '../queue/constants.js';
import { MAX_PAGE, type Batch, type Job, type JobStore } from '../queue/store.js';
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

/**
 * Every job of a batch, one status at a time: each page then walks the (batch_id, status)
 * index in id order (its implicit rowid column), where a page over the whole batch would
 * sort the batch once per page. Statuses go in the order jobs move through them, so a job
 * that moves on while the pages are read is seen again rather than missed (kept once, by id).
 */
export async function batchJobs(store: JobStore, batchId: string): Promise<AttemptJob[]> {
  const jobs = new Map<number, AttemptJob>();
  for (const status of JOB_STATUSES) {
    let cursor: string | undefined;
    do {
      const page = await store.listJobs(
        { batchId, status },
        { limit: MAX_PAGE, order: 'asc', ...(cursor === undefined ? {} : { cursor }) },
      );
      for (const job of page.items) jobs.set(job.id, slim(job));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
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
