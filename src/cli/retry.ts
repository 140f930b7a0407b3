// `proctor retry --batch ID [--cancelled] [--wait] [--json]`: runs again what the machine
// broke. The batch's current jobs of class `error` (a solve whose grade errored included) and,
// with --cancelled, its cancelled ones (or whose grade was cancelled) are enqueued anew in the
// same batch, each with `retryOf` naming the job it re-runs; resolved and unresolved jobs never
// are. A solve retried solves again (and is graded); a grade retried grades the same candidate.
// Each retry's idempotency key is the retried job's id, so retrying again without new errors
// adds nothing, and the job it re-ran no longer counts (see `status --batch`).
// Exit: 0 when nothing needed a retry or (with --wait) no retried job ended in error; 1 when
// one did; 2 for an unknown batch; 130 when interrupted.
import { ProctorError } from '../errors.js';
import { createLogger } from '../logger.js';
import { retryKey, type EnqueueRequest, type Job, type JobStore } from '../queue/index.js';
import { createRuntime } from '../workers/index.js';
import type { CommandContext } from './context.js';
import { formatTable } from './table.js';
import { waitForJobs } from './wait.js';

export interface RetryOptions {
  batch: string;
  cancelled?: boolean;
  wait?: boolean;
  json?: boolean;
}

/** The same request again, as a new job that names the one it re-runs. */
export function retryRequest(job: Job): EnqueueRequest {
  const payload = { ...(job.payload as Record<string, unknown>), retryOf: job.id };
  return {
    kind: job.kind,
    payload,
    priority: job.priority,
    maxAttempts: job.maxAttempts,
    idempotencyKey: retryKey(job.id),
  };
}

const taskOf = (job: Job): string => {
  const task = (job.result as { task?: { id?: unknown } } | null)?.task?.id;
  if (typeof task === 'string') return task;
  const bundle = (job.payload as { bundle?: unknown }).bundle;
  return typeof bundle === 'string' ? bundle : '?';
};

/** A job's class, or for a finished solve its latest grade's (waiting for it when asked). */
async function classOf(
  store: JobStore,
  job: Job,
  waitGrade: (id: number) => Promise<Job | undefined>,
): Promise<{ outcome: string | null; status: string }> {
  if (job.kind !== 'solve' || job.status !== 'done' || job.outcome !== null) {
    return { outcome: job.outcome, status: job.status };
  }
  const [child] = (await store.listJobs({ kind: 'grade', parentId: job.id }, { limit: 1 })).items;
  if (!child) return { outcome: null, status: 'done' };
  const grade = await waitGrade(child.id);
  return { outcome: grade?.outcome ?? null, status: grade?.status ?? 'missing' };
}

export async function retryCommand(
  context: CommandContext,
  options: RetryOptions,
): Promise<number> {
  const { io, config } = context;
  const runtime = createRuntime(config, context.clock, createLogger({ level: 'warn' }));
  try {
    const { store } = runtime;
    const retryable = await store.listRetryable(options.batch, {
      cancelled: options.cancelled === true,
    });
    if (retryable.length === 0) {
      if (options.json) io.out(JSON.stringify({ batch: options.batch, retried: [] }, null, 2));
      else io.out(`batch ${options.batch}: nothing to retry`);
      return 0;
    }
    const result = await store.enqueueBatch({
      batchId: options.batch,
      jobs: retryable.map(retryRequest),
    });
    if (result.batch === null) throw new ProctorError('INTERNAL', 'the batch vanished');
    const pairs = retryable.map((job, i) => ({ job, retry: result.jobIds[i] as number }));
    if (!options.wait) {
      if (options.json) {
        io.out(
          JSON.stringify(
            {
              batch: options.batch,
              total: result.batch.total,
              retried: pairs.map((p) => ({ job: p.job.id, retry: p.retry, task: taskOf(p.job) })),
            },
            null,
            2,
          ),
        );
      } else {
        for (const p of pairs)
          io.out(`job ${p.job.id} (${p.job.kind} of ${taskOf(p.job)}): retried as job ${p.retry}`);
        io.out(
          `batch ${options.batch}: ${result.inserted} job(s) enqueued again; ${result.batch.total} jobs in the batch`,
        );
      }
      return 0;
    }
    const waited = await waitForJobs(
      context,
      runtime,
      { batchId: options.batch, label: 'retry', verdictNames: { PASS: 'PASS', FAIL: 'FAIL' } },
      { progress: !options.json, isTty: process.stderr.isTTY === true },
    );
    if (waited.interrupted) return 130;
    const byId = new Map(waited.jobs.map((j) => [j.id, j]));
    let interrupted = false;
    const waitGrade = async (id: number) => {
      const graded = await waitForJobs(
        context,
        runtime,
        { jobId: id, label: 'grade', verdictNames: { PASS: 'PASS', FAIL: 'FAIL' } },
        { progress: false, isTty: false },
      );
      interrupted ||= graded.interrupted;
      return graded.jobs[0];
    };
    const rows = [];
    for (const p of pairs) {
      const job = byId.get(p.retry) ?? (await store.getJob(p.retry));
      if (!job) throw new ProctorError('JOB_NOT_FOUND', `job ${p.retry} disappeared`);
      const { outcome, status } = await classOf(store, job, waitGrade);
      if (interrupted) return 130;
      const r = job.result as { reason?: string; detail?: string } | null;
      rows.push({
        job: p.job.id,
        retry: p.retry,
        kind: job.kind,
        task: taskOf(job),
        status,
        outcome,
        reason: r?.reason ?? job.errorCode ?? null,
        detail: r?.detail ?? job.lastError ?? '',
      });
    }
    const errors = rows.filter((r) => r.outcome === 'error' || r.outcome === null).length;
    if (options.json) {
      io.out(JSON.stringify({ batch: options.batch, retried: rows }, null, 2));
    } else {
      io.out(
        formatTable(
          ['JOB', 'RETRY', 'KIND', 'TASK', 'CLASS', 'REASON', 'DETAIL'],
          rows.map((r) => [
            String(r.job),
            String(r.retry),
            r.kind,
            r.task,
            r.outcome ?? r.status,
            r.reason ?? '-',
            r.detail.slice(0, 100),
          ]),
        ),
      );
      io.out(
        `batch ${options.batch}: ${rows.length} retried, ${rows.length - errors} scored, ${errors} still not (proctor retry --batch ${options.batch} again)`,
      );
    }
    return errors > 0 ? 1 : 0;
  } finally {
    await runtime.close();
  }
}
