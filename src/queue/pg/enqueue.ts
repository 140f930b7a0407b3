// Enqueue on PostgreSQL: the same validated requests as SQLite's (prepareJob, prepareBatch),
// inserted in the caller's transaction. Ids are drawn from the sequence first, so that each
// request knows its row whether or not its idempotency key conflicted; rows go in with
// unnest() (one statement per chunk, however many jobs) and ON CONFLICT DO NOTHING, and a
// skipped key is then looked up and checked to be the same request.
//
// Two hosts enqueueing the same key at once: the second INSERT waits on the unique index for
// the first transaction, then skips, and reads the committed row.
import { ProctorError } from '../../errors.js';
import type { PreparedJob } from '../sqlite/enqueue.js';
import { newBatchId } from '../sqlite/enqueue.js';
import type { BatchResult } from '../store.js';
import { NOW, type Queryable, type TimeParam } from './sql.js';

const CHUNK = 5000;

const INSERT = `INSERT INTO jobs (id, batch_id, parent_id, kind, status, priority, payload,
    idempotency_key, max_attempts, run_at, created_at, updated_at)
  SELECT r.id, $2::text, r.parent_id, r.kind, 'queued', r.priority, r.payload, r.key, r.max_attempts,
    coalesce(r.run_at, ${NOW}), ${NOW}, ${NOW}
  FROM unnest($3::bigint[], $4::bigint[], $5::text[], $6::int[], $7::text[], $8::text[],
    $9::int[], $10::bigint[]) WITH ORDINALITY
    AS r(id, parent_id, kind, priority, payload, key, max_attempts, run_at, n)
  ORDER BY r.n
  ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING id`;

async function insertJobs(
  db: Queryable,
  jobs: PreparedJob[],
  batchId: string | null,
  now: TimeParam,
): Promise<{ ids: number[]; inserted: Set<number> }> {
  const { rows } = await db.query<{ id: number }>(
    'SELECT nextval(pg_get_serial_sequence($1, $2)) AS id FROM generate_series(1, $3)',
    ['jobs', 'id', jobs.length],
  );
  const ids = rows.map((r) => r.id);
  const inserted = new Set<number>();
  for (let start = 0; start < jobs.length; start += CHUNK) {
    const chunk = jobs.slice(start, start + CHUNK);
    const result = await db.query<{ id: number }>(INSERT, [
      now,
      batchId,
      ids.slice(start, start + CHUNK),
      chunk.map((j) => j.parentId),
      chunk.map((j) => j.kind),
      chunk.map((j) => j.priority),
      chunk.map((j) => j.payload),
      chunk.map((j) => j.idempotencyKey),
      chunk.map((j) => j.maxAttempts),
      chunk.map((j) => j.runAt),
    ]);
    for (const row of result.rows) inserted.add(row.id);
  }
  return { ids, inserted };
}

async function checkParents(db: Queryable, jobs: PreparedJob[]): Promise<void> {
  const wanted = [...new Set(jobs.map((j) => j.parentId).filter((p): p is number => p !== null))];
  if (wanted.length === 0) return;
  const { rows } = await db.query<{ id: number }>('SELECT id FROM jobs WHERE id = ANY($1)', [
    wanted,
  ]);
  const found = new Set(rows.map((r) => r.id));
  const missing = wanted.find((id) => !found.has(id));
  if (missing !== undefined) {
    throw new ProctorError('JOB_NOT_FOUND', `parent job ${missing} does not exist`);
  }
}

/** The existing jobs for these requests' keys, each checked to be the same request. */
async function existing(db: Queryable, jobs: PreparedJob[]): Promise<Map<string, number>> {
  const keys = [...new Set(jobs.map((j) => j.idempotencyKey as string))];
  const { rows } = await db.query<{ id: number; kind: string; payload: string; key: string }>(
    'SELECT id, kind, payload, idempotency_key AS key FROM jobs WHERE idempotency_key = ANY($1)',
    [keys],
  );
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const ids = new Map<string, number>();
  for (const job of jobs) {
    const key = job.idempotencyKey as string;
    const row = byKey.get(key);
    if (!row) throw new ProctorError('INTERNAL', `job with key ${key} vanished`);
    if (row.kind !== job.kind || row.payload !== job.payload) {
      throw new ProctorError(
        'IDEMPOTENCY_CONFLICT',
        `idempotency key ${JSON.stringify(key)} already names job ${row.id} with a different request`,
        { data: { jobId: row.id } },
      );
    }
    ids.set(key, row.id);
  }
  return ids;
}

/** Inserts jobs (or finds the ones their keys name); returns each request's job id. */
async function place(
  db: Queryable,
  jobs: PreparedJob[],
  batchId: string | null,
  now: TimeParam,
): Promise<{ jobIds: number[]; inserted: number }> {
  if (jobs.length === 0) return { jobIds: [], inserted: 0 };
  await checkParents(db, jobs);
  const { ids, inserted } = await insertJobs(db, jobs, batchId, now);
  const skipped = jobs.filter((_, i) => !inserted.has(ids[i] as number));
  const found = skipped.length > 0 ? await existing(db, skipped) : new Map<string, number>();
  const jobIds = jobs.map((job, i) => {
    const id = ids[i] as number;
    return inserted.has(id) ? id : (found.get(job.idempotencyKey as string) as number);
  });
  await finishAll(db, jobs, jobIds, now);
  return { jobIds, inserted: inserted.size };
}

// A job recorded as finished when it is enqueued (a prediction with an empty patch): inserted
// queued like any other, then ended in the same transaction, so no worker ever sees it
// queued. A replayed key whose job already ended is left as it is.
const FINISH = `UPDATE jobs j SET status = 'done', result = f.result, outcome = f.outcome,
    finished_at = ${NOW}, updated_at = ${NOW}
  FROM unnest($2::bigint[], $3::text[], $4::text[]) AS f(id, result, outcome)
  WHERE j.id = f.id AND j.status = 'queued' AND j.attempt = 0`;

async function finishAll(
  db: Queryable,
  jobs: PreparedJob[],
  jobIds: number[],
  now: TimeParam,
): Promise<void> {
  const ended = jobs.flatMap((job, i) =>
    job.finished === null ? [] : [{ id: jobIds[i] as number, ...job.finished }],
  );
  if (ended.length === 0) return;
  await db.query(FINISH, [
    now,
    ended.map((e) => e.id),
    ended.map((e) => e.result),
    ended.map((e) => e.outcome),
  ]);
}

/** Runs inside a transaction. */
export async function enqueueOne(
  db: Queryable,
  job: PreparedJob,
  now: TimeParam,
): Promise<{ id: number; created: boolean }> {
  const { jobIds, inserted } = await place(db, [job], null, now);
  return { id: jobIds[0] as number, created: inserted === 1 };
}

/**
 * Runs inside a transaction: adds jobs to an existing batch (a retry's new attempts), whose
 * total grows by the jobs inserted. The batch row is locked first, so concurrent appends to
 * one batch add up.
 */
export async function appendToBatch(
  db: Queryable,
  batchId: string,
  jobs: PreparedJob[],
  now: TimeParam,
): Promise<BatchResult & { batchId: string }> {
  const { rows } = await db.query('SELECT 1 FROM batches WHERE id = $1 FOR UPDATE', [batchId]);
  if (rows.length === 0) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
  const { jobIds, inserted } = await place(db, jobs, batchId, now);
  if (inserted > 0) {
    await db.query('UPDATE batches SET total = total + $1 WHERE id = $2', [inserted, batchId]);
  }
  return {
    batch: null,
    batchId,
    created: inserted > 0,
    jobIds,
    inserted,
    existing: jobs.length - inserted,
  };
}

/** Runs inside a transaction. */
export async function enqueueBatch(
  db: Queryable,
  request: { idempotencyKey?: string; label?: string; batchId?: string },
  jobs: PreparedJob[],
  requestHash: string,
  now: TimeParam,
): Promise<BatchResult & { batchId: string | null }> {
  if (request.batchId !== undefined) return appendToBatch(db, request.batchId, jobs, now);
  const clockNow = await db.query<{ now: number }>(`SELECT ${NOW} AS now`, [now]);
  const batchId = newBatchId(clockNow.rows[0]?.now ?? Date.now());
  const created = await db.query<{ id: string }>(
    `INSERT INTO batches (id, idempotency_key, request_hash, label, total, created_at)
     VALUES ($2, $3, $4, $5, 0, ${NOW})
     ON CONFLICT (idempotency_key) DO NOTHING RETURNING id`,
    [now, batchId, request.idempotencyKey ?? null, requestHash, request.label ?? null],
  );
  if (created.rows.length === 0) {
    const prior = await db.query<{ id: string; requestHash: string }>(
      'SELECT id, request_hash AS "requestHash" FROM batches WHERE idempotency_key = $1',
      [request.idempotencyKey],
    );
    const row = prior.rows[0];
    if (!row)
      throw new ProctorError('INTERNAL', `batch with key ${request.idempotencyKey} vanished`);
    if (row.requestHash !== requestHash) {
      throw new ProctorError(
        'IDEMPOTENCY_CONFLICT',
        `batch key ${JSON.stringify(request.idempotencyKey)} already names batch ${row.id} with a different request`,
        { data: { batchId: row.id } },
      );
    }
    const { rows } = await db.query<{ id: number }>(
      'SELECT id FROM jobs WHERE batch_id = $1 ORDER BY id',
      [row.id],
    );
    const ids = rows.map((r) => r.id);
    return {
      batch: null,
      batchId: row.id,
      created: false,
      jobIds: ids,
      inserted: 0,
      existing: ids.length,
    };
  }
  const { jobIds, inserted } = await place(db, jobs, batchId, now);
  if (inserted === 0 && request.idempotencyKey === undefined) {
    await db.query('DELETE FROM batches WHERE id = $1', [batchId]);
    return { batch: null, batchId: null, created: false, jobIds, inserted, existing: jobs.length };
  }
  await db.query('UPDATE batches SET total = $1 WHERE id = $2', [inserted, batchId]);
  return {
    batch: null,
    batchId,
    created: true,
    jobIds,
    inserted,
    existing: jobs.length - inserted,
  };
}
