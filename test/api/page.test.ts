// The status page in a real headless Chromium, served by the real API (createApp, with its
// guards and CSP) over a real SQLite job store and artifact store on 127.0.0.1. The test only
// watches the requests go by (the cancel POSTs, the log offsets); it answers none of them.
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PAGE_FOLDER, PAGE_MODULES, pageAssets } from '../../src/api/page.js';
import { manualClock } from '../../src/clock.js';
import { isProctorError } from '../../src/errors.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { listen, openPage, waitForText } from '../helpers/page.js';
import { tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const SCREENSHOT = join(REPO, 'test-artifacts', 'page.png');
/** The real API's default log slice. */
const LOG_SLICE = 64 * 1024;

describe('pageAssets', () => {
  it('reads the page files with their content types: every module the page imports', () => {
    const assets = pageAssets();
    expect([...assets.keys()]).toEqual([
      '/',
      '/style.css',
      ...PAGE_MODULES.map((file) => `/${file}`),
    ]);
    expect(assets.get('/')?.contentType).toBe('text/html; charset=utf-8');
    expect(assets.get('/app.js')?.contentType).toBe('text/javascript; charset=utf-8');
    expect(assets.get('/style.css')?.contentType).toBe('text/css; charset=utf-8');
    // Every module is listed, every import names a listed module, and each is type-checked.
    const onDisk = readdirSync(PAGE_FOLDER).filter((name) => name.endsWith('.js'));
    expect([...PAGE_MODULES].sort()).toEqual(onDisk.sort());
    for (const file of PAGE_MODULES) {
      const body = assets.get(`/${file}`)?.body ?? '';
      expect(body.startsWith('// @ts-check\n'), file).toBe(true);
      for (const [, target] of body.matchAll(/^import .* from '\.\/([a-z-]+\.js)';$/gm)) {
        expect(PAGE_MODULES, `${file} imports ${target}`).toContain(target);
      }
      expect(body, file).not.toMatch(
        /\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|\beval\(|https?:\/\/(?!www\.w3\.org\/2000\/svg)/,
      );
    }
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
    expect(await page.locator('#job-export').getAttribute('href')).toBe(
      `/api/jobs/${fx.ids.hidden}/export?includeHidden=false`,
    );
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

  it("shows a validate job's validity, image identity and problems", async () => {
    const clock = manualClock();
    const store = tempStore({ clock });
    const artifacts = createArtifactStore({
      root: join(tempDir(), 'artifacts'),
      clock,
      redactor: createRedactor(),
    });
    const { jobIds } = await store.enqueueBatch({
      label: 'validate tasks',
      jobs: ['/tasks/a', '/tasks/b'].map((bundle) => ({ kind: 'validate', payload: { bundle } })),
    });
    const [valid, invalid] = await store.claim('validate', 'w1', 2, 60_000);
    if (!valid || !invalid) throw new Error('two validate jobs were not claimed');
    const imageId = `sha256:${'a'.repeat(64)}`;
    await store.complete(valid, {
      validity: 'valid',
      dir: '/tasks/a',
      task: { id: 'a', contentHash: 'h' },
      image: { portable: false, kind: 'local_build', imageId, localId: imageId },
      problems: [],
      detail: `local_build ${imageId}`,
    });
    const problems = [
      `task.toml: environment.base_commit: is ${'1'.repeat(40)}, but HEAD of /repo in the image is ${'2'.repeat(40)}`,
      'tests/run: missing',
    ];
    await store.complete(invalid, {
      validity: 'invalid',
      dir: '/tasks/b',
      task: null,
      image: null,
      problems,
      detail: problems[0],
    });
    const url = await listen({ store, artifacts, clock, posts: [], logOffsets: [] });
    const { page, problems: pageProblems } = await openPage(url);
    await page.locator('#all-jobs').click();
    await jobRow(page, invalid.id).waitFor();
    expect(await rowCells(page, valid.id)).toEqual([
      `#${valid.id}`,
      'validate',
      'done',
      '1/3',
      'valid',
      '',
      `local_build ${imageId}`,
      '',
    ]);
    expect((await rowCells(page, invalid.id)).slice(4, 7)).toEqual(['invalid', '', problems[0]]);
    expect(jobIds).toEqual([valid.id, invalid.id]);

    await jobRow(page, invalid.id)
      .getByRole('button', { name: `#${invalid.id}` })
      .click();
    await waitForText(page.locator('#job-title'), `Job #${invalid.id} · validate`);
    const fields = page.locator('#job-fields');
    await waitFor(async () => (await fields.textContent())?.includes('Problems'));
    expect(await fields.locator('dt', { hasText: 'Problems' }).locator('+ dd').innerText()).toBe(
      problems.join('\n'),
    );
    await jobRow(page, valid.id)
      .getByRole('button', { name: `#${valid.id}` })
      .click();
    await waitForText(page.locator('#job-title'), `Job #${valid.id} · validate`);
    await waitFor(async () => (await fields.textContent())?.includes('Image'));
    expect(await fields.locator('dt', { hasText: 'Image' }).locator('+ dd').textContent()).toBe(
      `local_build ${imageId}`,
    );
    expect(await fields.textContent()).not.toContain('Problems');
    expect(pageProblems).toEqual([]);
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
  const url = await listen({ store, artifacts, clock, posts, logOffsets });
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

function jobRow(page: Page, id: number) {
  return page.locator(`#jobs tbody tr[data-job-id="${id}"]`);
}

async function rowCells(page: Page, id: number): Promise<string[]> {
  return jobRow(page, id).locator('td').allTextContents();
}
