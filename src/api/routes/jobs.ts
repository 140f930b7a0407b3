// The job routes: enqueue one job, list jobs in bounded pages, read one with its artifacts,
// cancel one, and read a bounded slice of its oracle log or transcript, or of an agent solve's
// trajectory.
import type { Hono } from 'hono';
import type { z } from 'zod';
import { ProctorError } from '../../errors.js';
import {
  expandTestStatuses,
  readTestStatuses,
  summariseTestStatuses,
} from '../../results/test-statuses.js';
import { jsonOf, parse, queryOf } from '../parse.js';
import {
  emptyRequest,
  jobId,
  jobListQuery,
  jobRequest,
  logQuery,
  type Answer,
} from '../schemas.js';
import type { jobTests } from '../results-schemas.js';
import { testsQuery } from '../results-schemas.js';
import { jobView } from '../views.js';
import { pullsOf } from '../../results/pulls.js';
import type { RouteContext } from './context.js';

export function jobRoutes(app: Hono, ctx: RouteContext): void {
  const { store, artifacts } = ctx;

  app.post('/api/jobs', async (c) => {
    const request = parse(jobRequest, await jsonOf(c), 'body');
    const { job: made, created } = await ctx.abandonable(c, (signal) =>
      ctx.enqueuePrepared([request], signal, ([job], inputs) => {
        if (!job) throw new ProctorError('INTERNAL', 'nothing to enqueue');
        return store.enqueue(job, inputs);
      }),
    );
    ctx.onEnqueued?.();
    return c.json(
      { job: jobView(made), created } satisfies Answer<'enqueued'>,
      created ? 201 : 200,
    );
  });

  app.get('/api/jobs', (c) =>
    ctx.fresh(c, async () => {
      const q = parse(jobListQuery, queryOf(c), 'query');
      const page = await store.listJobs(
        {
          ...(q.batch ? { batchId: q.batch } : {}),
          ...(q.status ? { status: q.status } : {}),
          ...(q.kind ? { kind: q.kind } : {}),
        },
        { limit: q.limit, ...(q.cursor ? { cursor: q.cursor } : {}) },
      );
      const pulls = await pullsOf(store, page.items);
      return {
        items: page.items.map((j) => jobView(j, pulls)),
        nextCursor: page.nextCursor,
      } satisfies Answer<'jobPage'>;
    }),
  );

  app.get('/api/jobs/:id', async (c) => {
    const id = parse(jobId, c.req.param('id'), 'id');
    const job = await store.getJob(id);
    if (!job) throw new ProctorError('JOB_NOT_FOUND', `no job ${id}`);
    const list = await store.listArtifacts(id);
    const pulls = await pullsOf(store, [job]);
    return c.json({
      job: jobView(job, pulls),
      artifacts: list.map((a) => ({
        id: a.id,
        name: a.name,
        mediaType: a.mediaType,
        size: a.size,
        sha256: a.sha256,
      })),
    } satisfies Answer<'job'>);
  });

  app.get('/api/jobs/:id/tests', async (c) => {
    const id = parse(jobId, c.req.param('id'), 'id');
    const { all } = parse(testsQuery, queryOf(c), 'query');
    const job = await store.getJob(id);
    if (!job) throw new ProctorError('JOB_NOT_FOUND', `no job ${id}`);
    const doc = (await readTestStatuses(store, [id])).get(id);
    return c.json({
      job: id,
      summary: doc === undefined ? null : summariseTestStatuses(doc),
      tests: doc === undefined || !all ? null : expandTestStatuses(doc),
    } satisfies z.input<typeof jobTests>);
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

  // A bounded slice of the job's first artifact named in `names`; `what` names it in the 404.
  const sliceRoute = (path: string, names: readonly string[], what: string) =>
    app.get(path, async (c) => {
      const id = parse(jobId, c.req.param('id'), 'id');
      const { offset, limit } = parse(logQuery, queryOf(c), 'query');
      const job = await store.getJob(id);
      if (!job) throw new ProctorError('JOB_NOT_FOUND', `no job ${id}`);
      const artifactsOfJob = await store.listArtifacts(id);
      const log = names.map((n) => artifactsOfJob.find((a) => a.name === n)).find((a) => a);
      if (!log) throw new ProctorError('ARTIFACT_NOT_FOUND', `job ${id} has no ${what}`);
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
  sliceRoute('/api/jobs/:id/log', ['oracle.log', 'transcript.json'], 'log');
  // An agent solve's trajectory (the model proxy's record, trajectory.json), redacted like it.
  sliceRoute('/api/jobs/:id/trajectory', ['trajectory.json'], 'trajectory');
}
