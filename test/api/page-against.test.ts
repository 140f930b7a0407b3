// The page's comparison with the official grader in a real headless Chromium over the real
// API: the user picks the official file (one run report, or several per-instance report.json
// merged in the browser), the page posts its JSON to POST /api/batches/:id/against and shows
// agreement, kappa, the disagreements with the tests that differ, what is not comparable and
// what the batch's suite lacks, the same numbers the API answers; a bad file is said in one line, and nothing is stored.
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { parity as paritySchema } from '../../src/api/results-schemas.js';
import { systemClock } from '../../src/clock.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { listen, openPage, waitForText } from '../helpers/page.js';
import { ROOT } from '../helpers/processes.js';
import { seedGrades } from '../helpers/results.js';
import { tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');

async function setUp() {
  const home = tempDir();
  mkdirSync(join(home, 'tasks'));
  cpSync(TASK, join(home, 'tasks', 't2'), { recursive: true });
  const store = tempStore({ path: join(home, 'proctor.db') });
  const artifacts = createArtifactStore({
    root: join(home, 'artifacts'),
    redactor: createRedactor(),
    clock: systemClock,
  });
  const batch = await seedGrades(store, 'acme-preds', [
    { task: 't1', verdict: 'PASS', instanceId: 'org__t-1' },
    {
      task: 't2',
      verdict: 'FAIL',
      reason: 'HIDDEN_FAILED',
      detail: 'hidden phase: 1 test not passed: t_div_zero (failed)',
      instanceId: 'org__t-2',
      bundle: join(home, 'tasks', 't2'),
    },
    { task: 't3', verdict: 'FAIL', reason: 'INFRA_ERROR', instanceId: 'org__t-3' },
    { task: 't4', verdict: 'PASS', instanceId: 'org__t-4' },
  ]);
  const posts: Array<{ path: string; contentType: string | undefined; body: string }> = [];
  const url = await listen({ store, artifacts, clock: systemClock, home, posts });
  const { page, problems } = await openPage(url);
  await page
    .locator('#batches tbody tr', { hasText: 'acme-preds' })
    .getByRole('button', { name: 'Results' })
    .click();
  await waitForText(page.locator('#results-title'), 'Results of acme-preds');
  await page.locator('#against-section').waitFor({ state: 'visible' });
  return { url, batch, store, page, problems, posts };
}

const file = (name: string, value: unknown) => ({
  name,
  mimeType: 'application/json',
  buffer: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
});

const figure = async (page: Page, key: string) =>
  (await page.locator(`#against-figures tr[data-key="${key}"] td`).textContent()) ?? '';

const report = (
  id: string,
  resolved: boolean,
  f2p: [string[], string[]],
  p2p: [string[], string[]],
) => ({
  [id]: {
    patch_is_None: false,
    patch_exists: true,
    patch_successfully_applied: true,
    resolved,
    tests_status: {
      FAIL_TO_PASS: { success: f2p[0], failure: f2p[1] },
      PASS_TO_PASS: { success: p2p[0], failure: p2p[1] },
      FAIL_TO_FAIL: { success: [], failure: [] },
      PASS_TO_FAIL: { success: [], failure: [] },
    },
  },
});

describe('the page against the official grader', () => {
  it('posts a picked run report and shows agreement, kappa, the disagreement and what is not comparable', async () => {
    const { url, batch, store, page, problems, posts } = await setUp();
    const official = {
      total_instances: 4,
      submitted_instances: 4,
      completed_instances: 3,
      resolved_instances: 2,
      unresolved_instances: 1,
      empty_patch_instances: 0,
      error_instances: 0,
      completed_ids: ['org__t-1', 'org__t-2', 'org__t-4'],
      incomplete_ids: [],
      empty_patch_ids: ['org__t-5'],
      submitted_ids: ['org__t-1', 'org__t-2', 'org__t-3', 'org__t-4', 'org__t-5'],
      resolved_ids: ['org__t-1', 'org__t-2'],
      unresolved_ids: ['org__t-3', 'org__t-4'],
      error_ids: [],
      schema_version: 2,
    };
    const before = (await store.batchProgress(batch)).counts;
    await page.locator('#against-file').setInputFiles(file('acme.run-1.json', official));
    await page.locator('#against-results').waitFor({ state: 'visible' });

    const answer = paritySchema.parse(
      await (
        await fetch(new URL(`/api/batches/${batch}/against`, url), {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(official),
        })
      ).json(),
    );
    // Proctor: t1 resolved, t2 unresolved, t4 resolved; official: t1, t2 resolved, t4 not.
    expect(answer.agreement).toMatchObject({ comparable: 3, agree: 1 });
    expect(await figure(page, 'shape')).toBe('a SWE-bench run report');
    expect(await figure(page, 'agreement')).toBe('1 of 3 (33.3%)');
    expect(await figure(page, 'kappa')).toBe(answer.agreement.kappa!.toFixed(3));
    expect(await figure(page, 'here')).toBe('1');
    expect(await figure(page, 'there')).toBe('1');
    expect(await figure(page, 'notComparable')).toBe('1');
    // org__t-5 is named there only: no task of this batch, a class of its own.
    expect(await figure(page, 'notInSuite')).toBe('1');
    const rows = page.locator('#against-disagreements tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).textContent()).toBe(
      'org__t-2unresolved (HIDDEN_FAILED)resolvednot compared: the official file has no tests_status',
    );
    const cells = (n: number) =>
      page.locator(`#against-not-comparable tbody tr td:nth-child(${n})`).allTextContents();
    expect(await cells(1)).toEqual(['org__t-3']);
    expect(await cells(2)).toEqual(['error here']);
    const outside = (n: number) =>
      page.locator(`#against-not-in-suite tbody tr td:nth-child(${n})`).allTextContents();
    expect(await outside(1)).toEqual(['org__t-5']);
    expect(await outside(2)).toEqual(['empty']);
    expect(answer.notInSuite).toEqual([{ instance: 'org__t-5', official: 'empty' }]);
    expect(await page.locator('#against-note').textContent()).toBe(
      'Compared with acme.run-1.json; nothing was stored.',
    );
    // The file's JSON went as the body, as JSON; nothing was enqueued or changed.
    const sent = posts.filter((p) => p.path === `/api/batches/${batch}/against`);
    expect(sent[0]?.contentType).toBe('application/json');
    expect(JSON.parse(sent[0]!.body)).toEqual(official);
    expect((await store.batchProgress(batch)).counts).toEqual(before);
    expect(problems).toEqual([]);
  });

  it('merges several per-instance report.json files and lists the tests that differ', async () => {
    const { page, problems } = await setUp();
    await page
      .locator('#against-file')
      .setInputFiles([
        file(
          'report.json',
          report(
            'org__t-2',
            true,
            [['t_div', 't_div_zero'], []],
            [['t_add', 't_add_negative'], []],
          ),
        ),
        file('report (1).json', report('org__t-1', true, [[], []], [[], []])),
      ]);
    await page.locator('#against-results').waitFor({ state: 'visible' });
    expect(await figure(page, 'shape')).toBe('per-instance report.json');
    expect(await figure(page, 'agreement')).toBe('1 of 2 (50.0%)');
    const diff = page.locator('#against-disagreements tr[data-instance="org__t-2"] .test-diffs li');
    expect(await diff.allTextContents()).toEqual([
      'FAIL_TO_PASS t_div_zero: Proctor failure, official success',
    ]);
    expect(problems).toEqual([]);
  });

  it('says what is wrong with a file in one line, and posts nothing it could not read', async () => {
    const { page, problems, posts } = await setUp();
    await page.locator('#against-file').setInputFiles(file('preds.json', [{ instance_id: 'x' }]));
    await waitFor(
      async () =>
        (await page.locator('#against-note').textContent())!.startsWith('PAYLOAD_INVALID'),
      {
        what: 'the refusal',
      },
    );
    expect(await page.locator('#against-note').textContent()).toMatch(
      /^PAYLOAD_INVALID: body: unknown shape; expected a SWE-bench run report/,
    );
    expect(await page.locator('#against-results').isHidden()).toBe(true);
    // The refusal, as the browser reports any 4xx, and nothing else.
    expect(problems).toEqual([
      expect.stringMatching(/^HTTP 400: .*\/against$/),
      expect.stringMatching(/^console error: .* status of 400 .*\/against$/),
    ]);
    const postsBefore = posts.length;
    await page.locator('#against-file').setInputFiles(file('broken.json', '{"resolved_ids": ['));
    await waitForText(page.locator('#against-note'), 'broken.json is not JSON');
    await page
      .locator('#against-file')
      .setInputFiles([
        file('a.json', report('org__t-1', true, [[], []], [[], []])),
        file('b.json', { resolved_ids: [] }),
      ]);
    await waitForText(
      page.locator('#against-note'),
      'b.json: several files must each be a per-instance report.json',
    );
    await page
      .locator('#against-file')
      .setInputFiles([
        file('a.json', report('org__t-1', true, [[], []], [[], []])),
        file('c.json', report('org__t-1', false, [[], []], [[], []])),
      ]);
    await waitForText(page.locator('#against-note'), 'c.json: instance org__t-1 is in two files');
    expect(posts.length).toBe(postsBefore);
    expect(await page.locator('#against-note').getAttribute('class')).toBe('note error');
  });
});
