// What every route module is handed: the API's dependencies, resolved once by createApp, and
// the shared machinery (the answer cache, the enqueuer, abandonable work).
import type { Context } from 'hono';
import type { Clock } from '../../clock.js';
import type { ProctorConfig } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { JobStore } from '../../queue/index.js';
import type { ArtifactStore, Redactor } from '../../store/index.js';
import type { Fresh } from '../cache.js';
import type { createEnqueuer } from '../enqueue.js';

export interface RouteContext {
  store: JobStore;
  artifacts: ArtifactStore;
  config: ProctorConfig;
  clock: Clock;
  logger: Logger;
  /** What exports pass every byte through. */
  redactor: Redactor;
  fresh: Fresh;
  enqueuePrepared: ReturnType<typeof createEnqueuer>['enqueuePrepared'];
  /** Runs a route's work under a signal that aborts when the client leaves or the server stops. */
  abandonable: <T>(c: Context, work: (signal: AbortSignal) => Promise<T>) => Promise<T>;
  /** A request's bundle path as a path under tasks_root. */
  underTasksRoot: (path: string) => string;
  onEnqueued?: () => void;
  /** The most jobs one report request may read (MAX_REPORT_JOBS unless a test lowers it). */
  maxReportJobs: number;
}
