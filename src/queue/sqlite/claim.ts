// Claim: one atomic UPDATE … WHERE id IN (SELECT … LIMIT n) RETURNING *, run inside the
// write batcher's BEGIN IMMEDIATE. One statement means two workers can never take the same
// row (SQLite has one writer; PostgreSQL will add FOR UPDATE SKIP LOCKED to the same shape),
// and the lease counts from the claim, not from enqueue: a job that waited in the queue
// longer than any timeout is still claimed once (plainjob's bug). The attempt number it
// increments is the fencing token of every later write.
import { and, asc, desc, eq, inArray, lte, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db.js';
import { jobs } from '../schema.js';
import type { ClaimScope } from '../store.js';

// A scoped claim (a `--wait` command beside a worker, ClaimScope) adds its filter to the same
// one statement: the jobs of one batch and their children (a solve's grade carries no batch
// id), or one job and its children.
export function createClaim(db: Db) {
  const queued = (scope: SQL | undefined) =>
    and(
      // status = 'queued' is a literal, not a bound value, so SQLite can use the partial index.
      sql`${jobs.status} = 'queued'`,
      eq(jobs.kind, sql.placeholder('kind')),
      lte(jobs.runAt, sql.placeholder('now')),
      scope,
    );
  const ofBatch = db
    .select({ id: jobs.id })
    .from(jobs)
    .where(eq(jobs.batchId, sql.placeholder('batch')));
  const scopes = {
    all: undefined,
    batch: or(eq(jobs.batchId, sql.placeholder('batch')), inArray(jobs.parentId, ofBatch)),
    job: or(eq(jobs.id, sql.placeholder('job')), eq(jobs.parentId, sql.placeholder('job'))),
  };

  const statementOf = (scope: SQL | undefined) => {
    const due = db
      .select({ id: jobs.id })
      .from(jobs)
      .where(queued(scope))
      .orderBy(desc(jobs.priority), asc(jobs.runAt), asc(jobs.id))
      .limit(sql.placeholder('limit'));
    return db
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
  };
  const statements = {
    all: statementOf(scopes.all),
    batch: statementOf(scopes.batch),
    job: statementOf(scopes.job),
  };

  return (
    kind: string,
    owner: string,
    limit: number,
    now: number,
    leaseMs: number,
    scope?: ClaimScope,
  ) => {
    const values = { kind, owner, limit, now, expires: now + leaseMs };
    const rows =
      scope === undefined
        ? statements.all.all(values)
        : 'batchId' in scope
          ? statements.batch.all({ ...values, batch: scope.batchId })
          : statements.job.all({ ...values, job: scope.jobId });
    return rows.sort((a, b) => b.priority - a.priority || a.runAt - b.runAt || a.id - b.id);
  };
}
