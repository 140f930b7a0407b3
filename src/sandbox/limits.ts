// Time limits from a CLI flag or API request: they may shorten a task's limit, never extend
// it (a bundle's solver_seconds is part of the task's definition).
import { ProctorError } from '../errors.js';

export function effectiveSeconds(taskSeconds: number, requestedSeconds?: number): number {
  if (requestedSeconds === undefined) return taskSeconds;
  if (!Number.isFinite(requestedSeconds) || requestedSeconds <= 0) {
    throw new ProctorError(
      'USAGE',
      `--timeout must be a positive number of seconds, got ${requestedSeconds}`,
    );
  }
  return Math.min(taskSeconds, requestedSeconds);
}
