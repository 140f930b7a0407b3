// Two-stage shutdown (as graphile-worker's main.ts): the first SIGINT/SIGTERM stops claiming
// and lets running jobs finish, or aborts and hands them back after a grace period; a second
// one exits at once. Leases make that abrupt exit equivalent to a slow release: the jobs are
// reclaimed when their leases expire, or at once by the next worker on this host.
import type { Logger } from '../logger.js';
import type { WorkerPool } from './pool.js';

export interface ShutdownOptions {
  graceMs: number;
  logger: Logger;
  /** Called at the first signal, before the pool drains (`proctor serve` closes its API). */
  onFirstSignal?: () => void;
  /** Called on the second signal; default process.exit. */
  exit?: (code: number) => void;
}

/** Installs the handlers; returns a promise that resolves once the pool has drained. */
export function drainOnSignals(pool: WorkerPool, options: ShutdownOptions): Promise<void> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let signalled = false;
  return new Promise((resolve, reject) => {
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        options.logger.warn(`${signal} again: exiting now; running jobs will be reclaimed`);
        pool.abortAll('shutdown');
        exit(130);
        return;
      }
      signalled = true;
      options.onFirstSignal?.();
      options.logger.info(
        `${signal}: no new jobs; waiting up to ${Math.round(options.graceMs / 1000)}s for ${pool.runningCount()} running job(s) (signal again to exit now)`,
      );
      pool.stop({ graceMs: options.graceMs }).then(() => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        resolve();
      }, reject);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
