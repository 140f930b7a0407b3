// Cooperative cancel. A queued job becomes cancelled at once and never starts; a running
// job gets cancel_requested_at, which its worker sees within seconds (heartbeat or cancel
// poll) and answers by stopping its work and calling markCancelled.
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { jobs } from '../schema.js';
import type { CancelOutcome } from '../constants.js';
import { planCancel } from '../cancel-plan.js';

export function cancelJobs(db: Db, ids: number[], now: number): Map<number, CancelOutcome> {
  const outcomes = new Map<number, CancelOutcome>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const rows = db
      .select({ id: jobs.id, status: jobs.status, cancelRequestedAt: jobs.cancelRequestedAt })
      .from(jobs)
      .where(inArray(jobs.id, chunk))
      .all();
    const { queued, running } = planCancel(rows, outcomes);
    if (queued.length > 0) {
      db.update(jobs)
        .set({
          status: 'cancelled',
          finishedAt: now,
          updatedAt: now,
          lastError: 'cancelled before it started',
          errorCode: 'CANCELLED',
        })
        .where(and(inArray(jobs.id, queued), sql`${jobs.status} = 'queued'`))
        .run();
    }
    if (running.length > 0) {
      db.update(jobs)
        .set({ cancelRequestedAt: now, updatedAt: now })
        .where(and(inArray(jobs.id, running), sql`${jobs.status} = 'running'`))
        .run();
    }
  }
  for (const id of ids) if (!outcomes.has(id)) outcomes.set(id, 'not_found');
  return outcomes;
}

export function batchJobIds(db: Db, batchId: string): number[] {
  return db
    .select({ id: jobs.id })
    .from(jobs)
    .where(and(eq(jobs.batchId, batchId), inArray(jobs.status, ['queued', 'running'])))
    .all()
    .map((r) => r.id);
}
