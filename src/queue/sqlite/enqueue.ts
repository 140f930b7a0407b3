// Enqueue one job, or a batch of jobs in one transaction. An idempotency key makes a replay
// return the job (or batch) it made the first time; the same key with a different request is
// an IDEMPOTENCY_CONFLICT, never a silent second job. Payloads are validated before the
// transaction, so the write lock is held only for the inserts.
import { createHash, randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { z } from 'zod';
import { ProctorError } from '../../errors.js';
import { zodProblem } from '../../problems.js';
import { JOB_KINDS, OUTCOME_CLASSES, type JobKind, type OutcomeClass } from '../constants.js';
import { MAX_PAYLOAD_BYTES, payloadSchemas } from '../payloads.js';
import type { BatchRequest, BatchResult } from '../store.js';

const envelope = {
  priority: z.number().int().min(-1000).max(1000).default(0),
  idempotencyKey: z.string().min(1).max(512).optional(),
  maxAttempts: z.number().int().min(1).max(100).optional(),
  parentId: z.number().int().positive().optional(),
  runAt: z.number().int().nonnegative().optional(),
  finished: z
    .object({ result: z.unknown(), outcome: z.enum(OUTCOME_CLASSES).nullable() })
    .strict()
    .optional(),
};

interface ParsedRequest {
  kind: JobKind;
  payload: unknown;
  priority: number;
  maxAttempts?: number;
  idempotencyKey?: string;
  parentId?: number;
  runAt?: number;
  finished?: { result: unknown; outcome: OutcomeClass | null };
}

/** One schema per kind, its payload included, so that a request is validated in one parse. */
const requestSchema = z.discriminatedUnion(
  'kind',
  JOB_KINDS.map((kind) =>
    z.object({ kind: z.literal(kind), payload: payloadSchemas[kind], ...envelope }).strict(),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

const batchSchema = z
  .object({
    idempotencyKey: z.string().min(1).max(512).optional(),
    label: z.string().max(200).optional(),
    batchId: z.string().min(1).max(64).optional(),
    jobs: z.array(z.unknown()).max(100_000),
  })
  .strict();

/** A validated job, ready to insert. */
export interface PreparedJob {
  kind: JobKind;
  payload: string;
  priority: number;
  idempotencyKey: string | null;
  maxAttempts: number;
  parentId: number | null;
  runAt: number | null;
  /** Recorded done at enqueue, with this result (JSON) and class; null for a job to run. */
  finished: { result: string; outcome: OutcomeClass | null } | null;
}

function invalid(where: string, error: z.ZodError): ProctorError {
  const { path, detail } = zodProblem(error, where);
  return new ProctorError('PAYLOAD_INVALID', `invalid job request: ${path}: ${detail}`, {
    data: { path },
  });
}

/** Tries per job for a request that does not set its own `maxAttempts`, unless the store's options say otherwise (`[queue] max_attempts`). */
export const DEFAULT_MAX_ATTEMPTS = 3;

export function prepareJob(
  request: unknown,
  where = 'job',
  defaultMaxAttempts = DEFAULT_MAX_ATTEMPTS,
): PreparedJob {
  const parsed = requestSchema.safeParse(request);
  if (!parsed.success) throw invalid(where, parsed.error);
  const r = parsed.data as unknown as ParsedRequest;
  // Only a grade recorded finished at enqueue (a prediction without a patch) has no candidate.
  if (
    r.kind === 'grade' &&
    r.finished === undefined &&
    (r.payload as { candidate?: unknown }).candidate === undefined
  ) {
    throw new ProctorError(
      'PAYLOAD_INVALID',
      `invalid job request: ${where}.payload.candidate: required (only a grade recorded finished at enqueue has none)`,
      { data: { path: `${where}.payload.candidate` } },
    );
  }
  const payload = JSON.stringify(r.payload);
  // UTF-8 takes at most 3 bytes per UTF-16 unit: count bytes only when it could matter.
  if (payload.length * 3 > MAX_PAYLOAD_BYTES && Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
    throw new ProctorError(
      'PAYLOAD_INVALID',
      `invalid job request: ${where}.payload: larger than ${MAX_PAYLOAD_BYTES} bytes`,
    );
  }
  return {
    kind: r.kind,
    payload,
    priority: r.priority,
    idempotencyKey: r.idempotencyKey ?? null,
    maxAttempts: r.maxAttempts ?? defaultMaxAttempts,
    parentId: r.parentId ?? null,
    runAt: r.runAt ?? null,
    finished:
      r.finished === undefined
        ? null
        : { result: JSON.stringify(r.finished.result ?? null), outcome: r.finished.outcome },
  };
}

const COLUMNS =
  '(batch_id, parent_id, kind, status, priority, payload, idempotency_key, max_attempts, run_at, created_at, updated_at)';
const ROW = "(?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)";
const CHUNK = 100;

/** Prepared statements for one connection, made on first use. */
export function createEnqueueOps(sqlite: Database.Database) {
  const insertOne = sqlite.prepare(
    `INSERT INTO jobs ${COLUMNS} VALUES ${ROW} ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id`,
  );
  const chunkValues = Array.from({ length: CHUNK }, () => ROW).join(', ');
  const insertChunk = sqlite.prepare(
    `INSERT INTO jobs ${COLUMNS} VALUES ${chunkValues} ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id, idempotency_key AS key`,
  );
  // Without keys nothing can conflict, so no RETURNING is needed: AUTOINCREMENT gives the
  // rows of one statement consecutive ids ending at lastInsertRowid.
  const insertChunkNoKeys = sqlite.prepare(`INSERT INTO jobs ${COLUMNS} VALUES ${chunkValues}`);
  const byKey = sqlite.prepare('SELECT id, kind, payload FROM jobs WHERE idempotency_key = ?');
  const batchByKey = sqlite.prepare(
    'SELECT id, request_hash AS requestHash FROM batches WHERE idempotency_key = ?',
  );
  const insertBatch = sqlite.prepare(
    'INSERT INTO batches (id, idempotency_key, request_hash, label, total, created_at) VALUES (?, ?, ?, ?, 0, ?)',
  );
  const setBatchTotal = sqlite.prepare('UPDATE batches SET total = ? WHERE id = ?');
  const growBatch = sqlite.prepare('UPDATE batches SET total = total + ? WHERE id = ?');
  const batchExists = sqlite.prepare('SELECT 1 FROM batches WHERE id = ?');
  // A job recorded as finished when it is enqueued (a prediction with an empty patch): inserted
  // queued like any other, then ended in the same transaction, so no worker ever sees it
  // queued. A replayed key whose job already ended is left as it is.
  const finishAtEnqueue = sqlite.prepare(
    "UPDATE jobs SET status = 'done', result = ?, outcome = ?, finished_at = ?, updated_at = ? WHERE id = ? AND status = 'queued' AND attempt = 0",
  );
  const batchJobIds = sqlite.prepare('SELECT id FROM jobs WHERE batch_id = ? ORDER BY id');
  const parentExists = sqlite.prepare('SELECT 1 FROM jobs WHERE id = ?');

  const PARAMS = 10;
  function writeRow(
    target: unknown[],
    at: number,
    job: PreparedJob,
    batchId: string | null,
    now: number,
  ) {
    target[at] = batchId;
    target[at + 1] = job.parentId;
    target[at + 2] = job.kind;
    target[at + 3] = job.priority;
    target[at + 4] = job.payload;
    target[at + 5] = job.idempotencyKey;
    target[at + 6] = job.maxAttempts;
    target[at + 7] = job.runAt ?? now;
    target[at + 8] = now;
    target[at + 9] = now;
  }
  const params = (job: PreparedJob, batchId: string | null, now: number): unknown[] => {
    const row = new Array<unknown>(PARAMS);
    writeRow(row, 0, job, batchId, now);
    return row;
  };
  /** A whole chunk's parameters, written into one reused array (no per-row arrays). */
  const chunkParams = new Array<unknown>(CHUNK * PARAMS);
  const fillChunk = (jobs: PreparedJob[], batchId: string | null, now: number): unknown[] => {
    jobs.forEach((job, i) => writeRow(chunkParams, i * PARAMS, job, batchId, now));
    return chunkParams;
  };

  /** The existing job for a key, checked to be the same request. */
  function existing(job: PreparedJob): number {
    const row = byKey.get(job.idempotencyKey) as
      { id: number; kind: string; payload: string } | undefined;
    if (!row) throw new ProctorError('INTERNAL', `job with key ${job.idempotencyKey} vanished`);
    if (row.kind !== job.kind || row.payload !== job.payload) {
      throw new ProctorError(
        'IDEMPOTENCY_CONFLICT',
        `idempotency key ${JSON.stringify(job.idempotencyKey)} already names job ${row.id} with a different request`,
        { data: { jobId: row.id } },
      );
    }
    return row.id;
  }

  function checkParents(jobs: PreparedJob[]): void {
    for (const job of jobs) {
      if (job.parentId !== null && parentExists.get(job.parentId) === undefined) {
        throw new ProctorError('JOB_NOT_FOUND', `parent job ${job.parentId} does not exist`);
      }
    }
  }

  function finishAll(jobs: readonly PreparedJob[], ids: readonly number[], now: number): void {
    jobs.forEach((job, i) => {
      if (job.finished !== null) {
        finishAtEnqueue.run(job.finished.result, job.finished.outcome, now, now, ids[i]);
      }
    });
  }

  /** Runs inside a write transaction. */
  function one(job: PreparedJob, now: number): { id: number; created: boolean } {
    checkParents([job]);
    const row = insertOne.get(...params(job, null, now)) as { id: number } | undefined;
    const done = row ? { id: row.id, created: true } : { id: existing(job), created: false };
    finishAll([job], [done.id], now);
    return done;
  }

  /**
   * Runs inside a write transaction: adds jobs to an existing batch (a retry's new attempts),
   * whose total grows by the jobs inserted.
   */
  function append(
    batchId: string,
    jobs: PreparedJob[],
    now: number,
  ): BatchResult & { batchId: string } {
    if (batchExists.get(batchId) === undefined) {
      throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
    }
    checkParents(jobs);
    const jobIds: number[] = [];
    let inserted = 0;
    for (const job of jobs) {
      const row = insertOne.get(...params(job, batchId, now)) as { id: number } | undefined;
      if (row) inserted += 1;
      jobIds.push(row ? row.id : existing(job));
    }
    finishAll(jobs, jobIds, now);
    if (inserted > 0) growBatch.run(inserted, batchId);
    return {
      batch: null,
      batchId,
      created: inserted > 0,
      jobIds,
      inserted,
      existing: jobs.length - inserted,
    };
  }

  /** Runs inside a write transaction. */
  function batch(
    request: { idempotencyKey?: string; label?: string },
    jobs: PreparedJob[],
    requestHash: string,
    now: number,
  ): BatchResult & { batchId: string | null } {
    if (request.idempotencyKey !== undefined) {
      const prior = batchByKey.get(request.idempotencyKey) as
        { id: string; requestHash: string } | undefined;
      if (prior) {
        if (prior.requestHash !== requestHash) {
          throw new ProctorError(
            'IDEMPOTENCY_CONFLICT',
            `batch key ${JSON.stringify(request.idempotencyKey)} already names batch ${prior.id} with a different request`,
            { data: { batchId: prior.id } },
          );
        }
        const ids = (batchJobIds.all(prior.id) as Array<{ id: number }>).map((r) => r.id);
        return {
          batch: null,
          batchId: prior.id,
          created: false,
          jobIds: ids,
          inserted: 0,
          existing: ids.length,
        };
      }
    }
    checkParents(jobs);
    const batchId = newBatchId(now);
    insertBatch.run(
      batchId,
      request.idempotencyKey ?? null,
      requestHash,
      request.label ?? null,
      now,
    );

    const jobIds = new Array<number>(jobs.length);
    let inserted = 0;
    for (let start = 0; start < jobs.length; start += CHUNK) {
      const chunk = jobs.slice(start, start + CHUNK);
      let rows: Array<{ id: number; key: string | null }>;
      if (chunk.length === CHUNK && chunk.every((job) => job.idempotencyKey === null)) {
        const info = insertChunkNoKeys.run(fillChunk(chunk, batchId, now));
        const last = Number(info.lastInsertRowid);
        chunk.forEach((_, i) => (jobIds[start + i] = last - CHUNK + 1 + i));
        inserted += CHUNK;
        continue;
      }
      if (chunk.length === CHUNK) {
        rows = insertChunk.all(fillChunk(chunk, batchId, now)) as typeof rows;
      } else {
        rows = [];
        for (const job of chunk) {
          const row = insertOne.get(...params(job, batchId, now)) as { id: number } | undefined;
          if (row) rows.push({ id: row.id, key: job.idempotencyKey });
        }
      }
      // AUTOINCREMENT ids rise in insertion order, so the inserted rows of a chunk, sorted by
      // id, line up with the requests that were not skipped for an existing key.
      // A key repeated within one chunk inserts only its first occurrence.
      const insertedKeys = new Set(rows.map((r) => r.key));
      const ids = rows.map((r) => r.id).sort((a, b) => a - b);
      const assigned = new Set<string>();
      let next = 0;
      chunk.forEach((job, i) => {
        const key = job.idempotencyKey;
        const skipped = key !== null && (!insertedKeys.has(key) || assigned.has(key));
        if (key !== null && !skipped) assigned.add(key);
        jobIds[start + i] = skipped ? -1 : (ids[next++] as number);
      });
      inserted += rows.length;
    }
    // Resolve skipped ones after all inserts, so a key repeated within the batch finds its twin.
    jobs.forEach((job, i) => {
      if (jobIds[i] === -1) jobIds[i] = existing(job);
    });
    finishAll(jobs, jobIds, now);
    if (inserted === 0 && request.idempotencyKey === undefined) {
      sqlite.prepare('DELETE FROM batches WHERE id = ?').run(batchId);
      return {
        batch: null,
        batchId: null,
        created: false,
        jobIds,
        inserted,
        existing: jobs.length,
      };
    }
    setBatchTotal.run(inserted, batchId);
    return {
      batch: null,
      batchId,
      created: true,
      jobIds,
      inserted,
      existing: jobs.length - inserted,
    };
  }

  return { one, batch, append };
}

/** Sortable batch ids: creation time (base 36, fixed width), then randomness. */
export function newBatchId(now: number): string {
  return `b_${now.toString(36).padStart(9, '0')}${randomBytes(5).toString('hex')}`;
}

export function prepareBatch(
  request: BatchRequest,
  defaultMaxAttempts = DEFAULT_MAX_ATTEMPTS,
): {
  meta: { idempotencyKey?: string; label?: string; batchId?: string };
  jobs: PreparedJob[];
  requestHash: string;
} {
  const parsed = batchSchema.safeParse(request);
  if (!parsed.success) throw invalid('batch', parsed.error);
  if (
    parsed.data.batchId !== undefined &&
    (parsed.data.idempotencyKey !== undefined || parsed.data.label !== undefined)
  ) {
    throw new ProctorError(
      'PAYLOAD_INVALID',
      'invalid job request: batch: batchId adds to an existing batch, which keeps its own key and label',
    );
  }
  const jobs = parsed.data.jobs.map((job, i) => prepareJob(job, `jobs[${i}]`, defaultMaxAttempts));
  const hash = createHash('sha256');
  hash.update(JSON.stringify([parsed.data.label ?? null]));
  // One hash update per 1,000 jobs: cheaper than one per job.
  for (let start = 0; start < jobs.length; start += 1000) {
    let text = '';
    for (const job of jobs.slice(start, start + 1000)) {
      text += `${job.kind}\0${job.payload}\0${job.priority}\0${job.idempotencyKey ?? ''}\0${job.maxAttempts}\0${job.parentId ?? ''}\0${job.runAt ?? ''}${job.finished === null ? '' : `\0${job.finished.result}\0${job.finished.outcome ?? ''}`}\n`;
    }
    hash.update(text);
  }
  const meta: { idempotencyKey?: string; label?: string; batchId?: string } = {};
  if (parsed.data.batchId !== undefined) meta.batchId = parsed.data.batchId;
  if (parsed.data.idempotencyKey !== undefined) meta.idempotencyKey = parsed.data.idempotencyKey;
  if (parsed.data.label !== undefined) meta.label = parsed.data.label;
  return { meta, jobs, requestHash: hash.digest('hex') };
}
