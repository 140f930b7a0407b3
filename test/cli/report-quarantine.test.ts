// A grade that finished before its task's baseline quarantined the task, read afterwards by
// every view: `report` (table, json and jsonl), `status --batch`, `report --format swebench`,
// and the API the page's results view reads (/api/batches/:id/report). The jobs go through
// the real store as a worker writes them (claim, then complete with the class the worker
// computed); the views are the real binary and the real server on 127.0.0.1.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/api/server.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { proctor } from '../helpers/cli.js';
import { httpCaller } from '../helpers/http.js';
import { gradeResult } from '../helpers/results.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';

const HASH = 'c'.repeat(64); // gradeResult's task content hash

describe('a quarantine that lands after a grade', () => {
  it('counts the grade as invalid_task in report, status, --format swebench and the API the page reads', async () => {
    const home = tempDir();
    const config = loadConfig(home);
    const store = tempStore({ path: config.dbPath });
    const { batch, jobIds } = await store.enqueueBatch({
      label: 'preds',
      jobs: ['t1', 't2'].map((task) => ({
        kind: 'grade' as const,
        payload: { bundle: `/suite/${task}`, candidate: 'cand' },
      })),
    });
    const id = batch!.id;
    const claimed = await store.claim('grade', 'w', 2, 60_000);
    expect(claimed.map((j) => j.id)).toEqual(jobIds);
    // Both PASS: their worker saw no quarantine, and stored `resolved`.
    for (const [i, task] of ['t1', 't2'].entries()) {
      const done = await store.complete(
        { id: jobIds[i]!, attempt: 1 },
        gradeResult({ task, verdict: 'PASS', instanceId: `org__${task}` }),
        [],
        { outcome: 'resolved' },
      );
      expect(done).toBe(true);
    }
    const before = await proctor(['--home', home, 'report', id, '--format', 'swebench']);
    expect(JSON.parse(before.stdout)).toMatchObject({ resolved_ids: ['org__t1', 'org__t2'] });

    // Then t1's baseline finds the hidden tests passing without the fix: quarantined.
    const { job: base } = await store.enqueue({
      kind: 'baseline',
      payload: { bundle: '/suite/t1' },
    });
    await store.claim('baseline', 'w', 1, 60_000);
    await store.complete({ id: base.id, attempt: 1 }, { verdict: 'FAIL' }, [], {
      task: {
        taskId: 't1',
        contentHash: HASH,
        bundlePath: '/suite/t1',
        validity: 'quarantined',
        reason: 'HIDDEN_PASSED',
        detail: 'the hidden tests pass without the fix',
      },
    });

    const json = await proctor(['--home', home, 'report', id, '--format', 'json']);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as {
      batches: Array<{ classes: Record<string, number> }>;
    };
    expect(report.batches[0]?.classes).toMatchObject({ resolved: 1, invalid_task: 1 });
    const rows = await proctor(['--home', home, 'report', id, '--format', 'jsonl']);
    expect(rows.code, rows.stderr).toBe(0);
    const classes = rows.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { task?: string; class?: string })
      .filter((row) => row.task !== undefined)
      .map((row) => [row.task, row.class]);
    expect(classes).toEqual([
      ['t1', 'invalid_task'],
      ['t2', 'resolved'],
    ]);
    const table = await proctor(['--home', home, 'report', id]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/invalid\s+1\b/);

    const status = await proctor(['--home', home, 'status', '--batch', id]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('classes: 1 resolved, 0 unresolved, 0 error, 1 invalid_task');

    const swebench = await proctor(['--home', home, 'report', id, '--format', 'swebench']);
    expect(swebench.code, swebench.stderr).toBe(0);
    expect(JSON.parse(swebench.stdout)).toMatchObject({
      resolved_ids: ['org__t2'],
      error_ids: ['org__t1'],
      resolved_instances: 1,
    });

    const artifacts = createArtifactStore({
      root: join(home, 'artifacts'),
      redactor: createRedactor(),
      clock: systemClock,
    });
    const server = await startServer({ port: 0, store, artifacts, config, secrets: [] });
    onCleanup(() => server.close());
    const call = httpCaller(server.port);
    const shown = await call('GET', `/api/batches/${id}/report`);
    expect(shown.status).toBe(200);
    expect(JSON.stringify(shown.json())).toContain('"invalid_task"');
    const shownBatches = (shown.json() as { batches: Array<{ classes: Record<string, number> }> })
      .batches;
    expect(shownBatches[0]?.classes).toMatchObject({ resolved: 1, invalid_task: 1 });
  });
});
