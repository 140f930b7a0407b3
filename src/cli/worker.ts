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
      // The handlers go in before `ready` is said: whoever waits for that line and then
      // signals must reach them, not the default action (which would end us unreleased).
      const drained = drainOnSignals(pool, { graceMs: options.graceSeconds * 1000, logger });
      logger.info(`worker ${pool.owner} ready`, {
        ...context.config.workers,
        home: context.config.home,
      });
      await drained;
    } finally {
      withdraw();
    }
    logger.info('worker drained');
    return 0;
  } finally {
    await runtime.close();
  }
}
