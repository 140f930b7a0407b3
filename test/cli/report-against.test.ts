// `report BATCH --against FILE` through the real CLI on a real batch: the example suite's gold
// predictions graded in Docker, then compared with official files the test writes — one
// instance agreeing (py-duration-parse), one disagreeing (node-version-compare: the official
// grader says unresolved, with per-test statuses), one missing there (sh-country-codes) — in
// every shape and format; and every bad input as one line and exit 2.
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { ROOT } from '../helpers/processes.js';

const EXAMPLES = join(ROOT, 'examples');
const NUMERIC = 'tests/numeric.test.js::compares parts as numbers';
const MULTI = 'tests/numeric.test.js::sorts and picks versions with multi-digit parts';
const EXISTING = [
  'tests/version.test.js::equal versions compare as 0',
  'tests/version.test.js::orders by major, minor, then patch',
  'tests/version.test.js::rejects invalid versions',
  'tests/version.test.js::sortVersions and maxVersion',
];

let home: string;
let batch: string;
let files: string;

/** The per-instance report.json SWE-bench writes, for node-version-compare: unresolved. */
const nodeReport = {
  'node-version-compare': {
    patch_is_None: false,
    patch_exists: true,
    patch_successfully_applied: true,
    resolved: false,
    tests_status: {
      FAIL_TO_PASS: { success: [NUMERIC], failure: [MULTI] },
      PASS_TO_PASS: { success: EXISTING, failure: [] },
      FAIL_TO_FAIL: { success: [], failure: [] },
      PASS_TO_FAIL: { success: [], failure: [] },
    },
  },
};
const pyReport = {
  'py-duration-parse': {
    patch_is_None: false,
    patch_exists: true,
    patch_successfully_applied: true,
    resolved: true,
    tests_status: {
      FAIL_TO_PASS: { success: [], failure: [] },
      PASS_TO_PASS: { success: [], failure: [] },
    },
  },
};

function write(name: string, value: unknown): string {
  const path = join(files, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return path;
}

const report = (...args: string[]) => proctor(['--home', home, 'report', batch, ...args]);

// One graded batch for every test (tempDir() folders go after each test): removed at the end.
const shared: string[] = [];
const sharedDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'proctor-against-'));
  shared.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of shared) rmSync(dir, { recursive: true, force: true });
});

beforeAll(async () => {
  home = sharedDir();
  files = sharedDir();
  const graded = await proctor([
    '--home',
    home,
    'grade',
    EXAMPLES,
    '--predictions',
    join(EXAMPLES, 'predictions-gold.jsonl'),
    '--wait',
    '--json',
  ]);
  expect(graded.code, graded.stderr).toBe(0);
  const summary = JSON.parse(graded.stdout) as { batch: string; counts: { resolved: number } };
  expect(summary.counts.resolved).toBe(3);
  batch = summary.batch;
}, 300_000);

describe('report --against', () => {
  it("compares with SWE-bench's run report: agreement, kappa, the disagreement and what is missing there", async () => {
    const file = write('run.json', {
      total_instances: 2,
      submitted_instances: 2,
      completed_instances: 2,
      resolved_instances: 1,
      unresolved_instances: 1,
      empty_patch_instances: 0,
      error_instances: 0,
      completed_ids: ['node-version-compare', 'py-duration-parse'],
      incomplete_ids: [],
      empty_patch_ids: [],
      submitted_ids: ['node-version-compare', 'py-duration-parse'],
      resolved_ids: ['py-duration-parse'],
      unresolved_ids: ['node-version-compare'],
      error_ids: [],
      schema_version: 2,
    });
    const result = await report('--against', file);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`batch ${batch} against a SWE-bench run report`);
    expect(result.stdout).toMatch(/agreement\s+1 of 2 comparable instances \(50\.0%\)/);
    // Proctor resolves both, the official one of two: p_o = p_e = 1/2, κ = 0.
    expect(result.stdout).toMatch(/Cohen's kappa\s+0\.000/);
    expect(result.stdout).toContain(
      'node-version-compare: Proctor resolved, official unresolved\n    tests: not compared: the official file has no tests_status',
    );
    expect(result.stdout).toMatch(/missing there \(1\):\n {4}sh-country-codes/);
  });

  it("lists the per-test differences against per-instance report.json files in SWE-bench's folder layout", async () => {
    const logs = join(files, 'logs/run_evaluation/run-1/acme__model');
    for (const [id, value] of [
      ['node-version-compare', nodeReport],
      ['py-duration-parse', pyReport],
    ] as const) {
      mkdirSync(join(logs, id), { recursive: true });
      writeFileSync(join(logs, id, 'report.json'), JSON.stringify(value));
    }
    const result = await report('--against', join(files, 'logs'));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("against SWE-bench's per-instance report.json");
    expect(result.stdout).toContain(
      [
        '    tests that differ (1):',
        `      FAIL_TO_PASS ${MULTI}: Proctor success, official failure`,
      ].join('\n'),
    );
    const json = await report('--against', join(files, 'logs'), '--format', 'json');
    expect(json.code, json.stderr).toBe(0);
    const parity = JSON.parse(json.stdout) as {
      shape: string;
      agreement: { comparable: number; agree: number; kappa: number | null };
      disagreements: Array<{ instance: string; tests: Array<Record<string, string>> }>;
      notComparable: Array<{ instance: string; why: string }>;
    };
    expect(parity.shape).toBe('instance_reports');
    expect(parity.agreement).toMatchObject({ comparable: 2, agree: 1, kappa: 0 });
    expect(parity.disagreements.map((d) => d.instance)).toEqual(['node-version-compare']);
    expect(parity.disagreements[0]?.tests).toContainEqual({
      test: MULTI,
      category: 'FAIL_TO_PASS',
      proctor: 'success',
      official: 'failure',
    });
    // Proctor's side from the grade's stored per-test statuses, not inferred from its verdict.
    expect(parity.disagreements[0]).toMatchObject({ testsFrom: 'stored' });
    expect(result.stdout).not.toContain('inferred');
    expect(parity.notComparable).toEqual([
      expect.objectContaining({ instance: 'sh-country-codes', why: 'missing there' }),
    ]);
  });

  it('writes csv, to --out too', async () => {
    const file = write('single.json', { ...nodeReport, ...pyReport });
    const result = await report('--against', file, '--format', 'csv');
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(
      'instance_id,task,proctor,official,comparable,agrees,why,reason,test_differences,tests_from',
    );
    expect(lines[1]).toBe(
      `node-version-compare,node-version-compare,resolved,unresolved,true,false,disagreement,PASS,FAIL_TO_PASS ${MULTI}: success/failure,stored`,
    );
    expect(result.stdout).toContain(
      'sh-country-codes,sh-country-codes,resolved,missing,false,,missing there,,,',
    );
    const out = join(files, 'parity.csv');
    const written = await report('--against', file, '--format', 'csv', '--out', out);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toBe('');
    expect(readFileSync(out, 'utf8')).toBe(result.stdout);
  });

  it('lists the instances the official file names but the suite lacks as not in this suite, apart from the not comparable', async () => {
    const file = write('whole-benchmark.json', {
      ...nodeReport,
      ...pyReport,
      'acme__other-17': { ...pyReport['py-duration-parse'] },
      'acme__other-4': { ...nodeReport['node-version-compare'] },
    });
    const table = await report('--against', file);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/not comparable\s+1\n/);
    expect(table.stdout).toMatch(/not in this suite\s+2\n/);
    expect(table.stdout).toContain(
      [
        'not in this suite (2): named there, no task of it here',
        '    acme__other-17 (resolved there)',
        '    acme__other-4 (unresolved there)',
      ].join('\n'),
    );
    // The suite's own instance that the file lacks stays where it was, under its reason.
    expect(table.stdout).toMatch(/missing there \(1\):\n {4}sh-country-codes\n/);
    expect(table.stdout).not.toMatch(/not graded here/);
    const json = await report('--against', file, '--format', 'json');
    expect(json.code, json.stderr).toBe(0);
    const parity = JSON.parse(json.stdout) as {
      agreement: { comparable: number };
      notComparable: Array<{ instance: string }>;
      notInSuite: Array<{ instance: string; official: string }>;
    };
    expect(parity.agreement.comparable).toBe(2);
    expect(parity.notComparable.map((n) => n.instance)).toEqual(['sh-country-codes']);
    expect(parity.notInSuite).toEqual([
      { instance: 'acme__other-17', official: 'resolved' },
      { instance: 'acme__other-4', official: 'unresolved' },
    ]);
    const csv = await report('--against', file, '--format', 'csv');
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toContain(
      'acme__other-4,,not_in_suite,unresolved,false,,not in this suite,,,',
    );
  });

  it("compares with a results file's resolved list, counting the unlisted as unresolved", async () => {
    const file = write('results.json', {
      no_generation: [],
      no_logs: ['sh-country-codes'],
      resolved: ['py-duration-parse', 'node-version-compare'],
    });
    const result = await report('--against', file, '--format', 'json');
    expect(result.code, result.stderr).toBe(0);
    const parity = JSON.parse(result.stdout) as {
      agreement: { agree: number; comparable: number; kappa: number | null; kappaNote: string };
      notComparable: Array<{ why: string }>;
    };
    expect(parity.agreement).toMatchObject({
      agree: 2,
      comparable: 2,
      kappa: null,
      kappaNote: 'undefined: both put every instance in one class (resolved)',
    });
    expect(parity.notComparable.map((n) => n.why)).toEqual(['error there']);
  });

  it("writes SWE-bench's report.json from the grades' stored per-test statuses", async () => {
    const out = join(files, 'swebench');
    const result = await report('--format', 'swebench', '--out', out);
    expect(result.code, result.stderr).toBe(0);
    // Every grade of this batch stored its statuses: none was inferred.
    expect(result.stdout.trim()).toBe(`wrote ${join(out, 'summary.json')} and 3 report.json files`);
    const written = JSON.parse(
      readFileSync(join(out, 'node-version-compare', 'report.json'), 'utf8'),
    ) as Record<string, { tests_status: Record<string, { success: string[]; failure: string[] }> }>;
    expect(written['node-version-compare']?.tests_status).toEqual({
      FAIL_TO_PASS: { success: [NUMERIC, MULTI], failure: [] },
      PASS_TO_PASS: { success: EXISTING, failure: [] },
    });
  });

  it("shows a grade's per-test statuses in status JOB: counts, and every test with --json", async () => {
    const jobs = await proctor(['--home', home, 'status', '--batch', batch, '--json']);
    expect(jobs.code, jobs.stderr).toBe(0);
    const ids = (JSON.parse(jobs.stdout) as { jobs: Array<{ id: number }> }).jobs.map((j) => j.id);
    const shown = await proctor(['--home', home, 'status', ...ids.map(String)]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(
      /job \d+ tests hidden: 2 passed\njob \d+ tests existing: 4 passed/,
    );
    const json = await proctor(['--home', home, 'status', ...ids.map(String), '--json']);
    const parsed = JSON.parse(json.stdout) as {
      jobs: Array<{
        tests: { tests: Array<{ id: string; list: string; outcome: string }> } | null;
      }>;
    };
    const all = parsed.jobs.flatMap((j) => j.tests?.tests ?? []);
    expect(all).toContainEqual({ id: MULTI, list: 'hidden', outcome: 'passed' });
    expect(all).toContainEqual({ id: EXISTING[0], list: 'existing', outcome: 'passed' });
  });

  describe('bad input: one line, exit 2', () => {
    const refused = async (args: string[], message: RegExp) => {
      const result = await proctor(['--home', home, 'report', ...args]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')[0]).toMatch(message);
      return result;
    };

    it('refuses a file of an unknown shape, naming what it expected', async () => {
      const file = write('predictions.json', [{ instance_id: 'x', model_patch: '' }]);
      await refused(
        [batch, '--against', file],
        /^proctor: --against: .*predictions\.json: unknown shape; expected a SWE-bench run report/,
      );
    });

    it('refuses a file that is not JSON, one that does not exist, and a folder with no report.json', async () => {
      await refused(
        [batch, '--against', write('broken.json', '{"resolved_ids": [')],
        /^proctor: --against: .*broken\.json is not JSON$/,
      );
      await refused(
        [batch, '--against', join(files, 'nope.json')],
        /^proctor: --against: cannot read .*nope\.json: no such file or folder$/,
      );
      const empty = join(files, 'empty-folder');
      mkdirSync(empty);
      await refused(
        [batch, '--against', empty],
        /^proctor: --against: .*empty-folder: no report\.json with an instance in it/,
      ); // A symbolic link named report.json is not followed: the folder holds no report.
      const linked = join(files, 'linked-folder');
      mkdirSync(linked);
      symlinkSync(write('elsewhere.json', pyReport), join(linked, 'report.json'));
      await refused(
        [batch, '--against', linked],
        /^proctor: --against: .*linked-folder: no report\.json with an instance in it/,
      );
    });

    it('refuses a file over the size bound before reading it', async () => {
      const huge = write('huge.json', '');
      // Sparse: its size is past the bound, with no bytes written.
      truncateSync(huge, 64 * 1024 * 1024 + 1);
      await refused(
        [batch, '--against', huge],
        /^proctor: --against: .*huge\.json is 67108865 bytes; at most 67108864 are read$/,
      );
    });

    it('refuses a baseline sweep: the official outcomes are of grades', async () => {
      const swept = await proctor([
        '--home',
        home,
        'baseline',
        join(EXAMPLES, 'py-duration-parse'),
        '--wait',
        '--json',
      ]);
      expect(swept.code, swept.stderr).toBe(0);
      const sweep = (JSON.parse(swept.stdout) as { batch: string }).batch;
      await refused(
        [sweep, '--against', write('ok.json', pyReport)],
        new RegExp(`^proctor: --against: batch ${sweep} is a baseline sweep`),
      );
    }, 120_000);

    it('refuses formats other than table, json and csv, two batches, --compare, and an unknown batch', async () => {
      const file = write('fine.json', pyReport);
      await refused(
        [batch, '--against', file, '--format', 'swebench'],
        /^proctor: --format: with --against, expected one of table, json, csv, got "swebench"$/,
      );
      await refused([batch, batch, '--against', file], /^proctor: --against compares one batch/);
      await refused(
        [batch, '--against', file, '--compare', batch],
        /^proctor: --against and --compare cannot be used together$/,
      );
      await refused(['b_nosuchbatch', '--against', file], /^proctor: no batch b_nosuchbatch$/);
    });
  });
});
