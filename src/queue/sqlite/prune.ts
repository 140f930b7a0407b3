// Retention: deletes finished jobs (done, failed, cancelled) that finished before a cut-off,
// in bounded chunks so a large prune never holds the write lock for long. Artifact rows stay
// (their job link becomes NULL); batches stay, so their history remains listable.
import { and, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { jobs } from '../schema.js';

export function pruneFinished(db: Db, olderThan: number, limit: number): number {
  const victims = db
    .select({ id: jobs.id })
    .from(jobs)
    .where(
      and(lt(jobs.finishedAt, olderThan), sql`${jobs.status} IN ('done', 'failed', 'cancelled')`),
    )
    .limit(limit);
  return db.delete(jobs).where(inArray(jobs.id, victims)).returning({ id: jobs.id }).all().length;
}
