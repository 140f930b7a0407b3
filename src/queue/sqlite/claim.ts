// Claim: one atomic UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING *, run inside the
// write batcher's BEGIN IMMEDIATE. One statement means two workers can never take the same
// row (SQLite has one writer; PostgreSQL will add FOR UPDATE SKIP LOCKED to the same shape),
// and the lease counts from the claim, not from enqueue: a job that waited in the queue
// longer than any timeout is still claimed once (plainjob's bug). The attempt number it
// increments is the fencing token of every later write.
import { and, asc, desc, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { jobs } from '../schema.js';

export function createClaim(db: Db) {
  // status = 'queued' is a literal, not a bound value, so SQLite can use the partial index.
  const due = db
    .select({ id: jobs.id })
    .from(jobs)
    .where(
      and(
        sql`${jobs.status} = 'queued'`,
        eq(jobs.kind, sql.placeholder('kind')),
        lte(jobs.runAt, sql.placeholder('now')),
      ),
    )
    .orderBy(desc(jobs.priority), asc(jobs.runAt), asc(jobs.id))
    .limit(sql.placeholder('limit'));

  const statement = db
    .update(jobs)
    .set({
      status: 'running',
      attempt: sql`${jobs.attempt} + 1`,
      leaseOwner: sql`${sql.placeholder('owner')}`,
      leaseExpiresAt: sql`${sql.placeholder('expires')}`,
      heartbeatAt: sql`${sql.placeholder('now')}`,
      startedAt: sql`${sql.placeholder('now')}`,
      updatedAt: sql`${sql.placeholder('now')}`,
    })
    .where(inArray(jobs.id, due))
    .returning()
    .prepare();

  return (kind: string, owner: string, limit: number, now: number, leaseMs: number) =>
    statement
      .all({ kind, owner, limit, now, expires: now + leaseMs })
      .sort((a, b) => b.priority - a.priority || a.runAt - b.runAt || a.id - b.id);
}
