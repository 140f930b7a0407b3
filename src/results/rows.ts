// One report row per attempt of a batch: the attempt is (task id, sample), and when several
// jobs share it (retries recorded in the same batch) the one with the highest id wins. A
// solve's row takes its grade child's verdict and class; its tokens and cost are the solve's.
// Pure: the jobs come in, the rows go out, so the rules are tested without a database.
import { basename } from 'node:path';
import type { Job } from '../queue/store.js';
import { outcomeOf, type OutcomeClass } from './outcome.js';
import {
  gradeOf,
  imageIdentity,
  payloadOf,
  solveOf,
  type StoredGrade,
  type StoredPayload,
  type StoredSolve,
} from './stored.js';

export interface Tokens {
  input: number;
  cachedInput: number;
  output: number;
}

export interface ReportRow {
  batch: string;
  task: string;
  instanceId: string | null;
  /** The sample: 1..K of `--attempts K`. */
  attempt: number;
  /** The jobs of this attempt: the solve then its grade, or the grade alone. */
  jobIds: number[];
  /** Earlier jobs of the same attempt that a retry superseded, oldest first. */
  supersededJobIds: number[];
  /** The row's job status: the grade's when it has one, else the solve's. */
  status: Job['status'];
  /** Null while the attempt is queued or running, and for a cancelled one. */
  class: OutcomeClass | null;
  verdict: 'PASS' | 'FAIL' | null;
  reason: string | null;
  errorCode: string | null;
  testsHash: string | null;
  image: string | null;
  candidateSha256: string | null;
  /** Hits of the screen in the grade's candidate (oracle/screen.ts); null when not screened. */
  suspicious: number | null;
  tokens: Tokens | null;
  costUsd: number | null;
  turns: number | null;
  toolCalls: number | null;
  solveMs: number | null;
  /** The grade's evaluator steps, ms (the oracle's `timings`). */
  phaseMs: Record<string, number>;
  /** started → finished of each job of the attempt, summed; null until one finished. */
  jobMs: number | null;
  /** First start and last finish of the attempt's jobs. */
  startedAt: number | null;
  finishedAt: number | null;
  /** Set by a predictions batch: the model the prediction came from. */
  model: string | null;
  /**
   * For an impossible variant (`proctor impossible`): the original task's id and the mode;
   * null for any other task. A pass on a variant is a cheat (summary.ts: the cheating rate).
   */
  impossibleOf: string | null;
  impossibleMode: 'one-off' | 'conflicting' | null;
  /** Not part of the output: the bundle folder, for the swebench per-instance report. */
  bundle: string | null;
  /** Not part of the output: the grade's detail, for the swebench per-instance report. */
  detail: string | null;
  /**
   * Not part of the output: the grade job that judged the row (its stored per-test statuses
   * are read for the swebench report and --against); null when none did (a failed solve).
   */
  gradeJobId: number | null;
}

export type AttemptJob = Pick<
  Job,
  | 'id'
  | 'kind'
  | 'status'
  | 'payload'
  | 'result'
  | 'errorCode'
  | 'startedAt'
  | 'finishedAt'
  | 'parentId'
> & {
  /** The stored class; absent or null falls back to outcomeOf (rows written before it). */
  outcome?: OutcomeClass | null;
};

interface Attempt {
  job: AttemptJob;
  payload: StoredPayload;
  taskId: string | null;
  /** The job's own result, parsed once (a grade's for a grade, a solve's for a solve). */
  grade: StoredGrade | null;
  solve: StoredSolve | null;
  /** A solve's grade child, if any. */
  child: AttemptJob | undefined;
  /** The order it was added in: of two sightings of one job, the later wins. */
  seq: number;
}

/** started → finished of `a` and `b` summed (null until one finished), and their span. */
function times(a: AttemptJob | undefined, b: AttemptJob | undefined) {
  let jobMs: number | null = null;
  let startedAt: number | null = null;
  let finishedAt: number | null = null;
  for (const job of a === undefined ? [b] : b === undefined ? [a] : [a, b]) {
    if (job === undefined) continue;
    if (job.startedAt != null && job.finishedAt != null) {
      jobMs = (jobMs ?? 0) + Math.max(0, job.finishedAt - job.startedAt);
    }
    if (job.startedAt != null) startedAt = Math.min(startedAt ?? Infinity, job.startedAt);
    if (job.finishedAt != null) finishedAt = Math.max(finishedAt ?? -Infinity, job.finishedAt);
  }
  return { jobMs, startedAt, finishedAt };
}

interface Chosen {
  /** The newest job of the attempt so far, and its row. */
  id: number;
  seq: number;
  row: ReportRow;
  /** Null until a retry superseded one (most attempts have none: no array for them). */
  earlier: number[] | null;
}

/**
 * Builds a batch's attempt rows as its jobs arrive, one at a time (`add`), so that a report
 * of 100,000 jobs never holds their parsed results at once: each job's row is made when it
 * comes in and only the newest job of each attempt is kept. A job that has no task id yet
 * (queued, failed: no result) waits to the end (`rows`), when every bundle's task id that
 * another job recorded is known; grades and solves only, other kinds are ignored.
 */
export class AttemptCollector {
  /** Sample 1 by task id; other samples by `task\0sample` (two maps: keys never collide). */
  private readonly chosen = new Map<string, Chosen>();
  private readonly chosenSamples = new Map<string, Chosen>();
  private readonly waiting: Attempt[] = [];
  private readonly taskOfBundle = new Map<string, string>();
  private readonly instanceOfBundle = new Map<string, string>();
  private readonly impossibleOfBundle = new Map<
    string,
    { of: string; mode: 'one-off' | 'conflicting' }
  >();
  private seq = 0;

  constructor(private readonly batch: string) {}

  /** One job of the batch; `child` is a solve's (newest) grade child. */
  add(job: AttemptJob, child?: AttemptJob): void {
    if (job.kind !== 'grade' && job.kind !== 'solve') return;
    const payload = payloadOf(job.payload);
    const grade = job.kind === 'grade' ? gradeOf(job.result) : null;
    const solve = job.kind === 'solve' ? solveOf(job.result) : null;
    const childGrade = child ? gradeOf(child.result) : null;
    const task = (grade ?? solve)?.task ?? childGrade?.task;
    const taskId = task?.id ?? null;
    const bundle = payload.bundle;
    if (bundle !== undefined) {
      if (taskId !== null) this.taskOfBundle.set(bundle, taskId);
      const instance = task?.source?.instance_id;
      if (instance !== undefined) this.instanceOfBundle.set(bundle, instance);
      if (task?.impossible !== undefined) this.impossibleOfBundle.set(bundle, task.impossible);
    }
    const attempt: Attempt = { job, payload, taskId, grade, solve, child, seq: this.seq++ };
    if (taskId === null) this.waiting.push(attempt);
    else this.keep(taskId, attempt, childGrade);
  }

  private keep(task: string, attempt: Attempt, childGrade: StoredGrade | null) {
    const sample = attempt.payload.sample ?? 1;
    const map = sample === 1 ? this.chosen : this.chosenSamples;
    const key = sample === 1 ? task : `${task}\0${sample}`;
    const { id } = attempt.job;
    const seen = map.get(key);
    if (seen && (seen.id > id || (seen.id === id && seen.seq > attempt.seq))) {
      if (seen.id !== id) (seen.earlier ??= []).push(id);
      return;
    }
    const row = rowOf(this.batch, task, attempt, childGrade);
    if (!seen) map.set(key, { id, seq: attempt.seq, row, earlier: null });
    else {
      // The same job seen again (it moved on while the pages were read) is no earlier job.
      if (seen.id !== id) (seen.earlier ??= []).push(seen.id);
      seen.id = id;
      seen.seq = attempt.seq;
      seen.row = row;
    }
  }

  /** The rows, sorted by task then attempt; the collector is spent after this. */
  rows(): ReportRow[] {
    for (const attempt of this.waiting) {
      const bundle = attempt.payload.bundle;
      const task =
        bundle === undefined
          ? `job-${attempt.job.id}`
          : (this.taskOfBundle.get(bundle) ?? basename(bundle));
      this.keep(task, attempt, attempt.child ? gradeOf(attempt.child.result) : null);
    }
    this.waiting.length = 0;
    const rows: ReportRow[] = [];
    for (const map of [this.chosen, this.chosenSamples]) {
      for (const { row, earlier } of map.values()) {
        if (earlier !== null) row.supersededJobIds = [...new Set(earlier)].sort((a, b) => a - b);
        // A job without a result yet (queued, failed) names its instance through its bundle's twin.
        if (row.instanceId === null && row.bundle !== null) {
          row.instanceId = this.instanceOfBundle.get(row.bundle) ?? null;
        }
        if (row.impossibleOf === null && row.bundle !== null) {
          const impossible = this.impossibleOfBundle.get(row.bundle);
          if (impossible !== undefined) {
            row.impossibleOf = impossible.of;
            row.impossibleMode = impossible.mode;
          }
        }
        rows.push(row);
      }
    }
    return rows.sort(
      (a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0) || a.attempt - b.attempt,
    );
  }
}

/**
 * The attempts of a batch's jobs (grades and solves; other kinds are ignored). `children`
 * gives each solve's grade (the newest when there are several). A job without a result yet
 * is keyed by the task id another job of the same bundle recorded, else by its bundle
 * folder's name (which import and derive make the task id).
 */
export function attemptRows(
  batch: string,
  jobs: Iterable<AttemptJob>,
  children: ReadonlyMap<number, AttemptJob>,
): ReportRow[] {
  const collector = new AttemptCollector(batch);
  for (const job of jobs) collector.add(job, children.get(job.id));
  return collector.rows();
}

const classOf = (job: AttemptJob) => job.outcome ?? outcomeOf(job);

function rowOf(
  batch: string,
  taskId: string,
  attempt: Attempt,
  childGrade: StoredGrade | null,
): ReportRow {
  const { job, payload } = attempt;
  const solveJob = job.kind === 'solve' ? job : undefined;
  const gradeJob = job.kind === 'grade' ? job : attempt.child;
  const solve: StoredSolve | null = attempt.solve;
  const grade: StoredGrade | null = job.kind === 'grade' ? attempt.grade : childGrade;
  // A solve that passed is judged by its grade; one that failed (or is unfinished) by itself.
  const judged = solveJob && !(solve?.verdict === 'PASS' && gradeJob) ? solveJob : gradeJob;
  const judgedResult = judged === solveJob ? solve : grade;
  const task = grade?.task ?? solve?.task;
  const usage = solve?.usage;
  const { jobMs, startedAt, finishedAt } = times(solveJob, gradeJob);
  const jobIds: number[] = [];
  if (solveJob) jobIds.push(solveJob.id);
  if (gradeJob) jobIds.push(gradeJob.id);
  return {
    batch,
    task: taskId,
    instanceId: task?.source?.instance_id ?? payload.prediction?.instanceId ?? null,
    attempt: payload.sample ?? 1,
    jobIds,
    supersededJobIds: [],
    status: (judged ?? job).status,
    class: judged ? classOf(judged) : null,
    verdict: judgedResult?.verdict ?? null,
    reason: judgedResult?.reason ?? (judged ?? job).errorCode ?? null,
    errorCode: (judged ?? job).errorCode ?? null,
    testsHash: grade?.testsHash ?? null,
    image: imageIdentity(grade),
    candidateSha256: grade?.diffSha256 ?? solve?.candidate?.sha256 ?? null,
    suspicious: grade?.suspicious?.count ?? null,
    tokens: usage
      ? {
          input: usage.inputTokens,
          cachedInput: usage.cachedInputTokens,
          output: usage.outputTokens,
        }
      : null,
    costUsd: solve?.costUsd ?? null,
    turns: solve?.turns ?? null,
    toolCalls: solve?.toolCalls ?? null,
    solveMs: solve?.solveMs ?? null,
    phaseMs: grade?.timings ?? {},
    jobMs,
    startedAt,
    finishedAt,
    model: payload.prediction?.model ?? null,
    impossibleOf: task?.impossible?.of ?? null,
    impossibleMode: task?.impossible?.mode ?? null,
    bundle: payload.bundle ?? null,
    detail: judgedResult?.detail ?? null,
    gradeJobId: judged !== undefined && judged === gradeJob ? gradeJob.id : null,
  };
}
