/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are parsed JSON, checked by the assertions themselves */
// The results routes over real HTTP on 127.0.0.1, a real SQLite home and artifact store:
// the reports are the very objects `proctor report --format json` prints for the same home,
// the exports the very bytes `proctor export` writes, and every bad input a one-line 4xx.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/openapi.js';
import { MAX_REPORT_BATCHES, REPORT_TIME_LIMIT_MS, report } from '../../src/api/results-schemas.js';
import { startServer } from '../../src/api/server.js';
import { manualClock, systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { enqueueWithCandidates } from '../../src/queue/index.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { proctor } from '../helpers/cli.js';
import { httpCaller, type HttpAnswer } from '../helpers/http.js';
import { ROOT } from '../helpers/processes.js';
import { gradeResult, seedGrades } from '../helpers/results.js';
import { STORE_KINDS } from '../helpers/stores.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = 'sk-proj-APIEXPORTplanted0123456789abcdefABCDEF';

async function home(options: { maxReportJobs?: number } = {}) {
  const dir = tempDir();
  mkdirSync(join(dir, 'tasks'));
  const config = loadConfig(dir);
  const store = tempStore({ path: config.dbPath });
  const artifacts = createArtifactStore({
    root: join(dir, 'artifacts'),
    redactor: createRedactor(),
    clock: systemClock,
  });
  const server = await startServer({
    port: 0,
    store,
    artifacts,
    config,
    secrets: [],
    ...options,
  });
  onCleanup(() => server.close());
  return { dir, store, artifacts, call: httpCaller(server.port) };
}

/** Two batches of the same four tasks: `before` resolves t1 t2 t3, `after` t2 t3 t4. */
async function twoBatches(store: Parameters<typeof seedGrades>[0]) {
  const before = await seedGrades(store, 'before', [
    { task: 't1', verdict: 'PASS' },
    { task: 't2', verdict: 'PASS' },
    { task: 't3', verdict: 'PASS' },
    { task: 't4', verdict: 'FAIL' },
  ]);
  const after = await seedGrades(store, 'after', [
    { task: 't1', verdict: 'FAIL' },
    { task: 't2', verdict: 'PASS' },
    { task: 't3', verdict: 'PASS' },
    { task: 't4', verdict: 'PASS' },
    { task: 't5', verdict: 'PASS', failCode: 'DOCKER_ERROR' },
  ]);
  return { before, after };
}

function refused(answer: HttpAnswer, status: number, code: string, message: RegExp) {
  expect({ status: answer.status, code: answer.json().error.code }).toEqual({ status, code });
  expect(answer.json().error.message).toMatch(message);
  expect(answer.json().error.message).not.toContain('\n');
}

describe('GET /api/batches/:id/report and /api/report', () => {
  it('answer the object `proctor report --format json` prints', async () => {
    const { dir, store, call } = await home();
    const { before, after } = await twoBatches(store);

    const one = await call('GET', `/api/batches/${after}/report`);
    expect(one.status).toBe(200);
    expect(one.headers['content-type']).toBe('application/json');
    report.parse(one.json());
    const cli = await proctor(['--home', dir, 'report', after, '--format', 'json']);
    expect(cli.stderr).toBe('');
    expect(one.json()).toEqual(JSON.parse(cli.stdout));
    const summary = one.json().batches[0];
    expect(summary).toMatchObject({
      batch: after,
      label: 'after',
      tasks: 5,
      classes: { resolved: 3, unresolved: 1, error: 1, invalid_task: 0 },
      resolvedRateScored: { successes: 3, n: 4 },
      resolvedRateAll: { successes: 3, n: 5 },
    });
    expect(one.json().comparisons).toBeUndefined();

    const several = await call(
      'GET',
      `/api/report?batch=${after}&batch=${before}&compare=${before}`,
    );
    expect(several.status).toBe(200);
    report.parse(several.json());
    const both = await proctor([
      '--home',
      dir,
      'report',
      after,
      before,
      '--compare',
      before,
      '--format',
      'json',
    ]);
    expect(several.json()).toEqual(JSON.parse(both.stdout));
    expect(report.parse(several.json()).batches.map((b) => b.batch)).toEqual([after, before]);
    expect(several.json().comparisons[0]).toMatchObject({
      batch: after,
      reference: before,
      bothPass: 2,
      passToFail: 1,
      failToPass: 1,
      bothFail: 0,
      paired: 4,
      unpaired: 1,
      mcnemarP: 1,
      difference: { difference: 0, n: 4 },
    });
    expect(several.json().comparisons[0].tasks).toEqual([
      { task: 't1', flip: 'pass_to_fail' },
      { task: 't2', flip: 'both_pass' },
      { task: 't3', flip: 'both_pass' },
      { task: 't4', flip: 'fail_to_pass' },
    ]);
    // The single-batch route takes a reference too.
    const compared = await call('GET', `/api/batches/${after}/report?compare=${before}`);
    expect(compared.json().comparisons).toEqual([several.json().comparisons[0]]);
  });

  it('answers again from the cache until the data changes', async () => {
    const { store, call } = await home();
    const batch = await seedGrades(store, 'live', [
      { task: 't1', verdict: 'PASS' },
      { task: 't2', verdict: null },
    ]);
    const first = await call('GET', `/api/batches/${batch}/report`);
    expect(first.json().batches[0]).toMatchObject({ incomplete: true, classes: { resolved: 1 } });
    expect((await call('GET', `/api/batches/${batch}/report`)).text).toBe(first.text);
    const [job] = await store.claim('grade', 'w', 1, 60_000);
    await store.complete(
      { id: job!.id, attempt: job!.attempt },
      gradeResult({ task: 't2', verdict: 'PASS' }),
    );
    const later = await call('GET', `/api/batches/${batch}/report`);
    expect(later.json().batches[0]).toMatchObject({
      incomplete: false,
      classes: { resolved: 2 },
    });
  });

  it('answer the same over the SQLite and the PostgreSQL store', async () => {
    const answers: unknown[] = [];
    for (const kind of STORE_KINDS) {
      const store = await kind.open();
      const server = await startServer({
        port: 0,
        store,
        artifacts: createArtifactStore({
          root: join(tempDir(), 'artifacts'),
          redactor: createRedactor(),
          clock: systemClock,
        }),
        config: loadConfig(tempDir()),
        secrets: [],
      });
      onCleanup(() => server.close());
      const { before, after } = await twoBatches(store);
      const answer = await httpCaller(server.port)(
        'GET',
        `/api/report?batch=${after}&compare=${before}`,
      );
      expect(answer.status, kind.name).toBe(200);
      // Batch ids and times differ between the two homes; the figures must not.
      const { batches, comparisons } = report.parse(answer.json());
      answers.push({
        classes: batches.map((b) => b.classes),
        rates: batches.map((b) => [b.resolvedRateScored, b.resolvedRateAll]),
        comparisons: comparisons!.map(({ batch: _b, reference: _r, ...rest }) => rest),
      });
    }
    expect(answers[1]).toEqual(answers[0]);
  });

  it('gives up past its time limit, between batches', async () => {
    const clock = manualClock();
    const store = tempStore({ clock });
    const { before, after } = await twoBatches(store);
    // The real store, with every page read taking 61 s on the API's clock.
    const slow = new Proxy(store, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (name !== 'listBatchJobs' || typeof value !== 'function') {
          return typeof value === 'function'
            ? ((value as (...a: unknown[]) => unknown).bind(target) as unknown)
            : value;
        }
        return (...args: unknown[]) => {
          clock.advance(REPORT_TIME_LIMIT_MS + 1000);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const server = await startServer({
      port: 0,
      store: slow,
      clock,
      artifacts: createArtifactStore({
        root: join(tempDir(), 'artifacts'),
        redactor: createRedactor(),
        clock,
      }),
      config: loadConfig(tempDir()),
      secrets: [],
    });
    onCleanup(() => server.close());
    const call = httpCaller(server.port);
    refused(
      await call('GET', `/api/report?batch=${after}&batch=${before}`),
      413,
      'LIMIT_EXCEEDED',
      /^the report took over 60 s; ask for fewer batches$/,
    );
    // One batch is read whole whatever the clock says: the limit is checked between batches.
    expect((await call('GET', `/api/batches/${after}/report`)).status).toBe(200);
  });

  it('refuses bad input with a one-line 4xx', async () => {
    const { store, call } = await home({ maxReportJobs: 8 });
    const { before, after } = await twoBatches(store);
    const many = Array.from({ length: MAX_REPORT_BATCHES + 1 }, (_, i) => `batch=b_${i}`).join('&');
    const cases: Array<[string, number, string, RegExp]> = [
      ['/api/batches/b_nope/report', 404, 'BATCH_NOT_FOUND', /^no batch b_nope$/],
      [`/api/batches/${after}/report?compare=b_nope`, 404, 'BATCH_NOT_FOUND', /^no batch b_nope$/],
      ['/api/batches/b%20x/report', 400, 'PAYLOAD_INVALID', /^id: expected a batch id/],
      [
        `/api/batches/${after}/report?format=csv`,
        400,
        'PAYLOAD_INVALID',
        /^query: unknown key `format`$/,
      ],
      [
        `/api/batches/${after}/report?compare=${before}&compare=${before}`,
        400,
        'PAYLOAD_INVALID',
        /^query\.compare: given 2 times$/,
      ],
      [`/api/report?batch=${after}&batch=b_nope`, 404, 'BATCH_NOT_FOUND', /^no batch b_nope$/],
      ['/api/report', 400, 'PAYLOAD_INVALID', /^query\.batch: /],
      ['/api/report?batch=', 400, 'PAYLOAD_INVALID', /^query\.batch\[0\]: expected a batch id/],
      [`/api/report?${many}`, 400, 'PAYLOAD_INVALID', /^query\.batch: at most 10 batches/],
      [
        `/api/report?batch=${after}&batch=${after}`,
        400,
        'PAYLOAD_INVALID',
        /^query\.batch: a batch is named twice$/,
      ],
      [
        `/api/report?batch=${after}&limit=5`,
        400,
        'PAYLOAD_INVALID',
        /^query: unknown key `limit`$/,
      ],
      // 5 + 4 jobs: over the lowered bound, refused before any job is read.
      [
        `/api/report?batch=${after}&compare=${before}`,
        413,
        'LIMIT_EXCEEDED',
        /^the batches hold 9 jobs; one report reads at most 8/,
      ],
    ];
    for (const [path, status, code, message] of cases) {
      refused(await call('GET', path), status, code, message);
    }
    // Within the bound, the same batches report.
    expect((await call('GET', `/api/report?batch=${before}`)).status).toBe(200);
  });
});

/** A home with one finished grade of a copied bundle whose description holds a key. */
async function exportHome() {
  const h = await home();
  const bundle = join(h.dir, 'tasks', 'shell-task');
  cpSync(join(ROOT, 'test/fixtures/bundles/shell-task'), bundle, { recursive: true });
  writeFileSync(
    join(bundle, 'description.md'),
    `${readFileSync(join(bundle, 'description.md'), 'utf8')}\nUse OPENAI_API_KEY=${SECRET}\n`,
  );
  const diff = Buffer.from(
    `diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+export OPENAI_API_KEY=${SECRET}\n`,
  );
  const { batch, jobIds } = await enqueueWithCandidates(
    { store: h.store, artifacts: h.artifacts },
    [diff],
    (ids, inputs) =>
      h.store.enqueueBatch(
        { label: 'export', jobs: [{ kind: 'grade', payload: { bundle, candidate: ids[0]! } }] },
        inputs,
      ),
  );
  const [job] = await h.store.claim('grade', 'w', 1, 60_000);
  await h.store.complete(
    { id: job!.id, attempt: job!.attempt },
    gradeResult({ task: 'shell-div-zero', verdict: 'PASS' }),
  );
  return { ...h, batchId: batch!.id, jobId: jobIds[0]! };
}

const bytesOf = (answer: HttpAnswer) => Buffer.from(answer.text, 'latin1');

describe('GET /api/batches/:id/export and /api/jobs/:id/export', () => {
  it('download the archive `proctor export` writes, redacted, hidden tests only when asked', async () => {
    const { dir, call, batchId, jobId } = await exportHome();
    const out = tempDir();

    const batch = await call('GET', `/api/batches/${batchId}/export`);
    expect(batch.status).toBe(200);
    expect(batch.headers['content-type']).toBe('application/gzip');
    expect(batch.headers['content-disposition']).toBe(
      `attachment; filename="proctor-export-${batchId}.tar.gz"`,
    );
    expect(Number(batch.headers['content-length'])).toBe(bytesOf(batch).length);
    const cli = join(out, 'batch.tar.gz');
    expect((await proctor(['--home', dir, 'export', '--batch', batchId, '--out', cli])).code).toBe(
      0,
    );
    expect(bytesOf(batch).equals(readFileSync(cli))).toBe(true);
    const tar = gunzipSync(bytesOf(batch));
    expect(tar.includes(SECRET)).toBe(false);
    expect(tar.includes('OPENAI_API_KEY=[REDACTED]')).toBe(true);
    expect(tar.includes('tests/hidden.patch')).toBe(false);

    const job = await call('GET', `/api/jobs/${jobId}/export?includeHidden=false`);
    expect(job.headers['content-disposition']).toBe(
      `attachment; filename="proctor-export-job-${jobId}.tar.gz"`,
    );
    const hidden = await call('GET', `/api/jobs/${jobId}/export?includeHidden=true`);
    const cliHidden = join(out, 'hidden.tar.gz');
    await proctor(['--home', dir, 'export', String(jobId), '--out', cliHidden, '--include-hidden']);
    expect(bytesOf(hidden).equals(readFileSync(cliHidden))).toBe(true);
    expect(gunzipSync(bytesOf(hidden)).includes('bundles/1/tests/hidden.patch')).toBe(true);
    expect(gunzipSync(bytesOf(job)).includes('tests/hidden.patch')).toBe(false);
  });

  it('refuses bad input with a one-line 4xx', async () => {
    const { call, batchId, jobId } = await exportHome();
    const cases: Array<[string, number, string, RegExp]> = [
      ['/api/batches/b_nope/export', 404, 'BATCH_NOT_FOUND', /^no batch b_nope$/],
      ['/api/jobs/999/export', 404, 'JOB_NOT_FOUND', /^no job 999$/],
      ['/api/jobs/1e3/export', 400, 'PAYLOAD_INVALID', /^id: /],
      ['/api/batches/..%2Fx/export', 400, 'PAYLOAD_INVALID', /^id: expected a batch id/],
      [
        `/api/jobs/${jobId}/export?includeHidden=yes`,
        400,
        'PAYLOAD_INVALID',
        /^query\.includeHidden: /,
      ],
      [
        `/api/batches/${batchId}/export?hidden=true`,
        400,
        'PAYLOAD_INVALID',
        /^query: unknown key `hidden`$/,
      ],
      [
        `/api/batches/${batchId}/export?includeHidden=true&includeHidden=false`,
        400,
        'PAYLOAD_INVALID',
        /^query\.includeHidden: given 2 times$/,
      ],
    ];
    for (const [path, status, code, message] of cases) {
      refused(await call('GET', path), status, code, message);
    }
  });
});

describe('the line of reports and exports', () => {
  it('runs one at a time, and drops a waiting request whose client left', async () => {
    const store = tempStore();
    const { before, after } = await twoBatches(store);
    // The real store; a report's first page read waits for the gate, and export reads
    // (listJobs of a batch) are counted.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let reading = false;
    let exportReads = 0;
    const gated = new Proxy(store, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        const method = value as (...a: unknown[]) => Promise<unknown>;
        if (name === 'listBatchJobs') {
          return async (...args: unknown[]) => {
            reading = true;
            await gate;
            return method.apply(target, args);
          };
        }
        if (name === 'listJobs') {
          return (...args: unknown[]) => {
            if ((args[0] as { batchId?: string } | undefined)?.batchId) exportReads++;
            return method.apply(target, args);
          };
        }
        return method.bind(target) as unknown;
      },
    });
    const server = await startServer({
      port: 0,
      store: gated,
      artifacts: createArtifactStore({
        root: join(tempDir(), 'artifacts'),
        redactor: createRedactor(),
        clock: systemClock,
      }),
      config: loadConfig(tempDir()),
      secrets: [],
    });
    onCleanup(() => server.close());
    const call = httpCaller(server.port);

    const first = call('GET', `/api/batches/${after}/report`);
    await waitFor(() => reading, { what: 'the report to read its batch' });
    // An export asked for meanwhile waits; its client leaves before its turn.
    const waiting = request({
      host: '127.0.0.1',
      port: server.port,
      path: `/api/batches/${before}/export`,
      headers: { host: `127.0.0.1:${server.port}` },
    });
    waiting.on('error', () => undefined);
    waiting.end();
    await waitFor(() => server.busy() === 2, { what: 'the export to wait in line' });
    expect(exportReads).toBe(0);
    waiting.destroy();
    await waitFor(() => server.busy() === 1, { what: 'the export to leave the line' });
    open();
    expect((await first).status).toBe(200);
    expect(exportReads).toBe(0);
    // The next export runs as usual.
    expect((await call('GET', `/api/batches/${before}/export`)).status).toBe(200);
    expect(exportReads).toBeGreaterThan(0);
  });
});

describe('the OpenAPI document', () => {
  it('describes the results routes with their schemas', () => {
    const paths = openApiDocument().paths as Record<string, Record<string, unknown>>;
    for (const path of [
      '/api/batches/{id}/report',
      '/api/report',
      '/api/batches/{id}/export',
      '/api/jobs/{id}/export',
    ]) {
      expect(paths[path]?.['get'], path).toBeDefined();
    }
    const reportGet = paths['/api/report']!['get'] as {
      parameters: Array<{ name: string; schema: { type?: string; maxItems?: number } }>;
      responses: Record<string, { content?: Record<string, { schema: { properties?: object } }> }>;
    };
    expect(reportGet.parameters.find((p) => p.name === 'batch')?.schema).toMatchObject({
      type: 'array',
      maxItems: MAX_REPORT_BATCHES,
    });
    expect(
      Object.keys(reportGet.responses['200']!.content!['application/json']!.schema.properties!),
    ).toEqual(['batches', 'comparisons', 'baselines', 'baselineComparisons']);
    const exportGet = paths['/api/jobs/{id}/export']!['get'] as {
      responses: Record<string, { content?: Record<string, unknown> }>;
    };
    expect(Object.keys(exportGet.responses['200']!.content!)).toEqual(['application/gzip']);
  });
});
