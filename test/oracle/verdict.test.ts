// The runner contract and the verdict rules: what fails a phase, the tests_hash gate line,
// which reason a grade gets when several things went wrong, and when baseline quarantines.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import type { SwebenchStatus, TestStatus } from '../../src/oracle/report.js';
import { resolveCase, statusMap } from '../../src/grading/swebench-rules.js';
import { decideSwebenchBaseline, decideSwebenchGrade } from '../../src/oracle/swebench-verdict.js';
import {
  checkPhase,
  decideBaseline,
  decideGrade,
  declaredOutcomes,
  failVerdict,
  findFlaky,
  flakyTests,
  gateLine,
  idsThatRan,
  isReason,
  passVerdict,
  REASONS,
  runHash,
  testsHash,
  type GradePhases,
  type PhaseOutcome,
} from '../../src/oracle/verdict.js';

const report = (entries: Record<string, TestStatus>): Map<string, TestStatus> =>
  new Map(Object.entries(entries));

/** The code of the ProctorError `fn` throws, or undefined. */
function errorCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isProctorError(error) ? error.code : undefined;
  }
  return undefined;
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** A phase that ran to a report, checked against `declared`. */
function ran(declared: string[], entries: Record<string, TestStatus>): PhaseOutcome {
  return {
    timedOut: false,
    oom: false,
    reportError: null,
    check: checkPhase(declared, report(entries)),
  };
}

const EXISTING = ['e::one', 'e::two'];
const HIDDEN = ['h::fix'];
const existingPass = (): PhaseOutcome => ran(EXISTING, { 'e::one': 'passed', 'e::two': 'passed' });
const hiddenPass = (): PhaseOutcome => ran(HIDDEN, { 'h::fix': 'passed' });
const hiddenFail = (): PhaseOutcome => ran(HIDDEN, { 'h::fix': 'failed' });
const noReport = (reportError: string | null, extra: Partial<PhaseOutcome> = {}): PhaseOutcome => ({
  timedOut: false,
  oom: false,
  reportError,
  check: null,
  ...extra,
});

describe('checkPhase', () => {
  it('passes when every declared ID is reported passed', () => {
    expect(checkPhase(['a', 'b'], report({ b: 'passed', a: 'passed' }))).toEqual({
      ok: true,
      missing: [],
      notPassed: [],
      undeclared: [],
      passed: ['a', 'b'],
    });
  });

  it('lists declared IDs missing from the report, and fails', () => {
    const check = checkPhase(['a', 'b', 'c'], report({ b: 'passed' }));
    expect(check.ok).toBe(false);
    expect(check.missing).toEqual(['a', 'c']);
  });

  it('lists declared IDs that were failed, errored or skipped, and fails', () => {
    const check = checkPhase(
      ['a', 'b', 'c', 'd'],
      report({ a: 'failed', b: 'error', c: 'skipped', d: 'passed' }),
    );
    expect(check.ok).toBe(false);
    expect(check.notPassed).toEqual([
      { id: 'a', status: 'failed' },
      { id: 'b', status: 'error' },
      { id: 'c', status: 'skipped' },
    ]);
    expect(check.passed).toEqual(['d']);
  });

  it('lists undeclared reported IDs and ignores them, whatever their status', () => {
    const check = checkPhase(['a'], report({ x: 'failed', a: 'passed', y: 'error' }));
    expect(check.ok).toBe(true);
    expect(check.undeclared).toEqual(['x', 'y']);
  });

  it('counts a declared ID listed twice once', () => {
    const check = checkPhase(['a', 'a', 'b'], report({ a: 'passed' }));
    expect(check.missing).toEqual(['b']);
    expect(check.passed).toEqual(['a']);
  });

  it('treats __proto__ and constructor as ordinary IDs', () => {
    const check = checkPhase(['__proto__', 'constructor'], new Map([['constructor', 'passed']]));
    expect(check.missing).toEqual(['__proto__']);
    expect(check.passed).toEqual(['constructor']);
  });

  it('gives each declared ID its outcome, and which ran (skipped did not)', () => {
    const check = checkPhase(
      ['a', 'b', 'c', 'd'],
      report({ a: 'passed', b: 'skipped', c: 'error' }),
    );
    expect(declaredOutcomes(check)).toEqual(
      new Map([
        ['a', 'passed'],
        ['b', 'skipped'],
        ['c', 'error'],
        ['d', 'missing'],
      ]),
    );
    expect(idsThatRan(check)).toEqual(['a', 'c']);
  });
});

describe('testsHash and gateLine', () => {
  it('is the sha256 of the sorted, newline-joined IDs', () => {
    const ids = ['tests/b.py::test_z', 'tests/a.py::test_y', 'Zeta', 'alpha'];
    const expected = sha256('Zeta\nalpha\ntests/a.py::test_y\ntests/b.py::test_z');
    expect(testsHash(ids)).toBe(expected);
    expect(testsHash(ids)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same for every ordering of the same IDs', () => {
    const ids = ['c', 'a', 'b', 'é', 'B', '10', '9'];
    const reference = testsHash(ids);
    for (const order of [
      [...ids].reverse(),
      [...ids].sort(),
      ['9', 'é', 'a', 'B', '10', 'c', 'b'],
    ]) {
      expect(testsHash(order)).toBe(reference);
    }
    expect(testsHash(['a', 'b'])).not.toBe(testsHash(['a', 'c']));
  });

  it('sorts by UTF-16 code unit and hashes the UTF-8 bytes', () => {
    // U+FF21 (fullwidth A) sorts after U+D83D (the high surrogate of an emoji) by code unit.
    const ids = ['\uFF21', '\u{1F600}', 'a'];
    expect(testsHash(ids)).toBe(sha256('a\n\u{1F600}\n\uFF21'));
  });

  it('counts a repeated ID once and hashes the empty list as the empty string', () => {
    expect(testsHash(['a', 'b', 'a'])).toBe(testsHash(['a', 'b']));
    expect(testsHash([])).toBe(sha256(''));
  });

  it('refuses an ID containing a newline, which would make the hash ambiguous', () => {
    expect(errorCode(() => testsHash(['a\nb']))).toBe('INTERNAL');
  });

  it('prints the gate line', () => {
    const hash = testsHash(['a']);
    expect(gateLine(hash)).toBe(`tests_hash=${hash}`);
    expect(errorCode(() => gateLine('not-a-hash'))).toBe('INTERNAL');
  });
});

describe('REASONS and verdict constructors', () => {
  it('lists the stable reason codes', () => {
    expect(REASONS).toContain('PASS');
    expect(REASONS).toContain('FLAKY');
    expect(new Set(REASONS).size).toBe(REASONS.length);
    expect(isReason('TIMEOUT')).toBe(true);
    expect(isReason('timeout')).toBe(false);
    expect(isReason(undefined)).toBe(false);
  });

  it('builds PASS and FAIL verdicts', () => {
    expect(passVerdict('ok', null)).toEqual({
      verdict: 'PASS',
      reason: 'PASS',
      detail: 'ok',
      testsHash: null,
    });
    expect(failVerdict('APPLY_FAILED', 'patch does not apply')).toEqual({
      verdict: 'FAIL',
      reason: 'APPLY_FAILED',
      detail: 'patch does not apply',
      testsHash: null,
    });
  });
});

describe('decideGrade', () => {
  it('passes when both phases pass, with the hash of every declared test that ran', () => {
    const verdict = decideGrade({ existing: existingPass(), hidden: hiddenPass() });
    expect(verdict.verdict).toBe('PASS');
    expect(verdict.reason).toBe('PASS');
    expect(verdict.testsHash).toBe(testsHash([...EXISTING, ...HIDDEN]));
    expect(verdict.testsHash).toBe(sha256('e::one\ne::two\nh::fix'));
  });

  it('fails with HIDDEN_FAILED when a hidden test fails', () => {
    const verdict = decideGrade({ existing: existingPass(), hidden: hiddenFail() });
    expect(verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
    expect(verdict.detail).toContain('h::fix (failed)');
    expect(verdict.testsHash).toBe(testsHash([...EXISTING, ...HIDDEN]));
  });

  it('fails with EXISTING_FAILED, before HIDDEN_FAILED, when an existing test regresses', () => {
    const existing = ran(EXISTING, { 'e::one': 'passed', 'e::two': 'error' });
    const verdict = decideGrade({ existing, hidden: hiddenFail() });
    expect(verdict.reason).toBe('EXISTING_FAILED');
    expect(verdict.detail).toContain('e::two (error)');
  });

  it('counts a skipped declared test as not passed, and not as run', () => {
    const hidden = ran(HIDDEN, { 'h::fix': 'skipped' });
    const verdict = decideGrade({ existing: existingPass(), hidden });
    expect(verdict.reason).toBe('HIDDEN_FAILED');
    expect(verdict.testsHash).toBe(testsHash(EXISTING));
  });

  it('fails with TESTS_MISSING, before EXISTING_FAILED, when a declared ID is absent', () => {
    const existing = ran(EXISTING, { 'e::one': 'failed', 'e::two': 'passed' });
    const hidden = ran(HIDDEN, { 'something::else': 'passed' });
    const verdict = decideGrade({ existing, hidden });
    expect(verdict.reason).toBe('TESTS_MISSING');
    expect(verdict.detail).toBe('hidden phase: 1 declared test missing from the report: h::fix');
  });

  it('ignores undeclared IDs in the report', () => {
    const hidden = ran(HIDDEN, { 'h::fix': 'passed', 'h::extra': 'failed' });
    const verdict = decideGrade({ existing: existingPass(), hidden });
    expect(verdict.reason).toBe('PASS');
    expect(verdict.testsHash).toBe(testsHash([...EXISTING, ...HIDDEN]));
  });

  it('fails with REPORT_INVALID, before TESTS_MISSING, when a report is unusable', () => {
    const existing = ran(EXISTING, {});
    const hidden = noReport('invalid test report: malformed XML: unterminated comment');
    const verdict = decideGrade({ existing, hidden });
    expect(verdict.reason).toBe('REPORT_INVALID');
    expect(verdict.detail).toBe(
      'hidden phase: invalid test report: malformed XML: unterminated comment',
    );
    expect(verdict.testsHash).toBe(testsHash([]));
  });

  it('fails with OOM, before REPORT_INVALID', () => {
    const verdict = decideGrade({
      existing: noReport('report missing'),
      hidden: noReport(null, { oom: true }),
    });
    expect(verdict).toMatchObject({ reason: 'OOM', detail: 'hidden phase ran out of memory' });
    expect(verdict.testsHash).toBeNull();
  });

  it('fails with TIMEOUT, before OOM and everything else', () => {
    const verdict = decideGrade({
      existing: noReport(null, { oom: true }),
      hidden: { ...hiddenFail(), timedOut: true },
    });
    expect(verdict).toMatchObject({
      reason: 'TIMEOUT',
      detail: 'hidden phase exceeded its time limit',
    });
    // The partial report still says what ran.
    expect(verdict.testsHash).toBe(testsHash(HIDDEN));
  });

  it('names the existing phase first when both phases fail for the same reason', () => {
    const verdict = decideGrade({
      existing: noReport(null, { timedOut: true }),
      hidden: noReport(null, { timedOut: true }),
    });
    expect(verdict.detail).toBe('existing phase exceeded its time limit');
  });

  it('fails with the existing phase reason when the hidden phase did not run', () => {
    const verdict = decideGrade({ existing: noReport(null, { timedOut: true }) });
    expect(verdict.reason).toBe('TIMEOUT');
  });

  it('is an INFRA_ERROR, never a PASS, when the hidden phase is absent after a good existing one', () => {
    expect(decideGrade({ existing: existingPass() }).reason).toBe('INFRA_ERROR');
  });

  it('is an INFRA_ERROR when a phase has neither a report nor a report error', () => {
    expect(decideGrade({ existing: existingPass(), hidden: noReport(null) }).reason).toBe(
      'INFRA_ERROR',
    );
  });

  it('keeps the detail short however many tests failed', () => {
    const declared = Array.from({ length: 10_000 }, (_, i) => `h::${'x'.repeat(500)}${i}`);
    const hidden = ran(declared, {});
    const verdict = decideGrade({ existing: existingPass(), hidden });
    expect(verdict.reason).toBe('TESTS_MISSING');
    expect(verdict.detail).toContain('10000 declared tests');
    expect(verdict.detail).toContain('and 9995 more');
    expect(verdict.detail.length).toBeLessThan(1200);
  });
});

describe('findFlaky', () => {
  it('finds IDs whose outcome differs between runs, sorted', () => {
    const runs = [
      report({ a: 'passed', b: 'failed', c: 'passed', d: 'skipped' }),
      report({ a: 'passed', b: 'failed', c: 'failed', d: 'skipped' }),
      report({ a: 'error', b: 'failed', c: 'passed', d: 'skipped' }),
    ];
    expect(findFlaky(runs)).toEqual(['a', 'c']);
  });

  it('counts an ID present in some runs but not others as flipped', () => {
    expect(findFlaky([report({ a: 'passed', b: 'passed' }), report({ a: 'passed' })])).toEqual([
      'b',
    ]);
  });

  it('finds nothing in identical runs or a single run', () => {
    expect(findFlaky([report({ a: 'failed' }), report({ a: 'failed' })])).toEqual([]);
    expect(findFlaky([report({ a: 'failed' })])).toEqual([]);
    expect(findFlaky([])).toEqual([]);
  });
});

describe('decideBaseline', () => {
  const healthy = (): GradePhases => ({ existing: existingPass(), hidden: hiddenFail() });

  it('passes a task whose existing suite passes and hidden tests fail without the fix', () => {
    const verdict = decideBaseline({ runs: [healthy()] });
    expect(verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
    expect(verdict.testsHash).toBe(testsHash([...EXISTING, ...HIDDEN]));
  });

  it('accepts any hidden failure of a run that reported: a timeout, OOM or an unusable report', () => {
    for (const hidden of [
      noReport(null, { timedOut: true }),
      noReport(null, { oom: true }),
      noReport('the runner wrote no report'),
    ]) {
      expect(decideBaseline({ runs: [{ existing: existingPass(), hidden }] }).reason).toBe('PASS');
    }
  });

  it('quarantines with BASELINE_HIDDEN_MISSING when a hidden ID is not in the report', () => {
    // A pytest node id where the JUnit report says classname::name: the old rule took the
    // absent test for a failing one and called the task valid.
    const hidden = ran(['tests/test_calc.py::test_divide', 'tests/test_calc.py::test_zero'], {
      'tests.test_calc::test_divide': 'failed',
      'tests.test_calc::test_zero': 'failed',
    });
    const verdict = decideBaseline({ runs: [{ existing: existingPass(), hidden }] });
    expect(verdict).toMatchObject({ verdict: 'FAIL', reason: 'BASELINE_HIDDEN_MISSING' });
    expect(verdict.detail).toBe(
      '2 of 2 hidden test IDs not in the base report: tests/test_calc.py::test_divide (nearest reported: tests.test_calc::test_divide), tests/test_calc.py::test_zero (nearest reported: tests.test_calc::test_zero)',
    );
    expect(verdict.testsHash).toBe(testsHash(EXISTING));
  });

  it('quarantines as BASELINE_HIDDEN_MISSING even when the other hidden tests fail as they should', () => {
    const hidden = ran(['h::fix', 'h::other'], { 'h::fix': 'failed', 'h::othr': 'passed' });
    const verdict = decideBaseline({ runs: [{ existing: existingPass(), hidden }] });
    expect(verdict.reason).toBe('BASELINE_HIDDEN_MISSING');
    expect(verdict.detail).toBe(
      '1 of 2 hidden test IDs not in the base report: h::other (nearest reported: h::othr)',
    );
  });

  it('says when the report held no other IDs, and names the run of several', () => {
    const hidden = ran(HIDDEN, {});
    const run = { existing: existingPass(), hidden };
    const verdict = decideBaseline({ runs: [run, run] });
    expect(verdict.reason).toBe('BASELINE_HIDDEN_MISSING');
    expect(verdict.detail).toBe(
      '1 of 1 hidden test ID not in the base report (run 1): h::fix; the report held no undeclared test ID to suggest instead',
    );
  });

  it('quarantines with BASELINE_EXISTING_MISSING before anything about the hidden tests', () => {
    const existing = ran(EXISTING, { 'e::one': 'passed', 'e.two': 'passed' });
    const verdict = decideBaseline({ runs: [{ existing, hidden: hiddenPass() }] });
    expect(verdict).toMatchObject({ verdict: 'FAIL', reason: 'BASELINE_EXISTING_MISSING' });
    expect(verdict.detail).toBe(
      '1 of 2 existing test IDs not in the base report: e::two (nearest reported: e.two)',
    );
  });

  it('prefers BASELINE_EXISTING_MISSING to a failing existing test, and a timeout to both', () => {
    const existing = ran(EXISTING, { 'e::one': 'failed' });
    const both = decideBaseline({ runs: [{ existing, hidden: hiddenFail() }] });
    expect(both.reason).toBe('BASELINE_EXISTING_MISSING');
    const partial = { ...ran(EXISTING, {}), timedOut: true };
    const timedOut = decideBaseline({ runs: [{ existing: partial, hidden: hiddenFail() }] });
    expect(timedOut.reason).toBe('BASELINE_EXISTING_FAILED');
    expect(timedOut.detail).toContain('TIMEOUT');
  });

  it('checks for missing IDs before the gold patch', () => {
    const gold = failVerdict('TESTS_MISSING', 'hidden phase: 1 declared test missing');
    const runs = [{ existing: existingPass(), hidden: ran(HIDDEN, { 'h.fix': 'failed' }) }];
    expect(decideBaseline({ runs, gold }).reason).toBe('BASELINE_HIDDEN_MISSING');
  });

  it('keeps a missing declared ID in a grade a TESTS_MISSING FAIL', () => {
    const hidden = ran(HIDDEN, { 'h.fix': 'passed' });
    expect(decideGrade({ existing: existingPass(), hidden }).reason).toBe('TESTS_MISSING');
  });

  it('bounds the detail of many missing IDs in a large report', () => {
    const declared = Array.from({ length: 2000 }, (_, i) => `tests/test_m.py::test_${i}`);
    const reported = Object.fromEntries(
      Array.from({ length: 20_000 }, (_, i) => [`tests.test_m::test_${i}`, 'failed' as const]),
    );
    const verdict = decideBaseline({
      runs: [{ existing: existingPass(), hidden: ran(declared, reported) }],
    });
    expect(verdict.reason).toBe('BASELINE_HIDDEN_MISSING');
    expect(verdict.detail).toMatch(
      /^2000 of 2000 hidden test IDs not in the base report: tests\/test_m\.py::test_0 \(nearest reported: tests\.test_m::test_0\), .*, … and 1995 more$/,
    );
    expect(verdict.detail.length).toBeLessThan(2200);
  });

  it('notes hidden tests that already pass when others fail', () => {
    const hidden = ran(['h::a', 'h::b'], { 'h::a': 'passed', 'h::b': 'failed' });
    const verdict = decideBaseline({ runs: [{ existing: existingPass(), hidden }] });
    expect(verdict.reason).toBe('PASS');
    expect(verdict.detail).toContain('already passing without the fix: h::a');
  });

  it('quarantines with BASELINE_EXISTING_FAILED when the existing suite fails at base', () => {
    const existing = ran(EXISTING, { 'e::one': 'failed', 'e::two': 'passed' });
    const verdict = decideBaseline({ runs: [{ existing, hidden: hiddenFail() }] });
    expect(verdict).toMatchObject({ verdict: 'FAIL', reason: 'BASELINE_EXISTING_FAILED' });
    expect(verdict.detail).toContain('EXISTING_FAILED');
    expect(verdict.detail).toContain('e::one (failed)');
  });

  it('quarantines with BASELINE_EXISTING_FAILED when the existing suite times out', () => {
    const verdict = decideBaseline({
      runs: [{ existing: noReport(null, { timedOut: true }) }],
    });
    expect(verdict.reason).toBe('BASELINE_EXISTING_FAILED');
    expect(verdict.detail).toContain('TIMEOUT');
  });

  it('quarantines with BASELINE_HIDDEN_PASSED when the hidden tests pass without the fix', () => {
    const verdict = decideBaseline({ runs: [{ existing: existingPass(), hidden: hiddenPass() }] });
    expect(verdict).toMatchObject({ verdict: 'FAIL', reason: 'BASELINE_HIDDEN_PASSED' });
    expect(verdict.detail).toBe('all 1 hidden test pass without the fix');
  });

  it('quarantines with GOLD_FAILED when the gold patch does not pass', () => {
    const gold = failVerdict('HIDDEN_FAILED', 'hidden phase: 1 test not passed: h::fix (failed)');
    const verdict = decideBaseline({ runs: [healthy()], gold });
    expect(verdict.reason).toBe('GOLD_FAILED');
    expect(verdict.detail).toContain('HIDDEN_FAILED');
    const passing = decideBaseline({ runs: [healthy()], gold: passVerdict('ok', null) });
    expect(passing.reason).toBe('PASS');
    expect(passing.detail).toContain('gold patch passes');
  });

  it('passes an infrastructure failure of the gold grade through instead of blaming the task', () => {
    const gold = failVerdict('INFRA_ERROR', 'docker went away');
    expect(decideBaseline({ runs: [healthy()], gold }).reason).toBe('INFRA_ERROR');
  });

  it('checks the baseline itself before the gold patch', () => {
    const gold = failVerdict('HIDDEN_FAILED', 'x');
    const runs = [{ existing: existingPass(), hidden: hiddenPass() }];
    expect(decideBaseline({ runs, gold }).reason).toBe('BASELINE_HIDDEN_PASSED');
  });

  it('is FLAKY, naming the IDs that flipped, when repeated runs disagree', () => {
    const second: GradePhases = {
      existing: ran(EXISTING, { 'e::one': 'passed', 'e::two': 'failed' }),
      hidden: hiddenFail(),
    };
    const verdict = decideBaseline({ runs: [healthy(), healthy(), second] });
    expect(verdict).toMatchObject({ verdict: 'FAIL', reason: 'FLAKY' });
    expect(verdict.detail).toBe('existing tests that flipped: e::two');
    // What the baseline result records: every flipped ID, not the detail's first few.
    expect(flakyTests([healthy(), healthy(), second])).toEqual(['e::two']);
    expect(flakyTests([second])).toEqual([]);
  });

  it('is FLAKY, before anything else, when a phase ends differently between runs', () => {
    const hung: GradePhases = {
      existing: existingPass(),
      hidden: noReport(null, { timedOut: true }),
    };
    const verdict = decideBaseline({ runs: [healthy(), hung] });
    expect(verdict.reason).toBe('FLAKY');
    expect(verdict.detail).toBe('hidden phase reported in run 1, timed out in run 2');
  });

  it('is not FLAKY when repeated runs agree, and reports which run quarantined', () => {
    expect(decideBaseline({ runs: [healthy(), healthy(), healthy()] })).toMatchObject({
      reason: 'PASS',
      detail: 'existing suite passes and hidden tests fail without the fix in all 3 runs',
    });
    const passing = { existing: existingPass(), hidden: hiddenPass() };
    const verdict = decideBaseline({ runs: [passing, passing] });
    expect(verdict.reason).toBe('BASELINE_HIDDEN_PASSED');
    expect(verdict.detail).toContain('(run 1)');
  });

  it('refuses to decide without a run', () => {
    expect(errorCode(() => decideBaseline({ runs: [] }))).toBe('INTERNAL');
  });
});

// ---------------------------------------------------------------------------------------------
// SWE-bench's rules (swebench-rules.ts, swebench-verdict.ts): one run, both lists read from it.

/** An entry: Proctor's status, and the `swebench` one when the runner gave it. */
type Entry = TestStatus | [TestStatus, SwebenchStatus];

/** The one run of a SWE-bench grade, and its two views, as the evaluator builds them. */
function swebenchRun(
  lists: { existing: string[]; hidden: string[] },
  entries: Record<string, Entry>,
  extra: Partial<PhaseOutcome> = {},
): GradePhases {
  const tests = new Map<string, TestStatus>();
  const swebench = new Map<string, SwebenchStatus>();
  for (const [id, entry] of Object.entries(entries)) {
    if (typeof entry === 'string') tests.set(id, entry);
    else {
      tests.set(id, entry[0]);
      swebench.set(id, entry[1]);
    }
  }
  const run: PhaseOutcome = {
    timedOut: false,
    oom: false,
    reportError: null,
    check: checkPhase([...new Set([...lists.hidden, ...lists.existing])], tests),
    report: { tests, swebench },
    ...extra,
  };
  const view = (ids: string[]) => ({ ...run, check: checkPhase(ids, tests) });
  return { existing: view(lists.existing), hidden: view(lists.hidden), tests: run };
}

const P2P = ['t.py::test_keep'];
const F2P = ['t.py::test_fix'];
const LISTS = { existing: P2P, hidden: F2P };

describe('SWE-bench status maps and _resolve_case', () => {
  it('takes the runner’s swebench status, maps Proctor’s otherwise, and leaves ABSENT out', () => {
    const map = statusMap({
      tests: report({ a: 'skipped', b: 'skipped', c: 'passed', d: 'error' }),
      swebench: new Map<string, SwebenchStatus>([
        ['a', 'XFAIL'],
        ['b', 'ABSENT'],
      ]),
    });
    expect(Object.fromEntries(map)).toEqual({ a: 'XFAIL', c: 'PASSED', d: 'ERROR' });
  });

  it('matches a truncated parametrized id to the keys it prefixes when they agree on pass-vs-fail', () => {
    const map = statusMap({
      tests: report({ 't[log(photon /cm2)]': 'passed', 't[log(photon /s)]': 'passed' }),
      swebench: new Map([['t[log(photon /s)]', 'XFAIL' as const]]),
    });
    expect(resolveCase('t[log(photon', map)).toBe('t[log(photon /cm2)]');
    // An id with its brackets closed keeps exact matching; so does one without brackets.
    expect(resolveCase('t[log(photon /cm2)', map)).toBe('t[log(photon /cm2)]');
    expect(resolveCase('t', map)).toBeNull();
    const mixed = statusMap({
      tests: report({ 'u[a 1]': 'passed', 'u[a 2]': 'skipped' }),
      swebench: new Map(),
    });
    expect(resolveCase('u[a', mixed)).toBeNull();
  });
});

describe('decideSwebenchGrade', () => {
  it('passes a skipped PASS_TO_PASS and an XFAIL FAIL_TO_PASS', () => {
    const run = swebenchRun(LISTS, {
      [P2P[0]!]: 'skipped',
      [F2P[0]!]: ['skipped', 'XFAIL'],
    });
    expect(decideSwebenchGrade(run)).toEqual({
      verdict: 'PASS',
      reason: 'PASS',
      detail: "resolved by SWE-bench's rules: 1 existing test maintained and 1 hidden test passed",
      testsHash: runHash(run),
    });
  });

  it('fails a skipped FAIL_TO_PASS with HIDDEN_FAILED, naming its status', () => {
    const verdict = decideSwebenchGrade(
      swebenchRun(LISTS, { [P2P[0]!]: 'passed', [F2P[0]!]: 'skipped' }),
    );
    expect(verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
    expect(verdict.detail).toBe(
      "hidden tests (FAIL_TO_PASS): 1 test not passed by SWE-bench's rules: t.py::test_fix (SKIPPED)",
    );
  });

  it('fails an absent PASS_TO_PASS with EXISTING_FAILED (ABSENT), not TESTS_MISSING, before the hidden tests', () => {
    const verdict = decideSwebenchGrade(swebenchRun(LISTS, { [F2P[0]!]: 'failed' }));
    expect(verdict.reason).toBe('EXISTING_FAILED');
    expect(verdict.detail).toContain('t.py::test_keep (ABSENT)');
  });

  it('fails an entry the runner marks ABSENT (a non-strict XPASS), whatever Proctor’s status', () => {
    const verdict = decideSwebenchGrade(
      swebenchRun(LISTS, { [P2P[0]!]: ['skipped', 'ABSENT'], [F2P[0]!]: 'passed' }),
    );
    expect(verdict.reason).toBe('EXISTING_FAILED');
    expect(verdict.detail).toContain('(ABSENT)');
  });

  it('resolves a truncated FAIL_TO_PASS id through the full ids the report holds', () => {
    const lists = { existing: [], hidden: ['t.py::test_g[log(photon'] };
    const full = 't.py::test_g[log(photon /cm2/s)]';
    const pass = swebenchRun(lists, { [full]: 'passed' });
    expect(decideSwebenchGrade(pass).reason).toBe('PASS');
    // The truncated id did not run under its own name: the hash is the empty list's.
    expect(decideSwebenchGrade(pass).testsHash).toBe(testsHash([]));
    const split = swebenchRun(lists, {
      [full]: 'passed',
      't.py::test_g[log(photon /s)]': 'failed',
    });
    expect(decideSwebenchGrade(split).detail).toContain('test_g[log(photon (ABSENT)');
  });

  it('counts empty lists as success (compute_*: total 0 is 1)', () => {
    const run = swebenchRun({ existing: [], hidden: [] }, {});
    expect(decideSwebenchGrade(run).reason).toBe('PASS');
  });

  it('keeps the integrity and run rules first: TAMPERED, TIMEOUT, REPORT_INVALID', () => {
    const tampered = swebenchRun(
      LISTS,
      { [F2P[0]!]: 'passed', [P2P[0]!]: 'passed' },
      {
        tampered: 'sentinel x (must be failed) reported passed',
        timedOut: true,
      },
    );
    expect(decideSwebenchGrade(tampered)).toMatchObject({
      reason: 'TAMPERED',
      detail: 'tests phase: sentinel x (must be failed) reported passed',
    });
    const timedOut = swebenchRun(LISTS, {}, { timedOut: true });
    expect(decideSwebenchGrade(timedOut).reason).toBe('TIMEOUT');
    const unusable: GradePhases = {
      existing: noReport('the runner wrote no report'),
      hidden: noReport('the runner wrote no report'),
      tests: noReport('the runner wrote no report'),
    };
    expect(decideSwebenchGrade(unusable)).toMatchObject({
      reason: 'REPORT_INVALID',
      detail: 'tests phase: the runner wrote no report',
      testsHash: null,
    });
    expect(decideSwebenchGrade({ existing: existingPass() }).reason).toBe('INFRA_ERROR');
  });

  it('quotes the first lines of the report’s cause when declared tests are errors', () => {
    const cause =
      "ImportError while loading conftest '/repo/conftest.py'.\nconftest.py:1: in <module>\n    import flask\nE   ModuleNotFoundError: No module named 'flask'\nmore";
    const run = swebenchRun(LISTS, { [P2P[0]!]: 'error', [F2P[0]!]: 'error' }, { cause });
    const verdict = decideSwebenchGrade(run);
    expect(verdict.reason).toBe('EXISTING_FAILED');
    expect(verdict.detail).toBe(
      "existing tests (PASS_TO_PASS): 1 test not maintained by SWE-bench's rules: t.py::test_keep (ERROR); the runner says: ImportError while loading conftest '/repo/conftest.py'. | conftest.py:1: in <module> | import flask",
    );
    // Not when the declared tests ran and failed: the cause is not theirs.
    const failed = swebenchRun(LISTS, { [P2P[0]!]: 'failed', [F2P[0]!]: 'passed' }, { cause });
    expect(decideSwebenchGrade(failed).detail).not.toContain('the runner says');
  });
});

describe('decideSwebenchBaseline', () => {
  const clean = () => swebenchRun(LISTS, { [P2P[0]!]: 'skipped', [F2P[0]!]: 'skipped' });

  it('passes when the existing tests are maintained and a hidden test is not a success, and the gold patch resolves', () => {
    const gold = decideSwebenchGrade(
      swebenchRun(LISTS, { [P2P[0]!]: 'passed', [F2P[0]!]: 'passed' }),
    );
    expect(decideSwebenchBaseline({ runs: [clean()], gold })).toMatchObject({
      verdict: 'PASS',
      detail:
        "by SWE-bench's rules the existing tests are maintained and hidden tests fail without the fix; gold patch resolved",
    });
  });

  it('quarantines with BASELINE_HIDDEN_PASSED when every hidden test succeeds (XFAIL included)', () => {
    const run = swebenchRun(LISTS, { [P2P[0]!]: 'passed', [F2P[0]!]: ['skipped', 'XFAIL'] });
    expect(decideSwebenchBaseline({ runs: [run] }).reason).toBe('BASELINE_HIDDEN_PASSED');
  });

  it('quarantines with BASELINE_EXISTING_FAILED when an existing test is not maintained', () => {
    const run = swebenchRun(LISTS, { [P2P[0]!]: ['skipped', 'ABSENT'], [F2P[0]!]: 'failed' });
    expect(decideSwebenchBaseline({ runs: [run] })).toMatchObject({
      reason: 'BASELINE_EXISTING_FAILED',
      detail: expect.stringContaining('t.py::test_keep (ABSENT)') as string,
    });
  });

  it('excuses existing tests that did not run without the fix only when the gold patch maintains them', () => {
    // A Go package whose hidden test calls a method only the fix adds does not build without
    // it: the runner reports every test of the package an error SWE-bench's parser never saw.
    const unbuilt = swebenchRun(LISTS, {
      [P2P[0]!]: ['error', 'ABSENT'],
      [F2P[0]!]: ['error', 'ABSENT'],
    });
    const resolved = decideSwebenchGrade(
      swebenchRun(LISTS, { [P2P[0]!]: 'passed', [F2P[0]!]: 'passed' }),
    );
    expect(decideSwebenchBaseline({ runs: [unbuilt], gold: resolved })).toMatchObject({
      verdict: 'PASS',
      detail: expect.stringContaining(
        "1 existing test did not run without the fix (ABSENT to SWE-bench's parser: the hidden tests do not build or load without it) and the gold patch maintains them: t.py::test_keep",
      ) as string,
    });
    // Without a gold run, or with one that does not resolve, nothing shows them passing.
    expect(decideSwebenchBaseline({ runs: [unbuilt] }).reason).toBe('BASELINE_EXISTING_FAILED');
    const unresolved = decideSwebenchGrade(
      swebenchRun(LISTS, { [P2P[0]!]: 'error', [F2P[0]!]: 'passed' }),
    );
    expect(decideSwebenchBaseline({ runs: [unbuilt], gold: unresolved }).reason).toBe(
      'BASELINE_EXISTING_FAILED',
    );
    // An existing test that ran and failed is not excused, nor are absent ones beside it.
    const failed = swebenchRun(LISTS, { [P2P[0]!]: 'failed', [F2P[0]!]: ['error', 'ABSENT'] });
    expect(decideSwebenchBaseline({ runs: [failed], gold: resolved }).reason).toBe(
      'BASELINE_EXISTING_FAILED',
    );
    // Nor when the hidden tests pass: then the existing ones had no cause to be absent.
    const hiddenPassed = swebenchRun(LISTS, {
      [P2P[0]!]: ['error', 'ABSENT'],
      [F2P[0]!]: 'passed',
    });
    expect(decideSwebenchBaseline({ runs: [hiddenPassed], gold: resolved }).reason).toBe(
      'BASELINE_EXISTING_FAILED',
    );
  });

  it('quarantines with BASELINE_*_MISSING for an id nothing in the report stands for, naming the nearest', () => {
    const run = swebenchRun(LISTS, { [P2P[0]!]: 'passed', 't.py::test_fixed': 'failed' });
    expect(decideSwebenchBaseline({ runs: [run] })).toMatchObject({
      reason: 'BASELINE_HIDDEN_MISSING',
      detail: expect.stringContaining(
        't.py::test_fix (nearest reported: t.py::test_fixed)',
      ) as string,
    });
    const truncated = swebenchRun(
      { existing: ['t.py::test_g[a'], hidden: F2P },
      { 't.py::test_g[a b]': 'passed', [F2P[0]!]: 'failed' },
    );
    expect(decideSwebenchBaseline({ runs: [truncated] }).reason).toBe('PASS');
  });

  it('quarantines a run that timed out as BASELINE_EXISTING_FAILED, and passes INFRA_ERROR and TAMPERED through', () => {
    expect(
      decideSwebenchBaseline({ runs: [swebenchRun(LISTS, {}, { timedOut: true })] }),
    ).toMatchObject({
      reason: 'BASELINE_EXISTING_FAILED',
      detail: 'the tests fail without a diff: TIMEOUT: tests phase exceeded its time limit',
    });
    const tampered = swebenchRun(LISTS, {}, { tampered: 'tripwire: x' });
    expect(decideSwebenchBaseline({ runs: [tampered] }).reason).toBe('TAMPERED');
    expect(decideSwebenchBaseline({ runs: [{ existing: noReport(null) }] }).reason).toBe(
      'INFRA_ERROR',
    );
  });

  it('quarantines with GOLD_FAILED when the gold patch is not resolved', () => {
    const gold = decideSwebenchGrade(
      swebenchRun(LISTS, { [P2P[0]!]: 'passed', [F2P[0]!]: 'skipped' }),
    );
    expect(decideSwebenchBaseline({ runs: [clean()], gold })).toMatchObject({
      reason: 'GOLD_FAILED',
      detail: expect.stringMatching(
        /^gold patch is not resolved: HIDDEN_FAILED: .*\(SKIPPED\)$/,
      ) as string,
    });
  });

  it('is FLAKY when repeated runs disagree', () => {
    const other = swebenchRun(LISTS, { [P2P[0]!]: 'passed', [F2P[0]!]: 'skipped' });
    expect(decideSwebenchBaseline({ runs: [clean(), other] }).reason).toBe('FLAKY');
  });
});

describe('the cause under Proctor’s rules', () => {
  it('quotes the cause when declared tests are missing or errors, and not otherwise', () => {
    const phases: GradePhases = {
      existing: {
        ...ran(EXISTING, { 'e::one': 'error', 'e::two': 'error' }),
        cause: 'boom\nline 2',
      },
      hidden: hiddenPass(),
    };
    expect(decideGrade(phases).detail).toBe(
      'existing phase: 2 tests not passed: e::one (error), e::two (error); the runner says: boom | line 2',
    );
    const failed = { ...ran(EXISTING, { 'e::one': 'failed', 'e::two': 'passed' }), cause: 'boom' };
    expect(decideGrade({ existing: failed, hidden: hiddenPass() }).detail).not.toContain('boom');
  });
});
