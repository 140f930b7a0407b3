// `proctor report` end to end: two batches of real grades of the examples/ bundles (gold
// patches, and a patch that fixes nothing), run by a real `proctor worker` against the Docker
// engine, then reported in each form and compared.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { enqueueWithCandidates } from '../../src/queue/index.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { ROOT } from '../helpers/processes.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const EXAMPLES = ['node-version-compare', 'py-duration-parse', 'sh-country-codes'].map((name) =>
  join(ROOT, 'examples', name),
);
const gold = (dir: string) => readFileSync(join(dir, 'solution/gold.patch'));
const NOTHING = Buffer.from(
  'diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+nothing fixed\n',
);

describe('proctor report over real grades', () => {
  it('reports, compares and exports batches graded in Docker', async () => {
    const dir = tempDir();
    const store = tempStore({ path: join(dir, 'proctor.db') });
    const artifacts = createArtifactStore({
      root: join(dir, 'artifacts'),
      redactor: createRedactor(),
      clock: systemClock,
    });
    const enqueue = (label: string, patches: Buffer[]) =>
      enqueueWithCandidates({ store, artifacts }, patches, (ids, inputs) =>
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
    const all = await enqueue('gold', EXAMPLES.map(gold));
    const one = await enqueue('one-fix', [NOTHING, NOTHING, gold(EXAMPLES[2]!)]);

    const worker = spawn(
      process.execPath,
      [join(ROOT, 'bin/proctor.js'), '--home', dir, 'worker'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, PROCTOR_HOME: undefined },
      },
    );
    const exited = new Promise((resolve) => worker.on('exit', resolve));
    onCleanup(async () => {
      if (worker.exitCode === null && worker.signalCode === null) {
        worker.kill('SIGKILL');
        await exited;
      }
    });
    for (const batch of [all.batch!.id, one.batch!.id]) {
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
    expect(await leftovers(dir)).toEqual([]);

    const a = all.batch!.id;
    const b = one.batch!.id;
    const table = await proctor(['--home', dir, 'report', a, b, '--compare', a]);
    expect(table.stderr).toBe('');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/resolved rate \(scored\)\s+100\.0% \[43\.9%, 100\.0%\] \(3\/3\)/);
    expect(table.stdout).toMatch(/resolved rate \(scored\)\s+33\.3% \[6\.1%, 79\.2%\] \(1\/3\)/);
    expect(table.stdout).toContain('both pass 1, both fail 0, pass→fail 2, fail→pass 0');

    const rows = (await proctor(['--home', dir, 'report', b, '--format', 'jsonl'])).stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => [r['task'], r['class'], r['reason']])).toEqual([
      ['node-version-compare', 'unresolved', 'HIDDEN_FAILED'],
      ['py-duration-parse', 'unresolved', 'HIDDEN_FAILED'],
      ['sh-country-codes', 'resolved', 'PASS'],
    ]);
    for (const row of rows) {
      expect(row['tests_hash']).toMatch(/^[0-9a-f]{64}$/);
      expect(row['candidate_sha256']).toMatch(/^[0-9a-f]{64}$/);
      expect(row['image']).toMatch(/^local_build:sha256:/);
      expect(Object.keys(row['phase_ms'] as object).length).toBeGreaterThan(0);
    }

    const out = tempDir();
    expect(
      (await proctor(['--home', dir, 'report', b, '--format', 'swebench', '--out', out])).code,
    ).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(summary).toMatchObject({ total_instances: 3, resolved_instances: 1, schema_version: 2 });
    const resolvedId = (summary['resolved_ids'] as string[])[0]!;
    const report = JSON.parse(
      readFileSync(join(out, resolvedId.replace(/[^A-Za-z0-9._-]/g, '_'), 'report.json'), 'utf8'),
    ) as Record<
      string,
      { resolved: boolean; tests_status: { FAIL_TO_PASS: { success: string[] } } }
    >;
    const hidden = readFileSync(join(EXAMPLES[2]!, 'tests/hidden.txt'), 'utf8').trim().split('\n');
    expect(report[resolvedId]?.resolved).toBe(true);
    expect(report[resolvedId]?.tests_status.FAIL_TO_PASS.success.sort()).toEqual(hidden.sort());

    const archive = join(tempDir(), 'b.tar.gz');
    const exported = await proctor(['--home', dir, 'export', '--batch', b, '--out', archive]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(/: 3 jobs, /);
  }, 900_000);
});
