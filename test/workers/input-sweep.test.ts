// The input sweep over a real SQLite store and real artifact files, with a manual clock:
// candidate patches that no job names are removed (row and file) once older than an hour, and
// nothing a job reads, nothing younger, is touched; a worker pool runs the sweep by itself.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/clock.js';
import { silentLogger } from '../../src/logger.js';
import { enqueueWithCandidates } from '../../src/queue/index.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import {
  createWorkerPool,
  INPUT_MAX_AGE_MS,
  noopHandler,
  sweepInputs,
} from '../../src/workers/index.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

function setup() {
  const clock = manualClock(Date.now());
  const store = tempStore({ clock });
  const root = join(tempDir(), 'artifacts');
  const artifacts = createArtifactStore({ root, redactor: createRedactor(), clock });
  const rows = () =>
    store.database.sqlite.prepare('SELECT id FROM artifacts ORDER BY id').pluck().all();
  const dirs = () => (existsSync(root) ? readdirSync(root).sort() : []);
  const grade = (patch: string) =>
    enqueueWithCandidates({ store, artifacts }, [Buffer.from(patch)], ([candidate], inputs) =>
      store.enqueue({ kind: 'grade', payload: { bundle: '/b', candidate } }, inputs),
    );
  /** An input registered with no job: what a job that was pruned, or a crash, leaves. */
  const leftover = async (patch: string) => {
    const record = await artifacts.write({
      name: 'candidate.diff',
      mediaType: 'text/x-diff',
      bytes: patch,
      redact: false,
    });
    await store.addInputs([record]);
    return record;
  };
  return { clock, store, root, artifacts, rows, dirs, grade, leftover };
}

describe('input sweep', () => {
  it('removes unreferenced inputs older than an hour, row and file, and nothing else', async () => {
    const { clock, store, artifacts, rows, dirs, grade, leftover } = setup();
    const read = await grade('read by a job\n');
    const readId = (read.job.payload as { candidate: string }).candidate;
    const old = await leftover('nobody reads this\n');
    // A job that was pruned named this one: it is unreferenced now.
    const pruned = await grade('read by a pruned job\n');
    await store.cancel([pruned.job.id]);
    clock.advance(INPUT_MAX_AGE_MS - 60_000);
    const young = await leftover('too young to go\n');
    clock.advance(120_000);
    expect(await store.pruneFinished(clock.now())).toBe(1);

    const swept = await sweepInputs({ store, artifacts, clock, logger: silentLogger });
    expect(swept).toEqual({ inputs: 2, orphans: 0 });
    expect(rows()).toEqual([readId, young.id].sort());
    expect(dirs()).toEqual([readId, young.id].sort());
    expect(existsSync(join(artifacts.root, old.relPath))).toBe(false);

    // Bounded: one row per run when asked.
    clock.advance(INPUT_MAX_AGE_MS);
    await leftover('another\n');
    const bounded = await sweepInputs(
      { store, artifacts, clock, logger: silentLogger },
      { limit: 1 },
    );
    expect(bounded.inputs).toBe(1);
    expect(rows()).toHaveLength(2);
  });

  it('is run by a worker pool when it starts', async () => {
    const { clock, store, artifacts, dirs, leftover } = setup();
    const old = await leftover('left behind\n');
    clock.advance(INPUT_MAX_AGE_MS + 1);
    const pool = createWorkerPool({
      store,
      clock,
      logger: silentLogger,
      handlers: { noop: noopHandler },
      concurrency: { noop: 1 },
      pollMs: 50,
      sweep: async () => {
        await sweepInputs({ store, artifacts, clock, logger: silentLogger });
      },
    });
    onCleanup(() => pool.stop({ graceMs: 0 }));
    await pool.start();
    await waitFor(() => !dirs().includes(old.id), { what: 'the sweep to remove the input' });
    expect(await store.getArtifact(old.id)).toBeUndefined();
  });
});
