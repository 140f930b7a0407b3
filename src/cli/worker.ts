// `proctor worker`: runs jobs of this home until SIGINT/SIGTERM, then drains (a second signal
// exits at once; leases hand unfinished jobs to the next worker).
import { createLogger } from '../logger.js';
import { announceWorker, createRuntime, drainOnSignals } from '../workers/index.js';
import type { CommandContext } from './context.js';

export async function workerCommand(
  context: CommandContext,
  options: { graceSeconds: number },
): Promise<number> {
  const logger = createLogger({ level: 'info' });
  const runtime = createRuntime(context.config, context.clock, logger);
  try {
    const pool = await runtime.createPool();
    // Before the first claim: every lease this worker holds is backed by its presence lock.
    const withdraw = announceWorker(context.config.home, pool.owner);
    try {
      await pool.start();
      const { baseline, grade } = context.config.workers;
      logger.info(`worker ${pool.owner} ready`, { baseline, grade, home: context.config.home });
      await drainOnSignals(pool, { graceMs: options.graceSeconds * 1000, logger });
    } finally {
      withdraw();
    }
    logger.info('worker drained');
    return 0;
  } finally {
    await runtime.close();
  }
}
