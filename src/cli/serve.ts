// `proctor serve [--port N]`: the loopback API and status page on 127.0.0.1, and the worker
// pool in the same process, until SIGINT/SIGTERM; then it closes the API (stopping the work of
// requests in flight) and drains the pool (a second signal exits at once).
import { describeError } from '../errors.js';
import { createLogger } from '../logger.js';
import { assertLoopbackAddress } from '../api/guards.js';
import { startServer } from '../api/server.js';
import { announceWorker, createRuntime, drainOnSignals } from '../workers/index.js';
import type { CommandContext } from './context.js';

export async function serveCommand(
  context: CommandContext,
  options: { port: number; host: string; graceSeconds: number },
): Promise<number> {
  // Before anything starts: a refused address must not leave workers running.
  assertLoopbackAddress(options.host);
  const logger = createLogger({ level: 'info' });
  const runtime = createRuntime(context.config, context.clock, logger);
  try {
    const pool = await runtime.createPool();
    // Before the first claim: every lease this worker holds is backed by its presence lock.
    const withdraw = announceWorker(context.config.home, pool.owner);
    let server: Awaited<ReturnType<typeof startServer>> | undefined;
    let closing: Promise<void> | undefined;
    const closeServer = () => (closing ??= server?.close() ?? Promise.resolve());
    try {
      await pool.start();
      server = await startServer({
        host: options.host,
        port: options.port,
        store: runtime.store,
        artifacts: runtime.artifacts,
        config: context.config,
        secrets: runtime.secrets,
        onEnqueued: () => pool.notify(),
        logger,
      }).catch(async (error: unknown) => {
        await pool.stop({ graceMs: 0 });
        throw error;
      });
      // The API closes at the first signal, while the pool drains: no new work is taken, and
      // the work of requests in flight stops at once instead of outliving the grace period.
      const drained = drainOnSignals(pool, {
        graceMs: options.graceSeconds * 1000,
        logger,
        onFirstSignal: () => {
          closeServer().catch((error: unknown) =>
            logger.error('closing the API failed', { error: describeError(error) }),
          );
        },
      });
      // Said once the handlers are in: a signal sent on seeing it drains, never kills outright.
      logger.info(`serving http://127.0.0.1:${server.port}/`, { worker: pool.owner });
      await drained;
    } finally {
      withdraw();
      await closeServer();
    }
    logger.info('server stopped; workers drained');
    return 0;
  } finally {
    await runtime.close();
  }
}
