// `proctor report` over a real SQLite home (jobs written through the store, results shaped as
// the oracle writes them): every format, --compare, and one-line refusals of bad input.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor, type CliResult } from '../helpers/cli.js';
import { seedGrades } from '../helpers/results.js';
import { tempDir, tempStore } from '../helpers/temp.js';

async function home() {
  const dir = tempDir();
  const store = tempStore({ path: join(dir, 'proctor.db') });
  const before = await seedGrades(store, 'model-a', [
    { task: 'a', verdict: 'PASS' },
    { task: 'b', verdict: 'FAIL' },
    { task: 'c', verdict: 'PASS' },
    { task: 'd', verdict: 'FAIL', reason: 'APPLY_FAILED', detail: 'patch does not apply' },
  ]);
  const after = await seedGrades(store, 'model-b', [
    { task: 'a', verdict: 'PASS' },
    { task: 'b', verdict: 'PASS' },
    { task: 'c', verdict: 'FAIL', detail: 'hidden phase: 1 test not passed: t1 (failed)' },
    { task: 'd', verdict: 'FAIL', failCode: 'DOCKER_ERROR' },
    { task: 'e, "quoted"', verdict: null },
  ]);
  return { dir, store, before, after };
}

function refused(result: CliResult, what: RegExp) {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stderr.trimEnd()).toMatch(what);
}

describe('proctor report', () => {
  it('prints classes, rates with intervals and the comparison as a table', async () => {
    const { dir, before, after } = await home();
    const result = await proctor(['--home', dir, 'report', after, '--compare', before]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain(`batch ${after} (model-b)  INCOMPLETE`);
    expect(out).toMatch(/incomplete\s+1 jobs queued or running/);
    expect(out).toMatch(/tasks\s+5 \(counted from the batch’s jobs\)/);
    expect(out).toMatch(/resolved\s+2\n/);
    expect(out).toMatch(/unresolved\s+1\n/);
    expect(out).toMatch(/error\s+1\n/);
    // 2 of 3 scored: Wilson [20.8 %, 93.9 %]; 2 of 5: [11.8 %, 76.9 %]
    expect(out).toMatch(/resolved rate \(scored\)\s+66\.7% \[20\.8%, 93\.9%\] \(2\/3\)/);
    expect(out).toMatch(/resolved rate \(all\)\s+40\.0% \[11\.8%, 76\.9%\] \(2\/5\)/);
    expect(out).toMatch(/job time p50 \/ p95\s+\S/);
    // a both pass; b fail→pass; c pass→fail; d is an error now: not paired; e only in B
    expect(out).toContain(`compare ${after} with ${before} (3 tasks scored in both, 2 not paired)`);
    expect(out).toContain('both pass 1, both fail 0, pass→fail 1, fail→pass 1');
    expect(out).toContain('exact McNemar p = 1.000');
    expect(out).toMatch(/pass→fail {2}c\n/);
    expect(out).toMatch(/fail→pass {2}b\n/);
  });

  it('gives json with the summary and comparison', async () => {
    const { dir, before, after } = await home();
    const result = await proctor(['--home', dir, 'report', before, after, '--format', 'json']);
    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { batches: Array<Record<string, unknown>> };
    expect(json.batches.map((b) => b['batch'])).toEqual([before, after]);
    expect(json.batches[0]).toMatchObject({
      tasks: 4,
      classes: { resolved: 2, unresolved: 2, error: 0, invalid_task: 0 },
      incomplete: false,
      resolvedRateScored: { rate: 0.5, successes: 2, n: 4 },
    });
  });

  it('gives one jsonl and one csv row per attempt, csv quoted where it must be', async () => {
    const { dir, after } = await home();
    const jsonl = await proctor(['--home', dir, 'report', after, '--format', 'jsonl']);
    expect(jsonl.code).toBe(0);
    const rows = jsonl.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => [r['task'], r['class']])).toEqual([
      ['a', 'resolved'],
      ['b', 'resolved'],
      ['c', 'unresolved'],
      ['d', 'error'],
      ['e, "quoted"', null],
    ]);
    expect(rows[0]).toMatchObject({
      instance_id: 'org__a',
      attempt: 1,
      verdict: 'PASS',
      tests_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      image: `local_build:sha256:${'d'.repeat(64)}`,
      candidate_sha256: 'e'.repeat(64),
      phase_ms: { image: 12, workspace: 230, apply: 40, existing: 1200, hidden: 900, cleanup: 80 },
    });
    expect(rows[3]).toMatchObject({ status: 'failed', error_code: 'DOCKER_ERROR' });
    // --out FILE writes the same lines (in chunks), replacing what the file held.
    const file = join(dir, 'rows.jsonl');
    writeFileSync(file, 'old content that is longer than nothing\n'.repeat(1000));
    const written = await proctor([
      '--home',
      dir,
      'report',
      after,
      '--format',
      'jsonl',
      '--out',
      file,
    ]);
    expect(written.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(`${jsonl.stdout.trimEnd()}\n`);

    const out = join(tempDir(), 'rows.csv');
    const csv = await proctor(['--home', dir, 'report', after, '--format', 'csv', '--out', out]);
    expect(csv.code).toBe(0);
    expect(csv.stdout).toBe('');
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toMatch(/^batch,task,instance_id,attempt,job_ids,/);
    expect(lines).toHaveLength(6);
    expect(lines[5]).toContain(`,"e, ""quoted""",`);
    expect(lines[1]).toContain(
      ',image=12 workspace=230 apply=40 existing=1200 hidden=900 cleanup=80,',
    );
  });

  it('gives the SWE-bench summary, and with --out DIR a report.json per instance', async () => {
    const { dir, after } = await home();
    const summary = await proctor(['--home', dir, 'report', after, '--format', 'swebench']);
    expect(summary.code).toBe(0);
    expect(JSON.parse(summary.stdout)).toEqual({
      total_instances: 5,
      submitted_instances: 5,
      completed_instances: 3,
      resolved_instances: 2,
      unresolved_instances: 1,
      empty_patch_instances: 0,
      error_instances: 1,
      completed_ids: ['org__a', 'org__b', 'org__c'],
      // No result, so no [source] to say: the task id stands in (a predictions batch's
      // payload names its instance).
      incomplete_ids: ['e, "quoted"'],
      empty_patch_ids: [],
      submitted_ids: ['d', 'e, "quoted"', 'org__a', 'org__b', 'org__c'],
      resolved_ids: ['org__a', 'org__b'],
      unresolved_ids: ['org__c'],
      error_ids: ['d'],
      schema_version: 2,
    });
    const out = tempDir();
    const written = await proctor([
      '--home',
      dir,
      'report',
      after,
      '--format',
      'swebench',
      '--out',
      out,
    ]);
    expect(written.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual([
      'd',
      'e___quoted_',
      'org__a',
      'org__b',
      'org__c',
      'summary.json',
    ]);
    const report = JSON.parse(readFileSync(join(out, 'org__a', 'report.json'), 'utf8')) as Record<
      string,
      Record<string, unknown>
    >;
    // The bundle /suite/a does not exist here: no declared IDs to list, the flags still right.
    expect(report['org__a']).toMatchObject({
      patch_is_None: false,
      patch_exists: true,
      patch_successfully_applied: true,
      resolved: true,
    });
  });

  it('refuses bad input with one line and exit 2', async () => {
    const { dir, after } = await home();
    refused(await proctor(['--home', dir, 'report', 'nope']), /^proctor: no batch nope$/);
    refused(
      await proctor(['--home', dir, 'report', after, '--compare', 'nope']),
      /^proctor: no batch nope$/,
    );
    refused(
      await proctor(['--home', dir, 'report', after, '--format', 'xml']),
      /^proctor: --format: expected one of table, json, jsonl, csv, swebench, got "xml"$/,
    );
    const missing = join(tempDir(), 'no', 'such', 'dir', 'r.csv');
    refused(
      await proctor(['--home', dir, 'report', after, '--format', 'csv', '--out', missing]),
      /^proctor: --out: no folder .*no\/such\/dir to write .* into$/,
    );
    const folder = tempDir();
    mkdirSync(join(folder, 'x'));
    refused(
      await proctor(['--home', dir, 'report', after, '--out', join(folder, 'x')]),
      /^proctor: --out: .* is a folder; give a file name$/,
    );
    refused(
      await proctor(['--home', dir, 'report', after, after, '--format', 'swebench']),
      /^proctor: --format swebench reports one batch at a time$/,
    );
    writeFileSync(join(folder, 'keep'), 'x');
  });
});
