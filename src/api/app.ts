// The loopback API: validate a bundle (static checks at once, the rest as validate jobs), enqueue baseline/solve/grade jobs (one or a batch, with
// idempotency keys), list and read jobs and batches in bounded pages, cancel, read a bounded
// slice of a job's oracle log, download a registered artifact, and the status page. Nothing
// else: no shell, no file browser, no RPC. Every request passes the guards (loopback Host and
// Origin, JSON bodies, a body limit, security headers) before any route. The API never runs
// Docker: work that needs an engine is a job, run by the worker pool.
import { resolve } from 'node:path';
import { Hono, type Context } from 'hono';
import { stream } from 'hono/streaming';
import type { z } from 'zod';
import { systemClock, type Clock } from '../clock.js';
import type { ProctorConfig } from '../config.js';
import { ProctorError } from '../errors.js';
import { zodProblem } from '../problems.js';
import { checkStatic } from '../oracle/index.js';
import { silentLogger, type Logger } from '../logger.js';
import { progressFigures, type Job, type JobStore } from '../queue/index.js';
import type { ArtifactStore } from '../store/index.js';
import { checkBatchSize, createEnqueuer } from './enqueue.js';
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
import {
  batchRequest,
  emptyRequest,
  jobId,
  jobListQuery,
  jobRequest,
  logQuery,
  MAX_BATCH_JOBS,
  pageQuery,
  validateRequest,
  type Answer,
} from './schemas.js';

export interface ApiDeps {
  store: JobStore;
  artifacts: ArtifactStore;
  config: ProctorConfig;
  /** The port the server is bound to (or how to learn it): Host and Origin must name it. */
  port: PortSource;
  /** Provider keys: a grade patch holding one is refused. */
  secrets: readonly string[];
  /** Called after an enqueue, to wake an in-process pool. */
  onEnqueued?: () => void;
  /** For rates and ETAs; the store's clock, so that both agree. Default: the system clock. */
  clock?: Clock;
  /** Aborted when the server shuts down: every request's work stops at its next step. */
  signal?: AbortSignal;
  /** Where abandoned work is noted. Default: silent. */
  logger?: Logger;
}

/** How many read answers `fresh()` keeps, and their bytes at most; the oldest go first. */
const MAX_CACHED_ANSWERS = 256;
const MAX_CACHED_BYTES = 16 * 1024 * 1024;
const utf8 = new TextEncoder();

/** Largest request body: a batch of grade patches is the biggest legitimate one. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

function parse<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const { path, detail } = zodProblem(result.error, where);
    throw new ProctorError('PAYLOAD_INVALID', `${path}: ${detail}`, { data: { path } });
  }
  return result.data;
}

/** The query parameters, each given once: a repeated one is ambiguous, so it is refused. */
function queryOf(c: Context): Record<string, string> {
  const all = c.req.queries();
  const query: Record<string, string> = {};
  for (const [name, values] of Object.entries(all)) {
    if (values.length > 1) {
      throw new ProctorError('PAYLOAD_INVALID', `query.${name}: given ${values.length} times`, {
        data: { path: `query.${name}` },
      });
    }
    query[name] = values[0] ?? '';
  }
  return query;
}

async function jsonOf(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw new ProctorError('PAYLOAD_INVALID', 'the body is not valid JSON');
  }
}

function jobView(job: Job): Answer<'jobPage'>['items'][number] {
  return {
    id: job.id,
    batchId: job.batchId,
    parentId: job.parentId,
    kind: job.kind,
    status: job.status,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    payload: job.payload,
    result: job.result,
    lastError: job.lastError,
    errorCode: job.errorCode,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    cancelRequested: job.cancelRequestedAt !== null,
  };
}

export function createApp(deps: ApiDeps): Hono {
  const { store, artifacts, config } = deps;
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger;
  // Read answers are reused while the store's data version is unchanged: a dashboard polling
  // a large table costs one version check per request, and never gets an answer that misses a
  // commit made before its request arrived. An answer with rates and ETAs, which move with the
  // clock, is reused within the same second only. The cache is keyed by the request URL and
  // holds successful answers only, so a hit skips parsing the query too: that URL parsed
  // before. Bodies are kept encoded, ready to send; the oldest go first past either bound.
  const answers = new Map<string, { version: string; body: Uint8Array<ArrayBuffer> }>();
  let cachedBytes = 0;
  async function fresh(
    c: Context,
    compute: () => Promise<unknown>,
    { clocked = false }: { clocked?: boolean } = {},
  ) {
    const key = clocked ? `${Math.floor(clock.now() / 1000)} ${c.req.url}` : c.req.url;
    const version = await store.dataVersion();
    let hit = answers.get(key);
    if (hit?.version !== version) {
      hit = { version, body: utf8.encode(JSON.stringify(await compute())) };
      cachedBytes -= answers.get(key)?.body.length ?? 0;
      answers.delete(key);
      answers.set(key, hit);
      cachedBytes += hit.body.length;
      for (const [oldest, answer] of answers) {
        if (answers.size <= MAX_CACHED_ANSWERS && cachedBytes <= MAX_CACHED_BYTES) break;
        if (oldest === key) break; // the answer being sent stays, however large
        answers.delete(oldest);
        cachedBytes -= answer.body.length;
      }
    }
    return c.body(hit.body, 200, { 'Content-Type': 'application/json' });
  }

  /** A request's bundle path: relative ones are under tasks_root; loadBundle checks containment. */
  const underTasksRoot = (path: string) => resolve(config.tasksRoot, path);
  const app = new Hono();
  app.use('*', securityHeaders());
  app.use('*', loopbackHost(deps.port));
  app.use('*', sameOrigin(deps.port));
  app.use('*', bodyLimit(MAX_BODY_BYTES));
  app.use('/api/*', jsonBody());
  app.onError(onError);
  app.notFound(notFound);

  const { enqueuePrepared, abandonable } = createEnqueuer({ ...deps, logger, underTasksRoot });

  // The document never changes while the process lives: made once, on first request.
  let openApi: Uint8Array<ArrayBuffer> | undefined;
  app.get('/api/openapi.json', (c) => {
    openApi ??= utf8.encode(JSON.stringify(openApiDocument()));
    return c.body(openApi, 200, { 'Content-Type': 'application/json' });
  });

  // The static checks are answered here; the image and base commit are checked by one
  // validate job per bundle that passed them, enqueued as one batch (so a suite's progress
  // reads like any batch's). Building or pulling an image and starting a probe container
  // take minutes and need an engine: that work belongs to the worker pool, not a request.
  app.post('/api/validate', async (c) => {
    const request = parse(validateRequest, await jsonOf(c), 'body');
    // A suite is bounded like a batch, and its loading stops when the client goes away.
    const found = await abandonable(c, (signal) =>
      checkStatic([underTasksRoot(request.path)], {
        tasksRoot: config.tasksRoot,
        maxBundles: MAX_BATCH_JOBS,
        signal,
      }),
    );
    const passed = found.filter((r) => r.ok);
    let enqueued = { batchId: null as string | null, created: false, jobIds: [] as number[] };
    if (passed.length > 0) {
      const result = await store.enqueueBatch({
        label: `validate ${request.path}`.slice(0, 200),
        jobs: passed.map((r) => ({ kind: 'validate', payload: { bundle: r.dir } })),
        ...(request.idempotencyKey === undefined ? {} : { idempotencyKey: request.idempotencyKey }),
      });
      enqueued = {
        batchId: result.batch?.id ?? null,
        created: result.created,
        jobIds: result.jobIds,
      };
      if (result.created) deps.onEnqueued?.();
    }
    const jobs = enqueued.jobIds.values();
    const results = found.map((r) =>
      r.ok ? { ok: true as const, dir: r.dir, id: r.id, job: jobs.next().value as number } : r,
    );
    return c.json(
      {
        results,
        batchId: enqueued.batchId,
        created: enqueued.created,
      } satisfies Answer<'validated'>,
      enqueued.created ? 202 : 200,
    );
  });

  app.post('/api/jobs', async (c) => {
    const request = parse(jobRequest, await jsonOf(c), 'body');
    const { job: made, created } = await abandonable(c, (signal) =>
      enqueuePrepared([request], signal, ([job], inputs) => {
        if (!job) throw new ProctorError('INTERNAL', 'nothing to enqueue');
        return store.enqueue(job, inputs);
      }),
    );
    deps.onEnqueued?.();
    return c.json(
      { job: jobView(made), created } satisfies Answer<'enqueued'>,
      created ? 201 : 200,
    );
  });

  app.post('/api/batches', async (c) => {
    const body = await jsonOf(c);
    // Counted before anything else is parsed or read, so an oversized batch costs nothing.
    checkBatchSize(body);
    const request = parse(batchRequest, body, 'body');
    const result = await abandonable(c, (signal) =>
      enqueuePrepared(request.jobs, signal, (prepared, inputs) =>
        store.enqueueBatch(
          {
            jobs: prepared,
            ...(request.label === undefined ? {} : { label: request.label }),
            ...(request.idempotencyKey === undefined
              ? {}
              : { idempotencyKey: request.idempotencyKey }),
          },
          inputs,
        ),
      ),
    );
    deps.onEnqueued?.();
    return c.json(
      {
        batch: result.batch,
        jobIds: result.jobIds,
        created: result.created,
      } satisfies Answer<'batchEnqueued'>,
      result.created ? 201 : 200,
    );
  });

  app.get('/api/jobs', (c) =>
    fresh(c, async () => {
      const q = parse(jobListQuery, queryOf(c), 'query');
      const page = await store.listJobs(
        {
          ...(q.batch ? { batchId: q.batch } : {}),
          ...(q.status ? { status: q.status } : {}),
          ...(q.kind ? { kind: q.kind } : {}),
        },
        { limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) },
      );
      return {
        items: page.items.map(jobView),
        nextCursor: page.nextCursor,
      } satisfies Answer<'jobPage'>;
    }),
  );

  app.get('/api/jobs/:id', async (c) => {
    const id = parse(jobId, c.req.param('id'), 'id');
    const job = await store.getJob(id);
    if (!job) throw new ProctorError('JOB_NOT_FOUND', `no job ${id}`);
    const list = await store.listArtifacts(id);
    return c.json({
      job: jobView(job),
      artifacts: list.map((a) => ({
        id: a.id,
        name: a.name,
        mediaType: a.mediaType,
        size: a.size,
        sha256: a.sha256,
      })),
    } satisfies Answer<'job'>);
  });

  app.post('/api/jobs/:id/cancel', async (c) => {
    const id = parse(jobId, c.req.param('id'), 'id');
    parse(emptyRequest, await jsonOf(c), 'body');
    const outcome = (await store.cancel([id])).get(id);
    if (outcome === undefined || outcome === 'not_found') {
      throw new ProctorError('JOB_NOT_FOUND', `no job ${id}`);
    }
    return c.json({ id, outcome } satisfies Answer<'jobCancelled'>);
  });

  app.get('/api/jobs/:id/log', async (c) => {
    const id = parse(jobId, c.req.param('id'), 'id');
    const { offset, limit } = parse(logQuery, queryOf(c), 'query');
    const job = await store.getJob(id);
    if (!job) throw new ProctorError('JOB_NOT_FOUND', `no job ${id}`);
    const log = (await store.listArtifacts(id)).find(
      (a) => a.name === 'oracle.log' || a.name === 'transcript.json',
    );
    if (!log) throw new ProctorError('ARTIFACT_NOT_FOUND', `job ${id} has no log`);
    // Only the slice is kept in memory, though the whole file is verified; it ends on a
    // character boundary, so that the next slice starts with a whole character.
    const bytes = await artifacts.readSlice(log, { offset, length: limit, utf8: true });
    const start = Math.min(offset, log.size);
    const end = start + bytes.length;
    return c.json({
      artifact: log.id,
      size: log.size,
      offset: start,
      text: bytes.toString('utf8'),
      nextOffset: end < log.size ? end : null,
    } satisfies Answer<'logSlice'>);
  });

  app.get('/api/batches', (c) =>
    fresh(
      c,
      async () => {
        const q = parse(pageQuery, queryOf(c), 'query');
        const page = await store.listBatches({
          limit: q.limit,
          ...(q.cursor ? { cursor: q.cursor } : {}),
        });
        const now = clock.now();
        const items = await Promise.all(
          page.items.map(async (batch) => {
            const progress = await store.batchProgress(batch.id);
            return { ...batch, counts: progress.counts, ...progressFigures(progress, now) };
          }),
        );
        return { items, nextCursor: page.nextCursor } satisfies Answer<'batchPage'>;
      },
      { clocked: true },
    ),
  );

  app.get('/api/batches/:id', (c) =>
    fresh(
      c,
      async () => {
        const id = c.req.param('id');
        const progress = await store.batchProgress(id);
        return {
          batch: progress.batch,
          counts: progress.counts,
          verdicts: await store.countByVerdict({ batchId: id }),
          ...progressFigures(progress, clock.now()),
        } satisfies Answer<'batchProgress'>;
      },
      { clocked: true },
    ),
  );

  app.post('/api/batches/:id/cancel', async (c) => {
    const id = c.req.param('id');
    parse(emptyRequest, await jsonOf(c), 'body');
    if (!(await store.getBatch(id))) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${id}`);
    const outcomes = await store.cancelBatch(id);
    return c.json({
      batchId: id,
      outcomes: Object.fromEntries(outcomes),
    } satisfies Answer<'batchCancelled'>);
  });

  app.get('/api/artifacts/:id', async (c) => {
    const record = await store.getArtifact(c.req.param('id'));
    if (!record) throw new ProctorError('ARTIFACT_NOT_FOUND', 'no such artifact');
    // Opening rechecks containment, regular-file status, size and checksum before any byte
    // is sent; the bytes are hashed again while they flow.
    const download = await artifacts.open(record);
    c.header(
      'Content-Type',
      record.mediaType.startsWith('text/')
        ? 'text/plain; charset=utf-8'
        : 'application/octet-stream',
    );
    c.header('Content-Length', String(download.size));
    c.header(
      'Content-Disposition',
      `attachment; filename="${record.relPath.split('/').pop() ?? 'artifact'}"`,
    );
    return stream(c, async (out) => {
      for await (const chunk of download.stream) await out.write(chunk as Uint8Array);
    });
  });

  // Browsers ask for it whatever the page says; no icon, and no 404 in the console.
  app.get('/favicon.ico', (c) => c.body(null, 204));
  const assets = pageAssets();
  for (const [path, asset] of assets) {
    app.get(path, (c) => c.body(asset.body, 200, { 'Content-Type': asset.contentType }));
  }

  return app;
}
