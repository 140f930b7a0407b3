// The durable job table and its neighbours, as a drizzle schema. drizzle-kit generates the
// migrations in drizzle/ from this file; never hand-edit them.
//
// Invariants the database itself enforces (so that no bug above can break them):
// - status and kind are closed sets (CHECK);
// - a running job always has a lease owner and expiry, and no other status has one;
// - a finished job always has finished_at;
// - an idempotency key names at most one job, and one batch.
import { sql } from 'drizzle-orm';
import {
  type AnySQLiteColumn,
  check,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';
import {
  FINISHED_STATUSES,
  JOB_KINDS,
  JOB_STATUSES,
  OUTCOME_CLASSES,
  sqlList,
} from './constants.js';

export const batches = sqliteTable(
  'batches',
  {
    id: text('id').primaryKey(),
    idempotencyKey: text('idempotency_key'),
    /** SHA-256 of the canonical request; a replayed key with another request is a conflict. */
    requestHash: text('request_hash').notNull(),
    label: text('label'),
    total: integer('total').notNull(),
    /**
     * USD the batch's solves have spent (its `--max-cost` ledger): every metered model answer
     * adds its cost in one atomic UPDATE … RETURNING, whichever process or host metered it.
     */
    spentUsd: real('spent_usd').notNull().default(0),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('batches_idempotency_key').on(t.idempotencyKey),
    index('batches_created').on(t.createdAt),
    check('batches_total_nonnegative', sql`${t.total} >= 0`),
    check('batches_spent_nonnegative', sql`${t.spentUsd} >= 0`),
  ],
);

export const jobs = sqliteTable(
  'jobs',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    batchId: text('batch_id').references(() => batches.id, { onDelete: 'cascade' }),
    parentId: integer('parent_id').references((): AnySQLiteColumn => jobs.id, {
      onDelete: 'set null',
    }),
    kind: text('kind', { enum: JOB_KINDS }).notNull(),
    status: text('status', { enum: JOB_STATUSES }).notNull().default('queued'),
    priority: integer('priority').notNull().default(0),
    payload: text('payload').notNull(),
    idempotencyKey: text('idempotency_key'),
    /** Incremented by every claim; (id, attempt) fences every write after the claim. */
    attempt: integer('attempt').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(3),
    /** Not claimable before this time (backoff after a retryable failure). */
    runAt: integer('run_at').notNull(),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: integer('lease_expires_at'),
    heartbeatAt: integer('heartbeat_at'),
    cancelRequestedAt: integer('cancel_requested_at'),
    result: text('result'),
    lastError: text('last_error'),
    /** The ProctorError code of the last failure (WORKER_LOST, CANCELLED, …), for reports. */
    errorCode: text('error_code'),
    /**
     * The outcome class of a finished grade or solve (src/results/outcome.ts), written in the
     * same fenced transaction as its completion or failure; null otherwise.
     */
    outcome: text('outcome', { enum: OUTCOME_CLASSES }),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    startedAt: integer('started_at'),
    finishedAt: integer('finished_at'),
  },
  (t) => [
    // Claiming: the next queued job of a kind, by priority then age, without a sort.
    index('jobs_claim')
      .on(t.kind, sql`${t.priority} DESC`, t.runAt, t.id)
      .where(sql`${t.status} = 'queued'`),
    // Reclaiming expired leases; also serves owner look-ups, which scan running jobs only.
    index('jobs_lease')
      .on(t.leaseExpiresAt)
      .where(sql`${t.status} = 'running'`),
    // Listing and counting.
    index('jobs_batch_status').on(t.batchId, t.status),
    index('jobs_status_id').on(t.status, t.id),
    // Partial where most rows are NULL: an enqueue then updates only the indexes it needs.
    index('jobs_parent')
      .on(t.parentId)
      .where(sql`${t.parentId} IS NOT NULL`),
    // Rates and retention pruning.
    index('jobs_finished')
      .on(t.finishedAt)
      .where(sql`${t.finishedAt} IS NOT NULL`),
    uniqueIndex('jobs_idempotency_key')
      .on(t.idempotencyKey)
      .where(sql`${t.idempotencyKey} IS NOT NULL`),
    check('jobs_kind_known', sql.raw(`"kind" IN (${sqlList(JOB_KINDS)})`)),
    check('jobs_status_known', sql.raw(`"status" IN (${sqlList(JOB_STATUSES)})`)),
    check('jobs_attempt_bounds', sql`${t.attempt} >= 0 AND ${t.maxAttempts} >= 1`),
    check(
      'jobs_lease_iff_running',
      sql`(${t.status} = 'running') = (${t.leaseOwner} IS NOT NULL AND ${t.leaseExpiresAt} IS NOT NULL)`,
    ),
    check(
      'jobs_outcome_known',
      sql.raw(`"outcome" IS NULL OR "outcome" IN (${sqlList(OUTCOME_CLASSES)})`),
    ),
    // Only a finished job has a class (a cancelled one never does: it was not scored).
    check(
      'jobs_outcome_when_finished',
      sql`${t.outcome} IS NULL OR ${t.status} IN ('done', 'failed')`,
    ),
    check(
      'jobs_finished_has_time',
      sql.raw(`("status" IN (${sqlList(FINISHED_STATUSES)})) = ("finished_at" IS NOT NULL)`),
    ),
  ],
);

export type JobRow = typeof jobs.$inferSelect;
export type BatchRow = typeof batches.$inferSelect;

/**
 * Files Proctor stored for a job (patches, oracle logs, transcripts), registered by SHA-256.
 * Rows are written in the same transaction as the job's fenced completion, so an attempt that
 * lost its lease registers nothing. The bytes live in the artifact store under `rel_path`.
 */
export const artifacts = sqliteTable(
  'artifacts',
  {
    id: text('id').primaryKey(),
    jobId: integer('job_id').references(() => jobs.id, { onDelete: 'set null' }),
    attempt: integer('attempt'),
    name: text('name').notNull(),
    mediaType: text('media_type').notNull(),
    sha256: text('sha256').notNull(),
    size: integer('size').notNull(),
    relPath: text('rel_path').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    index('artifacts_job').on(t.jobId),
    check(
      'artifacts_sha256_hex',
      sql`length(${t.sha256}) = 64 AND ${t.sha256} NOT GLOB '*[^0-9a-f]*'`,
    ),
    check('artifacts_size_nonnegative', sql`${t.size} >= 0`),
  ],
);

export type ArtifactRow = typeof artifacts.$inferSelect;

/**
 * Task validity, kept by baseline jobs: one row per task id and bundle content, so that a
 * changed bundle is judged afresh and a pruned job does not take its task's verdict along.
 */
export const tasks = sqliteTable(
  'tasks',
  {
    taskId: text('task_id').notNull(),
    /** The bundle's content hash (every file, path and mode). */
    contentHash: text('content_hash').notNull(),
    bundlePath: text('bundle_path').notNull(),
    validity: text('validity', { enum: ['valid', 'quarantined'] }).notNull(),
    reason: text('reason').notNull(),
    detail: text('detail').notNull(),
    jobId: integer('job_id').references(() => jobs.id, { onDelete: 'set null' }),
    checkedAt: integer('checked_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.taskId, t.contentHash] }),
    index('tasks_checked').on(t.checkedAt),
    check('tasks_validity', sql`${t.validity} IN ('valid', 'quarantined')`),
  ],
);

/**
 * The task ids of the suite a batch was enqueued from (`proctor solve|grade SUITE`, grade
 * --predictions), as a JSON array: a report counts the suite's tasks that have no job in the
 * batch as "not submitted". One row per batch, written once; none for a batch of loose jobs.
 */
export const batchSuites = sqliteTable('batch_suites', {
  batchId: text('batch_id')
    .primaryKey()
    .references(() => batches.id, { onDelete: 'cascade' }),
  tasks: text('tasks').notNull(),
});

/**
 * The per-test statuses of a grade or baseline result (src/results/test-statuses.ts): one
 * JSON document per job, written in the same fenced transaction as its completion. A table
 * of its own, not a column of `jobs` nor a row per test: the document can be megabytes, and
 * every listing and report reads `jobs` rows whole, while only a few readers (swebench
 * report, --against, status JOB, export) want it; a row per test would make a task of
 * thousands of tests thousands of rows and index entries per grade, for reads that are
 * always per job. Jobs finished before this table existed have no row.
 */
export const testStatuses = sqliteTable(
  'test_statuses',
  {
    jobId: integer('job_id')
      .notNull()
      .references(() => jobs.id, { onDelete: 'cascade' }),
    tests: text('tests').notNull(),
  },
  // A table constraint rather than the column's: the same row types as PostgreSQL's (an
  // INTEGER PRIMARY KEY column would be optional on insert, a rowid the engine picks).
  (t) => [primaryKey({ columns: [t.jobId] })],
);

/**
 * What a running job is doing while it waits on something slow, as one JSON document (today an
 * image pull's bytes, total, rate and ETA: src/pull-progress.ts), so that `status`,
 * `--wait` and the page show it. A table of its own, not a column of `jobs`: it is written
 * about once a second while a pull goes, and listings read `jobs` rows whole. The attempt that
 * wrote it is kept, and readers show a row only while its job is running at that attempt, so a
 * row its worker had no chance to clear (a crash) is never shown for a later attempt.
 */
export const jobProgress = sqliteTable(
  'job_progress',
  {
    jobId: integer('job_id')
      .notNull()
      .references(() => jobs.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    progress: text('progress').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId] })],
);
