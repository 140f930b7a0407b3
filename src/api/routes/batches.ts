// The batch routes: enqueue a batch in one transaction, list batches with their progress,
// read one batch's progress, cancel every unfinished job of one.
import type { Hono } from 'hono';
import { ProctorError } from '../../errors.js';
import { progressFigures } from '../../queue/index.js';
import { checkBatchSize } from '../enqueue.js';
import { jsonOf, parse, queryOf } from '../parse.js';
import { batchRequest, emptyRequest, pageQuery, type Answer } from '../schemas.js';
import { batchId } from '../results-schemas.js';
import type { RouteContext } from './context.js';

export function batchRoutes(app: Hono, ctx: RouteContext): void {
  const { store, clock } = ctx;

  app.post('/api/batches', async (c) => {
    const body = await jsonOf(c);
    // Counted before anything else is parsed or read, so an oversized batch costs nothing.
    checkBatchSize(body);
    const request = parse(batchRequest, body, 'body');
    const result = await ctx.abandonable(c, (signal) =>
      ctx.enqueuePrepared(request.jobs, signal, (prepared, inputs) =>
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
    ctx.onEnqueued?.();
    return c.json(
      {
        batch: result.batch,
        jobIds: result.jobIds,
        created: result.created,
      } satisfies Answer<'batchEnqueued'>,
      result.created ? 201 : 200,
    );
  });

  app.get('/api/batches', (c) =>
    ctx.fresh(
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
    ctx.fresh(
      c,
      async () => {
        const id = parse(batchId, c.req.param('id'), 'id');
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
    const id = parse(batchId, c.req.param('id'), 'id');
    parse(emptyRequest, await jsonOf(c), 'body');
    if (!(await store.getBatch(id))) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${id}`);
    const outcomes = await store.cancelBatch(id);
    return c.json({
      batchId: id,
      outcomes: Object.fromEntries(outcomes),
    } satisfies Answer<'batchCancelled'>);
  });
}
