// A real worker process for crash and race tests: the production pool and store, with a
// noop handler whose side effect is an artifact row registered with the fenced completion.
// Every execution start is appended to EXEC_LOG ("job attempt pid"), so tests can tell
// a re-run (allowed after a crash) from a double completion (never allowed).
//
// usage: worker-child.ts DB_PATH|POSTGRES_URL CONCURRENCY [LEASE_MS] [--no-dead-owner-check]
// (a postgres:// URL opens the PostgreSQL store, as `proctor worker --db URL` does)
import { appendFileSync } from 'node:fs';
import { createHash, randomUUID } from 'node:crypto';
import { systemClock } from '../../src/clock.js';
import { createLogger } from '../../src/logger.js';
import { openSqliteJobStore } from '../../src/queue/index.js';
import { openPgJobStore } from '../../src/queue/pg/store.js';
import { loggedOutages } from '../../src/queue/pg/outage.js';
import { displayUrl, isPostgresUrl } from '../../src/queue/pg/url.js';
import {
  createWorkerPool,
  drainOnSignals,
  noopHandler,
  type JobHandler,
} from '../../src/workers/index.js';

const [dbPath, concurrencyArg, leaseArg] = process.argv.slice(2);
const execLog = process.env['EXEC_LOG'];
if (!dbPath || !concurrencyArg || !execLog)
  throw new Error('usage: worker-child.ts DB_PATH CONCURRENCY [LEASE_MS]; EXEC_LOG set');
const noDeadOwnerCheck = process.argv.includes('--no-dead-owner-check');

const logger = createLogger({ level: 'info' });
// On PostgreSQL as `proctor worker` opens it (src/workers/runtime.ts): riding out outages.
const store = isPostgresUrl(dbPath)
  ? openPgJobStore(dbPath, { outages: { report: loggedOutages(logger, displayUrl(dbPath)) } })
  : openSqliteJobStore(dbPath, { clock: systemClock });

const handler: JobHandler = async (context) => {
  appendFileSync(execLog, `${context.job.id} ${context.job.attempt} ${process.pid}\n`);
  const { result } = await noopHandler(context);
  const body = `effect of job ${context.job.id}`;
  return {
    result,
    artifacts: [
      {
        id: randomUUID(),
        name: 'effect',
        mediaType: 'text/plain',
        sha256: createHash('sha256').update(body).digest('hex'),
        size: body.length,
        relPath: `effects/${context.job.id}`,
      },
    ],
  };
};

const leaseMs = leaseArg && /^\d+$/.test(leaseArg) ? Number(leaseArg) : 60_000;
const pool = createWorkerPool({
  store,
  clock: systemClock,
  logger,
  handlers: { noop: handler },
  concurrency: { noop: Number(concurrencyArg) },
  leaseMs,
  pollMs: 50,
  ...(noDeadOwnerCheck ? { isOwnerDead: () => false } : {}),
});
await pool.start();
const graceMs = Number(process.env['GRACE_MS'] ?? 10_000);
// Handlers first: a parent that signals on seeing `ready` must never meet the default action.
const drained = drainOnSignals(pool, { graceMs, logger });
process.stdout.write(`ready ${pool.owner}\n`);
await drained;
await store.close();
process.stdout.write('drained\n');
