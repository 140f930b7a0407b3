// Riding out a PostgreSQL outage (a restart, a failover, a cut network) in a long-running
// process (`proctor worker`, `proctor serve`): when a connection cannot be had, callers wait
// while one probe retries with exponential backoff, instead of each failing at once and
// retrying on its own; the process says so in one line when the database goes away, one per
// failed probe, and one when it is back. A caller waits at most `maxWaitMs`, then gets the
// usual DB_UNREADABLE error (so a stopping worker is never held for long), and the next call
// waits again.
//
// Only getting a connection is retried: a statement whose connection broke while it ran may
// have committed, so running it again could apply it twice. That error goes to the caller,
// whose fenced writes and the leases make the job's end safe (src/queue/pg/fenced.ts).
import type pg from 'pg';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';

export interface OutageReport {
  /** The database is unreachable; `retryInMs` until the next probe. */
  lost(reason: string, downMs: number, retryInMs: number): void;
  /** The database answers again after `downMs`. */
  restored(downMs: number): void;
}

export interface OutageOptions {
  report: OutageReport;
  /** First retry delay. Default 250 ms; doubles up to `maxDelayMs`. */
  firstDelayMs?: number;
  /** Longest delay between probes. Default 5 000 ms. */
  maxDelayMs?: number;
  /** Longest a caller waits for the database before its call fails. Default 10 000 ms. */
  maxWaitMs?: number;
}

export interface OutageGate {
  /** A pooled connection, waiting through an outage (at most maxWaitMs). */
  connect(): Promise<pg.PoolClient>;
  /** Ends every wait (the store is closing). */
  close(): void;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

export function createOutageGate(
  pool: () => pg.Pool,
  isConnectionError: (error: unknown) => boolean,
  options: OutageOptions,
): OutageGate {
  const first = options.firstDelayMs ?? 250;
  const cap = options.maxDelayMs ?? 5_000;
  const maxWaitMs = options.maxWaitMs ?? 10_000;
  const closing = new AbortController();
  /** Resolves when the database answers again (or the store closes). */
  let back: Promise<void> | undefined;

  const probe = async (since: number, reason: string): Promise<void> => {
    let delay = first;
    options.report.lost(reason, 0, delay);
    for (;;) {
      await sleep(delay, closing.signal);
      if (closing.signal.aborted) return;
      try {
        const client = await pool().connect();
        client.release();
        options.report.restored(Date.now() - since);
        return;
      } catch (error) {
        delay = Math.min(cap, delay * 2);
        options.report.lost(describeError(error), Date.now() - since, delay);
      }
    }
  };

  return {
    async connect() {
      const deadline = Date.now() + maxWaitMs;
      for (;;) {
        try {
          return await pool().connect();
        } catch (error) {
          if (!isConnectionError(error) || closing.signal.aborted) throw error;
          back ??= probe(Date.now(), describeError(error)).finally(() => {
            back = undefined;
          });
          const left = deadline - Date.now();
          if (left <= 0) throw error;
          const waited = new AbortController();
          const timeout = sleep(left, waited.signal);
          await Promise.race([back, timeout]);
          waited.abort();
          if (Date.now() >= deadline) throw error;
        }
      }
    },
    close() {
      closing.abort();
    },
  };
}

const seconds = (ms: number) =>
  ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** The one-line messages of an outage, on a process's logger; `where` is the URL, redacted. */
export function loggedOutages(logger: Pick<Logger, 'warn' | 'info'>, where: string): OutageReport {
  return {
    lost: (reason, downMs, retryInMs) =>
      logger.warn(
        downMs === 0
          ? `database ${where} is unreachable (${reason}); retrying in ${seconds(retryInMs)}`
          : `database ${where} still unreachable after ${seconds(downMs)} (${reason}); retrying in ${seconds(retryInMs)}`,
      ),
    restored: (downMs) =>
      logger.info(`database ${where} is reachable again after ${seconds(downMs)}`),
  };
}
