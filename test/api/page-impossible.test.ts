// The page's results view in a real headless Chromium over the real API: a batch holding an
// original task and impossible variants of it (`proctor impossible`) shows the cheating rate
// beside the resolved rate, each as the API's report gives it and in the CLI's own words; a
// batch without variants shows no cheating rate. The grades are recorded through the real
// store with the task record a real grade of a variant stores (test/impossible/ runs them).
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { report as reportSchema } from '../../src/api/results-schemas.js';
import { systemClock } from '../../src/clock.js';
import type { SqliteJobStore } from '../../src/queue/index.js';
import { rateText } from '../../src/results/index.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { listen, openPage, waitForText } from '../helpers/page.js';
import { gradeResult } from '../helpers/results.js';
import { tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

async function figure(page: Page, key: string): Promise<string | null> {
  const cell = page.locator(`#results-figures tr[data-key="${key}"] td`);
  return (await cell.count()) === 0 ? null : await cell.textContent();
}

/** A batch of grades, each finished with `verdict`; `of` marks an impossible variant. */
async function seed(
  store: SqliteJobStore,
  label: string,
  grades: Array<{ task: string; verdict: 'PASS' | 'FAIL'; of?: string; mode?: string }>,
) {
  const { batch, jobIds } = await store.enqueueBatch({
    label,
    jobs: grades.map((g) => ({
      kind: 'grade' as const,
      payload: { bundle: `/suite/${g.task}`, candidate: 'cand' },
      maxAttempts: 1,
    })),
  });
  const claimed = await store.claim('grade', 'w', grades.length, 60_000);
  for (const job of claimed) {
    const g = grades[jobIds.indexOf(job.id)]!;
    const result = gradeResult({ task: g.task, verdict: g.verdict }, job.id);
    await store.complete(
      { id: job.id, attempt: job.attempt },
      g.of === undefined
        ? result
        : { ...result, task: { ...result.task, impossible: { of: g.of, mode: g.mode } } },
    );
  }
  return batch!.id;
}

describe('the results view and impossible variants', () => {
  it('shows the cheating rate beside the resolved rate, and none without variants', async () => {
    const store = tempStore();
    const artifacts = createArtifactStore({
      root: join(tempDir(), 'artifacts'),
      redactor: createRedactor(),
      clock: systemClock,
    });
    const mixed = await seed(store, 'cheats', [
      { task: 'calc', verdict: 'PASS' },
      { task: 'clock', verdict: 'FAIL' },
      { task: 'calc-impossible-one-off', verdict: 'PASS', of: 'calc', mode: 'one-off' },
      { task: 'clock-impossible-one-off', verdict: 'FAIL', of: 'clock', mode: 'one-off' },
      { task: 'calc-impossible-conflicting', verdict: 'FAIL', of: 'calc', mode: 'conflicting' },
    ]);
    await seed(store, 'honest', [{ task: 'calc', verdict: 'PASS' }]);
    const url = await listen({ store, artifacts, clock: systemClock });
    const report = reportSchema.parse(
      await (await fetch(new URL(`/api/batches/${mixed}/report`, url))).json(),
    );
    const summary = report.batches[0]!;
    // The resolved rate is the two originals'; the cheating rate the three variants'.
    expect(summary.resolvedRateScored).toMatchObject({ successes: 1, n: 2 });
    expect(summary.cheating).toMatchObject({ variants: 3, graded: 3, passed: 1 });
    expect(summary.cheating?.rate).toMatchObject({ successes: 1, n: 3 });
    expect(summary.cheating?.cheated).toEqual([
      { task: 'calc-impossible-one-off', of: 'calc', mode: 'one-off', original: 'resolved' },
    ]);

    const { page, problems } = await openPage(url);
    const open = async (label: string) => {
      await page
        .locator('#batches tbody tr', { hasText: label })
        .getByRole('button', { name: 'Results' })
        .click();
      await waitForText(page.locator('#results-title'), `Results of ${label}`);
      await waitFor(async () => ((await figure(page, 'tasks')) ?? '') !== '');
    };
    await open('cheats');
    expect(await figure(page, 'tasks')).toBe('2 (counted from the batch’s jobs)');
    expect(await figure(page, 'resolvedRateScored')).toBe(rateText(summary.resolvedRateScored));
    expect(await figure(page, 'cheatingRate')).toBe(rateText(summary.cheating!.rate));
    expect(await figure(page, 'cheatingRate')).toMatch(/^33\.3% \[.*\] \(1\/3\)$/);
    // Beside the resolved rate: the row right after the resolved rates.
    const rows = page.locator('#results-figures tr');
    const keys: Array<string | null> = [];
    for (let i = 0, n = await rows.count(); i < n; i++) {
      keys.push(await rows.nth(i).getAttribute('data-key'));
    }
    expect(keys.indexOf('cheatingRate')).toBe(keys.indexOf('resolvedRateAll') + 1);

    await open('honest');
    await waitFor(async () => (await figure(page, 'tasks'))?.startsWith('1 ') === true);
    expect(await figure(page, 'cheatingRate')).toBeNull();
    expect(problems).toEqual([]);
  }, 60_000);
});
