// Recovery of jobs whose worker died. A running job whose lease expired — or whose owner is
// known dead — goes back to the queue, or to failed when it has used all its attempts (a job
// that keeps killing its worker must not loop forever). Unlike graphile-worker's 4 h lock,
// the lease is short (60 s by default) and renewed by heartbeats; unlike solid_queue, a
// hard-killed job is retried, not failed.
import { and, eq, lt, sql } from 'drizzle-orm';
import type { OutcomeClass } from '../constants.js';
import type { Db } from '../db.js';
import { jobs } from '../schema.js';
import type { ReclaimedJob } from '../store.js';

// Back to the queue; or failed when out of attempts; or cancelled when a cancel was asked
// for while its worker was dying (no point running it again).
const outcome = sql`CASE WHEN ${jobs.cancelRequestedAt} IS NOT NULL THEN 'cancelled' WHEN ${jobs.attempt} < ${jobs.maxAttempts} THEN 'queued' ELSE 'failed' END`;

const requeue = (now: number, reason: string) => ({
  status: sql<ReclaimedJob['status']>`${outcome}`,
  finishedAt: sql<number | null>`CASE WHEN ${outcome} = 'queued' THEN NULL ELSE ${now} END`,
  runAt: now,
  leaseOwner: null,
  leaseExpiresAt: null,
  updatedAt: now,
  lastError: reason,
  errorCode: sql<string>`CASE WHEN ${jobs.cancelRequestedAt} IS NOT NULL THEN 'CANCELLED' ELSE 'WORKER_LOST' END`,
  // outcomeOf (src/results/outcome.ts) of a grade or solve failed with WORKER_LOST: the
  // machine's fault. Cancelled and requeued jobs have no class.
  outcome: sql<OutcomeClass | null>`CASE WHEN ${outcome} = 'failed' AND ${jobs.kind} IN ('grade', 'solve') THEN 'error' ELSE NULL END`,
});

const returned = {
  id: jobs.id,
  attempt: jobs.attempt,
  status: jobs.status,
};

export function reclaimExpired(db: Db, now: number): ReclaimedJob[] {
  const expired = db
    .select({ id: jobs.id, owner: jobs.leaseOwner })
    .from(jobs)
    .where(and(sql`${jobs.status} = 'running'`, lt(jobs.leaseExpiresAt, now)))
    .all();
  if (expired.length === 0) return [];
  const owners = new Map(expired.map((r) => [r.id, r.owner ?? '']));
  return db
    .update(jobs)
    .set(requeue(now, 'lease expired: its worker stopped heartbeating'))
    .where(and(sql`${jobs.status} = 'running'`, lt(jobs.leaseExpiresAt, now)))
    .returning(returned)
    .all()
    .map((r) => ({
      ...r,
      status: r.status as ReclaimedJob['status'],
      owner: owners.get(r.id) ?? '',
    }));
}

export function reclaimOwner(db: Db, owner: string, now: number): ReclaimedJob[] {
  return db
    .update(jobs)
    .set(requeue(now, `worker ${owner} died`))
    .where(and(sql`${jobs.status} = 'running'`, eq(jobs.leaseOwner, owner)))
    .returning(returned)
    .all()
    .map((r) => ({ ...r, status: r.status as ReclaimedJob['status'], owner }));
}

export function runningOwners(db: Db): string[] {
  return db
    .selectDistinct({ owner: jobs.leaseOwner })
    .from(jobs)
    .where(sql`${jobs.status} = 'running'`)
    .all()
    .map((r) => r.owner)
    .filter((o): o is string => o !== null);
}
