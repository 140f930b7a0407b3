// One host's worker for the several-hosts test and bench: what `proctor worker` runs (the
// configuration from PROCTOR_HOME/PROCTOR_HOST/PROCTOR_DB, the production runtime: store,
// engine from DOCKER_HOST, host-scoped reaper, owner ids, presence lock, LISTEN wake-ups),
// with one more handler: `noop` jobs run a hardened container (`sleep sleepMs`) through the
// real sandbox, as this attempt's owner, so that its container and volume carry the host's
// labels and go when the job ends. Each execution start and end is appended to EXEC_LOG
// ("start|end JOB ATTEMPT HOST PID"); a completion registers one artifact row ("effect"),
// in the fenced completion's transaction: the per-job side effect that proves exactly once.
//
// usage: host-worker-child.ts SLOTS   (env: PROCTOR_HOME, PROCTOR_HOST, PROCTOR_DB,
//        DOCKER_HOST, EXEC_LOG; optional IMAGE, default debian:bookworm-slim)
import { appendFileSync } from 'node:fs';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { systemClock } from '../../src/clock.js';
import { loadConfig, resolveHome } from '../../src/config.js';
import { ProctorError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import type { PayloadOf } from '../../src/queue/index.js';
import { labelsFor, runToCompletion } from '../../src/sandbox/index.js';
import { announceWorker, createRuntime, drainOnSignals } from '../../src/workers/index.js';
import { asOwner } from '../../src/workers/oracle-jobs.js';
import type { JobHandler } from '../../src/workers/pool.js';

const slots = Number(process.argv[2] ?? '2');
const execLog = process.env['EXEC_LOG'];
if (!execLog || !Number.isInteger(slots) || slots < 1)
  throw new Error('usage: host-worker-child.ts SLOTS; EXEC_LOG set');

const config = loadConfig(resolveHome(undefined));
const logger = createLogger({ level: 'warn' });
const runtime = createRuntime(config, systemClock, logger);
const docker = await runtime.docker();
const image = (await docker.getImage(process.env['IMAGE'] ?? 'debian:bookworm-slim').inspect()).Id;
const deps = { docker, home: config.home, host: config.host };

const noop: JobHandler = async (context) => {
  const { id, attempt } = context.job;
  appendFileSync(execLog, `start ${id} ${attempt} ${config.host} ${process.pid}\n`);
  const payload = context.payload as PayloadOf<'noop'>;
  const run = await asOwner(deps, context, async (owner) => {
    // A workspace volume too, as every real job has: the reaper must find both.
    const workspace = `proctor-${owner.job}-${owner.attempt}-noop-${randomBytes(4).toString('hex')}`;
    await docker.createVolume({ Name: workspace, Labels: labelsFor(owner, 'solver') });
    return runToCompletion(
      docker,
      {
        owner,
        role: 'solver',
        image,
        cmd: ['sleep', (payload.sleepMs / 1000).toFixed(3)],
        uid: config.sandbox.uid,
        gid: config.sandbox.gid,
        workdir: '/work',
        workspace: { volume: workspace, target: '/work' },
        limits: { cpus: 0.5, memoryMb: 64, pids: 16 },
        ...(config.sandbox.runtime !== 'runc' ? { runtime: config.sandbox.runtime } : {}),
      },
      { timeoutMs: payload.sleepMs + 120_000, signal: context.signal },
    );
  });
  if (context.signal.aborted) throw new ProctorError('INTERNAL', 'aborted');
  if (run.exitCode !== 0) throw new ProctorError('INTERNAL', `container exited ${run.exitCode}`);
  appendFileSync(execLog, `end ${id} ${attempt} ${config.host} ${process.pid}\n`);
  const body = `effect of job ${id}`;
  return {
    result: { host: config.host, attempt },
    artifacts: [
      {
        id: randomUUID(),
        name: 'effect',
        mediaType: 'text/plain',
        sha256: createHash('sha256').update(body).digest('hex'),
        size: body.length,
        relPath: `effects/${id}`,
      },
    ],
  };
};

const pool = await runtime.createPool({
  kinds: ['noop'],
  handlers: { noop },
  concurrency: { noop: slots },
  pollMs: 250,
});
const withdraw = announceWorker(config.home, pool.owner);
await pool.start();
const drained = drainOnSignals(pool, { graceMs: 10_000, logger });
process.stdout.write(`ready ${pool.owner}\n`);
await drained;
withdraw();
await runtime.close();
process.stdout.write('drained\n');
