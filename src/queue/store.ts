// The JobStore: the one async interface every layer above src/queue/ uses. The SQLite
// implementation wraps synchronous transactions; a PostgreSQL one can implement the same
// contract with SKIP LOCKED claims and database time.
//
// Fencing: claim() increments a job's attempt. Every later write names (id, attempt) — a
// Lease — and changes nothing (returns false / 'lost') when the job has since been reclaimed,
// cancelled or finished by someone else. A worker that lost its lease must stop and drop
// its result.
import { ProctorError } from '../errors.js';
import type { ArtifactRecord } from '../store/index.js';
import type { CancelOutcome, JobKind, JobStatus, OutcomeClass } from './constants.js';

export type { ArtifactRecord };

/**
 * The jobs a claim may take: those of one batch, or one job, each with their children (a
 * solve's grade carries no batch id). What a `--wait` command's pool claims while a worker
 * serves the home.
 */
export type ClaimScope = { batchId: string } | { jobId: number };

export interface Lease {
  id: number;
  attempt: number;
}

export interface Job {
  id: number;
  batchId: string | null;
  parentId: number | null;
  kind: JobKind;
  status: JobStatus;
  priority: number;
  payload: unknown;
  idempotencyKey: string | null;
  attempt: number;
  maxAttempts: number;
  runAt: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  heartbeatAt: number | null;
  cancelRequestedAt: number | null;
  result: unknown;
  lastError: string | null;
  /** The code of the last failure (an ErrorCode), or null. */
  errorCode: string | null;
  /**
   * The outcome class of a finished grade or solve (src/results/outcome.ts), stored with its
   * completion or failure; null while queued or running, when cancelled, and for other kinds.
   */
  outcome: OutcomeClass | null;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

export interface Batch {
  id: string;
  idempotencyKey: string | null;
  label: string | null;
  total: number;
  createdAt: number;
}

export interface EnqueueRequest {
  kind: JobKind;
  payload: unknown;
  /** Higher runs first. Default 0. */
  priority?: number;
  /** A second enqueue with the same key returns the first job instead of making another. */
  idempotencyKey?: string;
  /** Default 3. */
  maxAttempts?: number;
  parentId?: number;
  /** Not claimable before this time. Default now. */
  runAt?: number;
  /**
   * Recorded as done at enqueue, with this result and class, without running anything (a
   * prediction whose patch is empty). Default: the job runs.
   */
  finished?: { result: unknown; outcome: OutcomeClass | null };
}

/**
 * Input artifacts that enqueued jobs read (a candidate patch handed to `proctor grade` or the
 * API), registered in the enqueue's own transaction: they exist exactly when the jobs do, so a
 * refused or failed enqueue registers none (and its caller discards their bytes).
 */
export interface EnqueueInputs {
  /** Artifacts written for this enqueue, registered with it. */
  inputs?: readonly ArtifactRecord[];
  /**
   * Ids of input artifacts registered earlier (the same bytes as an earlier request, found
   * with `findInputs`) that the jobs read again. Each must still be registered when the
   * transaction runs, or the enqueue fails with ARTIFACT_NOT_FOUND and writes nothing.
   */
  reused?: readonly string[];
}

export interface EnqueueResult {
  job: Job;
  created: boolean;
}

export interface BatchRequest {
  /** Replaying the same key with the same request returns the first batch. */
  idempotencyKey?: string;
  label?: string;
  /**
   * Adds the jobs to this existing batch (its total grows by those inserted) instead of making
   * one; BATCH_NOT_FOUND when there is none. Excludes `idempotencyKey` and `label`: job keys
   * make a replay idempotent.
   */
  batchId?: string;
  jobs: EnqueueRequest[];
}

export interface BatchResult {
  /** Null only when no batch key was given and every job already existed. */
  batch: Batch | null;
  created: boolean;
  /** The job of each request, in request order (new or already existing). */
  jobIds: number[];
  inserted: number;
  existing: number;
}

/** An artifact as registered with a job (the store below owns the type and the bytes). */
/** What a completion records besides its result and artifacts, in the same transaction. */
export interface CompletionExtras {
  /** A baseline's judgement of its task. */
  task?: TaskValidityInput;
  /**
   * Jobs to enqueue as this job's children (a solve's grade): they exist exactly when the
   * completion does, so they can never run before the artifacts they name are registered.
   */
  children?: EnqueueRequest[];
  /** The job's outcome class (outcomeOf of the done job), stored with it. Default null. */
  outcome?: OutcomeClass | null;
  /**
   * A grade's or baseline's per-test statuses (src/results/test-statuses.ts), stored as JSON
   * beside the job (test_statuses) in the same transaction; read with `testStatuses`.
   */
  tests?: unknown;
}

/** A baseline's judgement of a task, recorded with the job's completion. */
export interface TaskValidityInput {
  taskId: string;
  contentHash: string;
  bundlePath: string;
  validity: 'valid' | 'quarantined';
  /** A verdict reason code (PASS for a valid task). */
  reason: string;
  detail: string;
}

export interface TaskValidity extends TaskValidityInput {
  jobId: number | null;
  checkedAt: number;
}

export interface RegisteredArtifact extends ArtifactRecord {
  jobId: number | null;
  attempt: number | null;
  createdAt: number;
}

export interface HeartbeatResult extends Lease {
  /** False: the lease is lost (reclaimed, cancelled or finished elsewhere). Stop the work. */
  alive: boolean;
  cancelRequested: boolean;
}

/** `cancelled`: a cancel was requested meanwhile, so the job ends instead of retrying. */
export type FailOutcome = 'retrying' | 'failed' | 'cancelled' | 'lost';

export interface ReclaimedJob extends Lease {
  owner: string;
  /** Where the job went: back to the queue, failed (attempts ran out) or cancelled (asked to). */
  status: 'queued' | 'failed' | 'cancelled';
}

export type StatusCounts = Record<JobStatus, number>;

export interface JobFilter {
  status?: JobStatus;
  kind?: JobKind;
  batchId?: string;
  /** The children of one job (a solve's grade). */
  parentId?: number;
}

/**
 * The idempotency key of a retry of job N is this prefix and N: retrying a job twice makes one
 * new job, and a job whose key names it is superseded by that retry.
 */
export const RETRY_KEY_PREFIX = 'proctor-retry-of:';

export function retryKey(jobId: number): string {
  return `${RETRY_KEY_PREFIX}${jobId}`;
}

/** A batch's current attempts by class (see JobStore.countByOutcome). */
export type OutcomeCounts = Record<OutcomeClass, number> & {
  /** Jobs a retry re-ran, which no longer count. */
  superseded: number;
};

/** The most jobs one `testStatuses` call reads (each document is up to a few MiB). */
export const MAX_TEST_STATUS_JOBS = 200;

/** Refuses a `testStatuses` call over MAX_TEST_STATUS_JOBS ids. */
export function checkTestStatusIds(jobIds: readonly number[]): void {
  if (jobIds.length > MAX_TEST_STATUS_JOBS) {
    throw new ProctorError(
      'USAGE',
      `testStatuses: at most ${MAX_TEST_STATUS_JOBS} jobs per call, got ${jobIds.length}`,
    );
  }
}

/** Refuses a `drawCost` amount that is not a finite number of USD >= 0. */
export function checkDrawUsd(usd: number): void {
  if (typeof usd !== 'number' || !Number.isFinite(usd) || usd < 0) {
    throw new ProctorError(
      'USAGE',
      `drawCost: expected \`usd\` to be a finite number >= 0, got \`${String(usd)}\``,
    );
  }
}

/** The largest progress document a job may record (JobStore.setProgress). */
export const MAX_PROGRESS_BYTES = 4096;

/** Refuses a progress document over MAX_PROGRESS_BYTES, and a read of over MAX_PAGE jobs. */
export function checkProgress(progress: string | null): void {
  if (progress !== null && Buffer.byteLength(progress) > MAX_PROGRESS_BYTES) {
    throw new ProctorError(
      'USAGE',
      `setProgress: at most ${MAX_PROGRESS_BYTES} bytes of progress, got ${Buffer.byteLength(progress)}`,
    );
  }
}

export function checkProgressIds(jobIds: readonly number[]): void {
  if (jobIds.length > MAX_PAGE) {
    throw new ProctorError(
      'USAGE',
      `jobProgress: at most ${MAX_PAGE} jobs per call, got ${jobIds.length}`,
    );
  }
}

/** The largest page any listing returns. */
export const MAX_PAGE = 200;
export const DEFAULT_PAGE = 50;

export interface PageRequest {
  /** 1..200. Default 50. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
  /** Default `desc`: newest first. */
  order?: 'asc' | 'desc';
}

/**
 * One job of a batch as a report reads it (`listBatchJobs`): only the columns a report needs,
 * payload and result as their stored JSON text (the reader parses them once).
 */
export interface BatchJobRow {
  id: number;
  kind: JobKind;
  status: JobStatus;
  parentId: number | null;
  payload: string;
  result: string | null;
  errorCode: string | null;
  startedAt: number | null;
  finishedAt: number | null;
  /** The stored outcome class (null until a grade or solve finished with one). */
  outcome: OutcomeClass | null;
  /**
   * A solve's newest grade child, joined in the same read (children carry no batch id): all
   * null for a grade, and for a solve without a grade yet.
   */
  childId: number | null;
  childStatus: JobStatus | null;
  childResult: string | null;
  childErrorCode: string | null;
  childStartedAt: number | null;
  childFinishedAt: number | null;
  childOutcome: OutcomeClass | null;
}

/** The largest page of `listBatchJobs`. */
export const MAX_BATCH_JOB_PAGE = 10_000;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface BatchProgress {
  batch: Batch;
  counts: StatusCounts;
  /** First claim and last finish in the batch, for rates. */
  firstStartedAt: number | null;
  lastFinishedAt: number | null;
  /** Jobs that finished within the last `windowMs` (see batchProgress). */
  finishedInWindow: number;
}

/** What a solve's budget check found and did (see JobStore.checkBudget). */
export interface BudgetCheck {
  /** The batch's spend (JobStore.batchSpent), settled with its done solves' costUsd. */
  spentUsd: number;
  /** The cap is reached: the starting solve must not run (it is already ended). */
  stopped: boolean;
  /** Solves ended as cancelled with errorCode BUDGET, the starting one included. */
  cancelled: number;
}

export interface JobStore {
  enqueue(request: EnqueueRequest, inputs?: EnqueueInputs): Promise<EnqueueResult>;
  enqueueBatch(request: BatchRequest, inputs?: EnqueueInputs): Promise<BatchResult>;

  /**
   * Claims up to `limit` due jobs of one kind, by priority then age, for `leaseMs`; with
   * `scope`, only those of one batch or one job (and their children), in the same one
   * atomic statement.
   */
  claim(
    kind: JobKind,
    owner: string,
    limit: number,
    leaseMs: number,
    scope?: ClaimScope,
  ): Promise<Job[]>;
  /** Extends each lease that is still held; says which are lost or asked to cancel. */
  heartbeat(leases: Lease[], leaseMs: number): Promise<HeartbeatResult[]>;
  /** The running jobs of `owner` whose cancel was requested (a cheap read). */
  cancelRequested(owner: string): Promise<Lease[]>;
  complete(
    lease: Lease,
    result: unknown,
    artifacts?: ArtifactRecord[],
    extras?: CompletionExtras,
  ): Promise<boolean>;
  /** `code` is the failure's ErrorCode (default INTERNAL), stored beside the message. */
  fail(
    lease: Lease,
    error: string,
    options?: {
      retryable?: boolean;
      code?: string;
      /** The class stored if this failure ends the job (`failed`); never on a retry. */
      outcome?: OutcomeClass | null;
    },
  ): Promise<FailOutcome>;
  /** Ends a running job whose cancel was honoured. */
  markCancelled(lease: Lease, reason?: string): Promise<boolean>;
  /** Hands a running job back to the queue (shutdown) without spending one of its attempts. */
  release(lease: Lease, reason: string): Promise<boolean>;

  cancel(ids: number[]): Promise<Map<number, CancelOutcome>>;
  cancelBatch(batchId: string): Promise<Map<number, CancelOutcome>>;
  /**
   * The cost cap of a starting solve's batch (`--max-cost`), in one transaction: the batch's
   * spend is first raised to the sum of `result.costUsd` over its done solve jobs if that is
   * more (what solves recorded before the batch kept its own spend); once it is >= `capUsd`,
   * every queued solve of the batch and the starting one (`lease`, if still held) end as
   * `cancelled` with errorCode BUDGET and a last error naming the spend and the cap.
   * BATCH_NOT_FOUND for an unknown batch.
   */
  checkBudget(batchId: string, capUsd: number, lease: Lease): Promise<BudgetCheck>;
  /**
   * Draws `usd` (a finite amount >= 0; USAGE otherwise) on the batch's spend in one atomic
   * UPDATE … RETURNING and returns the spend after it: concurrent draws from any process or
   * host each add exactly once, and each sees the others that came before it. What a solve's
   * model proxy calls with every metered answer. BATCH_NOT_FOUND for an unknown batch.
   */
  drawCost(batchId: string, usd: number): Promise<number>;
  /** The batch's spend now (every draw so far). BATCH_NOT_FOUND for an unknown batch. */
  batchSpent(batchId: string): Promise<number>;

  /** Requeues (or fails, when out of attempts) every running job whose lease has expired. */
  reclaimExpired(): Promise<ReclaimedJob[]>;
  /** The same, at once, for the jobs of an owner known to be dead. */
  reclaimOwner(owner: string): Promise<ReclaimedJob[]>;
  /** Distinct lease owners of running jobs. */
  runningOwners(): Promise<string[]>;

  getJob(id: number): Promise<Job | undefined>;
  getBatch(id: string): Promise<Batch | undefined>;
  listJobs(filter?: JobFilter, page?: PageRequest): Promise<Page<Job>>;
  listBatches(page?: PageRequest): Promise<Page<Batch>>;
  /**
   * The jobs of a batch in one status, in id order, as compact rows: keyset pages of up to
   * `limit` (1..MAX_BATCH_JOB_PAGE, default MAX_BATCH_JOB_PAGE) after job id `after` (default
   * 0), each one query that walks the (batch_id, status) index in id order, with no sort.
   * Empty for an unknown batch. What `proctor report` reads.
   */
  listBatchJobs(
    batchId: string,
    status: JobStatus,
    page?: { after?: number; limit?: number },
  ): Promise<BatchJobRow[]>;
  countByStatus(filter?: Omit<JobFilter, 'status'>): Promise<StatusCounts>;
  /**
   * Done jobs by their result's `verdict` (PASS, FAIL), else its `validity` (a validate job's
   * valid or invalid); `none` without either.
   */
  countByVerdict(filter?: Omit<JobFilter, 'status'>): Promise<Record<string, number>>;
  batchProgress(batchId: string, windowMs?: number): Promise<BatchProgress>;
  /**
   * A batch's current attempts by outcome class: each job not superseded by a retry, a done
   * solve counting as its grade. Jobs without a class yet (queued, running, cancelled, a solve
   * whose grade has not finished) are in none. BATCH_NOT_FOUND for an unknown batch.
   */
  countByOutcome(batchId: string): Promise<OutcomeCounts>;
  /**
   * Records the task ids of the suite a batch was enqueued from (at most MAX_SUITE_TASKS,
   * each 1..200 characters; USAGE otherwise), once: a second record keeps the first.
   * BATCH_NOT_FOUND for an unknown batch.
   */
  recordBatchSuite(batchId: string, tasks: readonly string[]): Promise<void>;
  /** The task ids recorded for a batch's suite, or null when none was (a batch of loose jobs). */
  batchSuite(batchId: string): Promise<string[] | null>;
  /**
   * The batch's current jobs that a retry re-runs, oldest first: those of class error (a solve
   * whose grade errored included), and with `cancelled` the cancelled ones (or whose grade was).
   * BATCH_NOT_FOUND for an unknown batch.
   */
  listRetryable(batchId: string, options?: { cancelled?: boolean }): Promise<Job[]>;
  /**
   * A token that changes whenever anything in the store may have changed, by this process or
   * another: readers use it to reuse an answer computed from the same data.
   */
  dataVersion(): Promise<string>;
  /** How many jobs finished at or after `since` (for an overall rate). */
  finishedSince(since: number): Promise<number>;
  /** One registered artifact (for downloads); satisfies the artifact store's ArtifactIndex. */
  getArtifact(id: string): Promise<RegisteredArtifact | undefined>;
  /** The artifacts a job registered, oldest first (bounded: at most MAX_PAGE). */
  listArtifacts(jobId: number): Promise<RegisteredArtifact[]>;
  /**
   * Registers artifacts that no job produced: inputs such as a candidate patch handed to
   * `proctor grade`. Prefer the enqueue's own `inputs`, which cannot leave a row without a job.
   */
  addInputs(records: readonly ArtifactRecord[]): Promise<void>;
  /**
   * Registered input artifacts named `name` whose bytes have one of these SHA-256 digests, at
   * most one per digest: a candidate is identified by its content, so the same bytes enqueued
   * again reuse the artifact instead of storing another.
   */
  findInputs(name: string, sha256s: readonly string[]): Promise<RegisteredArtifact[]>;
  /**
   * Unregisters up to `limit` input artifacts registered before `olderThan` that no job names
   * (the leftovers of a crash, or of jobs since pruned) and returns them, so that their bytes
   * can be discarded.
   */
  takeUnreferencedInputs(olderThan: number, limit?: number): Promise<ArtifactRecord[]>;
  /**
   * The latest judgement of each task id (newest first, at most `limit`, ≤ MAX_PAGE), and
   * how many tasks are valid and quarantined by their latest judgement.
   */
  taskValidity(limit?: number): Promise<{
    tasks: TaskValidity[];
    counts: { valid: number; quarantined: number };
  }>;
  /**
   * Optional: calls `listener` with a kind soon after any process or host made jobs of that
   * kind claimable (an enqueue, a release, a reclaim), so claimers need not wait for their next
   * poll. Resolves once listening; the function it returns stops. A store without it (SQLite,
   * one machine, where the in-process pool is told directly) leaves claimers to their poll,
   * which stays the backstop either way: a missed wake-up only costs a poll interval.
   */
  subscribe?(listener: (kind: JobKind) => void): Promise<() => Promise<void>>;
  /**
   * The judgement of one task id for one bundle content (the latest baseline of exactly that
   * bundle), or undefined when none judged it: a grade uses it to mark a quarantined task.
   */
  taskJudgement(taskId: string, contentHash: string): Promise<TaskValidity | undefined>;
  /**
   * The stored per-test statuses of these jobs (CompletionExtras.tests), as their JSON text,
   * by job id; a job without any (not a grade or baseline, or finished before they were
   * stored) is not in the map. At most MAX_TEST_STATUS_JOBS ids per call (USAGE otherwise).
   */
  testStatuses(jobIds: readonly number[]): Promise<Map<number, string>>;
  /**
   * Records what a running job is doing while it waits (an image pull's progress, as JSON
   * text of at most MAX_PROGRESS_BYTES; USAGE otherwise), or clears it with null. Fenced: false,
   * and nothing written, when the lease is no longer held. Callers write it at most about once
   * a second.
   */
  setProgress(lease: Lease, progress: string | null): Promise<boolean>;
  /**
   * The recorded progress of those of these jobs that are running at the attempt that wrote
   * it, as its JSON text, by job id. At most MAX_PAGE ids per call (USAGE otherwise).
   */
  jobProgress(jobIds: readonly number[]): Promise<Map<number, string>>;
  /** Deletes up to `limit` finished jobs that finished before `olderThan`; returns how many. */
  pruneFinished(olderThan: number, limit?: number): Promise<number>;

  close(): Promise<void>;
}
