// The results routes: a batch's report, the report of several batches with a
// comparison, and the debug export as a download. A report is `proctor report --format json`
// (src/results/report.ts); an export is the archive `proctor export` writes, through the same
// redactor, with hidden tests only when asked for as `--include-hidden` asks.
//
// Bounds: ids are checked by form before any lookup; every batch named must exist (404) and
// together hold at most MAX_REPORT_JOBS jobs (413), both before any job is read; a report
// stops between batches when its client leaves, the server stops or REPORT_TIME_LIMIT_MS has
// passed. Reports and exports run one at a time (a report of a large batch holds its rows in
// memory, an export its archive), later requests wait their turn, and a waiting request whose
// client leaves drops out of the line. Report answers go through the answer cache, so that
// polling a finished batch reads one data version per request.
//
// `POST /api/batches/:id/against` compares a batch with an official grader's file, sent as the
// body (the page reads the file the user picks and posts it: the API has no file browser).
// The body is bounded (MAX_AGAINST_BODY_BYTES), parsed by the same parsers as `report
// --against`, and never stored; the comparison waits its turn in the report line.
import type { Context, Hono } from 'hono';
import PQueue from 'p-queue';
import { ProctorError } from '../../errors.js';
import type { Job } from '../../queue/index.js';
import { declaredTestIds } from '../../oracle/index.js';
import {
  exportBatchJobs,
  exportJobs,
  loadBatch,
  parityOfBatch,
  readTestStatuses,
  parseOfficial,
  reportObject,
  type LoadedBatch,
  type Official,
  type Parity,
  type ReportObject,
} from '../../results/index.js';
import { bodyLimit } from '../guards.js';
import { jsonOf, parse, queryOf } from '../parse.js';
import {
  MAX_AGAINST_BODY_BYTES,
  REPORT_TIME_LIMIT_MS,
  batchId,
  batchReportQuery,
  exportQuery,
  reportQuery,
} from '../results-schemas.js';
import { jobId } from '../schemas.js';
import type { RouteContext } from './context.js';

export function resultRoutes(app: Hono, ctx: RouteContext): void {
  const { store, clock } = ctx;
  // One report or export at a time: each may hold a batch's rows or an archive in memory.
  const line = new PQueue({ concurrency: 1 });
  const inLine = <T>(c: Context, work: (signal: AbortSignal) => Promise<T>) =>
    ctx.abandonable(c, (signal) => line.add(() => work(signal), { signal }));

  async function report(c: Context, ids: string[], compare: string | undefined) {
    const named = compare === undefined || ids.includes(compare) ? ids : [...ids, compare];
    let jobs = 0;
    for (const id of named) {
      const batch = await store.getBatch(id);
      if (!batch) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${id}`);
      jobs += batch.total;
    }
    if (jobs > ctx.maxReportJobs) {
      throw new ProctorError(
        'LIMIT_EXCEEDED',
        `the batches hold ${jobs} jobs; one report reads at most ${ctx.maxReportJobs}: ask for fewer batches`,
        { data: { limit: ctx.maxReportJobs } },
      );
    }
    return inLine(c, async (signal): Promise<ReportObject> => {
      const deadline = clock.now() + REPORT_TIME_LIMIT_MS;
      const loaded = new Map<string, LoadedBatch>();
      for (const id of named) {
        signal.throwIfAborted();
        if (clock.now() > deadline) {
          throw new ProctorError(
            'LIMIT_EXCEEDED',
            `the report took over ${REPORT_TIME_LIMIT_MS / 1000} s; ask for fewer batches`,
          );
        }
        loaded.set(id, await loadBatch(store, id));
      }
      const reference = compare === undefined ? null : (loaded.get(compare) as LoadedBatch);
      return reportObject(
        ids.map((id) => loaded.get(id) as LoadedBatch),
        reference,
      );
    });
  }

  app.get('/api/batches/:id/report', (c) =>
    ctx.fresh(c, async () => {
      const id = parse(batchId, c.req.param('id'), 'id');
      const { compare } = parse(batchReportQuery, queryOf(c), 'query');
      return report(c, [id], compare);
    }),
  );

  app.get('/api/report', (c) =>
    ctx.fresh(c, async () => {
      const q = parse(reportQuery, queryOf(c, ['batch']), 'query');
      return report(c, q.batch, q.compare);
    }),
  );

  app.post('/api/batches/:id/against', bodyLimit(MAX_AGAINST_BODY_BYTES), async (c) => {
    const id = parse(batchId, c.req.param('id'), 'id');
    let official: Official;
    try {
      official = parseOfficial(await jsonOf(c), 'body');
    } catch (error) {
      if (error instanceof ProctorError && error.code === 'USAGE') {
        throw new ProctorError('PAYLOAD_INVALID', error.message, { data: { path: 'body' } });
      }
      throw error;
    }
    const batch = await store.getBatch(id);
    if (!batch) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${id}`);
    if (batch.total > ctx.maxReportJobs) {
      throw new ProctorError(
        'LIMIT_EXCEEDED',
        `batch ${id} holds ${batch.total} jobs; one report reads at most ${ctx.maxReportJobs}`,
        { data: { limit: ctx.maxReportJobs } },
      );
    }
    const parity = await inLine(c, async (): Promise<Parity> => {
      const loaded = await loadBatch(store, id);
      // Bundle paths come from the batch's own jobs, not the request; only their declared
      // test IDs are read.
      return parityOfBatch(
        loaded,
        official,
        (bundles) => declaredTestIds(bundles),
        (jobs) => readTestStatuses(store, jobs),
      );
    });
    return c.json(parity);
  });

  async function download(c: Context, name: string, jobs: () => Promise<Job[]>) {
    const { includeHidden } = parse(exportQuery, queryOf(c), 'query');
    const archive = await inLine(c, async () => {
      const result = await exportJobs(
        { store, artifacts: ctx.artifacts, redactor: ctx.redactor },
        await jobs(),
        includeHidden ? { includeHidden: true } : {},
      );
      return result.archive;
    });
    // A view of the archive's bytes, not a copy: it may be hundreds of megabytes.
    const bytes = new Uint8Array(archive.buffer, archive.byteOffset, archive.length);
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': 'application/gzip',
      'Content-Length': String(archive.length),
      'Content-Disposition': `attachment; filename="${name}.tar.gz"`,
    });
  }

  app.get('/api/batches/:id/export', (c) => {
    const id = parse(batchId, c.req.param('id'), 'id');
    return download(c, `proctor-export-${id}`, () => exportBatchJobs(store, id));
  });

  app.get('/api/jobs/:id/export', (c) => {
    const id = parse(jobId, c.req.param('id'), 'id');
    return download(c, `proctor-export-job-${id}`, async () => {
      const job = await store.getJob(id);
      if (!job) throw new ProctorError('JOB_NOT_FOUND', `no job ${id}`);
      return [job];
    });
  });
}
