// The queue: a durable job table behind the async JobStore interface.
export {
  CANCEL_OUTCOMES,
  JOB_KINDS,
  JOB_STATUSES,
  FINISHED_STATUSES,
  OUTCOME_CLASSES,
  isFinished,
} from './constants.js';
export type { CancelOutcome, JobKind, JobStatus, OutcomeClass } from './constants.js';
export { payloadSchemas, parsePayload, MAX_PAYLOAD_BYTES } from './payloads.js';
export type { PayloadOf } from './payloads.js';
export { backoffDelay } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
export { openSqliteJobStore } from './sqlite/store.js';
export type { PgJobStore, PgJobStoreOptions } from './pg/store.js';
export { displayUrl } from './pg/url.js';
export { openArtifactStore, openJobStore } from './open.js';
export type { StoreSelection } from './open.js';
export type { SqliteJobStore, SqliteJobStoreOptions } from './sqlite/store.js';
export { MAX_PAGE, DEFAULT_PAGE, RETRY_KEY_PREFIX, retryKey } from './store.js';
export { MAX_SUITE_TASKS } from './suites.js';
export type { Synchronous } from './db.js';
export type {
  ArtifactRecord,
  RegisteredArtifact,
  Batch,
  BatchProgress,
  BatchRequest,
  BatchResult,
  BudgetCheck,
  CompletionExtras,
  EnqueueInputs,
  EnqueueRequest,
  EnqueueResult,
  FailOutcome,
  HeartbeatResult,
  Job,
  JobFilter,
  JobStore,
  ClaimScope,
  Lease,
  OutcomeCounts,
  Page,
  PageRequest,
  ReclaimedJob,
  StatusCounts,
  TaskValidity,
  TaskValidityInput,
} from './store.js';
export { CANDIDATE_MEDIA_TYPE, CANDIDATE_NAME, enqueueWithCandidates } from './candidates.js';
export type { CandidateDeps } from './candidates.js';
export { progressFigures, formatDuration } from './progress.js';
export type { ProgressFigures } from './progress.js';
