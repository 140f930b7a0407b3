// A baseline sweep in the page's results and comparison views, in a real headless
// Chromium over the real API: two real `proctor baseline --gold --repeat 2 --wait` sweeps of
// a copy of the first three examples/ in Docker, the second after one bundle's gold patch was
// broken. What the page shows is checked against the report the API answers, which is
// `proctor report --format json`; comparing a sweep with a batch of grades is a 400.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { report as reportSchema } from '../../src/api/results-schemas.js';
import { systemClock } from '../../src/clock.js';
import { baselineComparisonLines, msText } from '../../src/results/index.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { proctor } from '../helpers/cli.js';
import { copyFirstExamples } from '../helpers/examples.js';
import { leftovers } from '../helpers/home.js';
import { listen, openPage, waitForText } from '../helpers/page.js';
import { tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const NOTHING =
  'diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+nothing fixed\n';

async function figure(page: Page, table: string, key: string): Promise<string> {
  return (await page.locator(`#${table} tr[data-key="${key}"] td`).textContent()) ?? '';
}

describe('the results view of a baseline sweep', () => {
  it('shows a real sweep task by task, and its comparison with an earlier one', async () => {
    const home = tempDir();
    const suite = join(tempDir(), 'suite');
    copyFirstExamples(suite);
    const sweep = async () => {
      const r = await proctor([
        '--home',
        home,
        'baseline',
        suite,
        '--gold',
        '--repeat',
        '2',
        '--wait',
      ]);
      return /\(batch (b_[0-9a-z]+)/.exec(r.stdout)?.[1] ?? '';
    };
    const first = await sweep();
    writeFileSync(join(suite, 'sh-country-codes', 'solution', 'gold.patch'), NOTHING);
    const second = await sweep();
    expect(await leftovers(home)).toEqual([]);
    const preds = join(home, 'preds.jsonl');
    writeFileSync(
      preds,
      `${JSON.stringify({ instance_id: 'py-duration-parse', model_name_or_path: 'm', model_patch: null })}\n`,
    );
    const graded = await proctor([
      '--home',
      home,
      'grade',
      suite,
      '--predictions',
      preds,
      '--json',
    ]);
    const grades = (JSON.parse(graded.stdout) as { batch: string }).batch;

    const store = tempStore({ path: join(home, 'proctor.db') });
    const artifacts = createArtifactStore({
      root: join(home, 'artifacts'),
      redactor: createRedactor(),
      clock: systemClock,
    });
    const url = await listen({ store, artifacts, clock: systemClock, home });
    const report = reportSchema.parse(
      await (await fetch(new URL(`/api/batches/${second}/report?compare=${first}`, url))).json(),
    );
    expect(report.batches).toEqual([]);
    expect(report.comparisons).toBeUndefined();
    const summary = report.baselines![0]!;
    const comparison = report.baselineComparisons![0]!;
    expect(summary.validity).toEqual({ valid: 2, quarantined: 1, error: 0 });
    expect(comparison.changed.map((c) => [c.task, c.from.validity, c.to.reason])).toEqual([
      ['sh-country-codes', 'valid', 'GOLD_FAILED'],
    ]);
    // The CLI's json is the same object.
    const cli = await proctor([
      '--home',
      home,
      'report',
      second,
      '--compare',
      first,
      '--format',
      'json',
    ]);
    expect(JSON.parse(cli.stdout)).toEqual(report);

    const mismatch = await fetch(new URL(`/api/report?batch=${second}&compare=${grades}`, url));
    expect(mismatch.status).toBe(400);
    expect(await mismatch.json()).toEqual({
      error: {
        code: 'USAGE',
        message: `--compare: batch ${second} is a baseline sweep and ${grades} is a batch of grades; compare batches of one kind`,
      },
    });

    const { page, problems } = await openPage(url);
    await page.locator(`#batches tr[data-batch-id="${second}"] .open-results`).click();
    await waitFor(async () => (await figure(page, 'baseline-figures', 'tasks')) !== '', {
      what: 'the baseline figures',
    });
    expect(await page.locator('#grade-results').isVisible()).toBe(false);
    expect(await page.locator('#results-note').textContent()).toBe('Complete.');
    expect(await figure(page, 'baseline-figures', 'tasks')).toBe('3');
    expect(await figure(page, 'baseline-figures', 'valid')).toBe('2');
    expect(await figure(page, 'baseline-figures', 'quarantined')).toBe('1');
    expect(await figure(page, 'baseline-figures', 'reasons')).toBe('PASS 2, GOLD_FAILED 1');
    expect(await figure(page, 'baseline-figures', 'runs')).toBe(
      '2 per task; gold patch graded for 3 tasks',
    );
    expect(await figure(page, 'baseline-figures', 'flaky')).toBe('none');
    expect(await figure(page, 'baseline-figures', 'jobTime')).toBe(
      `${msText(summary.jobMsP50)} / ${msText(summary.jobMsP95)}`,
    );
    const rows = page.locator('#baseline-tasks tbody tr');
    expect(await rows.count()).toBe(3);
    const quarantined = page.locator('#baseline-tasks tr[data-task="sh-country-codes"] td');
    expect((await quarantined.allTextContents()).slice(2, 5)).toEqual([
      'quarantined',
      'GOLD_FAILED',
      '-',
    ]);
    await page.screenshot({ path: join(tempDir(), 'baseline.png'), fullPage: true });

    // The comparison with the first sweep: the task that changed, and why.
    await page.locator('#compare-with').selectOption(first);
    await page.locator('#compare-open').click();
    await waitFor(async () => (await page.locator('#baseline-changed li').count()) === 1, {
      what: 'the changed task',
    });
    expect(await page.locator('#grade-compare').isVisible()).toBe(false);
    expect(await figure(page, 'baseline-compare-figures', 'validToQuarantined')).toBe('1');
    expect(await figure(page, 'baseline-compare-figures', 'bothValid')).toBe('2');
    const changed = (await page.locator('#baseline-changed li').textContent()) ?? '';
    // The same words as the CLI's comparison line.
    expect(`  ${changed}`).toBe(baselineComparisonLines(comparison)[2]);
    await waitForText(
      page.locator('#baseline-compare-note'),
      '1 tasks changed validity or reason: from the reference, to now.',
    );
    expect(problems).toEqual([]);

    // Against the batch of grades: the refusal, in the comparison view, in the API's words.
    await page.locator('#results-close').click();
    await page.locator(`#batches tr[data-batch-id="${second}"] .open-results`).click();
    await waitFor(async () => (await page.locator('#compare-with option').count()) === 2, {
      what: 'the other batches to compare with',
    });
    await page.locator('#compare-with').selectOption(grades);
    await page.locator('#compare-open').click();
    await waitForText(
      page.locator('#compare-note'),
      `Cannot compare: --compare: batch ${second} is a baseline sweep and ${grades} is a batch of grades; compare batches of one kind`,
    );
    expect(await page.locator('#baseline-compare').isVisible()).toBe(false);
    // The one refused request, as the browser and the response each report it; nothing else.
    expect([...problems].sort()).toEqual([
      expect.stringMatching(/^HTTP 400: .*\/api\/report\?/),
      expect.stringMatching(/^console error: .* status of 400 .*\/api\/report\?/),
    ]);
  }, 600_000);
});
