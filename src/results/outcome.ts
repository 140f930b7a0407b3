// The outcome class of one finished grade or solve: whose fault a result is. `resolved` (the
// candidate passed), `unresolved` (the candidate's or the solver's fault: every FAIL verdict of
// a grade, solver limits, an empty patch), `error` (the machine's: Docker, an image build, a
// lost worker, a provider outage, once retries are exhausted) or `invalid_task` (the task itself
// is broken: its bundle no longer loads, or its baseline quarantined it). Pure: the worker pool
// computes it when a job ends and the queue stores it in the same fenced transaction; reports
// read the stored column.
import type { Job } from '../queue/index.js';
import { OUTCOME_CLASSES, type OutcomeClass } from '../queue/index.js';

export { OUTCOME_CLASSES };
export type { OutcomeClass };

/** Grade reasons that are the candidate's fault. */
const CANDIDATE_FAULTS: ReadonlySet<string> = new Set([
  'APPLY_FAILED',
  'EXISTING_FAILED',
  'HIDDEN_FAILED',
  'TESTS_MISSING',
  'TIMEOUT',
  'OOM',
  'REPORT_INVALID',
  'PATCH_TOO_LARGE',
  'PATCH_REJECTED',
  'EMPTY_PATCH',
  'TAMPERED',
  'TAMPER_SUSPECTED',
]);

/** Failure codes (a job in status `failed`) that mean the task itself is broken. */
const TASK_FAULTS: ReadonlySet<string> = new Set(['BUNDLE_INVALID']);

/** Solve reasons that are the machine's (the provider's), not the solver's. */
const SOLVE_MACHINE_FAULTS: ReadonlySet<string> = new Set(['SOLVER_PROVIDER_ERROR']);

interface ResultShape {
  verdict?: unknown;
  reason?: unknown;
  /**
   * Set on a grade, or a failed solve, of a task whose latest baseline (for its bundle
   * content) quarantined it.
   */
  quarantined?: unknown;
}

function shape(result: unknown): ResultShape {
  return typeof result === 'object' && result !== null ? result : {};
}

/**
 * The class of one finished grade or solve job; null while queued/running, for a cancelled
 * job (not scored: reports count it as incomplete), for other kinds, and for a solve that
 * finished (PASS, "graded next"): its class is its grade's.
 */
export function outcomeOf(
  job: Pick<Job, 'kind' | 'status' | 'result' | 'errorCode'>,
): OutcomeClass | null {
  if (job.kind !== 'grade' && job.kind !== 'solve') return null;
  if (job.status === 'failed') {
    return job.errorCode !== null && TASK_FAULTS.has(job.errorCode) ? 'invalid_task' : 'error';
  }
  if (job.status !== 'done') return null;
  const r = shape(job.result);
  if (job.kind === 'grade') {
    if (r.quarantined !== undefined && r.quarantined !== null && r.quarantined !== false) {
      return 'invalid_task';
    }
    if (r.verdict === 'PASS') return 'resolved';
    if (typeof r.reason === 'string' && CANDIDATE_FAULTS.has(r.reason)) return 'unresolved';
    // INFRA_ERROR (the harness lost track of a phase), CANCELLED, or a result without a
    // known reason: not the candidate's doing.
    return 'error';
  }
  if (r.verdict === 'PASS') return null;
  // A solve that failed on a quarantined task says nothing about the solver.
  if (r.quarantined !== undefined && r.quarantined !== null && r.quarantined !== false) {
    return 'invalid_task';
  }
  if (typeof r.reason === 'string' && SOLVE_MACHINE_FAULTS.has(r.reason)) return 'error';
  return 'unresolved';
}
