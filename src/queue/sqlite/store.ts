// The SQLite JobStore: one better-sqlite3 connection per process, synchronous statements
// behind the async JobStore interface. Worker writes go through the write batcher (group
// commit); enqueues and cancels take their own short BEGIN IMMEDIATE transaction.
import { asc, eq, inArray } from 'drizzle-orm';
import type { Clock } from '../../clock.js';
import { ProctorError } from '../../errors.js';
import { backoffDelay, type BackoffOptions } from '../backoff.js';
import { openDatabase, type OpenDatabaseOptions, type OpenedDatabase } from '../db.js';
import { artifacts, batches, jobs, testStatuses } from '../schema.js';
import {
  DEFAULT_PAGE,
  MAX_PAGE,
  checkDrawUsd,
  checkTestStatusIds,
  type Job,
  type JobStore,
} from '../store.js';
import { createBudgetOps } from './budget.js';
import { createBatchCounts } from './batch-counts.js';
import { createBatchJobs } from './batch-jobs.js';
import { createBatchSuites } from './batch-suites.js';
import { batchJobIds, cancelJobs } from './cancel.js';
import { createClaim } from './claim.js';
import { createEnqueueOps, prepareBatch, prepareJob } from './enqueue.js';
import { createFencedOps } from './fenced.js';
import { createQuarantineOps } from './quarantine.js';
import { createProgressOps } from './job-progress.js';
import { createInputOps } from './inputs.js';
import {
  countFinishedSince,
  countJobs,
  listBatchRows,
  listJobRows,
  verdictCounts,
} from './list.js';
import { createOutcomeOps } from './outcomes.js';
import { pruneFinished } from './prune.js';
import { reclaimExpired, reclaimOwner, runningOwners } from './reclaim.js';
import { taskJudgement, taskValidity } from './tasks.js';
import { toBatch, toJob } from './rows.js';
import { createWriteBatcher } from './write-batcher.js';

export interface SqliteJobStoreOptions extends OpenDatabaseOptions {
  clock: Clock;
  backoff?: BackoffOptions;
  /** Tries for a job whose request sets none (`[queue] max_attempts`). Default 3. */
  maxAttempts?: number;
}

export interface SqliteJobStore extends JobStore {
  /** The open database, for tests and benchmarks inside src/queue's own tree. */
  readonly database: OpenedDatabase;
}

export function openSqliteJobStore(path: string, options: SqliteJobStoreOptions): SqliteJobStore {
  const database = openDatabase(path, options);
  const { db, sqlite } = database;
  const { clock } = options;
  const batcher = createWriteBatcher(sqlite);
  const dataVersionStatement = sqlite.prepare('PRAGMA data_version').pluck();
  const totalChangesStatement = sqlite.prepare('SELECT total_changes()').pluck();
  let otherWrites: string | undefined;
  const enqueueOps = createEnqueueOps(sqlite);
  const inputOps = createInputOps(sqlite);
  const claim = createClaim(db);
  const fenced = createFencedOps(db);
  const budget = createBudgetOps(sqlite);
  const quarantine = createQuarantineOps(sqlite);
  const progressOps = createProgressOps(sqlite);
  const batchJobs = createBatchJobs(sqlite);
  const suites = createBatchSuites(sqlite);
  const batchCounts = createBatchCounts(sqlite);
  const outcomeOps = createOutcomeOps(sqlite);
  const immediate = <T>(fn: () => T): T => sqlite.transaction(fn).immediate();
  let closed = false;

  const getJob = (id: number) => {
    const row = db.select().from(jobs).where(eq(jobs.id, id)).get();
    return row ? toJob(row) : undefined;
  };
  const getBatch = (id: string) => {
    const row = db.select().from(batches).where(eq(batches.id, id)).get();
    return row ? toBatch(row) : undefined;
  };

  return {
    database,

    async enqueue(request, { inputs = [], reused = [] } = {}) {
      const job = prepareJob(request, 'job', options.maxAttempts);
      const { id, created } = immediate(() => {
        const now = clock.now();
        inputOps.register(inputs, reused, now);
        return enqueueOps.one(job, now);
      });
      const stored = getJob(id);
      if (!stored) throw new ProctorError('INTERNAL', `job ${id} vanished after enqueue`);
      return { job: stored, created };
    },

    async enqueueBatch(request, { inputs = [], reused = [] } = {}) {
      const { meta, jobs: prepared, requestHash } = prepareBatch(request, options.maxAttempts);
      const result = immediate(() => {
        const now = clock.now();
        inputOps.register(inputs, reused, now);
        return meta.batchId === undefined
          ? enqueueOps.batch(meta, prepared, requestHash, now)
          : enqueueOps.append(meta.batchId, prepared, now);
      });
      const { batchId, ...rest } = result;
      return { ...rest, batch: batchId === null ? null : (getBatch(batchId) ?? null) };
    },

    async claim(kind, owner, limit, leaseMs, scope) {
      if (limit <= 0) return [];
      const rows = await batcher.run(() => claim(kind, owner, limit, clock.now(), leaseMs, scope));
      return rows.map(toJob);
    },

    heartbeat: (leases, leaseMs) =>
      leases.length === 0
        ? Promise.resolve([])
        : batcher.run(() => fenced.heartbeat(leases, clock.now(), leaseMs)),

    cancelRequested: async (owner) => fenced.cancelRequested(owner),

    async complete(lease, result, artifacts = [], extras = {}) {
      // Validated before the transaction, like any enqueue; parented to the completing job.
      const children = (extras.children ?? []).map((child, i) =>
        prepareJob({ ...child, parentId: lease.id }, `children[${i}]`, options.maxAttempts),
      );
      return batcher.run(() => {
        const now = clock.now();
        const outcome = extras.outcome ?? null;
        if (!fenced.complete(lease, result, artifacts, now, extras.task, outcome, extras.tests)) {
          return false;
        }
        // In the same transaction: a quarantine reaches the grades that finished before it,
        // and a grade that finishes after one is marked whatever its worker read.
        if (extras.task?.validity === 'quarantined') {
          quarantine.markTask(extras.task.taskId, extras.task.contentHash, now);
        }
        if (outcome !== null && outcome !== 'invalid_task') quarantine.markJob(lease.id, now);
        for (const child of children) enqueueOps.one(child, now);
        return true;
      });
    },

    fail: (lease, error, { retryable = true, code = 'INTERNAL', outcome = null } = {}) =>
      batcher.run(() =>
        fenced.fail(
          lease,
          error,
          retryable,
          code,
          clock.now(),
          backoffDelay(lease.attempt, options.backoff),
          outcome,
        ),
      ),

    markCancelled: (lease, reason = 'cancelled while running') =>
      batcher.run(() => fenced.markCancelled(lease, reason, clock.now())),

    release: (lease, reason) => batcher.run(() => fenced.release(lease, reason, clock.now())),

    async cancel(ids) {
      return immediate(() => cancelJobs(db, ids, clock.now()));
    },

    async cancelBatch(batchId) {
      if (!getBatch(batchId)) {
        throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
      }
      return immediate(() => cancelJobs(db, batchJobIds(db, batchId), clock.now()));
    },

    // A write even below the cap: settling the spend with the done solves' sum and the cancels
    // at the cap are one transaction, once per starting solve.
    checkBudget: (batchId, capUsd, lease) =>
      batcher.run(() => budget.check(batchId, capUsd, lease, clock.now())),

    async drawCost(batchId, usd) {
      checkDrawUsd(usd);
      return batcher.run(() => budget.draw(batchId, usd));
    },

    batchSpent: async (batchId) => budget.spent(batchId),

    reclaimExpired: () => batcher.run(() => reclaimExpired(db, clock.now())),
    reclaimOwner: (owner) => batcher.run(() => reclaimOwner(db, owner, clock.now())),
    runningOwners: async () => runningOwners(db),

    getJob: async (id) => getJob(id),
    getBatch: async (id) => getBatch(id),

    async listJobs(filter = {}, page = {}) {
      const { items, nextCursor } = listJobRows(db, filter, page);
      return { items: items.map(toJob), nextCursor };
    },

    listBatchJobs: async (batchId, status, page = {}) => batchJobs(batchId, status, page),

    async listBatches(page = {}) {
      const { items, nextCursor } = listBatchRows(db, page);
      return { items: items.map(toBatch), nextCursor };
    },

    countByStatus: async (filter = {}) => countJobs(db, filter),

    countByVerdict: async (filter = {}) => verdictCounts(db, filter),

    async batchProgress(batchId, windowMs = 60_000) {
      const batch = getBatch(batchId);
      if (!batch) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
      // Kept by triggers (batch-counts.ts): one row, whatever the batch's size.
      return { batch, ...batchCounts(batchId, clock.now() - windowMs) };
    },

    recordBatchSuite: async (batchId, tasks) => suites.record(batchId, tasks),
    batchSuite: async (batchId) => suites.get(batchId),

    async countByOutcome(batchId) {
      if (!getBatch(batchId)) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
      return outcomeOps.counts(batchId);
    },

    async listRetryable(batchId, { cancelled = false } = {}) {
      if (!getBatch(batchId)) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
      const ids = outcomeOps.retryable(batchId, cancelled);
      const found: Job[] = [];
      for (let start = 0; start < ids.length; start += 500) {
        const chunk = ids.slice(start, start + 500);
        const rows = db.select().from(jobs).where(inArray(jobs.id, chunk)).orderBy(asc(jobs.id));
        found.push(...rows.all().map(toJob));
      }
      return found;
    },

    getArtifact: async (id) => db.select().from(artifacts).where(eq(artifacts.id, id)).get(),

    listArtifacts: async (jobId) =>
      db
        .select()
        .from(artifacts)
        .where(eq(artifacts.jobId, jobId))
        .orderBy(asc(artifacts.createdAt), asc(artifacts.id))
        .limit(MAX_PAGE)
        .all(),

    addInputs: (records) =>
      batcher.run(() => {
        if (records.length === 0) return;
        const now = clock.now();
        db.insert(artifacts)
          .values(records.map((r) => ({ ...r, jobId: null, attempt: null, createdAt: now })))
          .run();
      }),

    findInputs: async (name, sha256s) => inputOps.find(name, sha256s),

    takeUnreferencedInputs: (olderThan, limit = 100) =>
      batcher.run(() => inputOps.unreferenced(olderThan, limit)),

    taskValidity: async (limit = DEFAULT_PAGE) => taskValidity(sqlite, limit),

    taskJudgement: async (taskId, contentHash) => taskJudgement(sqlite, taskId, contentHash),

    // total_changes() moves on this connection's own writes, and costs nothing to read.
    // data_version moves on commits by other connections, but reading it starts a read
    // transaction (file locks, so system calls): it is read once per event-loop turn, by the
    // first caller after the turn began, and the answer is shared by the rest of the turn. The
    // requests answered in one turn were read from their sockets once it began, so each answer
    // still includes every commit made before its request arrived.
    dataVersion: async () => {
      if (otherWrites === undefined) {
        otherWrites = String(dataVersionStatement.get());
        setImmediate(() => {
          otherWrites = undefined;
        });
      }
      return `${otherWrites}:${String(totalChangesStatement.get())}`;
    },

    finishedSince: async (since) => countFinishedSince(db, since),

    async testStatuses(jobIds) {
      checkTestStatusIds(jobIds);
      if (jobIds.length === 0) return new Map();
      const rows = db
        .select()
        .from(testStatuses)
        .where(inArray(testStatuses.jobId, [...jobIds]))
        .all();
      return new Map(rows.map((r) => [r.jobId, r.tests]));
    },

    setProgress: (lease, progress) =>
      batcher.run(() => progressOps.set(lease, progress, clock.now())),

    jobProgress: async (jobIds) => progressOps.read(jobIds),

    pruneFinished: (olderThan, limit = 1000) =>
      batcher.run(() => pruneFinished(db, olderThan, limit)),

    async close() {
      if (closed) return;
      closed = true;
      // Let writes already handed to the batcher commit first.
      await new Promise((resolve) => setImmediate(resolve));
      database.close();
    },
  };
}
