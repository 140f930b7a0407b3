// Reads what a report needs from the JobStore: the batch, and every job of it in keyset pages
// of REPORT_PAGE (each solve's newest grade child joined into its row by the store, so
// one read per page however many solves), turned into report rows as the pages arrive: only
// the rows are kept, never the parsed results of the whole batch. Nothing SQLite-specific:
// any JobStore serves.
import { ProctorError } from '../errors.js';
import { JOB_STATUSES } from '../queue/constants.js';
import { MAX_BATCH_JOB_PAGE, type Batch, type BatchJobRow, type JobStore } from '../queue/store.js';
import { BaselineCollector, type BaselineRow } from './baseline.js';
import { summariseBaseline, type BaselineSummary } from './baseline-summary.js';
import { AttemptCollector, type AttemptJob, type ReportRow } from './rows.js';
import { summarise, type BatchSummary } from './summary.js';

/**
 * The page a report reads at a time (at most MAX_BATCH_JOB_PAGE). Small on purpose: a page's
 * payload and result texts are garbage once its rows are made, and a page of 1,000 dies young;
 * one of 10,000 outlived the young generation and was copied into the old one, which made
 * garbage collection a third of a 100,000-job report (bench:report).
 */
export const REPORT_PAGE = Math.min(1_000, MAX_BATCH_JOB_PAGE);

/**
 * What a batch holds: grades and solves (`grade`), baselines (`baseline`), or both (`mixed`:
 * its report has both sections). A batch of neither (empty, or validate jobs only) is `grade`,
 * as it always was.
 */
export type BatchKind = 'grade' | 'baseline' | 'mixed';

export interface LoadedBatch {
  batch: Batch;
  kind: BatchKind;
  /** The grade and solve attempts. */
  rows: ReportRow[];
  summary: BatchSummary;
  /** The baseline tasks, and their figures. */
  baselineRows: BaselineRow[];
  baselineSummary: BaselineSummary;
  /** The task ids of the suite the batch was enqueued from, when it recorded them. */
  suiteTasks: string[] | null;
}

function json(id: number, column: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ProctorError(
      'DB_UNREADABLE',
      `job ${id}: its stored ${column} is not JSON (${JSON.stringify(text.slice(0, 40))})`,
    );
  }
}

function jobOf(row: BatchJobRow): AttemptJob {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    payload: json(row.id, 'payload', row.payload),
    result: row.result === null ? null : json(row.id, 'result', row.result),
    errorCode: row.errorCode,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    parentId: row.parentId,
    outcome: row.outcome,
  };
}

function childOf(row: BatchJobRow): AttemptJob | undefined {
  if (row.childId === null || row.childStatus === null) return undefined;
  return {
    id: row.childId,
    kind: 'grade',
    status: row.childStatus,
    payload: {},
    result: row.childResult === null ? null : json(row.childId, 'result', row.childResult),
    errorCode: row.childErrorCode,
    startedAt: row.childStartedAt,
    finishedAt: row.childFinishedAt,
    parentId: row.id,
    outcome: row.childOutcome,
  };
}

/**
 * Every job of a batch, one status at a time, into `collector`: keyset pages of compact rows
 * (`listBatchJobs`: each page walks the (batch_id, status) index in id order, with no sort).
 * Statuses go in the order jobs move through them, so a job that moves on while the pages are
 * read is seen again rather than missed (the collector keeps the newest sighting by id, so a
 * job seen twice is one attempt whose later status wins). Returns how many solves' grades are
 * queued or running. A row whose stored JSON does not parse fails with DB_UNREADABLE naming
 * the job.
 */
async function collect(
  store: JobStore,
  batchId: string,
  collector: AttemptCollector,
  baselines: BaselineCollector,
): Promise<number> {
  const unfinishedChildren = new Set<number>();
  for (const status of JOB_STATUSES) {
    let after = 0;
    for (;;) {
      const page = await store.listBatchJobs(batchId, status, { after, limit: REPORT_PAGE });
      for (const row of page) {
        const child = childOf(row);
        if (child && (child.status === 'queued' || child.status === 'running')) {
          unfinishedChildren.add(child.id);
        }
        const job = jobOf(row);
        collector.add(job, child);
        baselines.add(job);
      }
      const last = page.at(-1);
      if (last === undefined || page.length < REPORT_PAGE) break;
      after = last.id;
    }
  }
  return unfinishedChildren.size;
}

export async function loadBatch(store: JobStore, batchId: string): Promise<LoadedBatch> {
  const batch = await store.getBatch(batchId);
  if (!batch) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
  const collector = new AttemptCollector(batchId);
  const baselines = new BaselineCollector(batchId);
  const unfinishedChildren = await collect(store, batchId, collector, baselines);
  const rows = collector.rows();
  const baselineRows = baselines.rows();
  const kind: BatchKind =
    baselineRows.length === 0 ? 'grade' : rows.length === 0 ? 'baseline' : 'mixed';
  // Kept by the store (SQLite: the batch_counts triggers): one row, not a scan of the batch.
  const progress = await store.batchProgress(batchId);
  // A solve's grade is not in the batch: its queued or running state counts here too.
  const unfinished = progress.counts.queued + progress.counts.running + unfinishedChildren;
  const suiteTasks = await store.batchSuite(batchId);
  // Made when first read: jsonl and csv print the rows alone, and the summary of a
  // 100,000-row batch (task classes, percentiles, pass@k) is about a tenth of its report.
  let summary: BatchSummary | undefined;
  let baselineSummary: BaselineSummary | undefined;
  return {
    batch,
    kind,
    rows,
    baselineRows,
    suiteTasks,
    get baselineSummary() {
      return (baselineSummary ??= summariseBaseline({
        batch: batchId,
        label: batch.label,
        rows: baselineRows,
      }));
    },
    get summary() {
      return (summary ??= summarise({
        batch: batchId,
        label: batch.label,
        rows,
        // Recorded by `solve` and grade --predictions; else tasks are counted from the jobs.
        suiteTasks,
        unfinishedJobs: unfinished,
      }));
    },
  };
}
