// The status page in a real headless Chromium over the real API: a running job waiting on its
// image's pull shows the pull's bytes, total, rate and ETA on its row, new figures as the
// worker writes them, and its outcome once it is done; the API answers the same figures.
import type { Page } from 'playwright-core';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/clock.js';
import { progressDocument } from '../../src/pull-progress.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { listen, openPage, waitForText } from '../helpers/page.js';
import { tempDir, tempStore } from '../helpers/temp.js';

const jobRow = (page: Page, id: number) => page.locator(`#jobs tbody tr[data-job-id="${id}"]`);

const IMAGE = `127.0.0.1:5000/task@sha256:${'c'.repeat(64)}`;

const pull = (bytes: number, etaSeconds: number) =>
  JSON.stringify(
    progressDocument({
      image: IMAGE,
      bytes,
      totalBytes: 40_000_000,
      layersDone: 1,
      layers: 3,
      bytesPerSecond: 5_000_000,
      etaSeconds,
      startedAt: 1_000,
      updatedAt: 3_000,
    }),
  );

describe('the status page and image pulls', () => {
  it('shows the pull a running job waits on in its row, as it goes, and its outcome after', async () => {
    const clock = manualClock();
    const store = tempStore({ clock });
    const artifacts = createArtifactStore({
      root: join(tempDir(), 'artifacts'),
      clock,
      redactor: createRedactor(),
    });
    const noop = { kind: 'noop' as const, payload: {} };
    await store.enqueueBatch({ label: 'pulling', jobs: [noop, noop] });
    const [pulling, other] = await store.claim('noop', 'w1', 2, 60_000);
    if (!pulling || !other) throw new Error('two jobs were not claimed');
    expect(await store.setProgress(pulling, pull(10_000_000, 6))).toBe(true);

    const url = await listen({ store, artifacts, clock, posts: [], logOffsets: [] });
    const { page, problems } = await openPage(url);
    const answer = (await page.evaluate(
      async (id) => (await fetch(`/api/jobs/${id}`)).json(),
      pulling.id,
    )) as { job: { pull: unknown } };
    expect(answer.job.pull).toMatchObject({ image: IMAGE, bytes: 10_000_000, etaSeconds: 6 });

    await page.locator('#all-jobs').click();
    await jobRow(page, other.id).waitFor();
    const detail = (id: number) => jobRow(page, id).locator('td.detail');
    await waitForText(
      detail(pulling.id),
      `pulling ${IMAGE}: 10.0 MB of 40.0 MB, 5.0 MB/s, ETA 6s (layers 1/3)`,
    );
    expect(await detail(other.id).textContent()).toBe('');

    expect(await store.setProgress(pulling, pull(30_000_000, 2))).toBe(true);
    await waitForText(
      detail(pulling.id),
      `pulling ${IMAGE}: 30.0 MB of 40.0 MB, 5.0 MB/s, ETA 2s (layers 1/3)`,
    );

    await store.complete(pulling, { verdict: 'PASS', reason: 'PASS', detail: 'all passed' });
    await waitForText(detail(pulling.id), 'all passed');
    expect(problems).toEqual([]);
  }, 60_000);
});
