// What a baseline sweep (`proctor baseline SUITE --gold --repeat N`) came to: one row per task
// (its newest baseline job: validity, reason, flaky tests, times, image), the batch's figures
// (counts by validity and by reason, the tests most often flaky, the slowest tasks, the images
// and the time spent getting them), and the comparison of two sweeps (which tasks changed
// validity or reason, and why). Pure: jobs in, rows and figures out.
import { basename } from 'node:path';
import type { Job } from '../queue/store.js';
import type { AttemptJob } from './rows.js';
import { baselineOf, imageIdentity, payloadOf } from './stored.js';

/** valid / quarantined as the baseline decided; error: the job failed (no decision). */
export type Validity = 'valid' | 'quarantined' | 'error';

export interface BaselineRow {
  batch: string;
  task: string;
  instanceId: string | null;
  job: number;
  /** Earlier baseline jobs of the same task in the batch (retries), oldest first. */
  supersededJobIds: number[];
  status: Job['status'];
  /** Null while queued or running, and when cancelled. */
  validity: Validity | null;
  /** The baseline's reason (PASS, FLAKY, GOLD_FAILED, …), else the job's error code. */
  reason: string | null;
  detail: string | null;
  /** Declared IDs that flipped between the repeated runs. */
  flakyTests: string[];
  /** Baseline runs (`--repeat N`), and the gold patch's verdict when it was graded. */
  runs: number | null;
  gold: 'PASS' | 'FAIL' | null;
  testsHash: string | null;
  /** The manifest digest, or `local_build:<id>`. */
  image: string | null;
  /** Time to get the image (build, pull or find), ms: the result's `image` step. */
  imageMs: number | null;
  /** started → finished of the job, ms. */
  jobMs: number | null;
  phaseMs: Record<string, number>;
  startedAt: number | null;
  finishedAt: number | null;
  /** Not part of the output: the bundle folder. */
  bundle: string | null;
}

/**
 * The IDs a FLAKY detail names, for a result written before results recorded `flaky`: only
 * the first few of each phase (the detail shortens the rest to "… and N more").
 */
export function flakyFromDetail(detail: string): string[] {
  const ids: string[] = [];
  for (const part of detail.split('; ')) {
    const m = /^(?:existing|hidden) tests that flipped: (.*)$/.exec(part);
    if (!m?.[1]) continue;
    for (const id of m[1].replace(/, … and \d+ more$/, '').split(', ')) ids.push(id);
  }
  return [...new Set(ids)];
}

function rowOf(batch: string, task: string, job: AttemptJob): BaselineRow {
  const result = baselineOf(job.result);
  const payload = payloadOf(job.payload);
  const done = job.status === 'done' && result !== null;
  let validity: Validity | null = null;
  if (done) validity = result.validity;
  else if (job.status === 'failed' || job.status === 'done') validity = 'error';
  const jobMs =
    job.startedAt != null && job.finishedAt != null
      ? Math.max(0, job.finishedAt - job.startedAt)
      : null;
  return {
    batch,
    task,
    instanceId: result?.task?.source?.instance_id ?? null,
    job: job.id,
    supersededJobIds: [],
    status: job.status,
    validity,
    reason: done ? result.reason : (job.errorCode ?? null),
    detail: result?.detail ?? null,
    flakyTests:
      result?.flaky ?? (result?.reason === 'FLAKY' ? flakyFromDetail(result.detail ?? '') : []),
    runs: result?.runs?.length ?? null,
    gold: result?.gold?.verdict ?? null,
    testsHash: result?.testsHash ?? null,
    image: imageIdentity(result),
    imageMs: result?.timings?.['image'] ?? null,
    jobMs,
    phaseMs: result?.timings ?? {},
    startedAt: job.startedAt ?? null,
    finishedAt: job.finishedAt ?? null,
    bundle: payload.bundle ?? null,
  };
}

/**
 * A batch's baseline rows as its jobs arrive (`add`; other kinds are ignored): one per task,
 * its newest job, the others listed as superseded. A job with no result yet is keyed by the
 * task id another job of its bundle recorded, else by its bundle folder's name.
 */
export class BaselineCollector {
  private readonly byTask = new Map<string, { row: BaselineRow; earlier: number[] }>();
  private readonly waiting: AttemptJob[] = [];
  private readonly taskOfBundle = new Map<string, string>();

  constructor(private readonly batch: string) {}

  add(job: AttemptJob): void {
    if (job.kind !== 'baseline') return;
    const taskId = baselineOf(job.result)?.task?.id;
    const bundle = payloadOf(job.payload).bundle;
    if (taskId === undefined) {
      this.waiting.push(job);
      return;
    }
    if (bundle !== undefined) this.taskOfBundle.set(bundle, taskId);
    this.keep(taskId, job);
  }

  private keep(task: string, job: AttemptJob) {
    const seen = this.byTask.get(task);
    if (!seen) {
      this.byTask.set(task, { row: rowOf(this.batch, task, job), earlier: [] });
    } else if (seen.row.job < job.id) {
      seen.earlier.push(seen.row.job);
      seen.row = rowOf(this.batch, task, job);
    } else if (seen.row.job > job.id) seen.earlier.push(job.id);
    // The same job seen again (it moved on while the pages were read): the later sighting wins.
    else seen.row = rowOf(this.batch, task, job);
  }

  /** The rows, sorted by task; the collector is spent after this. */
  rows(): BaselineRow[] {
    for (const job of this.waiting) {
      const bundle = payloadOf(job.payload).bundle;
      const task =
        bundle === undefined
          ? `job-${job.id}`
          : (this.taskOfBundle.get(bundle) ?? basename(bundle));
      this.keep(task, job);
    }
    this.waiting.length = 0;
    const rows = [...this.byTask.values()].map(({ row, earlier }) => {
      row.supersededJobIds = [...new Set(earlier)].sort((a, b) => a - b);
      return row;
    });
    return rows.sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
  }
}
