// The page's results and comparison views in a real headless Chromium, over the real API and
// two batches of real grades of the examples/ bundles (gold patches, and a patch that fixes
// nothing in two of three) run by a real `proctor worker` against the Docker engine; and
// pass@k, tokens and cost over attempts recorded through the real store. Every number the
// page shows is checked against the report the API answers, in the CLI's own words.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { report as reportSchema } from '../../src/api/results-schemas.js';
import { systemClock } from '../../src/clock.js';
import { enqueueWithCandidates, type JobStore } from '../../src/queue/index.js';
import { comparisonLines, rateText } from '../../src/results/index.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { leftovers } from '../helpers/home.js';
import { listen, openPage, waitForText } from '../helpers/page.js';
import { ROOT } from '../helpers/processes.js';
import { gradeResult, seedGrades } from '../helpers/results.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const EXAMPLES = ['node-version-compare', 'py-duration-parse', 'sh-country-codes'].map((name) =>
  join(ROOT, 'examples', name),
);
const gold = (dir: string) => readFileSync(join(dir, 'solution/gold.patch'));
const NOTHING = Buffer.from(
  'diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+nothing fixed\n',
);
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Runs a real `proctor worker` on `home` until every job of `batches` has finished. */
async function gradeAll(home: string, store: JobStore, batches: string[]) {
  const worker = spawn(process.execPath, [join(ROOT, 'bin/proctor.js'), '--home', home, 'worker'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PROCTOR_HOME: undefined },
  });
  const exited = new Promise((resolve) => worker.on('exit', resolve));
  onCleanup(async () => {
    if (worker.exitCode === null && worker.signalCode === null) {
      worker.kill('SIGKILL');
      await exited;
    }
  });
  for (const batch of batches) {
    await waitFor(
      async () => {
        const { counts } = await store.batchProgress(batch);
        return counts.queued + counts.running === 0;
      },
      { what: `batch ${batch} to finish`, timeoutMs: 600_000, intervalMs: 500 },
    );
  }
  worker.kill('SIGTERM');
  await exited;
  expect(await leftovers(home)).toEqual([]);
}

async function figure(page: Page, table: string, key: string): Promise<string> {
  return (await page.locator(`#${table} tr[data-key="${key}"] td`).textContent()) ?? '';
}

/** The attribute `name` of every element `locator` finds, in order. */
async function attributes(locator: Locator, name: string): Promise<Array<string | null>> {
  const found: Array<string | null> = [];
  for (let i = 0, n = await locator.count(); i < n; i++) {
    found.push(await locator.nth(i).getAttribute(name));
  }
  return found;
}

async function shot(page: Page, dir: string, name: string) {
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  const png = readFileSync(path);
  expect(png.subarray(0, 8).equals(PNG)).toBe(true);
  expect(png.length).toBeGreaterThan(20_000);
}

describe('the results and comparison views', () => {
  it('show a batch of real grades, its rate chart, and its comparison with another', async () => {
    const home = tempDir();
    const store = tempStore({ path: join(home, 'proctor.db') });
    const artifacts = createArtifactStore({
      root: join(home, 'artifacts'),
      redactor: createRedactor(),
      clock: systemClock,
    });
    const enqueue = async (label: string, patches: Buffer[]) => {
      const { batch } = await enqueueWithCandidates({ store, artifacts }, patches, (ids, inputs) =>
        store.enqueueBatch(
          {
            label,
            jobs: EXAMPLES.map((bundle, i) => ({
              kind: 'grade' as const,
              payload: { bundle, candidate: ids[i]! },
            })),
          },
          inputs,
        ),
      );
      return batch!.id;
    };
    const all = await enqueue('gold', EXAMPLES.map(gold));
    const one = await enqueue('one-fix', [NOTHING, NOTHING, gold(EXAMPLES[2]!)]);
    await gradeAll(home, store, [all, one]);

    const url = await listen({ store, artifacts, clock: systemClock, home });
    const { page, problems } = await openPage(url);
    const report = reportSchema.parse(
      await (await fetch(new URL(`/api/report?batch=${one}&compare=${all}`, url))).json(),
    );
    const chart = reportSchema.parse(
      await (await fetch(new URL(`/api/report?batch=${one}&batch=${all}`, url))).json(),
    );
    const [summary] = report.batches;
    const [comparison] = report.comparisons!;
    expect(summary!.classes).toEqual({ resolved: 1, unresolved: 2, error: 0, invalid_task: 0 });

    // From the batch list to the batch's results.
    const row = page.locator('#batches tbody tr', { hasText: 'one-fix' });
    await row.getByRole('button', { name: 'Results' }).click();
    await waitForText(page.locator('#results-title'), 'Results of one-fix');
    await waitFor(async () => (await figure(page, 'results-figures', 'tasks')) !== '');
    expect(await figure(page, 'results-figures', 'resolved')).toBe('1');
    expect(await figure(page, 'results-figures', 'unresolved')).toBe('2');
    expect(await figure(page, 'results-figures', 'error')).toBe('0');
    expect(await figure(page, 'results-figures', 'invalid_task')).toBe('0');
    expect(await figure(page, 'results-figures', 'resolvedRateScored')).toBe(
      rateText(summary!.resolvedRateScored),
    );
    expect(await figure(page, 'results-figures', 'resolvedRateScored')).toBe(
      '33.3% [6.1%, 79.2%] (1/3)',
    );
    expect(await figure(page, 'results-figures', 'resolvedRateAll')).toBe(
      rateText(summary!.resolvedRateAll),
    );
    expect(await figure(page, 'results-figures', 'tokens')).toBe('-');
    expect(await page.locator('#results-note').textContent()).toBe('Complete.');
    expect(await page.locator('#passk-section').isVisible()).toBe(false);
    expect(await page.locator('#class-bar span').count()).toBe(2);

    // The chart: one point per batch, oldest first, the one shown highlighted, each with
    // its interval as the title.
    const points = page.locator('#rate-chart svg g.point');
    await waitFor(async () => (await points.count()) === 2, { what: 'two chart points' });
    expect(await attributes(points, 'data-batch')).toEqual([all, one]);
    expect(await page.locator('#rate-chart g.point.selected').getAttribute('data-batch')).toBe(one);
    const titles = await page.locator('#rate-chart g.point title').allTextContents();
    const rates = [chart.batches[1]!, chart.batches[0]!].map((b) => b.resolvedRateScored!);
    expect(titles).toEqual([
      `gold: ${(100 * rates[0]!.rate).toFixed(1)}% [${(100 * rates[0]!.low).toFixed(1)}%, 100.0%]`,
      `one-fix: 33.3% [6.1%, 79.2%]`,
    ]);
    // The whisker spans the interval: its ends sit at the interval's bounds on the axis.
    const whiskerLine = page.locator('#rate-chart g.selected line.whisker').first();
    const whisker = [
      Number(await whiskerLine.getAttribute('y1')),
      Number(await whiskerLine.getAttribute('y2')),
    ];
    const y = (rate: number) => 12 + (1 - rate) * (240 - 12 - 44);
    const r = summary!.resolvedRateScored!;
    expect(whisker[0]).toBeCloseTo(y(r.high), 6);
    expect(whisker[1]).toBeCloseTo(y(r.low), 6);

    // The export download is the batch's archive.
    const href = await page.locator('#export-link').getAttribute('href');
    const archive = await fetch(new URL(href!, url));
    expect(archive.headers.get('content-type')).toBe('application/gzip');
    expect(Buffer.from(await archive.arrayBuffer()).subarray(0, 2)).toEqual(
      Buffer.from([0x1f, 0x8b]),
    );
    const dir = tempDir();
    await shot(page, dir, 'results');

    // From the results to the comparison with the gold batch.
    await page.locator('#compare-with').selectOption(all);
    await page.locator('#compare-open').click();
    await waitForText(page.locator('#compare-title'), 'one-fix compared with gold');
    const cells = page.locator('#flip-grid .flip');
    await waitFor(async () => (await cells.count()) === 3, { what: 'three grid cells' });
    const tasks = await attributes(cells, 'data-task');
    const flips = await attributes(cells, 'data-flip');
    expect(tasks.map((task, i) => ({ task, flip: flips[i] }))).toEqual(comparison!.tasks);
    expect(comparison!.tasks.map((t) => t.flip)).toEqual([
      'pass_to_fail',
      'pass_to_fail',
      'both_pass',
    ]);
    expect(await figure(page, 'compare-figures', 'passToFail')).toBe('2');
    expect(await figure(page, 'compare-figures', 'failToPass')).toBe('0');
    expect(await figure(page, 'compare-figures', 'bothPass')).toBe('1');
    expect(await figure(page, 'compare-figures', 'bothFail')).toBe('0');
    const mcnemar = await figure(page, 'compare-figures', 'mcnemarP');
    expect(mcnemar).toBe(comparison!.mcnemarP.toPrecision(4));
    expect(mcnemar).toBe('0.5000');
    // The CLI's table says the same p and difference.
    const lines = comparisonLines(comparison!);
    expect(lines[2]).toBe(`  exact McNemar p = ${mcnemar}`);
    const difference = await figure(page, 'compare-figures', 'difference');
    expect(lines[3]).toContain(`difference ${difference} (95 %`);
    await shot(page, dir, 'compare');
    expect(problems).toEqual([]);
  }, 900_000);

  it('show pass@k / pass^k over attempts, tokens and cost', async () => {
    const store = tempStore();
    const artifacts = createArtifactStore({
      root: join(tempDir(), 'artifacts'),
      redactor: createRedactor(),
      clock: systemClock,
    });
    // Two tasks of three solves each, every solve graded by its child grade: t1 resolved 2
    // of 3, t2 1 of 3 with one machine error. Each solve used 1,000 input tokens (200 of
    // them cached) and 300 output tokens, at $0.0125.
    const attempts: Array<[string, number, 'PASS' | 'FAIL' | 'ERROR']> = [
      ['t1', 1, 'PASS'],
      ['t1', 2, 'FAIL'],
      ['t1', 3, 'PASS'],
      ['t2', 1, 'FAIL'],
      ['t2', 2, 'ERROR'],
      ['t2', 3, 'PASS'],
    ];
    const { batch, jobIds } = await store.enqueueBatch({
      label: 'attempts',
      jobs: attempts.map(([task, sample]) => ({
        kind: 'solve' as const,
        payload: { bundle: `/suite/${task}`, solver: 'mini', sample },
        maxAttempts: 1,
      })),
    });
    const solves = await store.claim('solve', 'w', attempts.length, 60_000);
    for (const solve of solves) {
      const [task, sample, verdict] = attempts[jobIds.indexOf(solve.id)]!;
      await store.complete(
        { id: solve.id, attempt: solve.attempt },
        {
          verdict: 'PASS',
          reason: 'SOLVER_DONE',
          task: { id: task },
          usage: { inputTokens: 1000, cachedInputTokens: 200, outputTokens: 300 },
          costUsd: 0.0125,
          turns: 4,
          toolCalls: 6,
          solveMs: 1500,
        },
      );
      const { job: grade } = await store.enqueue({
        kind: 'grade',
        payload: { bundle: `/suite/${task}`, candidate: 'cand', sample },
        parentId: solve.id,
        maxAttempts: 1,
      });
      const [claimed] = await store.claim('grade', 'w', 1, 60_000);
      expect(claimed?.id).toBe(grade.id);
      const lease = { id: grade.id, attempt: claimed!.attempt };
      if (verdict === 'ERROR') {
        await store.fail(lease, 'the engine went away', { code: 'DOCKER_ERROR' });
      } else await store.complete(lease, gradeResult({ task, verdict }, grade.id));
    }
    const url = await listen({ store, artifacts, clock: systemClock });
    const { page, problems } = await openPage(url);
    const report = reportSchema.parse(
      await (await fetch(new URL(`/api/batches/${batch!.id}/report`, url))).json(),
    );
    const summary = report.batches[0]!;
    expect(summary.passAtK?.map((f) => f.k)).toEqual([1, 2, 3]);

    await page
      .locator('#batches tbody tr', { hasText: 'attempts' })
      .getByRole('button', { name: 'Results' })
      .click();
    await page.locator('#passk-section').waitFor();
    const passRows = page.locator('#passk tbody tr');
    const rows: string[][] = [];
    for (let i = 0, n = await passRows.count(); i < n; i++) {
      rows.push(await passRows.nth(i).locator('td').allTextContents());
    }
    const pct = (x: number | null) => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);
    expect(rows).toEqual(
      summary.passAtK!.map((f) => [
        String(f.k),
        pct(f.passAtK),
        pct(f.passHatK),
        String(f.tasks),
        String(f.short),
      ]),
    );
    // t1: n=3 c=2, t2: n=2 c=1 → pass@1 = (2/3 + 1/2) / 2; pass@3 only over t1 (t2 is short).
    expect(rows[0]).toEqual(['1', '58.3%', '58.3%', '2', '0']);
    expect(rows[2]).toEqual(['3', '100.0%', '0.0%', '1', '1']);
    expect(await figure(page, 'results-figures', 'attempts')).toBe('6');
    expect(await figure(page, 'results-figures', 'error')).toBe('0');
    expect(summary.tokens).toEqual({ input: 6000, cachedInput: 1200, output: 1800 });
    expect(await figure(page, 'results-figures', 'tokens')).toBe(
      '6000 input (1200 cached), 1800 output',
    );
    expect(summary.costUsd).toBeCloseTo(0.075, 10);
    expect(await figure(page, 'results-figures', 'cost')).toBe('$0.0750');
    await shot(page, tempDir(), 'attempts');
    expect(problems).toEqual([]);
  }, 60_000);

  it('leave the chart out, saying why, when the listed batches are too large to report together', async () => {
    const store = tempStore();
    const artifacts = createArtifactStore({
      root: join(tempDir(), 'artifacts'),
      redactor: createRedactor(),
      clock: systemClock,
    });
    const grades = ['t1', 't2', 't3'].map((task) => ({ task, verdict: 'PASS' as const }));
    await seedGrades(store, 'first', grades);
    await seedGrades(store, 'second', grades);
    // One batch (3 jobs) reports; both together (6) are over the bound.
    const url = await listen({ store, artifacts, clock: systemClock, maxReportJobs: 4 });
    const { page, problems } = await openPage(url);
    await page
      .locator('#batches tbody tr', { hasText: 'second' })
      .getByRole('button', { name: 'Results' })
      .click();
    await waitForText(page.locator('#results-figures tr[data-key="resolved"] td'), '3');
    await waitForText(
      page.locator('#rate-chart p'),
      'No chart: LIMIT_EXCEEDED: the batches hold 6 jobs; one report reads at most 4: ask for fewer batches',
    );
    expect(await page.locator('#rate-chart svg').count()).toBe(0);
    expect(await page.locator('#status').textContent()).toMatch(/^Updated /);
    // The refused chart request is the only complaint.
    expect(problems.length).toBeGreaterThan(0);
    for (const problem of problems) {
      expect(problem).toMatch(/413|\/api\/report\?batch=/);
    }
  }, 60_000);
});
