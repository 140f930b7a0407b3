// Shared pieces of the PostgreSQL store's statements: database time, the column lists that
// map rows to the JobStore's types, and row conversion.
//
// Time: every statement that writes or compares a time takes "now" as its first parameter,
// `$1`: NULL means the database's own now() (in milliseconds), which is what hosts use, so
// that leases never depend on a host's clock. A store opened with a `clock` (tests only, like
// graphile-worker's useNodeTime) passes that clock's time instead.
import type pg from 'pg';
import type { Clock } from '../../clock.js';
import type { Batch, Job } from '../store.js';

/** The time of the statement, in ms: `$1`, or the transaction's now(). */
export const NOW = `coalesce($1::bigint, floor(extract(epoch from now()) * 1000)::bigint)`;

/** The value bound to `$1` (see NOW). */
export type TimeParam = number | null;

export function timeSource(clock: Clock | undefined): () => TimeParam {
  return clock ? () => clock.now() : () => null;
}

export const JOB_COLUMNS = `id, batch_id AS "batchId", parent_id AS "parentId", kind, status, priority,
  payload, idempotency_key AS "idempotencyKey", attempt, max_attempts AS "maxAttempts",
  run_at AS "runAt", lease_owner AS "leaseOwner", lease_expires_at AS "leaseExpiresAt",
  heartbeat_at AS "heartbeatAt", cancel_requested_at AS "cancelRequestedAt", result,
  last_error AS "lastError", error_code AS "errorCode", outcome, created_at AS "createdAt",
  updated_at AS "updatedAt", started_at AS "startedAt", finished_at AS "finishedAt"`;

/** The same columns, qualified by a table alias (for UPDATE … FROM … RETURNING). */
export function jobColumnsOf(alias: string): string {
  return JOB_COLUMNS.replace(/(^|,\s*)([a-z_]+)/g, `$1${alias}.$2`);
}

export const BATCH_COLUMNS = `id, idempotency_key AS "idempotencyKey", label, total, created_at AS "createdAt"`;

export const ARTIFACT_COLUMNS = `id, job_id AS "jobId", attempt, name, media_type AS "mediaType",
  sha256, size, rel_path AS "relPath", created_at AS "createdAt"`;

/** A jobs row as the driver returns it: a Job whose payload and result are still JSON text. */
export type JobRecord = Omit<Job, 'payload' | 'result'> & {
  payload: string;
  result: string | null;
};

export function toJob(row: JobRecord): Job {
  return {
    ...row,
    payload: JSON.parse(row.payload) as unknown,
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
  };
}

export function toBatch(row: Batch): Batch {
  return {
    id: row.id,
    idempotencyKey: row.idempotencyKey,
    label: row.label,
    total: row.total,
    createdAt: row.createdAt,
  };
}

/** A query runner: the pool, or one client inside a transaction. */
export type Queryable = Pick<pg.PoolClient, 'query'>;
