// Proctor's outcome per instance against the official one: agreement, Cohen's kappa (known
// values), what is not comparable and why, and the per-test differences of a disagreement.
import { describe, expect, it } from 'vitest';
import {
  cohensKappa,
  compareWithOfficial,
  disagreeingBundles,
  parityLines,
  parityRecords,
  parseOfficial,
  type ReportRow,
} from '../../src/results/index.js';
import { reportRow } from '../helpers/results.js';

const row = (instance: string, fields: Partial<ReportRow> = {}) =>
  reportRow({ task: instance, instanceId: instance, bundle: `/tasks/${instance}`, ...fields });
const unresolved = (detail = 'x', reason = 'HIDDEN_FAILED') => ({
  class: 'unresolved' as const,
  verdict: 'FAIL' as const,
  reason,
  detail,
});

/** The four counts, in the textbook's order: rr, ru (resolved here only), ur, uu. */
const counts = (rr: number, ru: number, ur: number, uu: number) => ({
  bothResolved: rr,
  resolvedHereOnly: ru,
  resolvedThereOnly: ur,
  bothUnresolved: uu,
});

describe('cohensKappa', () => {
  it('matches textbook values', () => {
    // 50 items: 20 both yes, 15 both no, 5 and 10 split. p_o = 0.7, p_e = 0.5, κ = 0.4.
    expect(cohensKappa(counts(20, 5, 10, 15)).kappa).toBeCloseTo(0.4, 10);
    // Perfect agreement over both classes: κ = 1.
    expect(cohensKappa(counts(3, 0, 0, 7)).kappa).toBe(1);
    // Agreement at chance level exactly: p_o = p_e = 0.5, κ = 0.
    expect(cohensKappa(counts(1, 1, 1, 1)).kappa).toBe(0);
    // Complete disagreement, balanced: κ = −1.
    expect(cohensKappa(counts(0, 5, 5, 0)).kappa).toBe(-1);
    // 100 items: 45 / 15 / 25 / 15 → p_o 0.6, p_e 0.54, κ = 0.06 / 0.46.
    expect(cohensKappa(counts(45, 15, 25, 15)).kappa).toBeCloseTo(0.06 / 0.46, 10);
  });

  it('is undefined with nothing to compare, or when both raters use one same class', () => {
    expect(cohensKappa(counts(0, 0, 0, 0))).toEqual({
      kappa: null,
      note: 'undefined: no comparable instances',
    });
    expect(cohensKappa(counts(4, 0, 0, 0))).toEqual({
      kappa: null,
      note: 'undefined: both put every instance in one class (resolved)',
    });
    expect(cohensKappa(counts(0, 0, 0, 9)).note).toMatch(/\(unresolved\)$/);
  });

  it('is defined (0) when only one rater uses a single class', () => {
    expect(cohensKappa(counts(3, 2, 0, 0)).kappa).toBe(0);
  });
});

describe('compareWithOfficial', () => {
  const official = parseOfficial(
    {
      resolved_ids: ['i-agree-r', 'i-disagree', 'i-error-here', 'i-invalid-here'],
      unresolved_ids: ['i-agree-u', 'i-queued-here'],
      error_ids: ['i-error-there'],
      empty_patch_ids: ['i-empty-there'],
      incomplete_ids: ['i-not-run', 'i-not-run-nor-here'],
      submitted_ids: [],
    },
    'run.json',
  );
  const rows = [
    row('i-agree-r'),
    row('i-agree-u', unresolved()),
    row('i-disagree', unresolved('hidden phase: 1 test not passed: h2 (failed)')),
    row('i-error-here', { class: 'error', verdict: null, reason: 'DOCKER_ERROR' }),
    row('i-invalid-here', { class: 'invalid_task' }),
    row('i-queued-here', { class: null, status: 'queued', verdict: null, reason: null }),
    row('i-error-there'),
    row('i-empty-there', unresolved('', 'EMPTY_PATCH')),
    row('i-not-run'),
    row('i-missing-there'),
  ];

  it('counts agreement over the instances both sides scored, and says why the others are not comparable', () => {
    const p = compareWithOfficial('b1', rows, official);
    expect(p.agreement).toEqual({
      comparable: 3,
      agree: 2,
      rate: 2 / 3,
      // p_o = 2/3; Proctor resolved 1/3, official 2/3: p_e = 2/9 + 2/9 = 4/9; κ = (2/9)/(5/9).
      kappa: expect.closeTo(0.4, 10) as number,
      kappaNote: null,
      counts: counts(1, 0, 1, 1),
    });
    expect(p.notComparable.map((n) => [n.instance, n.why])).toEqual([
      ['i-empty-there', 'empty there'],
      ['i-error-here', 'error here'],
      ['i-error-there', 'error there'],
      ['i-invalid-here', 'invalid_task here'],
      ['i-missing-there', 'missing there'],
      ['i-not-run', 'not run there'],
      ['i-queued-here', 'not graded here'],
    ]);
    expect(p.disagreements.map((d) => [d.instance, d.proctor, d.official])).toEqual([
      ['i-disagree', 'unresolved', 'resolved'],
    ]);
    // No tests_status in a run report: the disagreement says so.
    expect(p.disagreements[0]?.tests).toBeNull();
    expect(p.disagreements[0]?.testsNote).toBe('the official file has no tests_status');
  });

  it('lists an official instance of the suite with no row here as not graded here', () => {
    const p = compareWithOfficial('b1', [row('i-agree-r')], official, ['i-agree-r', 'i-disagree']);
    expect(p.notComparable.find((n) => n.instance === 'i-disagree')).toEqual({
      instance: 'i-disagree',
      task: null,
      proctor: 'not_graded',
      official: 'resolved',
      why: 'not graded here',
    });
    expect(p.notComparable.some((n) => n.instance === 'i-not-run-nor-here')).toBe(false);
  });

  it('puts the official instances the suite lacks in a class of their own, apart from those that failed here', () => {
    const suite = ['i-agree-r', 'i-error-here', 'i-queued-here'];
    const p = compareWithOfficial(
      'b1',
      [
        row('i-agree-r'),
        row('i-error-here', { class: 'error', verdict: null, reason: 'DOCKER_ERROR' }),
        row('i-queued-here', { class: null, status: 'queued', verdict: null, reason: null }),
      ],
      official,
      suite,
    );
    expect(p.notComparable.map((n) => [n.instance, n.why])).toEqual([
      ['i-error-here', 'error here'],
      ['i-queued-here', 'not graded here'],
    ]);
    // Named there, no task here; one neither side ran (i-not-run-nor-here) is left out.
    expect(p.notInSuite).toEqual([
      { instance: 'i-agree-u', official: 'unresolved' },
      { instance: 'i-disagree', official: 'resolved' },
      { instance: 'i-empty-there', official: 'empty' },
      { instance: 'i-error-there', official: 'error' },
      { instance: 'i-invalid-here', official: 'resolved' },
    ]);
    expect(p.agreement.comparable).toBe(1);
    const table = parityLines(p, 'run.json').join('\n');
    expect(table).toMatch(/not comparable\s+2\n/);
    expect(table).toMatch(/not in this suite\s+5\n/);
    expect(table).toMatch(
      /not in this suite \(5\): named there, no task of it here\n {4}i-agree-u \(unresolved there\)/,
    );
    expect(table).not.toMatch(/not graded here \(\d+\):\n {4}i-agree-u/);
    const records = parityRecords(p);
    expect(
      records.filter((r) => r[6] === 'not in this suite').map((r) => [r[0], r[2], r[3]]),
    ).toEqual([
      ['i-agree-u', 'not_in_suite', 'unresolved'],
      ['i-disagree', 'not_in_suite', 'resolved'],
      ['i-empty-there', 'not_in_suite', 'empty'],
      ['i-error-there', 'not_in_suite', 'error'],
      ['i-invalid-here', 'not_in_suite', 'resolved'],
    ]);
  });

  it('takes a batch that recorded no suite to hold only the instances it has jobs for', () => {
    const p = compareWithOfficial('b1', [row('i-agree-r')], official);
    expect(p.notComparable).toEqual([]);
    expect(p.notInSuite.map((n) => n.instance)).toContain('i-disagree');
  });

  it('counts an instance a resolved list does not name as unresolved there', () => {
    const list = parseOfficial({ resolved: ['a'], no_generation: ['c'] }, 'results.json');
    const p = compareWithOfficial('b', [row('a'), row('b', unresolved()), row('c')], list);
    expect(p.agreement.counts).toEqual(counts(1, 0, 0, 1));
    expect(p.notComparable.map((n) => n.why)).toEqual(['empty there']);
    expect(p.agreement.kappa).toBe(1);
  });

  it("keys rows by instance id and uses each instance's first attempt", () => {
    const p = compareWithOfficial(
      'b',
      [
        reportRow({ task: 'task-x', instanceId: 'org__x-1', attempt: 2 }),
        reportRow({ task: 'task-x', instanceId: 'org__x-1', attempt: 1, ...unresolved() }),
      ],
      parseOfficial({ resolved_ids: [], unresolved_ids: ['org__x-1'] }, 'r.json'),
    );
    expect(p.agreement.agree).toBe(1);
  });

  describe('per-test differences of a disagreement', () => {
    const declared = new Map([
      ['/tasks/i-1', { existing: ['e1', 'e2'], hidden: ['h1', 'h2'] }],
      ['/tasks/i-2', { existing: ['e1', 'e2'], hidden: ['h1', 'h2'] }],
    ]);
    const reports = parseOfficial(
      {
        'i-1': {
          resolved: true,
          tests_status: {
            FAIL_TO_PASS: { success: ['h1', 'h2'], failure: [] },
            PASS_TO_PASS: { success: ['e1', 'e2', 'e3'], failure: [] },
          },
        },
        'i-2': {
          resolved: false,
          tests_status: {
            FAIL_TO_PASS: { success: ['h1'], failure: ['h2'] },
            PASS_TO_PASS: { success: ['e1'], failure: ['e2'] },
          },
        },
      },
      'report.json',
    );

    it("sets Proctor's outcome of each declared test against the official tests_status", () => {
      const rowsHere = [
        row('i-1', unresolved('hidden phase: 1 test not passed: h2 (failed)')),
        row('i-2'),
      ];
      const first = compareWithOfficial('b', rowsHere, reports);
      expect(disagreeingBundles(rowsHere, first)).toEqual(['/tasks/i-1', '/tasks/i-2']);
      expect(first.disagreements[0]?.testsNote).toBe(
        "the task's declared tests could not be read (/tasks/i-1)",
      );
      const p = compareWithOfficial('b', rowsHere, reports, null, declared);
      expect(p.disagreements.map((d) => [d.instance, d.tests])).toEqual([
        [
          'i-1',
          [
            { test: 'h2', category: 'FAIL_TO_PASS', proctor: 'failure', official: 'success' },
            { test: 'e3', category: 'PASS_TO_PASS', proctor: 'not_declared', official: 'success' },
          ],
        ],
        [
          'i-2',
          [
            { test: 'h2', category: 'FAIL_TO_PASS', proctor: 'success', official: 'failure' },
            { test: 'e2', category: 'PASS_TO_PASS', proctor: 'success', official: 'failure' },
          ],
        ],
      ]);
    });

    it('says unknown where the verdict did not name every failing test', () => {
      const p = compareWithOfficial(
        'b',
        [row('i-1', unresolved('hidden phase: 2 tests not passed: h2 (failed), … and 1 more'))],
        reports,
        null,
        declared,
      );
      expect(p.disagreements[0]?.tests).toEqual([
        { test: 'h1', category: 'FAIL_TO_PASS', proctor: 'unknown', official: 'success' },
        { test: 'h2', category: 'FAIL_TO_PASS', proctor: 'failure', official: 'success' },
        { test: 'e3', category: 'PASS_TO_PASS', proctor: 'not_declared', official: 'success' },
      ]);
    });

    it('counts every test as failed when the patch did not apply', () => {
      const p = compareWithOfficial(
        'b',
        [row('i-1', unresolved('error: patch failed', 'APPLY_FAILED'))],
        reports,
        null,
        declared,
      );
      expect(p.disagreements[0]?.tests?.map((t) => `${t.test}:${t.proctor}`)).toEqual([
        'h1:failure',
        'h2:failure',
        'e1:failure',
        'e2:failure',
        'e3:not_declared',
      ]);
    });
  });

  it('prints the table and csv of a comparison', () => {
    const p = compareWithOfficial('b1', rows, official);
    const table = parityLines(p, 'run.json').join('\n');
    expect(table).toContain('batch b1 against a SWE-bench run report');
    expect(table).toMatch(/agreement\s+2 of 3 comparable instances \(66\.7%\)/);
    expect(table).toMatch(/Cohen's kappa\s+0\.400/);
    expect(table).toContain('i-disagree: Proctor unresolved (HIDDEN_FAILED), official resolved');
    expect(table).toContain('tests: not compared: the official file has no tests_status');
    expect(table).toMatch(/not graded here \(1\):\n {4}i-queued-here/);
    const records = parityRecords(p);
    expect(records[0]?.slice(0, 7)).toEqual([
      'i-disagree',
      'i-disagree',
      'unresolved',
      'resolved',
      'true',
      'false',
      'disagreement',
    ]);
    expect(records).toHaveLength(1 + p.notComparable.length);
  });

  it('prints an undefined kappa with its reason', () => {
    const p = compareWithOfficial(
      'b',
      [row('a'), row('b')],
      parseOfficial({ resolved: ['a', 'b'] }, 'r.json'),
    );
    expect(parityLines(p, 'r.json').join('\n')).toMatch(
      /Cohen's kappa\s+- \(undefined: both put every instance in one class \(resolved\)\)/,
    );
  });
});
