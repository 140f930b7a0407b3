// What a cancel does to each job it names, decided from the rows as they are: the one rule both
// stores apply before their writes (a queued job is cancelled at once; a running one is asked to
// stop, once; a finished one is left).
import type { CancelOutcome } from './constants.js';

export interface CancelRow {
  id: number;
  status: string;
  cancelRequestedAt: number | null;
}

export interface CancelPlan {
  /** Jobs to mark cancelled now. */
  queued: number[];
  /** Running jobs to mark cancel-requested. */
  running: number[];
}

/** Splits `rows` into the two writes and records each row's outcome in `outcomes`. */
export function planCancel(
  rows: readonly CancelRow[],
  outcomes: Map<number, CancelOutcome>,
): CancelPlan {
  const queued: number[] = [];
  const running: number[] = [];
  for (const row of rows) {
    if (row.status === 'queued') queued.push(row.id);
    else if (row.status === 'running' && row.cancelRequestedAt === null) running.push(row.id);
    outcomes.set(
      row.id,
      row.status === 'queued'
        ? 'cancelled'
        : row.status === 'running'
          ? row.cancelRequestedAt === null
            ? 'cancel_requested'
            : 'already_requested'
          : 'already_finished',
    );
  }
  return { queued, running };
}
