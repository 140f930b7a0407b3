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
  /** Not part of the output: the bundle folder, for the swebench per-instance report. */
  bundle: string | null;
  /** Not part of the output: the grade's detail, for the swebench per-instance report. */
  detail: string | null;
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
>;

interface Attempt {
  job: AttemptJob;
  payload: StoredPayload;
  taskId: string | null;
  /** The job's own result, parsed once (a grade's for a grade, a solve's for a solve). */
  grade: StoredGrade | null;
  solve: StoredSolve | null;
}

function jobMs(jobs: ReadonlyArray<AttemptJob | undefined>): number | null {
  let total: number | null = null;
  for (const job of jobs) {
    if (job?.startedAt != null && job.finishedAt != null) {
      total = (total ?? 0) + Math.max(0, job.finishedAt - job.startedAt);
    }
  }
  return total;
}

function span(jobs: ReadonlyArray<AttemptJob | undefined>) {
  let startedAt: number | null = null;
  let finishedAt: number | null = null;
  for (const job of jobs) {
    if (job?.startedAt != null) startedAt = Math.min(startedAt ?? Infinity, job.startedAt);
    if (job?.finishedAt != null) finishedAt = Math.max(finishedAt ?? -Infinity, job.finishedAt);
  }
  return { startedAt, finishedAt };
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
  const attempts: Attempt[] = [];
  const taskOfBundle = new Map<string, string>();
  const instanceOfBundle = new Map<string, string>();
  for (const job of jobs) {
    if (job.kind !== 'grade' && job.kind !== 'solve') continue;
    const payload = payloadOf(job.payload);
    const grade = job.kind === 'grade' ? gradeOf(job.result) : null;
    const solve = job.kind === 'solve' ? solveOf(job.result) : null;
    const task = (grade ?? solve)?.task;
    const taskId =
      task?.id ?? (job.kind === 'solve' ? (childTask(children, job.id)?.id ?? null) : null);
    if (taskId !== null && payload.bundle !== undefined) taskOfBundle.set(payload.bundle, taskId);
    const instance = task?.source?.instance_id;
    if (instance !== undefined && payload.bundle !== undefined) {
      instanceOfBundle.set(payload.bundle, instance);
    }
    attempts.push({ job, payload, taskId, grade, solve });
  }
  const chosen = new Map<string, { latest: Attempt; earlier: number[] }>();
  for (const attempt of attempts) {
    const bundle = attempt.payload.bundle;
    const task =
      attempt.taskId ??
      (bundle === undefined ? null : (taskOfBundle.get(bundle) ?? basename(bundle))) ??
      `job-${attempt.job.id}`;
    attempt.taskId = task;
    const key = `${task}\0${attempt.payload.sample ?? 1}`;
    const seen = chosen.get(key);
    if (!seen) chosen.set(key, { latest: attempt, earlier: [] });
    else if (attempt.job.id > seen.latest.job.id) {
      seen.earlier.push(seen.latest.job.id);
      seen.latest = attempt;
    } else seen.earlier.push(attempt.job.id);
  }
  const rows: ReportRow[] = [];
  for (const { latest, earlier } of chosen.values()) {
    const row = rowOf(
      batch,
      latest,
      children,
      earlier.sort((a, b) => a - b),
    );
    // A job without a result yet (queued, failed) names its instance through its bundle's twin.
    if (row.instanceId === null && row.bundle !== null) {
      row.instanceId = instanceOfBundle.get(row.bundle) ?? null;
    }
    rows.push(row);
  }
  return rows.sort(
    (a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0) || a.attempt - b.attempt,
  );
}

function childTask(children: ReadonlyMap<number, AttemptJob>, id: number) {
  const child = children.get(id);
  return child ? gradeOf(child.result)?.task : undefined;
}

function rowOf(
  batch: string,
  attempt: Attempt,
  children: ReadonlyMap<number, AttemptJob>,
  superseded: number[],
): ReportRow {
  const { job, payload } = attempt;
  const solveJob = job.kind === 'solve' ? job : undefined;
  const gradeJob = job.kind === 'grade' ? job : children.get(job.id);
  const solve: StoredSolve | null = attempt.solve;
  const grade: StoredGrade | null =
    job.kind === 'grade' ? attempt.grade : gradeJob ? gradeOf(gradeJob.result) : null;
  // A solve that passed is judged by its grade; one that failed (or is unfinished) by itself.
  const judged = solveJob && !(solve?.verdict === 'PASS' && gradeJob) ? solveJob : gradeJob;
  const judgedResult = judged === solveJob ? solve : grade;
  const task = grade?.task ?? solve?.task;
  const usage = solve?.usage;
  return {
    batch,
    task: attempt.taskId ?? `job-${job.id}`,
    instanceId: task?.source?.instance_id ?? payload.prediction?.instanceId ?? null,
    attempt: payload.sample ?? 1,
    jobIds: [solveJob?.id, gradeJob?.id].filter((id): id is number => id !== undefined),
    supersededJobIds: superseded,
    status: (judged ?? job).status,
    class: judged ? outcomeOf(judged) : null,
    verdict: judgedResult?.verdict ?? null,
    reason: judgedResult?.reason ?? (judged ?? job).errorCode ?? null,
    errorCode: (judged ?? job).errorCode ?? null,
    testsHash: grade?.testsHash ?? null,
    image: imageIdentity(grade),
    candidateSha256: grade?.diffSha256 ?? solve?.candidate?.sha256 ?? null,
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
    jobMs: jobMs([solveJob, gradeJob]),
    ...span([solveJob, gradeJob]),
    model: payload.prediction?.model ?? null,
    bundle: payload.bundle ?? null,
    detail: judgedResult?.detail ?? null,
  };
}
