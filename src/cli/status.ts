// `proctor status [JOB…] [--batch ID] [--json]`: counts by status, recent batches with rate
// and ETA, or the named jobs. Always bounded: at most MAX_PAGE jobs or batches.
import {
  JOB_STATUSES,
  MAX_PAGE,
  formatDuration,
  progressFigures,
  type Job,
  type JobStore,
  type StatusCounts,
} from '../queue/index.js';
import { parseJobIds, type CommandContext } from './context.js';
import { formatTable } from './table.js';

export interface StatusOptions {
  batch?: string;
  json?: boolean;
  limit: number;
}

function countsLine(counts: StatusCounts): string {
  return JOB_STATUSES.map((s) => `${counts[s]} ${s}`).join(', ');
}

function jobSummary(job: Job) {
  return {
    id: job.id,
    kind: job.kind,
    status: job.status,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    batchId: job.batchId,
    parentId: job.parentId,
    cancelRequested: job.cancelRequestedAt !== null,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    error: job.lastError,
    result: job.result,
  };
}

async function batchSummary(store: JobStore, batchId: string, now: number) {
  const progress = await store.batchProgress(batchId);
  const figures = progressFigures(progress, now);
  return { id: batchId, label: progress.batch.label, counts: progress.counts, ...figures };
}

export async function statusCommand(
  context: CommandContext,
  jobArgs: string[],
  options: StatusOptions,
): Promise<number> {
  const ids = parseJobIds(jobArgs);
  const { io, clock } = context;
  const store = context.openStore();
  try {
    const now = clock.now();
    if (ids.length > 0) {
      const jobs = await Promise.all(ids.slice(0, MAX_PAGE).map((id) => store.getJob(id)));
      const missing = ids.filter((_, i) => jobs[i] === undefined);
      const found = jobs.filter((j): j is Job => j !== undefined).map(jobSummary);
      if (options.json) {
        io.out(JSON.stringify({ jobs: found, missing }, null, 2));
      } else {
        if (found.length > 0)
          io.out(
            formatTable(
              ['JOB', 'KIND', 'STATUS', 'ATTEMPT', 'BATCH', 'DETAIL'],
              found.map((j) => [
                String(j.id),
                j.kind,
                j.status +
                  (j.cancelRequested && j.status === 'running' ? ' (cancel requested)' : ''),
                `${j.attempt}/${j.maxAttempts}`,
                j.batchId ?? '-',
                j.error ?? (j.result === null ? '' : JSON.stringify(j.result)).slice(0, 120),
              ]),
            ),
          );
        for (const id of missing) io.err(`proctor: no job ${id}`);
      }
      return 0;
    }

    if (options.batch !== undefined) {
      const summary = await batchSummary(store, options.batch, now);
      const jobs = await store.listJobs(
        { batchId: options.batch },
        { limit: options.limit, order: 'asc' },
      );
      if (options.json) {
        io.out(
          JSON.stringify(
            { batch: summary, jobs: jobs.items.map(jobSummary), nextCursor: jobs.nextCursor },
            null,
            2,
          ),
        );
      } else {
        io.out(
          `batch ${summary.id}${summary.label ? ` (${summary.label})` : ''}: ${summary.finished}/${summary.total} finished — ${countsLine(summary.counts)}`,
        );
        io.out(
          `rate ${rate(summary.ratePerMinute)}/min, ETA ${formatDuration(summary.etaSeconds)}`,
        );
        if (jobs.items.length > 0) {
          io.out(
            formatTable(
              ['JOB', 'KIND', 'STATUS', 'ATTEMPT', 'DETAIL'],
              jobs.items.map((j) => [
                String(j.id),
                j.kind,
                j.status,
                `${j.attempt}/${j.maxAttempts}`,
                (j.lastError ?? '').slice(0, 120),
              ]),
            ),
          );
        }
        if (jobs.nextCursor)
          io.out(`(first ${jobs.items.length} jobs shown; --json pages with a cursor)`);
      }
      return 0;
    }

    const counts = await store.countByStatus();
    const lastMinute = await store.finishedSince(now - 60_000);
    const page = await store.listBatches({ limit: options.limit });
    const batches = await Promise.all(page.items.map((b) => batchSummary(store, b.id, now)));
    if (options.json) {
      io.out(JSON.stringify({ counts, finishedLastMinute: lastMinute, batches }, null, 2));
    } else {
      io.out(`jobs: ${countsLine(counts)}; ${lastMinute} finished in the last minute`);
      if (batches.length > 0) {
        io.out(
          formatTable(
            [
              'BATCH',
              'LABEL',
              'FINISHED',
              'DONE',
              'FAILED',
              'CANCELLED',
              'RUNNING',
              'QUEUED',
              'RATE/MIN',
              'ETA',
            ],
            batches.map((b) => [
              b.id,
              b.label ?? '-',
              `${b.finished}/${b.total}`,
              String(b.counts.done),
              String(b.counts.failed),
              String(b.counts.cancelled),
              String(b.counts.running),
              String(b.counts.queued),
              rate(b.ratePerMinute),
              formatDuration(b.etaSeconds),
            ]),
          ),
        );
      }
    }
    return 0;
  } finally {
    await store.close();
  }
}

function rate(value: number | null): string {
  return value === null ? '-' : value >= 10 ? value.toFixed(0) : value.toFixed(1);
}
