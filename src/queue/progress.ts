// Rate and ETA of a batch, from its counts and finish times. Pure: the CLI and the API both
// show it, and tests can check it without a database.
import type { BatchProgress } from './store.js';

export interface ProgressFigures {
  total: number;
  finished: number;
  remaining: number;
  /** Jobs finished per minute: over the recent window when any finished in it, else overall. */
  ratePerMinute: number | null;
  /** Seconds until the remaining jobs finish at that rate; null when unknown. */
  etaSeconds: number | null;
}

export function progressFigures(
  progress: BatchProgress,
  now: number,
  windowMs = 60_000,
): ProgressFigures {
  const c = progress.counts;
  const finished = c.done + c.failed + c.cancelled;
  const total = finished + c.queued + c.running;
  const remaining = c.queued + c.running;
  let ratePerMinute: number | null = null;
  if (progress.finishedInWindow > 0) {
    const started = progress.firstStartedAt ?? now - windowMs;
    const span = Math.max(1_000, Math.min(windowMs, now - started));
    ratePerMinute = (progress.finishedInWindow * 60_000) / span;
  } else if (finished > 0 && progress.firstStartedAt !== null && progress.lastFinishedAt !== null) {
    const span = Math.max(1_000, progress.lastFinishedAt - progress.firstStartedAt);
    ratePerMinute = (finished * 60_000) / span;
  }
  const etaSeconds =
    remaining === 0
      ? 0
      : ratePerMinute && ratePerMinute > 0
        ? Math.round((remaining * 60) / ratePerMinute)
        : null;
  return { total, finished, remaining, ratePerMinute, etaSeconds };
}

export function formatDuration(seconds: number | null): string {
  if (seconds === null) return '?';
  if (seconds < 60) return `${Math.round(seconds)}s`;
  if (seconds < 3600)
    return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}
