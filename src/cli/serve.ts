// `proctor serve [--port N]`: the loopback API and status page on 127.0.0.1, and the worker
// pool in the same process, until SIGINT/SIGTERM; then it stops accepting requests and
// drains the pool (a second signal exits at once).
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
      }).catch(async (error: unknown) => {
        await pool.stop({ graceMs: 0 });
        throw error;
      });
      logger.info(`serving http://127.0.0.1:${server.port}/`, { worker: pool.owner });
      await drainOnSignals(pool, { graceMs: options.graceSeconds * 1000, logger });
    } finally {
      withdraw();
      await server?.close();
    }
    logger.info('server stopped; workers drained');
    return 0;
  } finally {
    await runtime.close();
  }
}
