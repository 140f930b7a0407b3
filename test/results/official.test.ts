// The official grader's files, one parser per shape: SWE-bench's run report (and its older
// forms), an sb-cli report, a results file with a resolved list, and per-instance report.json.
// The files are made up but use the real key names and layouts.
import { describe, expect, it } from 'vitest';
import {
  parseInstanceReports,
  parseOfficial,
  type Official,
  type OfficialStatus,
} from '../../src/results/index.js';

const statuses = (o: Official) =>
  Object.fromEntries([...o.instances].map(([k, v]) => [k, v.status])) as Record<
    string,
    OfficialStatus
  >;

/** What make_run_report writes (swebench/harness/reporting.py, schema_version 2). */
const RUN_REPORT = {
  total_instances: 6,
  submitted_instances: 5,
  completed_instances: 3,
  resolved_instances: 2,
  unresolved_instances: 1,
  empty_patch_instances: 1,
  error_instances: 1,
  completed_ids: ['astropy__astropy-12907', 'django__django-11099', 'sympy__sympy-20590'],
  incomplete_ids: ['psf__requests-2317'],
  empty_patch_ids: ['pallets__flask-4992'],
  submitted_ids: [
    'astropy__astropy-12907',
    'django__django-11099',
    'pallets__flask-4992',
    'sympy__sympy-20590',
    'sympy__sympy-24152',
  ],
  resolved_ids: ['django__django-11099', 'sympy__sympy-20590'],
  unresolved_ids: ['astropy__astropy-12907'],
  error_ids: ['sympy__sympy-24152'],
  schema_version: 2,
  unstopped_instances: 0,
  unstopped_containers: [],
  unremoved_images: [],
};

describe('parseOfficial', () => {
  it("reads a SWE-bench run report's outcome lists, incomplete instances as not run", () => {
    const o = parseOfficial(RUN_REPORT, 'r.json');
    expect(o.shape).toBe('run_report');
    expect(o.unlisted).toBeNull();
    expect(statuses(o)).toEqual({
      'django__django-11099': 'resolved',
      'sympy__sympy-20590': 'resolved',
      'astropy__astropy-12907': 'unresolved',
      'sympy__sympy-24152': 'error',
      'pallets__flask-4992': 'empty',
      'psf__requests-2317': 'not_run',
    });
    expect([...o.instances.values()].every((i) => i.tests === null)).toBe(true);
  });

  it('reads an older run report without unresolved_ids: completed and not resolved is unresolved', () => {
    const o = parseOfficial(
      {
        completed_ids: ['a__b-1', 'a__b-2'],
        resolved_ids: ['a__b-1'],
        error_ids: ['a__b-3'],
        submitted_ids: ['a__b-1', 'a__b-2', 'a__b-3', 'a__b-4'],
      },
      'old.json',
    );
    expect(o.shape).toBe('run_report');
    expect(statuses(o)).toEqual({
      'a__b-1': 'resolved',
      'a__b-2': 'unresolved',
      'a__b-3': 'error',
      'a__b-4': 'not_run',
    });
  });

  it('tells an sb-cli report by its pending and failed counts, reading pending_ids and failed_ids', () => {
    const o = parseOfficial(
      {
        ...RUN_REPORT,
        pending_instances: 1,
        failed_instances: 1,
        pending_ids: ['x__y-9'],
        failed_ids: ['x__y-8'],
      },
      'swe-bench_verified__test__run1.json',
    );
    expect(o.shape).toBe('sb_cli_report');
    expect(o.instances.get('x__y-9')?.status).toBe('not_run');
    expect(o.instances.get('x__y-8')?.status).toBe('error');
    expect(o.instances.get('django__django-11099')?.status).toBe('resolved');
  });

  it('refuses an sb-cli report of counts alone: it names no instance', () => {
    expect(() =>
      parseOfficial(
        {
          total_instances: 500,
          submitted_instances: 500,
          resolved_instances: 300,
          pending_instances: 0,
          failed_instances: 0,
        },
        'counts.json',
      ),
    ).toThrow(/^counts\.json: the report has counts but no instance lists/);
  });

  it("reads SWE-bench/experiments' results.json: the resolved list, no_generation empty, no_logs error, the rest unresolved", () => {
    const o = parseOfficial(
      {
        no_generation: ['django__django-11001'],
        no_logs: ['sympy__sympy-11400'],
        resolved: ['django__django-11099', 'psf__requests-2317'],
      },
      'results/results.json',
    );
    expect(o.shape).toBe('resolved_list');
    expect(o.unlisted).toBe('unresolved');
    expect(statuses(o)).toEqual({
      'django__django-11099': 'resolved',
      'psf__requests-2317': 'resolved',
      'django__django-11001': 'empty',
      'sympy__sympy-11400': 'error',
    });
  });

  it('reads the older get_model_report form: install and reset failures are errors, no_apply and test errors unresolved', () => {
    const o = parseOfficial(
      {
        no_generation: [],
        generated: ['a-1', 'a-2', 'a-3', 'a-4', 'a-5'],
        with_logs: ['a-1', 'a-2', 'a-3', 'a-4'],
        install_fail: ['a-2'],
        reset_failed: [],
        no_apply: ['a-3'],
        applied: ['a-1', 'a-4'],
        test_errored: [],
        test_timeout: ['a-4'],
        resolved: ['a-1'],
      },
      'report.json',
    );
    // a-5 was generated but left no logs: an error there; one not generated is missing there.
    expect(statuses(o)).toEqual({
      'a-1': 'resolved',
      'a-2': 'error',
      'a-3': 'unresolved',
      'a-4': 'unresolved',
      'a-5': 'error',
    });
    expect(o.unlisted).toBeNull();
  });

  it('reads one per-instance report.json with its tests_status', () => {
    const o = parseOfficial(
      {
        'sympy__sympy-20590': {
          patch_is_None: false,
          patch_exists: true,
          patch_successfully_applied: true,
          resolved: false,
          tests_status: {
            FAIL_TO_PASS: { success: [], failure: ['test_immutable'] },
            PASS_TO_PASS: { success: ['test__aresame', 'test_structure'], failure: [] },
            FAIL_TO_FAIL: { success: [], failure: [] },
            PASS_TO_FAIL: { success: [], failure: [] },
          },
        },
      },
      'report.json',
    );
    expect(o.shape).toBe('instance_reports');
    expect(o.instances.get('sympy__sympy-20590')).toEqual({
      status: 'unresolved',
      tests: {
        FAIL_TO_PASS: { success: [], failure: ['test_immutable'] },
        PASS_TO_PASS: { success: ['test__aresame', 'test_structure'], failure: [] },
      },
    });
  });

  it('counts a report of a missing patch as empty there', () => {
    const o = parseOfficial(
      { 'a__b-1': { patch_is_None: true, patch_exists: false, resolved: false } },
      'r.json',
    );
    expect(o.instances.get('a__b-1')).toEqual({ status: 'empty', tests: null });
  });

  it.each([
    ['an array', []],
    ['a number', 3],
    ['predictions', { instance_id: 'a', model_patch: 'diff' }],
    ['an empty object', {}],
  ])('refuses %s as an unknown shape, naming what it expected', (_what, value) => {
    expect(() => parseOfficial(value, 'f.json')).toThrow(
      /^f\.json: unknown shape; expected a SWE-bench run report \(resolved_ids/,
    );
  });

  it('refuses a run report whose list is not a list of ids, naming the key', () => {
    expect(() => parseOfficial({ resolved_ids: 'django__django-11099' }, 'f.json')).toThrow(
      /^f\.json: resolved_ids: /,
    );
    expect(() => parseOfficial({ resolved_ids: [], unresolved_ids: [1, 2] }, 'f.json')).toThrow(
      /^f\.json: unresolved_ids\.0: /,
    );
  });

  it('refuses a per-instance report whose tests_status is malformed, naming the instance', () => {
    expect(() =>
      parseOfficial(
        { 'a__b-1': { resolved: true, tests_status: { FAIL_TO_PASS: { success: 'x' } } } },
        'r.json',
      ),
    ).toThrow(/^r\.json: a__b-1: tests_status\.FAIL_TO_PASS\.success: /);
  });
});

describe('parseInstanceReports', () => {
  const report = (id: string, resolved: boolean) =>
    JSON.stringify({
      [id]: { resolved, tests_status: { FAIL_TO_PASS: { success: [], failure: [] } } },
    });

  it("merges a folder's report.json files, skipping empty ones (make_run_report counts them as errors)", () => {
    const o = parseInstanceReports(
      [
        { where: 'run/m/a__b-1/report.json', text: report('a__b-1', true) },
        { where: 'run/m/a__b-2/report.json', text: report('a__b-2', false) },
        { where: 'run/m/a__b-3/report.json', text: '  \n' },
      ],
      'run',
    );
    expect(o.shape).toBe('instance_reports');
    expect(statuses(o)).toEqual({ 'a__b-1': 'resolved', 'a__b-2': 'unresolved' });
    expect(o.instances.get('a__b-2')?.tests?.PASS_TO_PASS).toEqual({ success: [], failure: [] });
  });

  it('refuses an instance reported twice, naming both files', () => {
    expect(() =>
      parseInstanceReports(
        [
          { where: 'one/report.json', text: report('a__b-1', true) },
          { where: 'two/report.json', text: report('a__b-1', false) },
        ],
        'logs',
      ),
    ).toThrow(/^two\/report\.json: instance a__b-1 is also reported in one\/report\.json/);
  });

  it('refuses a report.json that is not JSON or not of the per-instance shape', () => {
    expect(() => parseInstanceReports([{ where: 'x/report.json', text: '{' }], 'x')).toThrow(
      /^x\/report\.json: not JSON$/,
    );
    expect(() =>
      parseInstanceReports([{ where: 'x/report.json', text: '{"resolved_ids": []}' }], 'x'),
    ).toThrow(/^x\/report\.json: not a per-instance report\.json/);
  });

  it('refuses a folder with no report in it', () => {
    expect(() => parseInstanceReports([], 'empty')).toThrow(
      /^empty: no report\.json with an instance in it; expected /,
    );
  });
});
