// The status page in a real headless Chromium, under the API's CSP, against a real SQLite job
// store. The API routes here are a minimal stand-in written to the JSON contract the page
// codes against (src/api/app.ts serves the real ones), so the page is tested on its own.
import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serve } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { chromium, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PAGE_FOLDER, pageAssets } from '../../src/api/page.js';
import { manualClock } from '../../src/clock.js';
import { ProctorError, isProctorError } from '../../src/errors.js';
import { progressFigures, type Job, type SqliteJobStore } from '../../src/queue/index.js';
import {
  createArtifactStore,
  createRedactor,
  type ArtifactRecord,
  type ArtifactStore,
} from '../../src/store/index.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const CHROMIUM = '/usr/bin/chromium';
const CSP = "default-src 'self'; frame-ancestors 'none'; object-src 'none'; base-uri 'none'";
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOT = join(REPO, 'test-artifacts', 'page.png');
/** The real API's default log slice. */
const LOG_SLICE = 64 * 1024;

describe('pageAssets', () => {
  it('reads the three page files with their content types', () => {
    const assets = pageAssets();
    expect([...assets.keys()]).toEqual(['/', '/app.js', '/style.css']);
    expect(assets.get('/')?.contentType).toBe('text/html; charset=utf-8');
    expect(assets.get('/app.js')?.contentType).toBe('text/javascript; charset=utf-8');
    expect(assets.get('/style.css')?.contentType).toBe('text/css; charset=utf-8');
  });

  it('serves HTML that loads only its own script and stylesheet, with nothing inline', () => {
    const html = pageAssets().get('/')?.body ?? '';
    expect(html).toContain('<script type="module" src="/app.js"></script>');
    expect(html).toContain('<link rel="stylesheet" href="/style.css" />');
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)/i);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=|javascript:/i);
    expect(html).not.toMatch(/(?:src|href)="(?!\/)/i);
  });

  it('finds src/api/page from dist/api as well as from src/api', () => {
    const fromDist = new URL('../../src/api/page/', pathToFileURL(join(REPO, 'dist/api/page.js')));
    expect(fileURLToPath(fromDist)).toBe(PAGE_FOLDER);
    expect(PAGE_FOLDER).toBe(join(REPO, 'src/api/page/'));
  });

  it('names the missing file when the folder is incomplete', () => {
    const empty = tempDir();
    let thrown: unknown;
    try {
      pageAssets(empty);
    } catch (error) {
      thrown = error;
    }
    expect(isProctorError(thrown, 'INTERNAL')).toBe(true);
    expect((thrown as Error).message).toContain(join(empty, 'index.html'));
  });
});

describe('the status page', () => {
  it('shows batch progress and verdicts, pages the oracle log, cancels a job and a batch, and keeps up with the queue', async () => {
    const fx = await fixture();
    const { page, problems } = await openPage(fx.url);

    // Batches: counts, finished/total, rate and ETA (4 finished in 30 s: 8/min, 2 left: 15 s).
    const batchRow = page.locator('#batches tbody tr', { hasText: 'smoke suite' });
    await batchRow.waitFor();
    const cells = await batchRow.locator('td').allTextContents();
    expect(cells.slice(0, 9)).toEqual([
      'smoke suite',
      '4/6',
      '1',
      '1',
      '4',
      '0',
      '0',
      '8.0',
      '15s',
    ]);

    // A batch's jobs, with verdicts, reasons and details shown as text.
    await batchRow.getByRole('button', { name: 'smoke suite' }).click();
    await page.locator('#jobs tbody tr').nth(5).waitFor();
    expect(await page.locator('#jobs-title').textContent()).toBe('Jobs of smoke suite');
    expect(await rowCells(page, fx.ids.hidden)).toEqual([
      `#${fx.ids.hidden}`,
      'noop',
      'done',
      '1/3',
      'FAIL',
      'HIDDEN_FAILED',
      'tests/test_api.py::test_limit failed',
      '',
    ]);
    expect((await rowCells(page, fx.ids.markup)).slice(4, 7)).toEqual([
      'FAIL',
      'PATCH_REJECTED',
      MARKUP,
    ]);
    expect(await page.locator('img').count()).toBe(0);
    expect((await rowCells(page, fx.ids.pass)).slice(2, 6)).toEqual([
      'done',
      '1/3',
      'PASS',
      'PASS',
    ]);
    expect((await rowCells(page, fx.ids.baseline)).slice(1, 6)).toEqual([
      'baseline',
      'done',
      '1/3',
      'FAIL · quarantined',
      'FLAKY',
    ]);
    expect((await rowCells(page, fx.ids.running)).slice(2)).toEqual([
      'running',
      '1/3',
      '',
      '',
      '',
      'Cancel',
    ]);

    // Cancel the queued job: the store has it cancelled and the page shows it.
    await jobRow(page, fx.ids.queued).getByRole('button', { name: 'Cancel' }).click();
    await waitFor(async () => (await fx.store.getJob(fx.ids.queued))?.status === 'cancelled', {
      what: 'the queued job to be cancelled',
    });
    await waitForText(jobRow(page, fx.ids.queued).locator('td.status'), 'cancelled');
    expect(await jobRow(page, fx.ids.queued).getByRole('button').count()).toBe(1); // only its id
    await waitForText(batchRow.locator('td.count-cancelled'), '1');
    await waitForText(batchRow.locator('td.finished'), '5/6');
    expect(await page.locator('#message').textContent()).toBe(`Job #${fx.ids.queued}: cancelled`);

    // A job's artifacts and its oracle log, a bounded slice at a time.
    await jobRow(page, fx.ids.hidden)
      .getByRole('button', { name: `#${fx.ids.hidden}` })
      .click();
    const link = page.locator('#artifacts a');
    await link.waitFor();
    expect(await link.textContent()).toBe('oracle.log');
    const href = await link.getAttribute('href');
    expect(href).toBe(`/api/artifacts/${encodeURIComponent(fx.log.id)}`);
    expect(await (await fetch(new URL(href!, fx.url))).text()).toBe(fx.logText);
    await waitFor(async () => (await page.locator('#log').textContent())?.length === LOG_SLICE, {
      what: 'the first log slice',
    });
    while (await page.locator('#log-more').isVisible()) {
      const before = (await page.locator('#log').textContent())?.length ?? 0;
      await page.locator('#log-more').click();
      await waitFor(async () => ((await page.locator('#log').textContent())?.length ?? 0) > before);
    }
    expect(await page.locator('#log').textContent()).toBe(fx.logText);
    expect(fx.logOffsets).toEqual([0, LOG_SLICE, 2 * LOG_SLICE]);
    expect(await page.locator('#job-fields').textContent()).toContain('HIDDEN_FAILED');

    // Cancel the batch: a first click arms the button, the second asks the API.
    const cancelBatch = page.locator('#cancel-batch');
    await cancelBatch.click();
    expect(await cancelBatch.textContent()).toBe('Confirm: cancel every unfinished job');
    expect((await fx.store.getJob(fx.ids.running))?.cancelRequestedAt).toBeNull();
    await cancelBatch.click();
    await waitFor(async () => (await fx.store.getJob(fx.ids.running))?.cancelRequestedAt, {
      what: 'a cancel request on the running job',
    });
    await waitForText(
      jobRow(page, fx.ids.running).locator('td.status'),
      'running (cancel requested)',
    );
    expect(
      await jobRow(page, fx.ids.running).getByRole('button', { name: 'Cancel' }).isDisabled(),
    ).toBe(true);
    expect(await page.locator('#message').textContent()).toBe('Batch cancel: cancel_requested 1');

    // The two-second refresh shows what a worker does meanwhile: it honours the cancel.
    expect(await fx.store.markCancelled(fx.runningLease)).toBe(true);
    await waitForText(jobRow(page, fx.ids.running).locator('td.status'), 'cancelled');
    await waitForText(batchRow.locator('td.finished'), '6/6');

    // Every job, across batches.
    await page.locator('#all-jobs').click();
    await waitForText(page.locator('#jobs-title'), 'All jobs');
    await jobRow(page, fx.ids.lone).waitFor();
    expect(await page.locator('#jobs tbody tr').count()).toBe(7);
    expect(await page.locator('#cancel-batch').isVisible()).toBe(false);

    mkdirSync(join(REPO, 'test-artifacts'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    expect(fx.posts).toEqual([
      { path: `/api/jobs/${fx.ids.queued}/cancel`, contentType: 'application/json', body: '{}' },
      { path: `/api/batches/${fx.batchId}/cancel`, contentType: 'application/json', body: '{}' },
    ]);
    expect(problems).toEqual([]);
  }, 30_000);
});

// ---------------------------------------------------------------------------------------

const MARKUP = '<img src=x onerror="console.error(\'injected\')"> candidate touched tests/';

/**
 * A store with one batch of six jobs: four done (two FAIL, one PASS, a quarantined
 * baseline), one running, one queued; the first carries an oracle log of three slices.
 * One more queued job belongs to no batch.
 */
async function fixture() {
  const clock = manualClock();
  const store = tempStore({ clock });
  const artifacts = createArtifactStore({
    root: join(tempDir(), 'artifacts'),
    clock,
    redactor: createRedactor(),
  });
  const noop = { kind: 'noop' as const, payload: {} };
  const { batch, jobIds } = await store.enqueueBatch({
    label: 'smoke suite',
    jobs: [noop, noop, noop, noop, noop, { kind: 'baseline', payload: { bundle: '/tasks/t1' } }],
  });
  const [hidden, markup, pass, running, queued, baseline] = jobIds as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const claimed = await store.claim('noop', 'w1', 4, 60_000);
  const { job: lone } = await store.enqueue(noop);
  const [claimedBaseline] = await store.claim('baseline', 'w1', 1, 60_000);
  const lease = (id: number) => {
    const job = [...claimed, claimedBaseline].find((j) => j?.id === id);
    if (!job) throw new Error(`job ${id} was not claimed`);
    return { id, attempt: job.attempt };
  };

  const logText = Array.from(
    { length: 3500 },
    (_, i) => `line ${String(i).padStart(4, '0')}: phase hidden, ran tests/test_api.py\n`,
  ).join('');
  const log = await artifacts.write({
    name: 'oracle.log',
    mediaType: 'text/plain',
    bytes: logText,
  });
  await store.complete(
    lease(hidden),
    {
      verdict: 'FAIL',
      reason: 'HIDDEN_FAILED',
      detail: 'tests/test_api.py::test_limit failed',
      log: log.id,
    },
    [log],
  );
  await store.complete(lease(markup), {
    verdict: 'FAIL',
    reason: 'PATCH_REJECTED',
    detail: MARKUP,
  });
  await store.complete(lease(pass), { verdict: 'PASS', reason: 'PASS', detail: 'all passed' });
  await store.complete(lease(baseline), {
    verdict: 'FAIL',
    reason: 'FLAKY',
    detail: 'hidden tests disagreed between runs',
    validity: 'quarantined',
  });
  clock.advance(30_000);

  const posts: Array<{ path: string; contentType: string | undefined; body: string }> = [];
  const logOffsets: number[] = [];
  const app = contractApp({ store, artifacts, clock, posts, logOffsets });
  const url = await listen(app);
  return {
    store,
    url,
    batchId: batch!.id,
    ids: { hidden, markup, pass, running, queued, baseline, lone: lone.id },
    runningLease: lease(running),
    log,
    logText,
    posts,
    logOffsets,
  };
}

/** The page's JSON contract over a real store, with the API's CSP on every response. */
function contractApp(deps: {
  store: SqliteJobStore;
  artifacts: ArtifactStore;
  clock: { now(): number };
  posts: Array<{ path: string; contentType: string | undefined; body: string }>;
  logOffsets: number[];
}): Hono {
  const { store, artifacts, clock } = deps;
  const app = new Hono();
  app.use(async (c, next) => {
    await next();
    c.res.headers.set('Content-Security-Policy', CSP);
    c.res.headers.set('X-Content-Type-Options', 'nosniff');
    c.res.headers.set('Referrer-Policy', 'no-referrer');
  });
  app.onError((error, c) => {
    const code = isProctorError(error) ? error.code : 'INTERNAL';
    const status = code.endsWith('NOT_FOUND') ? 404 : isProctorError(error) ? 400 : 500;
    return c.json({ error: { code, message: error.message } }, status);
  });
  // The real API's queries are strict: the page must send nothing else.
  const query = (c: Context, allowed: string[]) => {
    const params = c.req.query();
    const unknown = Object.keys(params).filter((k) => !allowed.includes(k));
    if (unknown.length > 0) throw new ProctorError('USAGE', `unknown query ${unknown.join(',')}`);
    return params;
  };
  const idOf = (c: Context) => {
    const id = Number(c.req.param('id'));
    if (!Number.isSafeInteger(id) || id < 1) throw new ProctorError('USAGE', 'bad job id');
    return id;
  };
  const page = (params: Record<string, string>) => ({
    limit: Number(params.limit ?? 50),
    ...(params.cursor ? { cursor: params.cursor } : {}),
  });
  const jobJson = (job: Job) => ({
    id: job.id,
    batchId: job.batchId,
    parentId: job.parentId,
    kind: job.kind,
    status: job.status,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    result: job.result,
    lastError: job.lastError,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    cancelRequested: job.cancelRequestedAt !== null,
  });
  const mustGet = async (id: number) => {
    const job = await store.getJob(id);
    if (!job) throw new ProctorError('JOB_NOT_FOUND', `no job ${id}`);
    return job;
  };
  const emptyPost = async (c: Context) => {
    const body = await c.req.text();
    const contentType = c.req.header('content-type');
    deps.posts.push({ path: c.req.path, contentType, body });
    if (contentType !== 'application/json' || body !== '{}') {
      throw new ProctorError('USAGE', 'expected an empty JSON object');
    }
  };

  // Browsers ask for a favicon whatever the page says, and the CSP forbids a data: icon;
  // without this answer every visit logs a 404 in the console.
  app.get('/favicon.ico', (c) => c.body(null, 204));
  for (const [route, asset] of pageAssets()) {
    app.get(route, (c) => c.body(asset.body, 200, { 'Content-Type': asset.contentType }));
  }
  app.get('/api/batches', async (c) => {
    const listed = await store.listBatches(page(query(c, ['limit', 'cursor'])));
    const items = await Promise.all(
      listed.items.map(async (batch) => {
        const progress = await store.batchProgress(batch.id);
        const figures = progressFigures(progress, clock.now());
        return {
          id: batch.id,
          label: batch.label,
          total: batch.total,
          createdAt: batch.createdAt,
          counts: progress.counts,
          finished: figures.finished,
          ratePerMinute: figures.ratePerMinute,
          etaSeconds: figures.etaSeconds,
        };
      }),
    );
    return c.json({ items, nextCursor: listed.nextCursor });
  });
  app.get('/api/jobs', async (c) => {
    const q = query(c, ['batch', 'status', 'kind', 'limit', 'cursor']);
    const filter = {
      ...(q.batch ? { batchId: q.batch } : {}),
      ...(q.status ? { status: q.status as Job['status'] } : {}),
      ...(q.kind ? { kind: q.kind as Job['kind'] } : {}),
    };
    const listed = await store.listJobs(filter, page(q));
    return c.json({ items: listed.items.map(jobJson), nextCursor: listed.nextCursor });
  });
  app.get('/api/jobs/:id', async (c) => {
    const job = await mustGet(idOf(c));
    const records = await store.listArtifacts(job.id);
    const list = records.map(({ id, name, mediaType, size, sha256 }) => ({
      ...{ id, name, mediaType, size, sha256 },
    }));
    return c.json({ job: jobJson(job), artifacts: list });
  });
  app.get('/api/jobs/:id/log', async (c) => {
    const job = await mustGet(idOf(c));
    const q = query(c, ['offset', 'limit']);
    const record = (await store.listArtifacts(job.id)).find((a) => a.name === 'oracle.log');
    if (!record) throw new ProctorError('ARTIFACT_NOT_FOUND', `job ${job.id} has no log`);
    const offset = Number(q.offset ?? 0);
    const limit = Number(q.limit ?? LOG_SLICE);
    deps.logOffsets.push(offset);
    const bytes = await artifacts.read(record);
    const end = Math.min(bytes.length, offset + limit);
    return c.json({
      artifact: record.id,
      size: bytes.length,
      offset,
      text: bytes.subarray(offset, end).toString('utf8'),
      nextOffset: end < bytes.length ? end : null,
    });
  });
  app.get('/api/artifacts/:id', async (c) => {
    const record: ArtifactRecord | undefined = await store.getArtifact(c.req.param('id'));
    if (!record) throw new ProctorError('ARTIFACT_NOT_FOUND', 'no such artifact');
    const bytes = await artifacts.read(record);
    return c.body(new Uint8Array(bytes), 200, {
      'Content-Type': record.mediaType,
      'Content-Disposition': 'attachment',
    });
  });
  app.post('/api/jobs/:id/cancel', async (c) => {
    await emptyPost(c);
    const id = idOf(c);
    const outcomes = await store.cancel([id]);
    return c.json({ id, outcome: outcomes.get(id) });
  });
  app.post('/api/batches/:id/cancel', async (c) => {
    await emptyPost(c);
    const batchId = c.req.param('id');
    const outcomes = await store.cancelBatch(batchId);
    return c.json({ batchId, outcomes: Object.fromEntries(outcomes) });
  });
  return app;
}

async function listen(app: Hono): Promise<string> {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      }),
  );
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}/`;
}

/** A headless Chromium page at `url`; `problems` collects console errors, page errors,
 * CSP violations and failed requests. */
async function openPage(url: string): Promise<{ page: Page; problems: string[] }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the page tests need Chromium at ${CHROMIUM} (apt-get install chromium)`);
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  onCleanup(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      problems.push(`console ${message.type()}: ${message.text()} at ${message.location().url}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  // Runs outside the page's CSP (injected by the browser, not the document).
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) =>
      console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));`,
  });
  const response = await page.goto(url);
  expect(response?.headers()['content-security-policy']).toBe(CSP);
  return { page, problems };
}

function jobRow(page: Page, id: number) {
  return page.locator(`#jobs tbody tr[data-job-id="${id}"]`);
}

async function rowCells(page: Page, id: number): Promise<string[]> {
  return jobRow(page, id).locator('td').allTextContents();
}

async function waitForText(locator: ReturnType<Page['locator']>, expected: string): Promise<void> {
  await waitFor(async () => (await locator.textContent()) === expected, {
    timeoutMs: 8_000,
    what: `text ${JSON.stringify(expected)}`,
  });
}
