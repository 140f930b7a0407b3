// Recovery of jobs whose worker died, on PostgreSQL. Any host may run it: the expired rows are
// picked FOR UPDATE SKIP LOCKED, so two hosts reclaiming at once take different rows, and a
// row a live worker is heartbeating (so locking) at that moment is left for the next round.
// Expiry is judged by the database's now(), the clock every lease was written with.
import type { ReclaimedJob } from '../store.js';
import { NOW, type Queryable, type TimeParam } from './sql.js';

const CHUNK = 500;

// Back to the queue; or failed when out of attempts; or cancelled when a cancel was asked for
// while its worker was dying. A grade or solve failed this way has outcome class 'error'
// (outcomeOf, src/results/outcome.ts, of WORKER_LOST: the machine's fault); cancelled and
// requeued jobs have none.
const OUTCOME = `CASE WHEN j.cancel_requested_at IS NOT NULL THEN 'cancelled'
  WHEN j.attempt < j.max_attempts THEN 'queued' ELSE 'failed' END`;

const requeue = (where: string) => `WITH lost AS (
    SELECT id, lease_owner FROM jobs WHERE status = 'running' AND ${where}
    ORDER BY id LIMIT ${CHUNK} FOR UPDATE SKIP LOCKED)
  UPDATE jobs j SET status = ${OUTCOME},
    finished_at = CASE WHEN ${OUTCOME} = 'queued' THEN NULL ELSE ${NOW} END,
    run_at = ${NOW}, lease_owner = NULL, lease_expires_at = NULL, updated_at = ${NOW},
    last_error = $2,
    error_code = CASE WHEN j.cancel_requested_at IS NOT NULL THEN 'CANCELLED' ELSE 'WORKER_LOST' END,
    outcome = CASE WHEN ${OUTCOME} = 'failed' AND j.kind IN ('grade', 'solve') THEN 'error' END
  FROM lost WHERE j.id = lost.id
  RETURNING j.id, j.attempt, j.status, lost.lease_owner AS owner`;

const EXPIRED = requeue(`lease_expires_at < ${NOW}`);
const OWNER = requeue('lease_owner = $3');

async function drain(db: Queryable, text: string, values: unknown[]): Promise<ReclaimedJob[]> {
  const all: ReclaimedJob[] = [];
  for (;;) {
    const { rows } = await db.query<ReclaimedJob>(text, values);
    all.push(...rows);
    if (rows.length < CHUNK) break;
  }
  return all.sort((a, b) => a.id - b.id);
}

export function reclaimExpired(db: Queryable, now: TimeParam): Promise<ReclaimedJob[]> {
  return drain(db, EXPIRED, [now, 'lease expired: its worker stopped heartbeating']);
}

export function reclaimOwner(
  db: Queryable,
  owner: string,
  now: TimeParam,
): Promise<ReclaimedJob[]> {
  return drain(db, OWNER, [now, `worker ${owner} died`, owner]);
}

export async function runningOwners(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ owner: string }>(
    `SELECT DISTINCT lease_owner AS owner FROM jobs
     WHERE status = 'running' AND lease_owner IS NOT NULL`,
  );
  return rows.map((r) => r.owner);
}
