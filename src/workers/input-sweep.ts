// The input sweep, run by every worker pool at start and then periodically: candidate patches
// are written before the transaction that enqueues their job, so a crash between the two, or
// the pruning of the jobs that read them, would otherwise leave them on disk forever. Each run
// is bounded (a fixed number of rows and directories) and ages are read from the clock.
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { JobStore } from '../queue/index.js';
import type { ArtifactStore } from '../store/index.js';

/** Unreferenced input artifacts older than this are removed. */
export const INPUT_MAX_AGE_MS = 60 * 60 * 1000;
/** Rows, and then directories, removed at most per run. */
export const INPUT_SWEEP_LIMIT = 500;
/** How often a pool sweeps. */
export const INPUT_SWEEP_EVERY_MS = 10 * 60 * 1000;

export interface InputSweepDeps {
  store: JobStore;
  artifacts: ArtifactStore;
  clock: Clock;
  logger: Logger;
}

export interface InputSweepOptions {
  /** Default INPUT_MAX_AGE_MS. */
  maxAgeMs?: number;
  /** Default INPUT_SWEEP_LIMIT. */
  limit?: number;
}

/**
 * Unregisters the input artifacts no job names that were registered more than `maxAgeMs` ago
 * and deletes their files; then deletes artifact directories that no row owns (a crash between
 * the write and the enqueue), after the artifact store's own, longer age: a running job's
 * outputs are unregistered until it completes. Returns how many of each it removed.
 */
export async function sweepInputs(
  deps: InputSweepDeps,
  options: InputSweepOptions = {},
): Promise<{ inputs: number; orphans: number }> {
  const maxAgeMs = options.maxAgeMs ?? INPUT_MAX_AGE_MS;
  const limit = options.limit ?? INPUT_SWEEP_LIMIT;
  const records = await deps.store.takeUnreferencedInputs(deps.clock.now() - maxAgeMs, limit);
  // A file left by a failed discard has no row any more: the orphan sweep below removes it.
  await Promise.allSettled(records.map((record) => deps.artifacts.discard(record)));
  const orphans = await deps.artifacts.sweep(deps.store, { limit });
  if (records.length > 0 || orphans > 0) {
    deps.logger.info('removed unreferenced input artifacts', {
      inputs: records.length,
      orphans,
    });
  }
  return { inputs: records.length, orphans };
}
