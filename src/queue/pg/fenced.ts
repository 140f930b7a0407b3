// The writes a worker makes after its claim, on PostgreSQL. Each matches (id, attempt) and
// status = 'running', exactly as on SQLite: the attempt is incremented by every claim under
// the row's lock, so (id, attempt) names one claim and so one owner; a worker whose lease was
// reclaimed, or whose job was finished or cancelled elsewhere, changes nothing and is told so.
// A write that touches several rows locks them in id order first, so two of them never
// deadlock.
import type { OutcomeClass } from '../constants.js';
import type { ArtifactRecord, FailOutcome, HeartbeatResult, Lease } from '../store.js';
import type { TaskValidityInput } from '../store.js';
import { holdBlobs } from './blobs.js';
import { storeArtifacts } from './inputs.js';
import { NOW, type Queryable, type TimeParam } from './sql.js';

const HELD = `id = $2 AND attempt = $3 AND status = 'running'`;
const ENDED = `lease_owner = NULL, lease_expires_at = NULL, updated_at = ${NOW}`;

const HEARTBEAT = `WITH held AS (
    SELECT j.id FROM jobs j JOIN unnest($2::bigint[], $3::int[]) AS l(id, attempt)
      ON j.id = l.id AND j.attempt = l.attempt
    WHERE j.status = 'running'
    ORDER BY j.id FOR UPDATE OF j)
  UPDATE jobs j SET lease_expires_at = ${NOW} + $4, heartbeat_at = ${NOW}, updated_at = ${NOW}
  FROM held WHERE j.id = held.id
  RETURNING j.id, j.cancel_requested_at AS "cancelRequestedAt"`;

export async function heartbeat(
  db: Queryable,
  leases: Lease[],
  leaseMs: number,
  now: TimeParam,
): Promise<HeartbeatResult[]> {
  const { rows } = await db.query<{ id: number; cancelRequestedAt: number | null }>(HEARTBEAT, [
    now,
    leases.map((l) => l.id),
    leases.map((l) => l.attempt),
    leaseMs,
  ]);
  const alive = new Map(rows.map((r) => [r.id, r.cancelRequestedAt]));
  return leases.map((lease) => ({
    id: lease.id,
    attempt: lease.attempt,
    alive: alive.has(lease.id),
    cancelRequested: (alive.get(lease.id) ?? null) !== null,
  }));
}

export async function cancelRequested(db: Queryable, owner: string): Promise<Lease[]> {
  const { rows } = await db.query<Lease>(
    `SELECT id, attempt FROM jobs
     WHERE status = 'running' AND lease_owner = $1 AND cancel_requested_at IS NOT NULL`,
    [owner],
  );
  return rows;
}

const COMPLETE = `UPDATE jobs SET ${ENDED}, status = 'done', result = $4, last_error = NULL,
    error_code = NULL, outcome = $5, finished_at = ${NOW}
  WHERE ${HELD} RETURNING id`;

/**
 * Runs inside the completion's transaction, or alone when it writes nothing but the job's row
 * (one statement is atomic by itself); false when the lease is lost.
 */
export async function complete(
  db: Queryable,
  lease: Lease,
  result: unknown,
  records: ArtifactRecord[],
  now: TimeParam,
  task?: TaskValidityInput,
  outcome: OutcomeClass | null = null,
  tests?: unknown,
): Promise<boolean> {
  if (records.length > 0) await holdBlobs(db);
  // Named (prepared): with the claim, the one statement every no-op job's round trip costs.
  const done = await db.query({
    name: 'proctor_complete',
    text: COMPLETE,
    values: [now, lease.id, lease.attempt, JSON.stringify(result ?? null), outcome],
  });
  if (done.rows.length === 0) return false;
  if (tests !== undefined) {
    await db.query(
      `INSERT INTO test_statuses (job_id, tests) VALUES ($1, $2)
       ON CONFLICT (job_id) DO UPDATE SET tests = excluded.tests`,
      [lease.id, JSON.stringify(tests)],
    );
  }
  if (task !== undefined) {
    await db.query(
      `INSERT INTO tasks (task_id, content_hash, bundle_path, validity, reason, detail, job_id,
         checked_at)
       VALUES ($2, $3, $4, $5, $6, $7, $8, ${NOW})
       ON CONFLICT (task_id, content_hash) DO UPDATE SET bundle_path = excluded.bundle_path,
         validity = excluded.validity, reason = excluded.reason, detail = excluded.detail,
         job_id = excluded.job_id, checked_at = excluded.checked_at`,
      [
        now,
        task.taskId,
        task.contentHash,
        task.bundlePath,
        task.validity,
        task.reason,
        task.detail,
        lease.id,
      ],
    );
  }
  // After the fence: a late finish stores no bytes.
  await storeArtifacts(db, records, lease, now);
  return true;
}

// Many plain completions in one statement (coalesce.ts): the held rows are locked in id order,
// like every write that touches several rows, then each gets its own result and class.
const COMPLETE_MANY = `WITH l AS (
    SELECT * FROM unnest($2::bigint[], $3::int[], $4::text[], $5::text[])
      AS l(id, attempt, result, outcome)),
  held AS (
    SELECT j.id, j.attempt FROM jobs j JOIN l ON j.id = l.id AND j.attempt = l.attempt
    WHERE j.status = 'running'
    ORDER BY j.id FOR UPDATE OF j)
  UPDATE jobs j SET ${ENDED}, status = 'done', result = l.result, last_error = NULL,
    error_code = NULL, outcome = l.outcome, finished_at = ${NOW}
  FROM held JOIN l ON l.id = held.id AND l.attempt = held.attempt
  WHERE j.id = held.id
  RETURNING j.id, j.attempt`;

export interface PlainCompletion {
  lease: Lease;
  /** The result as JSON text (encoded by its caller, so that a value JSON refuses fails alone). */
  result: string;
  outcome: OutcomeClass | null;
}

/**
 * Completions that write nothing but their job's row, in one statement (atomic by itself);
 * one answer per completion, false when its lease is lost. A lease named twice is answered by
 * its first completion only.
 */
export async function completeMany(
  db: Queryable,
  completions: PlainCompletion[],
  now: TimeParam,
): Promise<boolean[]> {
  const key = (l: Lease) => `${l.id}:${l.attempt}`;
  const seen = new Set<string>();
  const first = completions.map((c) => {
    if (seen.has(key(c.lease))) return false;
    seen.add(key(c.lease));
    return true;
  });
  const sent = completions.filter((_, i) => first[i]);
  const { rows } = await db.query<Lease>({
    name: 'proctor_complete_many',
    text: COMPLETE_MANY,
    values: [
      now,
      sent.map((c) => c.lease.id),
      sent.map((c) => c.lease.attempt),
      sent.map((c) => c.result),
      sent.map((c) => c.outcome),
    ],
  });
  const done = new Set(rows.map(key));
  return completions.map((c, i) => (first[i] ?? false) && done.has(key(c.lease)));
}

/**
 * One statement decides the outcome under the row's lock: cancelled when a cancel was asked
 * for meanwhile, back to the queue after `delayMs` while attempts remain (and the error is
 * retryable), else failed.
 */
export async function fail(
  db: Queryable,
  lease: Lease,
  error: string,
  retryable: boolean,
  code: string,
  delayMs: number,
  now: TimeParam,
  outcome: OutcomeClass | null = null,
): Promise<FailOutcome> {
  const status = `CASE WHEN cancel_requested_at IS NOT NULL THEN 'cancelled'
    WHEN $4::boolean AND attempt < max_attempts THEN 'queued' ELSE 'failed' END`;
  // The class applies only when this failure ends the job: a retried job has none until its
  // last attempt ends, and a cancelled one none at all.
  const { rows } = await db.query<{ status: 'queued' | 'failed' | 'cancelled' }>(
    `UPDATE jobs SET ${ENDED}, status = ${status},
       run_at = CASE WHEN ${status} = 'queued' THEN ${NOW} + $5 ELSE run_at END,
       finished_at = CASE WHEN ${status} = 'queued' THEN NULL ELSE ${NOW} END,
       last_error = $6,
       error_code = CASE WHEN cancel_requested_at IS NOT NULL THEN 'CANCELLED' ELSE $7 END,
       outcome = CASE WHEN ${status} = 'failed' THEN $8::text ELSE NULL END
     WHERE ${HELD} RETURNING status`,
    [now, lease.id, lease.attempt, retryable, delayMs, error, code, outcome],
  );
  const ended = rows[0]?.status;
  if (ended === undefined) return 'lost';
  return ended === 'queued' ? 'retrying' : ended;
}

export async function markCancelled(
  db: Queryable,
  lease: Lease,
  reason: string,
  now: TimeParam,
): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE jobs SET ${ENDED}, status = 'cancelled', last_error = $4, error_code = 'CANCELLED',
       finished_at = ${NOW}
     WHERE ${HELD} RETURNING id`,
    [now, lease.id, lease.attempt, reason],
  );
  return rows.length > 0;
}

/** Back to the queue at once, without spending an attempt (shutdown). */
export async function release(
  db: Queryable,
  lease: Lease,
  reason: string,
  now: TimeParam,
): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE jobs SET ${ENDED}, status = 'queued', run_at = ${NOW}, last_error = $4,
       error_code = NULL, max_attempts = max_attempts + 1
     WHERE ${HELD} RETURNING id`,
    [now, lease.id, lease.attempt, reason],
  );
  return rows.length > 0;
}
