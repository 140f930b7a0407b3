// `proctor report` over real solves: the flat adapter through the real `openai` SDK against a
// scripted provider on 127.0.0.1, the real Docker engine and a real baseline. A solve that
// fails on a task its baseline quarantined is the task's fault (invalid_task), not the
// solver's, in the stored class and in the report; a task of the suite that was never
// enqueued (its bundle does not load) is not submitted.
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { copyBundle } from '../helpers/bundles.js';
import { leftovers } from '../helpers/home.js';
import { startModelServer } from '../helpers/model-server.js';
import { tempDir } from '../helpers/temp.js';

const KEY = 'sk-reportsolveplanted0123456789abcd';

describe('proctor report of a solve batch', () => {
  it('classes a failed solve of a quarantined task invalid_task, and counts a task never enqueued as not submitted', async () => {
    // Only the hidden test that already passes without the fix: baseline quarantines it.
    const bundle = copyBundle();
    writeFileSync(join(bundle, 'tests/hidden.txt'), 't_div\n');
    // A suite of it and a bundle that does not load: the batch's suite has two tasks.
    const suite = tempDir();
    cpSync(bundle, join(suite, 'quarantined'), { recursive: true });
    cpSync(bundle, join(suite, 'broken'), { recursive: true });
    writeFileSync(join(suite, 'broken/task.toml'), 'schema = 1\nbogus = true\n');
    const server = await startModelServer([
      { toolCalls: [{ name: 'run_command', arguments: { command: 'ls', timeout_s: null } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'ls', timeout_s: null } }] },
    ]);
    const dir = tempDir();
    writeFileSync(
      join(dir, 'proctor.toml'),
      `[solvers.mini]\nadapter = "flat"\nbase_url = "${server.baseUrl}"\nmodel = "scripted"\napi_key_env = "PROCTOR_SOLVE_KEY"\nmax_turns = 1\n`,
    );
    const baseline = await proctor(['--home', dir, 'baseline', bundle, '--wait']);
    expect(baseline.code).toBe(1);
    expect(baseline.stdout).toMatch(/quarantined\s+BASELINE_HIDDEN_PASSED/);

    const solved = await proctor(
      ['--home', dir, 'solve', suite, '--solver', 'mini', '--wait', '--json'],
      { PROCTOR_SOLVE_KEY: KEY },
    );
    expect(solved.code).toBe(1);
    expect(solved.stderr).toMatch(/skipped .*broken/);
    const summary = JSON.parse(solved.stdout.slice(0, solved.stdout.lastIndexOf('}') + 1)) as {
      batch: string;
      tasks: Array<{ solve: number; verdict: string; reason: string }>;
    };
    expect(summary.tasks.map((t) => [t.verdict, t.reason])).toEqual([
      ['FAIL', 'SOLVER_TURN_LIMIT'],
    ]);
    const status = await proctor([
      '--home',
      dir,
      'status',
      String(summary.tasks[0]!.solve),
      '--json',
    ]);
    const job = (
      JSON.parse(status.stdout) as {
        jobs: Array<{ outcome: string; result: { quarantined: { reason: string } } }>;
      }
    ).jobs[0]!;
    expect(job.outcome).toBe('invalid_task');
    expect(job.result.quarantined.reason).toBe('BASELINE_HIDDEN_PASSED');

    const report = await proctor(['--home', dir, 'report', summary.batch, '--format', 'json']);
    expect(report.code).toBe(0);
    const { batches } = JSON.parse(report.stdout) as {
      batches: Array<{ classes: Record<string, number>; resolvedRateScored: unknown }>;
    };
    expect(batches[0]!.classes).toEqual({
      resolved: 0,
      unresolved: 0,
      error: 0,
      invalid_task: 1,
    });
    expect(batches[0]!.resolvedRateScored).toBeNull();
    // The bundle that did not load was never enqueued: not submitted, and the batch incomplete.
    expect(batches[0]).toMatchObject({ tasks: 2, submitted: 1, notSubmitted: 1, incomplete: true });
    expect(await leftovers(dir)).toEqual([]);
  }, 180_000);
});
