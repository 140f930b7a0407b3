// The loopback API: validate a bundle (static checks at once, the rest as validate jobs), enqueue baseline/solve/grade jobs (one or a batch, with
// idempotency keys), list and read jobs and batches in bounded pages, cancel, read a bounded
// slice of a job's oracle log, download a registered artifact, read reports of batches and
// download debug exports, and the status page. Nothing else: no shell, no file browser, no
// RPC. Every request passes the guards (loopback Host and Origin, JSON bodies, a body limit,
// security headers) before any route. The API never runs Docker: work that needs an engine is
// a job, run by the worker pool. The routes live in src/api/routes/, one module per area.
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { Hono } from 'hono';
import { systemClock, type Clock } from '../clock.js';
import type { ProctorConfig } from '../config.js';
import { silentLogger, type Logger } from '../logger.js';
import type { JobStore } from '../queue/index.js';
import { createRedactor, type ArtifactStore, type Redactor } from '../store/index.js';
import { createAnswerCache } from './cache.js';
import { createEnqueuer } from './enqueue.js';
import { notFound, onError } from './errors.js';
import {
  bodyLimit,
  jsonBody,
  loopbackHost,
  sameOrigin,
  securityHeaders,
  type PortSource,
} from './guards.js';
import { openApiDocument } from './openapi.js';
import { pageAssets } from './page.js';
import { artifactRoutes } from './routes/artifacts.js';
import { batchRoutes } from './routes/batches.js';
import type { RouteContext } from './routes/context.js';
import { jobRoutes } from './routes/jobs.js';
import { resultRoutes } from './routes/results.js';
import { trajectoryRoutes } from './routes/trajectory.js';
import { MAX_REPORT_JOBS } from './results-schemas.js';
import { validateRoutes } from './routes/validate.js';

export interface ApiDeps {
  store: JobStore;
  artifacts: ArtifactStore;
  config: ProctorConfig;
  /** The port the server is bound to (or how to learn it): Host and Origin must name it. */
  port: PortSource;
  /** Provider keys: a grade patch holding one is refused, and exports mask them. */
  secrets: readonly string[];
  /** What exports pass every byte through. Default: the home folder and `secrets` masked. */
  redactor?: Redactor;
  /** Called after an enqueue, to wake an in-process pool. */
  onEnqueued?: () => void;
  /** For rates and ETAs; the store's clock, so that both agree. Default: the system clock. */
  clock?: Clock;
  /** Aborted when the server shuts down: every request's work stops at its next step. */
  signal?: AbortSignal;
  /** Where abandoned work is noted. Default: silent. */
  logger?: Logger;
  /** The most jobs one report request may read. Default: MAX_REPORT_JOBS (250,000). */
  maxReportJobs?: number;
}

/** Largest request body: a batch of grade patches is the biggest legitimate one. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

const utf8 = new TextEncoder();

export function createApp(deps: ApiDeps): Hono {
  const { store, config } = deps;
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger;
  /** A request's bundle path: relative ones are under tasks_root; loadBundle checks containment. */
  const underTasksRoot = (path: string) => resolve(config.tasksRoot, path);
  const { enqueuePrepared, abandonable } = createEnqueuer({ ...deps, logger, underTasksRoot });
  const ctx: RouteContext = {
    store,
    artifacts: deps.artifacts,
    config,
    clock,
    logger,
    redactor: deps.redactor ?? createRedactor({ home: homedir(), secrets: [...deps.secrets] }),
    fresh: createAnswerCache({ store, clock }).fresh,
    enqueuePrepared,
    abandonable,
    underTasksRoot,
    maxReportJobs: deps.maxReportJobs ?? MAX_REPORT_JOBS,
    ...(deps.onEnqueued ? { onEnqueued: deps.onEnqueued } : {}),
  };

  const app = new Hono();
  app.use('*', securityHeaders());
  app.use('*', loopbackHost(deps.port));
  app.use('*', sameOrigin(deps.port));
  app.use('*', bodyLimit(MAX_BODY_BYTES));
  app.use('/api/*', jsonBody());
  app.onError(onError);
  app.notFound(notFound);

  // The document never changes while the process lives: made once, on first request.
  let openApi: Uint8Array<ArrayBuffer> | undefined;
  app.get('/api/openapi.json', (c) => {
    openApi ??= utf8.encode(JSON.stringify(openApiDocument()));
    return c.body(openApi, 200, { 'Content-Type': 'application/json' });
  });

  validateRoutes(app, ctx);
  jobRoutes(app, ctx);
  trajectoryRoutes(app, ctx);
  batchRoutes(app, ctx);
  resultRoutes(app, ctx);
  artifactRoutes(app, ctx);

  // Browsers ask for it whatever the page says; no icon, and no 404 in the console.
  app.get('/favicon.ico', (c) => c.body(null, 204));
  for (const [path, asset] of pageAssets()) {
    app.get(path, (c) => c.body(asset.body, 200, { 'Content-Type': asset.contentType }));
  }

  return app;
}
