// Workers: the pool that runs claimed jobs, and its process lifecycle.
export { createWorkerPool } from './pool.js';
export type {
  AbortReason,
  HandlerOutput,
  JobContext,
  JobHandler,
  StopOptions,
  WorkerPool,
  WorkerPoolOptions,
} from './pool.js';
export { drainOnSignals } from './shutdown.js';
export type { ShutdownOptions } from './shutdown.js';
export { createOwnerId, isDeadLocalOwner } from './owner.js';
export { noopHandler } from './noop.js';
export { poolSettings } from './settings.js';
export { sandboxRecovery } from './recovery.js';
export type { PoolSettings } from './settings.js';
export { createImageCache } from './images.js';
export type { ImageBundle, ImageCache } from './images.js';
export { gradeHandler, baselineHandler, quarantineOf } from './oracle-jobs.js';
export type {
  BaselineResult,
  GradeResult,
  ImageSummary,
  OracleDeps,
  Quarantine,
} from './oracle-jobs.js';
export {
  INPUT_MAX_AGE_MS,
  INPUT_SWEEP_EVERY_MS,
  INPUT_SWEEP_LIMIT,
  sweepInputs,
} from './input-sweep.js';
export type { InputSweepDeps, InputSweepOptions } from './input-sweep.js';
export { createRuntime } from './runtime.js';
export type { Runtime } from './runtime.js';
export { announceWorker, liveWorkers, ownerPresence, sweepPresence } from './presence.js';
export type { PresenceRole } from './presence.js';
export { solveHandler } from './solve-job.js';
export { validateHandler } from './validate-job.js';
export type { ValidateResult } from './validate-job.js';
export type { SolveDeps, SolveResult } from './solve-job.js';
