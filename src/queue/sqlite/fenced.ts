// The writes a worker makes after its claim. Each one matches (id, attempt) and
// status = 'running': a worker whose lease was reclaimed, or whose job was finished or
// cancelled elsewhere, changes nothing and is told so (River #1302, solid_queue #589).
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { OutcomeClass } from '../constants.js';
import type { Db } from '../db.js';
import { artifacts, jobs, tasks, testStatuses } from '../schema.js';
import type {
  ArtifactRecord,
  FailOutcome,
  HeartbeatResult,
  Lease,
  TaskValidityInput,
} from '../store.js';

export function createFencedOps(db: Db) {
  const held = and(
    eq(jobs.id, sql.placeholder('id')),
    eq(jobs.attempt, sql.placeholder('attempt')),
    sql`${jobs.status} = 'running'`,
  );
  const ended = {
    leaseOwner: null,
    leaseExpiresAt: null,
    updatedAt: sql`${sql.placeholder('now')}`,
  } as const;

  const heartbeatStatement = db
    .update(jobs)
    .set({
      leaseExpiresAt: sql`${sql.placeholder('expires')}`,
      heartbeatAt: sql`${sql.placeholder('now')}`,
      updatedAt: sql`${sql.placeholder('now')}`,
    })
    .where(held)
    .returning({ cancelRequestedAt: jobs.cancelRequestedAt })
    .prepare();

  const completeStatement = db
    .update(jobs)
    .set({
      ...ended,
      status: 'done',
      result: sql`${sql.placeholder('result')}`,
      lastError: null,
      errorCode: null,
      outcome: sql`${sql.placeholder('outcome')}`,
      finishedAt: sql`${sql.placeholder('now')}`,
    })
    .where(held)
    .returning({ id: jobs.id })
    .prepare();

  const finishStatement = db
    .update(jobs)
    .set({
      ...ended,
      status: sql`${sql.placeholder('status')}`,
      lastError: sql`${sql.placeholder('error')}`,
      errorCode: sql`${sql.placeholder('code')}`,
      outcome: sql`${sql.placeholder('outcome')}`,
      finishedAt: sql`${sql.placeholder('now')}`,
    })
    .where(held)
    .returning({ id: jobs.id })
    .prepare();

  const retryStatement = db
    .update(jobs)
    .set({
      ...ended,
      status: 'queued',
      runAt: sql`${sql.placeholder('runAt')}`,
      lastError: sql`${sql.placeholder('error')}`,
      errorCode: sql`${sql.placeholder('code')}`,
      // A release (shutdown) hands the job back without spending an attempt.
      maxAttempts: sql`${jobs.maxAttempts} + ${sql.placeholder('extend')}`,
    })
    .where(held)
    .returning({ id: jobs.id })
    .prepare();

  const attemptsLeft = db
    .select({
      attempt: jobs.attempt,
      maxAttempts: jobs.maxAttempts,
      cancelRequestedAt: jobs.cancelRequestedAt,
    })
    .from(jobs)
    .where(held)
    .prepare();

  const cancelRequestedStatement = db
    .select({ id: jobs.id, attempt: jobs.attempt })
    .from(jobs)
    .where(
      and(
        sql`${jobs.status} = 'running'`,
        eq(jobs.leaseOwner, sql.placeholder('owner')),
        isNotNull(jobs.cancelRequestedAt),
      ),
    )
    .prepare();

  return {
    heartbeat(leases: Lease[], now: number, leaseMs: number): HeartbeatResult[] {
      return leases.map((lease) => {
        const row = heartbeatStatement.get({ ...lease, now, expires: now + leaseMs });
        return {
          id: lease.id,
          attempt: lease.attempt,
          alive: row !== undefined,
          cancelRequested: row?.cancelRequestedAt != null,
        };
      });
    },

    complete(
      lease: Lease,
      result: unknown,
      records: ArtifactRecord[],
      now: number,
      task?: TaskValidityInput,
      outcome: OutcomeClass | null = null,
      tests?: unknown,
    ): boolean {
      const json = JSON.stringify(result ?? null);
      if (completeStatement.all({ ...lease, now, result: json, outcome }).length === 0) {
        return false;
      }
      if (tests !== undefined) {
        const row = { jobId: lease.id, tests: JSON.stringify(tests) };
        db.insert(testStatuses)
          .values(row)
          .onConflictDoUpdate({ target: testStatuses.jobId, set: { tests: row.tests } })
          .run();
      }
      if (task !== undefined) {
        const row = { ...task, jobId: lease.id, checkedAt: now };
        db.insert(tasks)
          .values(row)
          .onConflictDoUpdate({ target: [tasks.taskId, tasks.contentHash], set: row })
          .run();
      }
      if (records.length > 0) {
        db.insert(artifacts)
          .values(
            records.map((r) => ({ ...r, jobId: lease.id, attempt: lease.attempt, createdAt: now })),
          )
          .run();
      }
      return true;
    },

    fail(
      lease: Lease,
      error: string,
      retryable: boolean,
      code: string,
      now: number,
      delayMs: number,
      outcome: OutcomeClass | null = null,
    ): FailOutcome {
      const row = attemptsLeft.get({ id: lease.id, attempt: lease.attempt });
      if (!row) return 'lost';
      if (row.cancelRequestedAt !== null) {
        finishStatement.all({
          ...lease,
          now,
          error,
          code: 'CANCELLED',
          status: 'cancelled',
          outcome: null,
        });
        return 'cancelled';
      }
      if (retryable && row.attempt < row.maxAttempts) {
        retryStatement.all({ ...lease, now, error, code, runAt: now + delayMs, extend: 0 });
        return 'retrying';
      }
      // The class applies only here: a retried job has none until its last attempt ends.
      finishStatement.all({ ...lease, now, error, code, status: 'failed', outcome });
      return 'failed';
    },

    markCancelled(lease: Lease, reason: string, now: number): boolean {
      const values = {
        ...lease,
        now,
        error: reason,
        code: 'CANCELLED',
        status: 'cancelled',
        outcome: null,
      };
      return finishStatement.all(values).length > 0;
    },

    release(lease: Lease, reason: string, now: number): boolean {
      const values = { ...lease, now, error: reason, code: null, runAt: now, extend: 1 };
      return retryStatement.all(values).length > 0;
    },

    cancelRequested(owner: string): Lease[] {
      return cancelRequestedStatement.all({ owner });
    },
  };
}
