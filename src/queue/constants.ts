// The job vocabulary, shared by both schemas' CHECK constraints (SQLite's src/queue/schema.ts
// and PostgreSQL's src/queue/pg/schema.ts) and by zod schemas, so that every dialect agrees on
// the same closed sets.

export const JOB_KINDS = ['baseline', 'solve', 'grade', 'validate', 'noop'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const JOB_STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** A baseline's judgement of a task. */
export const TASK_VALIDITIES = ['valid', 'quarantined'] as const;
export type TaskValidityKind = (typeof TASK_VALIDITIES)[number];

/**
 * The class of a finished grade or solve (see src/results/outcome.ts, which decides it): the
 * `outcome` column's closed set, shared by its CHECK constraint.
 */
export const OUTCOME_CLASSES = ['resolved', 'unresolved', 'error', 'invalid_task'] as const;
export type OutcomeClass = (typeof OUTCOME_CLASSES)[number];

/** What a cancel request did to each job it named. */
export const CANCEL_OUTCOMES = [
  'cancelled',
  'cancel_requested',
  'already_requested',
  'already_finished',
  'not_found',
] as const;
export type CancelOutcome = (typeof CANCEL_OUTCOMES)[number];

/** Statuses a job never leaves. */
export const FINISHED_STATUSES = [
  'done',
  'failed',
  'cancelled',
] as const satisfies readonly JobStatus[];

export function isFinished(status: JobStatus): boolean {
  return (FINISHED_STATUSES as readonly JobStatus[]).includes(status);
}

/** Renders a closed set as an SQL list of string literals, for CHECK constraints only. */
export function sqlList(values: readonly string[]): string {
  return values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ');
}
