// The status page in a real headless Chromium over the real API: a grade whose candidate the
// screen flagged shows a `suspicious` badge in the job list and a Suspicious field with the
// badge in the job panel; a clean grade, and one recorded before the screen, show none.
import type { Page } from 'playwright-core';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/clock.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { listen, openPage, waitForText } from '../helpers/page.js';
import { tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const jobRow = (page: Page, id: number) => page.locator(`#jobs tbody tr[data-job-id="${id}"]`);

describe('the status page and the screen', () => {
  it('badges a grade with screen hits in the job list and the job panel, and no other', async () => {
    const clock = manualClock();
    const store = tempStore({ clock });
    const artifacts = createArtifactStore({
      root: join(tempDir(), 'artifacts'),
      clock,
      redactor: createRedactor(),
    });
    const noop = { kind: 'noop' as const, payload: {} };
    await store.enqueueBatch({ label: 'screened', jobs: [noop, noop, noop, noop] });
    const [flagged, failed, clean, old] = await store.claim('noop', 'w1', 4, 60_000);
    if (!flagged || !failed || !clean || !old) throw new Error('four jobs were not claimed');
    const screen = (count: number) => ({ hits: [], count, unscreened: 0 });
    await store.complete(flagged, {
      verdict: 'PASS',
      reason: 'PASS',
      detail: '6 existing tests and 1 hidden test passed',
      suspicious: screen(3),
    });
    await store.complete(failed, {
      verdict: 'FAIL',
      reason: 'TAMPER_SUSPECTED',
      detail: '1 screen hit in the candidate (tamper = "fail"): pytest-internals durations.py:5',
      suspicious: screen(1),
    });
    await store.complete(clean, {
      verdict: 'PASS',
      reason: 'PASS',
      detail: 'all passed',
      suspicious: screen(0),
    });
    await store.complete(old, { verdict: 'PASS', reason: 'PASS', detail: 'all passed' });

    const url = await listen({ store, artifacts, clock, posts: [], logOffsets: [] });
    const { page, problems } = await openPage(url);
    await page.locator('#all-jobs').click();
    await jobRow(page, old.id).waitFor();
    const badge = (id: number) => jobRow(page, id).locator('td.verdict .badge.suspicious');
    expect(await badge(flagged.id).textContent()).toBe('suspicious ×3');
    expect(await badge(failed.id).textContent()).toBe('suspicious');
    expect(await jobRow(page, failed.id).locator('td.reason').textContent()).toBe(
      'TAMPER_SUSPECTED',
    );
    expect(await badge(clean.id).count()).toBe(0);
    expect(await badge(old.id).count()).toBe(0);

    const fields = page.locator('#job-fields');
    const open = async (id: number) => {
      await jobRow(page, id)
        .getByRole('button', { name: `#${id}` })
        .click();
      await waitForText(page.locator('#job-title'), `Job #${id} · noop`);
      await waitFor(async () => (await fields.textContent())?.includes('Verdict'));
    };
    await open(flagged.id);
    const field = fields.locator('dt', { hasText: 'Suspicious' }).locator('+ dd');
    expect(await field.textContent()).toBe(
      'suspicious 3 hits of the screen, listed in the oracle log',
    );
    expect(await field.locator('.badge.suspicious').textContent()).toBe('suspicious');
    await open(clean.id);
    await waitFor(async () => (await field.textContent()) === 'none (the candidate was screened)');
    expect(await field.locator('.badge').count()).toBe(0);
    await open(old.id);
    await waitFor(async () => !(await fields.textContent())?.includes('Suspicious'));
    expect(problems).toEqual([]);
  }, 60_000);
});
