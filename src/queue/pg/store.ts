// The PostgreSQL JobStore: the same contract as the SQLite store (src/queue/sqlite/store.ts),
// for several hosts sharing one database. PostgreSQL is the distributed engine: claims lock
// rows FOR UPDATE SKIP LOCKED, every lease and every time that decides one comes from the
// database's now(), and every write after a claim is fenced on (id, attempt).
//
// Opening is lazy: the store is returned at once and connects (and migrates, under an advisory
// lock) on first use, so that opening stays synchronous like SQLite's and a command that never
// touches the queue never connects.
import type pg from 'pg';
import type { Clock } from '../../clock.js';
import { ProctorError, describeError } from '../../errors.js';
import { backoffDelay, type BackoffOptions } from '../backoff.js';
import { prepareBatch, prepareJob } from '../sqlite/enqueue.js';
import {
  DEFAULT_PAGE,
  MAX_PAGE,
  checkDrawUsd,
  checkProgress,
  checkProgressIds,
  checkTestStatusIds,
  type JobStore,
} from '../store.js';
import { readBatchCounts } from './batch-counts.js';
import { batchJobIds, cancelJobs } from './cancel.js';
import { claimJobs } from './claim.js';
import { createCoalescer } from './coalesce.js';
import type * as Driver from './db.js';
import type { PgConnectOptions } from './db.js';
import { displayUrl, isPostgresUrl, unreadable } from './url.js';
import { enqueueBatch, enqueueOne } from './enqueue.js';
import * as fenced from './fenced.js';
import { holdBlobs } from './blobs.js';
import { addInputs, findInputs, registerInputs, takeUnreferencedInputs } from './inputs.js';
import {
  countFinishedSince,
  countJobs,
  listBatchRows,
  listJobRows,
  verdictCounts,
} from './list.js';
import { listBatchJobRows } from './batch-jobs.js';
import { lockTask, markJob, markTask, resultTaskId } from './quarantine.js';
import { reclaimExpired, reclaimOwner, runningOwners } from './reclaim.js';
import {
  ARTIFACT_COLUMNS,
  BATCH_COLUMNS,
  JOB_COLUMNS,
  timeSource,
  toBatch,
  toJob,
  type JobRecord,
  type Queryable,
  type TimeParam,
} from './sql.js';
import { pruneFinished, taskJudgement, taskValidity } from './tasks.js';
import { readProgress, setProgress } from './job-progress.js';
import * as budget from './budget.js';
import { countByOutcome, listRetryable } from './outcomes.js';
import { batchSuite, recordBatchSuite } from './batch-suites.js';
import { listen, notifyKinds } from './notify.js';
import { createOutageGate, type OutageOptions } from './outage.js';
import type { Batch, ClaimScope, Job, ReclaimedJob, RegisteredArtifact } from '../store.js';

export interface PgJobStoreOptions extends PgConnectOptions {
  /**
   * Tests only: take time from this clock instead of the database's now() (as
   * graphile-worker's useNodeTime does). Hosts never set it, so leases never depend on a
   * host's clock.
   */
  clock?: Clock;
  backoff?: BackoffOptions;
  /** Tries for a job whose request sets none (`[queue] max_attempts`). Default 3. */
  maxAttempts?: number;
  /** Apply missing migrations on first use. Default true. */
  migrate?: boolean;
  /** The drizzle-pg migrations folder; defaults to the one shipped with Proctor. */
  migrationsFolder?: string;
  /**
   * Long-running processes: once connected, wait through an outage (retrying with backoff) and
   * report it, instead of failing every call at once (outage.ts). Default: calls fail at once.
   */
  outages?: OutageOptions;
}

export interface PgJobStore extends JobStore {
  /** The URL without its password, for messages. */
  readonly displayUrl: string;
  /** The pool, once connected: for tests and benchmarks inside src/queue's own tree. */
  pool(): Promise<pg.Pool>;
  /** Connects and applies missing migrations; returns how many this store applied. */
  migrate(): Promise<number>;
}

// Deadlock and serialization failures are transient: the transaction is run again.
const RETRIED = new Set(['40P01', '40001']);
// Connection failures (class 08, server shutdown 57P0x) and a socket that is not there.
const CONNECTION = /^(08|57P0)/;
const SYSTEM = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function isConnectionError(error: unknown): boolean {
  const code = errorCode(error);
  if (code !== undefined && (CONNECTION.test(code) || SYSTEM.has(code))) return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect/i.test(
    message,
  );
}

export function openPgJobStore(url: string, options: PgJobStoreOptions = {}): PgJobStore {
  if (!isPostgresUrl(url)) throw unreadable(url, 'not a postgres:// URL');
  const now = timeSource(options.clock);
  let ready: Promise<void> | undefined;
  let closed = false;
  // Set on first use: the driver is loaded only then (see db.ts).
  let pool: pg.Pool | undefined;
  let driver: typeof Driver | undefined;
  let applied = 0;
  /** Open LISTEN connections, ended by close(). */
  const listeners = new Set<() => Promise<void>>();
  const connected = () => {
    if (pool === undefined) throw new ProctorError('INTERNAL', 'the job store is not connected');
    return pool;
  };
  const gate = options.outages
    ? createOutageGate(connected, isConnectionError, options.outages)
    : undefined;
  // Every connection is taken through the gate, when there is one (the pool hears each one's
  // errors from birth: db.ts createPool).
  const connections = {
    connect: () => (gate ? gate.connect() : connected().connect()),
  };
  // Statements outside a transaction run on a pooled connection, there once `run` awaited
  // ready. As pg's pool.query does, a connection whose statement failed is not reused.
  const db = {
    query: async (config: unknown, values?: unknown[]) => {
      const client = await connections.connect();
      try {
        const result = await client.query(config as string, values);
        client.release();
        return result;
      } catch (error) {
        client.release(error instanceof Error ? error : true);
        throw error;
      }
    },
  } as unknown as Queryable;

  const connect = async () => {
    driver ??= await import('./db.js');
    pool ??= driver.createPool(url, options);
    if (options.migrate === false) {
      await pool.query('SELECT 1');
      return;
    }
    applied = await driver.migratePg(pool, url, options.migrationsFolder);
  };

  /** Waits for the connection and migrations, then runs `fn` (again after a deadlock). */
  async function run<T>(fn: () => Promise<T>): Promise<T> {
    if (closed) throw new ProctorError('INTERNAL', 'the job store is closed');
    ready ??= connect().catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    await ready;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await fn();
      } catch (error) {
        if (error instanceof ProctorError) throw error;
        if (RETRIED.has(errorCode(error) ?? '') && attempt < 5) continue;
        if (isConnectionError(error)) throw unreadable(url, describeError(error), error);
        throw error;
      }
    }
  }
  const tx = <T>(fn: (db: Queryable) => Promise<T>) =>
    run(() => (driver as typeof Driver).inTransaction(connections, fn));

  /** Tells listeners about the kinds of the reclaimed jobs that went back to the queue. */
  const requeued = async (q: Queryable, reclaiming: Promise<ReclaimedJob[]>) => {
    const reclaimed = await reclaiming;
    const back = reclaimed.filter((r) => r.status === 'queued').map((r) => r.id);
    if (back.length > 0) {
      await q.query(
        `SELECT pg_notify('proctor_jobs', kind) FROM (SELECT DISTINCT kind FROM jobs WHERE id = ANY($1)) k`,
        [back],
      );
    }
    return reclaimed;
  };

  // Claims and plain completions that arrive together share one statement (coalesce.ts).
  // A coalesced claim takes as many rows as its requests' limits add up to and hands them out
  // in claim order, each request at most its own limit.
  const claims = createCoalescer<number, Job[]>(async (key, limits) => {
    const [kind, owner, leaseMs, t, scope] = JSON.parse(key) as [
      string,
      string,
      number,
      TimeParam,
      ClaimScope | null,
    ];
    const total = limits.reduce((a, b) => a + b, 0);
    const jobs = await run(() => claimJobs(db, kind, owner, total, leaseMs, t, scope ?? undefined));
    let next = 0;
    return limits.map((limit) => jobs.slice(next, (next += limit)));
  });
  const completions = createCoalescer<fenced.PlainCompletion, boolean>(
    (key, batch) => run(() => fenced.completeMany(db, batch, key === 'null' ? null : Number(key))),
    // PostgreSQL refused a value (a result with a NUL character): each completion alone. Not
    // after a lost connection, when the statement may have committed.
    (error) => !(error instanceof ProctorError),
  );

  const getJob = async (q: Queryable, id: number) => {
    const { rows } = await q.query<JobRecord>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [
      id,
    ]);
    return rows[0] ? toJob(rows[0]) : undefined;
  };
  const getBatch = async (q: Queryable, id: string) => {
    const { rows } = await q.query<Batch>(`SELECT ${BATCH_COLUMNS} FROM batches WHERE id = $1`, [
      id,
    ]);
    return rows[0] ? toBatch(rows[0]) : undefined;
  };

  return {
    displayUrl: displayUrl(url),
    pool: async () => {
      await run(() => Promise.resolve());
      return connected();
    },

    async migrate() {
      await run(() => Promise.resolve());
      return applied;
    },

    async enqueue(request, { inputs = [], reused = [] } = {}) {
      const job = prepareJob(request, 'job', options.maxAttempts);
      return tx(async (q) => {
        const t = now();
        await registerInputs(q, inputs, reused, t);
        const { id, created } = await enqueueOne(q, job, t);
        if (created) await notifyKinds(q, [job.kind]);
        const stored = await getJob(q, id);
        if (!stored) throw new ProctorError('INTERNAL', `job ${id} vanished after enqueue`);
        return { job: stored, created };
      });
    },

    async enqueueBatch(request, { inputs = [], reused = [] } = {}) {
      const { meta, jobs, requestHash } = prepareBatch(request, options.maxAttempts);
      return tx(async (q) => {
        const t = now();
        await registerInputs(q, inputs, reused, t);
        const { batchId, ...rest } = await enqueueBatch(q, meta, jobs, requestHash, t);
        if (rest.inserted > 0)
          await notifyKinds(
            q,
            jobs.map((j) => j.kind),
          );
        return { ...rest, batch: batchId === null ? null : ((await getBatch(q, batchId)) ?? null) };
      });
    },

    async claim(kind, owner, limit, leaseMs, scope) {
      if (limit <= 0) return [];
      const t = now();
      // A scoped claim shares its statement only with claims of the same scope.
      return claims.submit(JSON.stringify([kind, owner, leaseMs, t, scope ?? null]), limit);
    },

    async heartbeat(leases, leaseMs) {
      if (leases.length === 0) return [];
      return run(() => fenced.heartbeat(db, leases, leaseMs, now()));
    },

    cancelRequested: (owner) => run(() => fenced.cancelRequested(db, owner)),

    async complete(lease, result, artifacts = [], extras = {}) {
      const children = (extras.children ?? []).map((child, i) =>
        prepareJob({ ...child, parentId: lease.id }, `children[${i}]`, options.maxAttempts),
      );
      const outcome = extras.outcome ?? null;
      // Nothing but the job's own row to write (a no-op, a solve without a grade): one
      // statement, atomic by itself, without BEGIN and COMMIT around it. That halves the round
      // trips of a job's claim and finish; and completions that arrive together share it.
      // A grade's or solve's class may have to follow its task's quarantine (quarantine.ts).
      const classed = outcome !== null && outcome !== 'invalid_task';
      const markedTask = classed ? resultTaskId(result) : undefined;
      if (
        children.length === 0 &&
        artifacts.length === 0 &&
        extras.task === undefined &&
        extras.tests === undefined &&
        markedTask === undefined
      ) {
        const t = now();
        const text = JSON.stringify(result ?? null);
        return completions.submit(String(t), { lease, result: text, outcome });
      }
      return tx(async (q) => {
        const t = now();
        const quarantined = extras.task?.validity === 'quarantined' ? extras.task : undefined;
        // First: a quarantine and a grade of the same task id complete one after the other.
        const locked = quarantined?.taskId ?? markedTask;
        if (locked !== undefined) await lockTask(q, locked);
        const done = await fenced.complete(
          q,
          lease,
          result,
          artifacts,
          t,
          extras.task,
          outcome,
          extras.tests,
        );
        if (!done) {
          return false;
        }
        if (quarantined !== undefined) {
          await markTask(q, quarantined.taskId, quarantined.contentHash, t);
        }
        if (markedTask !== undefined) await markJob(q, lease.id, t);
        for (const child of children) await enqueueOne(q, child, t);
        await notifyKinds(
          q,
          children.map((c) => c.kind),
        );
        return true;
      });
    },

    fail: (lease, error, { retryable = true, code = 'INTERNAL', outcome = null } = {}) =>
      run(() =>
        fenced.fail(
          db,
          lease,
          error,
          retryable,
          code,
          backoffDelay(lease.attempt, options.backoff),
          now(),
          outcome,
        ),
      ),

    markCancelled: (lease, reason = 'cancelled while running') =>
      run(() => fenced.markCancelled(db, lease, reason, now())),

    release: (lease, reason) =>
      tx(async (q) => {
        const released = await fenced.release(q, lease, reason, now());
        if (released)
          await q.query(`SELECT pg_notify('proctor_jobs', kind) FROM jobs WHERE id = $1`, [
            lease.id,
          ]);
        return released;
      }),

    cancel: (ids) => tx((q) => cancelJobs(q, ids, now())),

    cancelBatch: (batchId) =>
      tx(async (q) => {
        if (!(await getBatch(q, batchId))) {
          throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
        }
        return cancelJobs(q, await batchJobIds(q, batchId), now());
      }),

    checkBudget: (batchId, capUsd, lease) =>
      tx((q) => budget.check(q, batchId, capUsd, lease, now())),

    async drawCost(batchId, usd) {
      checkDrawUsd(usd);
      return run(() => budget.draw(db, batchId, usd));
    },

    batchSpent: (batchId) => run(() => budget.spent(db, batchId)),

    reclaimExpired: () => tx((q) => requeued(q, reclaimExpired(q, now()))),
    reclaimOwner: (owner) => tx((q) => requeued(q, reclaimOwner(q, owner, now()))),
    runningOwners: () => run(() => runningOwners(db)),

    getJob: (id) => run(() => getJob(db, id)),
    getBatch: (id) => run(() => getBatch(db, id)),

    listJobs: (filter = {}, page = {}) =>
      run(async () => {
        const { items, nextCursor } = await listJobRows(db, filter, page);
        return { items: items.map(toJob), nextCursor };
      }),

    listBatchJobs: (batchId, status, page = {}) =>
      run(() => listBatchJobRows(db, batchId, status, page)),
    listBatches: (page = {}) =>
      run(async () => {
        const { items, nextCursor } = await listBatchRows(db, page);
        return { items: items.map(toBatch), nextCursor };
      }),

    countByStatus: (filter = {}) => run(() => countJobs(db, filter)),
    countByVerdict: (filter = {}) => run(() => verdictCounts(db, filter)),

    batchProgress: (batchId, windowMs = 60_000) =>
      run(async () => {
        const batch = await getBatch(db, batchId);
        if (!batch) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
        return { batch, ...(await readBatchCounts(db, batchId, windowMs, now())) };
      }),

    recordBatchSuite: (batchId, tasks) => run(() => recordBatchSuite(db, batchId, tasks)),
    batchSuite: (batchId) => run(() => batchSuite(db, batchId)),

    countByOutcome: (batchId) =>
      run(async () => {
        if (!(await getBatch(db, batchId))) {
          throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
        }
        return countByOutcome(db, batchId);
      }),

    listRetryable: (batchId, { cancelled = false } = {}) =>
      run(async () => {
        if (!(await getBatch(db, batchId))) {
          throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
        }
        return (await listRetryable(db, batchId, cancelled)).map(toJob);
      }),

    getArtifact: (id) =>
      run(async () => {
        const { rows } = await db.query<RegisteredArtifact>(
          `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE id = $1`,
          [id],
        );
        return rows[0];
      }),

    listArtifacts: (jobId) =>
      run(async () => {
        const { rows } = await db.query<RegisteredArtifact>(
          `SELECT ${ARTIFACT_COLUMNS} FROM artifacts WHERE job_id = $1
           ORDER BY created_at, id COLLATE "C" LIMIT $2`,
          [jobId, MAX_PAGE],
        );
        return rows;
      }),

    addInputs: (records) =>
      tx(async (q) => {
        if (records.length > 0) await holdBlobs(q);
        await addInputs(q, records, now());
      }),
    findInputs: (name, sha256s) => run(() => findInputs(db, name, sha256s)),
    takeUnreferencedInputs: (olderThan, limit = 100) =>
      tx((q) => takeUnreferencedInputs(q, olderThan, limit)),

    taskValidity: (limit = DEFAULT_PAGE) => run(() => taskValidity(db, limit)),

    // The WAL insert position moves with every write by any host (and with a few things that
    // are not job data, which only costs a recomputation).
    dataVersion: () =>
      run(async () => {
        const { rows } = await db.query<{ v: string }>(
          'SELECT pg_current_wal_insert_lsn()::text AS v',
        );
        return rows[0]?.v ?? '';
      }),

    finishedSince: (since) => run(() => countFinishedSince(db, since)),

    async subscribe(listener) {
      const stop = await run(() =>
        listen(() => (driver as typeof Driver).createClient(url, options), listener),
      );
      listeners.add(stop);
      return async () => {
        listeners.delete(stop);
        await stop();
      };
    },

    async testStatuses(jobIds) {
      checkTestStatusIds(jobIds);
      if (jobIds.length === 0) return new Map();
      const { rows } = await run(() =>
        db.query<{ job_id: number; tests: string }>(
          'SELECT job_id, tests FROM test_statuses WHERE job_id = ANY($1::bigint[])',
          [[...jobIds]],
        ),
      );
      return new Map(rows.map((r) => [Number(r.job_id), r.tests]));
    },

    taskJudgement: (taskId, contentHash) => run(() => taskJudgement(db, taskId, contentHash)),

    async setProgress(lease, progress) {
      checkProgress(progress);
      return run(() => setProgress(db, now(), lease, progress));
    },

    async jobProgress(jobIds) {
      checkProgressIds(jobIds);
      return jobIds.length === 0 ? new Map<number, string>() : run(() => readProgress(db, jobIds));
    },

    pruneFinished: (olderThan, limit = 1000) => tx((q) => pruneFinished(q, olderThan, limit)),

    async close() {
      if (closed) return;
      closed = true;
      gate?.close();
      // Let a first connection under way finish (or fail) before ending its pool.
      await ready?.catch(() => undefined);
      await Promise.all([...listeners].map((stop) => stop()));
      listeners.clear();
      if (pool !== undefined) await pool.end();
    },
  };
}
