// POST /api/validate: the static checks of a bundle or suite are answered at once; the image
// and base commit are checked by one validate job per bundle that passed them, enqueued as one
// batch (so a suite's progress reads like any batch's). Building or pulling an image and
// starting a probe container take minutes and need an engine: that work belongs to the worker
// pool, not a request.
import type { Hono } from 'hono';
import { checkStatic } from '../../oracle/index.js';
import { jsonOf, parse } from '../parse.js';
import { MAX_BATCH_JOBS, validateRequest, type Answer } from '../schemas.js';
import type { RouteContext } from './context.js';

export function validateRoutes(app: Hono, ctx: RouteContext): void {
  const { store, config } = ctx;
  app.post('/api/validate', async (c) => {
    const request = parse(validateRequest, await jsonOf(c), 'body');
    // A suite is bounded like a batch, and its loading stops when the client goes away.
    const found = await ctx.abandonable(c, (signal) =>
      checkStatic([ctx.underTasksRoot(request.path)], {
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
      if (result.created) ctx.onEnqueued?.();
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
}
