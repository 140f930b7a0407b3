// The worker pool: claims jobs only while it has room, runs each with an AbortSignal under a
// per-kind concurrency limit (p-queue), heartbeats their leases, notices cancels within a
// second, recovers what dead workers left, and shuts down in two stages.
//
// p-queue is only a slot limiter here: the database is the queue, and the pool never holds
// more claimed jobs than it has free slots. p-queue's own timeout and abort would free a slot
// while the work goes on, so neither is used: a slot frees only when the handler's promise
// settles, and handlers must stop their work before settling. What only needs removing (a
// finished job's containers and volumes) a handler defers (JobContext.defer): it runs after
// the job's end is recorded, one removal at a time, at most maxPendingCleanups waiting.
import PQueue from 'p-queue';
import type { Clock } from '../clock.js';
import { describeError, errorCode, isRetryable } from '../errors.js';
import type { Logger } from '../logger.js';
import {
  JOB_KINDS,
  parsePayload,
  type ArtifactRecord,
  type ClaimScope,
  type Job,
  type JobKind,
  type JobStore,
  type Lease,
  type EnqueueRequest,
  type TaskValidityInput,
} from '../queue/index.js';
import { outcomeOf } from '../results/outcome.js';
import { createOwnerId, isDeadLocalOwner } from './owner.js';
import { createWakeup, type Wakeup } from './wakeup.js';

export type AbortReason = 'cancel' | 'lease_lost' | 'shutdown';

export interface JobContext {
  job: Job;
  /** The payload, validated again against its kind's schema at claim. */
  payload: unknown;
  lease: Lease;
  /** Aborted on cancel, lost lease or shutdown; `signal.reason` is an AbortReason. */
  signal: AbortSignal;
  logger: Logger;
  /**
   * Runs `cleanup` once the job's end is recorded (completed, failed, cancelled or handed
   * back), off the job's slot: the removal of its containers and volumes then never delays
   * the verdict or the next job's start. Errors are logged; a crash leaves it to the reaper.
   */
  defer(cleanup: () => Promise<void>): void;
}

export interface HandlerOutput {
  result?: unknown;
  /** Registered in the same transaction as the completion, so only a winning attempt's count. */
  artifacts?: ArtifactRecord[];
  /** A baseline's judgement of its task, recorded in the same transaction. */
  task?: TaskValidityInput;
  /** Jobs enqueued as this job's children in the same transaction (a solve's grade). */
  children?: EnqueueRequest[];
  /** A grade's or baseline's per-test statuses (results/test-statuses.ts), stored beside it. */
  tests?: unknown;
}

export type JobHandler = (context: JobContext) => Promise<HandlerOutput | void>;

export interface WorkerPoolOptions {
  store: JobStore;
  clock: Clock;
  logger: Logger;
  handlers: Partial<Record<JobKind, JobHandler>>;
  /** Slots per kind; kinds without a handler are never claimed. */
  concurrency: Partial<Record<JobKind, number>>;
  owner?: string;
  /** How long a claim or heartbeat holds a job. Default 60 000 ms. */
  leaseMs?: number;
  /** How often leases are extended. Default leaseMs / 4. */
  heartbeatMs?: number;
  /** How often cancel requests from other processes are read. Default 1 000 ms. */
  cancelPollMs?: number;
  /** How long an idle kind waits before looking for due jobs again. Default 1 000 ms. */
  pollMs?: number;
  /**
   * Each claim that finds nothing doubles a kind's wait, from pollMs up to this (default
   * pollMs: no back-off). A notify (an in-process enqueue, a freed slot, a finished job's
   * children) still wakes it at once, and a kind with a retry of this pool's coming due polls
   * at pollMs until it claims: only another process's enqueue waits the longer poll.
   */
  idleMaxMs?: number;
  /** How often expired leases are reclaimed. Default leaseMs / 2. */
  reclaimMs?: number;
  /** Finished jobs older than this are pruned; 0 (default) keeps them forever. */
  retentionMs?: number;
  /** How often pruning runs when retentionMs is set. Default 600 000 ms. */
  pruneEveryMs?: number;
  /**
   * Runs at start, after dead workers' jobs are reclaimed and before claiming: removes what
   * crashed workers left outside the database (containers, volumes). See sandboxRecovery.
   */
  recover?: () => Promise<void>;
  /**
   * Removes leftovers that no job will read (see sweepInputs): run at start, after recover,
   * and every `sweepEveryMs`. Default: none.
   */
  sweep?: () => Promise<void>;
  /** How often `sweep` runs. Default 600 000 ms. */
  sweepEveryMs?: number;
  /**
   * Read before each claim: the jobs the pool may take (ClaimScope), or undefined for every
   * job of its kinds. A `--wait` command's pool narrows itself to its own batch while a
   * worker serves the home. Default: every job.
   */
  claimScope?: () => ClaimScope | undefined;
  /** Tells whether a lease owner is a dead process on this host. Default: by pid. */
  isOwnerDead?: (owner: string) => boolean;
  /**
   * Applied to every result and error message before it is stored (see src/store/redact.ts).
   * Default: none.
   */
  redact?: { text(s: string): string; value<T>(v: T): T };
  /**
   * Deletes the bytes of artifacts a handler wrote but that were not registered (the lease
   * was lost, or the completion failed). Default: none; the artifact sweep removes them later.
   */
  discardArtifacts?: (records: readonly ArtifactRecord[]) => Promise<void>;
  /**
   * Most deferred cleanups (JobContext.defer) waiting at once; a job whose cleanup finds the
   * list full holds its slot until there is room, so removals never pile up. They run one at a
   * time, and stop() waits for them. Default 4.
   */
  maxPendingCleanups?: number;
}

export interface StopOptions {
  /** How long running jobs may go on before they are aborted and handed back. Default 30 000 ms. */
  graceMs?: number;
}

export interface WorkerPool {
  readonly owner: string;
  /** Recovers what dead workers left, then starts claiming. */
  start(): Promise<void>;
  /** Wakes the claim loops now (after an in-process enqueue). */
  notify(): void;
  /** Stops claiming, lets running jobs finish for `graceMs`, aborts the rest; resolves when all have settled. */
  stop(options?: StopOptions): Promise<void>;
  /** Aborts every running job at once (second signal); resolves when they have settled. */
  abortAll(reason: AbortReason): void;
  runningCount(): number;
}

interface Running {
  kind: JobKind;
  lease: Lease;
  controller: AbortController;
}

export function createWorkerPool(options: WorkerPoolOptions): WorkerPool {
  const { store, logger, handlers } = options;
  const owner = options.owner ?? createOwnerId();
  const leaseMs = options.leaseMs ?? 60_000;
  const heartbeatMs = options.heartbeatMs ?? Math.max(250, Math.floor(leaseMs / 4));
  const cancelPollMs = options.cancelPollMs ?? 1_000;
  const pollMs = options.pollMs ?? 1_000;
  const idleMaxMs = Math.max(pollMs, options.idleMaxMs ?? pollMs);
  const reclaimMs = options.reclaimMs ?? Math.max(500, Math.floor(leaseMs / 2));
  const isOwnerDead = options.isOwnerDead ?? isDeadLocalOwner;
  const retentionMs = options.retentionMs ?? 0;
  const redact = options.redact ?? { text: (s: string) => s, value: <T>(v: T) => v };

  const maxPendingCleanups = options.maxPendingCleanups ?? 4;
  if (!Number.isInteger(maxPendingCleanups) || maxPendingCleanups < 1) {
    throw new TypeError(
      `Expected \`maxPendingCleanups\` to be an integer >= 1, got \`${maxPendingCleanups}\``,
    );
  }
  // One removal at a time: they compete with running jobs for the engine, not with each other.
  const cleanups = new PQueue({ concurrency: 1 });

  const kinds = JOB_KINDS.filter((k) => handlers[k] !== undefined);
  for (const kind of kinds) {
    const n = options.concurrency[kind] ?? 1;
    if (!Number.isInteger(n) || n < 1) {
      throw new TypeError(
        `Expected concurrency of \`${kind}\` to be an integer >= 1, got \`${n}\``,
      );
    }
  }
  const queues = new Map<JobKind, PQueue>(
    kinds.map((k) => [k, new PQueue({ concurrency: options.concurrency[k] ?? 1 })]),
  );
  const wakeups = new Map<JobKind, Wakeup>(kinds.map((k) => [k, createWakeup()]));
  /** Kinds with a retry of this pool's coming due: they poll at pollMs until they claim. */
  const retryDue = new Set<JobKind>();
  // p-queue emits `next` once a task has settled and its slot is free: the moment to claim.
  for (const kind of kinds) queues.get(kind)?.on('next', () => wakeups.get(kind)?.notify());
  const running = new Map<number, Running>();
  const timers: NodeJS.Timeout[] = [];
  let loops: Promise<void>[] = [];
  let stopping = false;
  let started = false;
  let firstSweep: Promise<void> | undefined;

  const abort = (entry: Running, reason: AbortReason) => {
    if (!entry.controller.signal.aborted) entry.controller.abort(reason);
  };

  async function runJob(kind: JobKind, job: Job): Promise<void> {
    const lease: Lease = { id: job.id, attempt: job.attempt };
    const controller = new AbortController();
    const entry: Running = { kind, lease, controller };
    running.set(job.id, entry);
    const jobLogger = logger;
    const deferred: Array<() => Promise<void>> = [];
    try {
      let payload: unknown;
      try {
        payload = parsePayload(kind, job.payload);
      } catch (error) {
        await store.fail(lease, redact.text(describeError(error)), {
          retryable: false,
          code: 'PAYLOAD_INVALID',
          outcome: outcomeOf({
            kind,
            status: 'failed',
            result: null,
            errorCode: 'PAYLOAD_INVALID',
          }),
        });
        return;
      }
      const handler = handlers[kind];
      if (!handler) throw new Error(`no handler for ${kind}`);
      let output: HandlerOutput | void;
      try {
        output = await handler({
          job,
          payload,
          lease,
          signal: controller.signal,
          logger: jobLogger,
          defer: (cleanup) => {
            deferred.push(cleanup);
          },
        });
      } catch (error) {
        await settleFailure(kind, lease, controller.signal, error);
        return;
      }
      if (controller.signal.reason === 'lease_lost') {
        logger.warn('dropped the result of a job whose lease was lost', { job: job.id });
        if (output?.artifacts?.length) await options.discardArtifacts?.(output.artifacts);
        return;
      }
      const records = output?.artifacts ?? [];
      let recorded = false;
      try {
        const result = redact.value(output?.result ?? null);
        recorded = await store.complete(lease, result, records, {
          ...(output?.task === undefined ? {} : { task: redact.value(output.task) }),
          ...(output?.children === undefined ? {} : { children: output.children }),
          // Not redacted: the IDs are the bundle's declared ones and the rest closed enums,
          // nothing of the run's output (and a redacted ID would match no declared one).
          ...(output?.tests === undefined ? {} : { tests: output.tests }),
          // Stored in the completion's own transaction, so a class never outlives its result.
          outcome: outcomeOf({ kind, status: 'done', result, errorCode: null }),
        });
      } finally {
        if (!recorded && records.length > 0) {
          await options.discardArtifacts?.(records).catch((error: unknown) => {
            logger.warn('could not discard unregistered artifacts', {
              job: job.id,
              error: describeError(error),
            });
          });
        }
      }
      if (!recorded)
        logger.warn('job finished after its lease was lost; result dropped', { job: job.id });
      else {
        logger.info('job done', { job: job.id, kind, attempt: job.attempt });
        // Its children are claimable now: their kinds need not wait for a poll.
        for (const child of output?.children ?? []) wakeups.get(child.kind)?.notify();
      }
    } catch (error) {
      // A store write failed (database gone, disk full): the lease will expire and the job
      // will be retried by whoever reclaims it.
      logger.error('could not record the end of a job', {
        job: job.id,
        error: describeError(error),
      });
    } finally {
      running.delete(job.id);
      for (const cleanup of deferred) await scheduleCleanup(job.id, cleanup);
    }
  }

  /** Queues a job's cleanup; waits (holding the job's slot) while the queue is full. */
  async function scheduleCleanup(id: number, cleanup: () => Promise<void>) {
    if (cleanups.size >= maxPendingCleanups) await cleanups.onSizeLessThan(maxPendingCleanups);
    cleanups.add(cleanup).catch((error: unknown) =>
      logger.warn('cleanup failed; the reaper will retry', {
        job: id,
        error: describeError(error),
      }),
    );
  }

  async function settleFailure(kind: JobKind, lease: Lease, signal: AbortSignal, error: unknown) {
    const reason = signal.aborted ? (signal.reason as AbortReason) : undefined;
    if (reason === 'cancel') {
      await store.markCancelled(lease, 'cancelled while running');
    } else if (reason === 'shutdown') {
      await store.release(lease, 'handed back: its worker shut down');
    } else if (reason === 'lease_lost') {
      logger.warn('job aborted after its lease was lost', { job: lease.id });
    } else {
      const code = errorCode(error);
      const outcome = await store.fail(lease, redact.text(describeError(error)), {
        retryable: isRetryable(error),
        code,
        outcome: outcomeOf({ kind, status: 'failed', result: null, errorCode: code }),
      });
      logger.debug('job failed', { job: lease.id, outcome, error: describeError(error) });
      // Its retry comes due after a back-off this pool does not know: poll for it at pollMs.
      if (outcome === 'retrying') retryDue.add(kind);
    }
  }

  async function claimLoop(kind: JobKind): Promise<void> {
    const queue = queues.get(kind) as PQueue;
    const wakeup = wakeups.get(kind) as Wakeup;
    const limit = queue.concurrency;
    let idleMs = pollMs;
    while (!stopping) {
      const free = limit - queue.pending - queue.size;
      if (free <= 0) {
        await wakeup.wait(pollMs);
        continue;
      }
      let claimed: Job[] = [];
      try {
        claimed = await store.claim(kind, owner, free, leaseMs, options.claimScope?.());
      } catch (error) {
        logger.error('claim failed', { kind, error: describeError(error) });
      }
      if (stopping) {
        // Claimed as the pool stopped: hand them straight back.
        for (const job of claimed)
          await store.release({ id: job.id, attempt: job.attempt }, 'worker shut down');
        break;
      }
      for (const job of claimed) {
        queue
          .add(() => runJob(kind, job))
          .catch((error: unknown) => {
            logger.error('job runner crashed', { job: job.id, error: describeError(error) });
          });
      }
      if (claimed.length === 0) {
        await wakeup.wait(retryDue.has(kind) ? pollMs : idleMs);
        idleMs = Math.min(idleMs * 2, idleMaxMs);
        continue;
      }
      retryDue.delete(kind);
      idleMs = pollMs;
      if (claimed.length < free) await wakeup.wait(pollMs);
    }
  }

  async function heartbeat() {
    const entries = [...running.values()];
    if (entries.length === 0) return;
    const results = await store.heartbeat(
      entries.map((e) => e.lease),
      leaseMs,
    );
    for (const result of results) {
      const entry = running.get(result.id);
      if (!entry || entry.lease.attempt !== result.attempt) continue;
      if (!result.alive) abort(entry, 'lease_lost');
      else if (result.cancelRequested) abort(entry, 'cancel');
    }
  }

  async function pollCancels() {
    if (running.size === 0) return;
    for (const lease of await store.cancelRequested(owner)) {
      const entry = running.get(lease.id);
      if (entry && entry.lease.attempt === lease.attempt) abort(entry, 'cancel');
    }
  }

  async function reclaim(atStart: boolean) {
    const reclaimed = await store.reclaimExpired();
    if (atStart) {
      for (const other of await store.runningOwners()) {
        if (other !== owner && isOwnerDead(other))
          reclaimed.push(...(await store.reclaimOwner(other)));
      }
    }
    for (const job of reclaimed) {
      logger.warn(`reclaimed job ${job.id} from ${job.owner}`, {
        status: job.status,
        attempt: job.attempt,
      });
    }
    if (reclaimed.length > 0) for (const w of wakeups.values()) w.notify();
  }

  async function prune() {
    // Bounded chunks, and a bounded number of them per run, so the write lock is never held long.
    const cutoff = options.clock.now() - retentionMs;
    let total = 0;
    for (let i = 0; i < 100; i++) {
      const pruned = await store.pruneFinished(cutoff, 1000);
      total += pruned;
      if (pruned < 1000) break;
    }
    if (total > 0) logger.info(`pruned ${total} finished job(s) older than the retention period`);
  }

  function every(ms: number, task: () => Promise<void>, name: string) {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      task()
        .catch((error: unknown) => logger.error(`${name} failed`, { error: describeError(error) }))
        .finally(() => {
          busy = false;
        });
    }, ms);
    timer.unref();
    timers.push(timer);
  }

  const settled = async () => {
    await Promise.all([...queues.values()].map((q) => q.onIdle()));
  };

  return {
    owner,

    async start() {
      if (started) throw new Error('worker pool already started');
      started = true;
      await reclaim(true);
      await options.recover?.();
      if (options.sweep) {
        const sweep = options.sweep;
        // Not awaited here, since a large sweep must not hold up claiming; stop() waits for it.
        firstSweep = sweep().catch((error: unknown) =>
          logger.error('sweep failed', { error: describeError(error) }),
        );
        every(options.sweepEveryMs ?? 600_000, sweep, 'sweep');
      }
      every(heartbeatMs, heartbeat, 'heartbeat');
      every(cancelPollMs, pollCancels, 'cancel poll');
      every(reclaimMs, () => reclaim(false), 'reclaim');
      if (retentionMs > 0) every(options.pruneEveryMs ?? 600_000, prune, 'prune');
      loops = kinds.map((kind) => claimLoop(kind));
    },

    notify() {
      for (const w of wakeups.values()) w.notify();
    },

    async stop(stopOptions = {}) {
      stopping = true;
      for (const w of wakeups.values()) w.notify();
      await Promise.all(loops);
      const graceMs = stopOptions.graceMs ?? 30_000;
      if (running.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        const graceOver = new Promise<'grace'>((resolve) => {
          timer = setTimeout(() => resolve('grace'), graceMs);
        });
        const outcome = await Promise.race([settled().then(() => 'idle' as const), graceOver]);
        clearTimeout(timer);
        if (outcome === 'grace') {
          logger.warn(`aborting ${running.size} running job(s) after the shutdown grace period`);
          for (const entry of running.values()) abort(entry, 'shutdown');
        }
      }
      // Handlers must have stopped their work before their slots free.
      await settled();
      // Then the removals their jobs deferred: a clean stop leaves nothing to the reaper.
      await cleanups.onIdle();
      await firstSweep;
      for (const timer of timers) clearInterval(timer);
    },

    abortAll(reason) {
      for (const entry of running.values()) abort(entry, reason);
    },

    runningCount: () => running.size,
  };
}
