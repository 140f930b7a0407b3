// STAND-IN for engineer D's src/results/outcome.ts (issue 13 §3), with the same exports; the
// lead replaces it with D's at merge. Minimal on purpose: the class of one finished job.
import type { Job } from '../queue/store.js';

export const OUTCOME_CLASSES = ['resolved', 'unresolved', 'error', 'invalid_task'] as const;
export type OutcomeClass = (typeof OUTCOME_CLASSES)[number];

const TASK_BROKEN = new Set(['BUNDLE_INVALID', 'IMAGE_INVALID']);

/** The class of one finished grade or solve job; null while queued/running, for a
 *  cancelled job (not scored: reports count it as incomplete) and for other kinds. */
export function outcomeOf(
  job: Pick<Job, 'kind' | 'status' | 'result' | 'errorCode'>,
): OutcomeClass | null {
  if (job.kind !== 'grade' && job.kind !== 'solve') return null;
  if (job.status === 'failed') {
    return TASK_BROKEN.has(job.errorCode ?? '') ? 'invalid_task' : 'error';
  }
  if (job.status !== 'done') return null;
  const result = (job.result ?? {}) as { verdict?: unknown; reason?: unknown };
  if (job.kind === 'solve') {
    if (result.verdict === 'PASS') return null;
    return result.reason === 'SOLVER_PROVIDER_ERROR' ? 'error' : 'unresolved';
  }
  if (result.verdict === 'PASS') return 'resolved';
  return result.reason === 'INFRA_ERROR' ? 'error' : 'unresolved';
}
