// A baseline sweep read from a real SQLite job table: baseline jobs finished with
// results shaped as the baseline handler writes them, a retried task, a job that failed, and a
// batch holding grades too, loaded by loadBatch and reported by the real CLI.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobStore } from '../../src/queue/index.js';
import { loadBatch, reportObject } from '../../src/results/index.js';
import { proctor } from '../helpers/cli.js';
import { gradeResult } from '../helpers/results.js';
import { tempDir, tempStore } from '../helpers/temp.js';

function baselineResult(task: string, reason: string, flaky: string[] = []) {
  const grade = gradeResult({ task, verdict: reason === 'PASS' ? 'PASS' : 'FAIL', reason });
  return {
    ...grade,
    detail: reason === 'PASS' ? 'existing suite passes' : `${reason} detail`,
    validity: reason === 'PASS' ? 'valid' : 'quarantined',
    runs: [
      { verdict: 'PASS', reason: 'PASS', detail: '' },
      { verdict: 'PASS', reason: 'PASS', detail: '' },
    ],
    gold: { verdict: 'PASS', reason: 'PASS', detail: '' },
    flaky,
  };
}

type Plan = { task: string; reason?: string; flaky?: string[]; fail?: string };

/** One batch of the given jobs (baselines, and grades), each finished as planned. */
async function seed(store: JobStore, baselines: Plan[], grades: Plan[] = []) {
  const { batch, jobIds } = await store.enqueueBatch({
    label: 'sweep',
    jobs: [
      ...baselines.map((p) => ({
        kind: 'baseline' as const,
        payload: { bundle: `/suite/${p.task}`, gold: true, repeat: 2 },
        maxAttempts: 1,
      })),
      ...grades.map((p) => ({
        kind: 'grade' as const,
        payload: { bundle: `/suite/${p.task}`, candidate: 'cand' },
        maxAttempts: 1,
      })),
    ],
  });
  const plans = [...baselines, ...grades];
  for (const kind of ['baseline', 'grade'] as const) {
    for (;;) {
      const claimed = await store.claim(kind, 'seed', 500, 600_000);
      if (claimed.length === 0) break;
      for (const job of claimed) {
        const p = plans[jobIds.indexOf(job.id)]!;
        const lease = { id: job.id, attempt: job.attempt };
        if (p.fail) await store.fail(lease, 'no image', { code: p.fail });
        else if (kind === 'grade') {
          await store.complete(lease, gradeResult({ task: p.task, verdict: 'PASS' }, job.id));
        } else await store.complete(lease, baselineResult(p.task, p.reason ?? 'PASS', p.flaky));
      }
    }
  }
  return batch!.id;
}

describe('a baseline sweep from the job table', () => {
  it('is one row per task, the newest job winning, with the figures of the sweep', async () => {
    const store = tempStore();
    const id = await seed(store, [
      { task: 'a' },
      { task: 'b', reason: 'FLAKY', flaky: ['t::x'] },
      { task: 'c', fail: 'IMAGE_BUILD_FAILED' },
      // A second baseline of a: the newer one counts.
      { task: 'a', reason: 'GOLD_FAILED' },
    ]);
    const loaded = await loadBatch(store, id);
    expect(loaded.kind).toBe('baseline');
    expect(loaded.rows).toEqual([]);
    expect(
      loaded.baselineRows.map((r) => [r.task, r.validity, r.reason, r.supersededJobIds.length]),
    ).toEqual([
      ['a', 'quarantined', 'GOLD_FAILED', 1],
      ['b', 'quarantined', 'FLAKY', 0],
      ['c', 'error', 'IMAGE_BUILD_FAILED', 0],
    ]);
    const report = reportObject([loaded], null);
    expect(report.batches).toEqual([]);
    expect(report.baselines?.[0]).toMatchObject({
      tasks: 3,
      validity: { valid: 0, quarantined: 2, error: 1 },
      flakyTests: [{ test: 't::x', tasks: ['b'] }],
    });
  });

  it('is shown beside the grades of a batch holding both, in every form', async () => {
    const home = tempDir();
    const store = tempStore({ path: join(home, 'proctor.db') });
    const id = await seed(store, [{ task: 'a' }, { task: 'b', reason: 'FLAKY' }], [{ task: 'a' }]);
    const loaded = await loadBatch(store, id);
    expect(loaded.kind).toBe('mixed');
    const table = await proctor(['--home', home, 'report', id]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(
      new RegExp(`^batch ${id} \\(sweep\\)\\n[^]*resolved {16}1\\n[^]*\\n\\nbaseline batch ${id} `),
    );
    const json = JSON.parse(
      (await proctor(['--home', home, 'report', id, '--format', 'json'])).stdout,
    ) as {
      batches: Array<{ tasks: number }>;
      baselines: Array<{ tasks: number }>;
    };
    expect([json.batches[0]?.tasks, json.baselines[0]?.tasks]).toEqual([1, 2]);
    const jsonl = (await proctor(['--home', home, 'report', id, '--format', 'jsonl'])).stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(jsonl.map((r) => [r['kind'] ?? 'grade', r['task']])).toEqual([
      ['grade', 'a'],
      ['baseline', 'a'],
      ['baseline', 'b'],
    ]);
    const csv = await proctor(['--home', home, 'report', id, '--format', 'csv']);
    expect(csv.code).toBe(2);
    expect(csv.stderr.trimEnd().split('\n')).toHaveLength(1);
    // Its grades compare with a batch of grades; its baselines with a sweep.
    const sweep = await seed(store, [{ task: 'a' }, { task: 'b' }]);
    const compared = JSON.parse(
      (await proctor(['--home', home, 'report', id, '--compare', sweep, '--format', 'json']))
        .stdout,
    ) as {
      comparisons?: unknown;
      baselineComparisons: Array<{ changed: Array<{ task: string }> }>;
    };
    expect(compared.comparisons).toBeUndefined();
    expect(compared.baselineComparisons[0]?.changed.map((c) => c.task)).toEqual(['b']);
  });

  it('writes every row of a sweep of over 1,000 tasks as jsonl, once each', async () => {
    const home = tempDir();
    const store = tempStore({ path: join(home, 'proctor.db') });
    const tasks = Array.from({ length: 1_001 }, (_, i) => ({
      task: `t${String(i).padStart(4, '0')}`,
    }));
    const id = await seed(store, tasks);
    const out = await proctor(['--home', home, 'report', id, '--format', 'jsonl']);
    const lines = out.stdout.trimEnd().split('\n');
    const rows = lines.map((l) => JSON.parse(l) as { task: string; validity: string });
    expect(rows.map((r) => r.task)).toEqual(tasks.map((t) => t.task));
    expect(rows.every((r) => r.validity === 'valid')).toBe(true);
  });
});
