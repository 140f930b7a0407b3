// Claim on PostgreSQL: the shape graphile-worker, pg-boss and River share. The CTE picks up
// to `limit` due jobs of one kind by priority then age and locks them FOR UPDATE SKIP LOCKED,
// so hosts claiming at once each get different rows without waiting for one another; the
// UPDATE then takes them, with the lease counted from the database's now(). The attempt it
// increments is the fencing token of every later write.
//
// A named (prepared) statement: each pooled connection parses and plans it once, not on every
// claim (it is the statement every slot of every host runs, bench:scale (a)).
import { NOW, jobColumnsOf, toJob, type JobRecord, type Queryable, type TimeParam } from './sql.js';
import type { ClaimScope, Job } from '../store.js';

const claimOf = (scope: string) => `WITH next AS (
    SELECT id FROM jobs
    WHERE status = 'queued' AND kind = $2 AND run_at <= ${NOW}${scope}
    ORDER BY priority DESC, run_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED)
  UPDATE jobs j SET status = 'running', attempt = j.attempt + 1, lease_owner = $4,
    lease_expires_at = ${NOW} + $5, heartbeat_at = ${NOW}, started_at = ${NOW},
    updated_at = ${NOW}
  FROM next WHERE j.id = next.id
  RETURNING ${jobColumnsOf('j')}`;

// A scoped claim (ClaimScope: a `--wait` command beside a worker) is the same one statement
// with its filter: one batch's jobs and their children (a solve's grade has no batch id), or
// one job and its children.
const CLAIM = claimOf('');
const CLAIM_BATCH = claimOf(
  ' AND (batch_id = $6 OR parent_id IN (SELECT id FROM jobs WHERE batch_id = $6))',
);
const CLAIM_JOB = claimOf(' AND (id = $6::bigint OR parent_id = $6::bigint)');

export async function claimJobs(
  db: Queryable,
  kind: string,
  owner: string,
  limit: number,
  leaseMs: number,
  now: TimeParam,
  scope?: ClaimScope,
): Promise<Job[]> {
  const values: unknown[] = [now, kind, limit, owner, leaseMs];
  const { rows } = await db.query<JobRecord>(
    scope === undefined
      ? { name: 'proctor_claim', text: CLAIM, values }
      : 'batchId' in scope
        ? { name: 'proctor_claim_batch', text: CLAIM_BATCH, values: [...values, scope.batchId] }
        : { name: 'proctor_claim_job', text: CLAIM_JOB, values: [...values, scope.jobId] },
  );
  // RETURNING has no order: give the claim order back.
  return rows
    .sort((a, b) => b.priority - a.priority || a.runAt - b.runAt || a.id - b.id)
    .map(toJob);
}
