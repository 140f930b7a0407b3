// The PostgreSQL mirror of the SQLite schema (src/queue/schema.ts): the same tables, columns,
// indexes and CHECK constraints, in drizzle's pg-core dialect. drizzle-kit generates the
// migrations in drizzle-pg/ from this file (drizzle-pg.config.ts); never hand-edit them.
//
// Kept a plain mirror on purpose, so that a column added on one side is easy to add on the
// other; test/queue/schema-parity.test.ts fails to compile when the row or insert types of
// the two drift apart. The mapping:
// - times are integer milliseconds in both (bigint, read as a JS number: a store sets the
//   int8 type parser), so that rows and the Job type are the same on either store; leases and
//   every time that decides one come from the database's now(), never a host's clock;
// - ids are bigint identities (SQLite's INTEGER is 64-bit too);
// - payload and result stay JSON text, as in SQLite: one encoding for both stores.
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  check,
  customType,
  doublePrecision,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import {
  FINISHED_STATUSES,
  JOB_KINDS,
  JOB_STATUSES,
  OUTCOME_CLASSES,
  TASK_VALIDITIES,
  sqlList,
} from '../constants.js';

/** Milliseconds since the epoch, read as a JS number (exact below 2^53). */
const millis = (name: string) => bigint(name, { mode: 'number' });

export const batches = pgTable(
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
    spentUsd: doublePrecision('spent_usd').notNull().default(0),
    createdAt: millis('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('batches_idempotency_key').on(t.idempotencyKey),
    index('batches_created').on(t.createdAt),
    check('batches_total_nonnegative', sql`${t.total} >= 0`),
    check('batches_spent_nonnegative', sql`${t.spentUsd} >= 0`),
  ],
);

export const jobs = pgTable(
  'jobs',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedByDefaultAsIdentity(),
    batchId: text('batch_id').references(() => batches.id, { onDelete: 'cascade' }),
    parentId: bigint('parent_id', { mode: 'number' }).references((): AnyPgColumn => jobs.id, {
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
    runAt: millis('run_at').notNull(),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: millis('lease_expires_at'),
    heartbeatAt: millis('heartbeat_at'),
    cancelRequestedAt: millis('cancel_requested_at'),
    result: text('result'),
    lastError: text('last_error'),
    /** The ProctorError code of the last failure (WORKER_LOST, CANCELLED, …), for reports. */
    errorCode: text('error_code'),
    /**
     * The outcome class of a finished grade or solve (src/results/outcome.ts), written in the
     * same fenced transaction as its completion or failure; null otherwise.
     */
    outcome: text('outcome', { enum: OUTCOME_CLASSES }),
    createdAt: millis('created_at').notNull(),
    updatedAt: millis('updated_at').notNull(),
    startedAt: millis('started_at'),
    finishedAt: millis('finished_at'),
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

/** Files Proctor stored for a job, registered by SHA-256 (see the SQLite schema). */
export const artifacts = pgTable(
  'artifacts',
  {
    id: text('id').primaryKey(),
    jobId: bigint('job_id', { mode: 'number' }).references(() => jobs.id, {
      onDelete: 'set null',
    }),
    attempt: integer('attempt'),
    name: text('name').notNull(),
    mediaType: text('media_type').notNull(),
    sha256: text('sha256').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
    relPath: text('rel_path').notNull(),
    createdAt: millis('created_at').notNull(),
  },
  (t) => [
    index('artifacts_job').on(t.jobId),
    // PostgreSQL only (no twin in SQLite, which keeps files): finds the rows that still name
    // a blob, for retention and for the discard of one artifact's bytes.
    index('artifacts_sha256').on(t.sha256),
    check('artifacts_sha256_hex', sql`${t.sha256} ~ '^[0-9a-f]{64}$'`),
    check('artifacts_size_nonnegative', sql`${t.size} >= 0`),
  ],
);

export type ArtifactRow = typeof artifacts.$inferSelect;

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

/** The largest blob the table accepts: the PostgreSQL store's per-artifact cap (16 MiB). */
export const MAX_BLOB_BYTES = 16 * 1024 * 1024;

/**
 * PostgreSQL only: the bytes of every artifact, content-addressed by their SHA-256, so that any
 * host reads any job's artifacts and the same bytes stored twice (two jobs with the same log)
 * are one row. Written in the transaction that registers the `artifacts` rows naming them (a
 * fenced completion, an enqueue's inputs), so a late or failed finish stores nothing; removed
 * by retention once no row names them (src/queue/pg/artifacts.ts).
 */
export const artifactBlobs = pgTable(
  'artifact_blobs',
  {
    sha256: text('sha256').primaryKey(),
    size: integer('size').notNull(),
    bytes: bytea('bytes').notNull(),
    createdAt: millis('created_at').notNull(),
  },
  (t) => [
    check('artifact_blobs_sha256_hex', sql`${t.sha256} ~ '^[0-9a-f]{64}$'`),
    check(
      'artifact_blobs_size_bounded',
      sql.raw(`"size" >= 0 AND "size" <= ${MAX_BLOB_BYTES} AND octet_length("bytes") = "size"`),
    ),
  ],
);

/** Task validity, kept by baseline jobs: one row per task id and bundle content. */
export const tasks = pgTable(
  'tasks',
  {
    taskId: text('task_id').notNull(),
    contentHash: text('content_hash').notNull(),
    bundlePath: text('bundle_path').notNull(),
    validity: text('validity', { enum: TASK_VALIDITIES }).notNull(),
    reason: text('reason').notNull(),
    detail: text('detail').notNull(),
    jobId: bigint('job_id', { mode: 'number' }).references(() => jobs.id, {
      onDelete: 'set null',
    }),
    checkedAt: millis('checked_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.taskId, t.contentHash] }),
    index('tasks_checked').on(t.checkedAt),
    check('tasks_validity', sql.raw(`"validity" IN (${sqlList(TASK_VALIDITIES)})`)),
  ],
);

/** The task ids of the suite a batch was enqueued from, as a JSON array (see SQLite's). */
export const batchSuites = pgTable('batch_suites', {
  batchId: text('batch_id')
    .primaryKey()
    .references(() => batches.id, { onDelete: 'cascade' }),
  tasks: text('tasks').notNull(),
});

/** The per-test statuses of a grade or baseline result, one JSON document per job (see SQLite's). */
export const testStatuses = pgTable('test_statuses', {
  jobId: bigint('job_id', { mode: 'number' })
    .primaryKey()
    .references(() => jobs.id, { onDelete: 'cascade' }),
  tests: text('tests').notNull(),
});

/** What a running job is doing while it waits (an image pull's progress), as JSON (see SQLite's). */
export const jobProgress = pgTable('job_progress', {
  jobId: bigint('job_id', { mode: 'number' })
    .primaryKey()
    .references(() => jobs.id, { onDelete: 'cascade' }),
  attempt: integer('attempt').notNull(),
  progress: text('progress').notNull(),
  updatedAt: millis('updated_at').notNull(),
});
