// declaredTests: each declared ID's list, outcome and SWE-bench status, read from the phases
// decideGrade saw.
import { describe, expect, it } from 'vitest';
import { checkPhase, declaredTests, type PhaseOutcome } from '../../src/oracle/index.js';
import type { SwebenchStatus, TestStatus } from '../../src/oracle/index.js';

const bundle = {
  hiddenIds: ['test_a', 'test_trunc[x-(1', 'test_gone'],
  existingIds: ['test_e1', 'test_e2'],
};

function phase(
  declared: string[],
  tests: Array<[string, TestStatus, SwebenchStatus?]>,
): PhaseOutcome {
  const map = new Map(tests.map(([id, s]) => [id, s]));
  const swebench = new Map(
    tests.flatMap(([id, , s]) => (s === undefined ? [] : [[id, s] as [string, SwebenchStatus]])),
  );
  return {
    timedOut: false,
    oom: false,
    reportError: null,
    check: checkPhase(declared, map),
    report: { tests: map, swebench },
  };
}

describe('declaredTests', () => {
  it('gives every declared ID in its list order, with the SWE-bench status the report gave', () => {
    const result = declaredTests(bundle, {
      existing: phase(bundle.existingIds, [
        ['test_e2', 'skipped', 'SKIPPED'],
        ['test_e1', 'passed'],
      ]),
      hidden: phase(bundle.hiddenIds, [
        ['test_a', 'passed', 'XFAIL'],
        // A cut parametrised ID matches the reported IDs it prefixes when they agree (grading.py).
        ['test_trunc[x-(1)-y]', 'passed', 'PASSED'],
        ['test_trunc[x-(1)-z]', 'passed', 'XFAIL'],
        ['undeclared', 'failed'],
      ]),
    });
    expect(result).toEqual({
      lists: { hidden: 'reported', existing: 'reported' },
      tests: [
        { id: 'test_a', list: 'hidden', outcome: 'passed', swebench: 'XFAIL' },
        { id: 'test_trunc[x-(1', list: 'hidden', outcome: 'missing', swebench: 'PASSED' },
        { id: 'test_gone', list: 'hidden', outcome: 'missing' },
        { id: 'test_e1', list: 'existing', outcome: 'passed' },
        { id: 'test_e2', list: 'existing', outcome: 'skipped', swebench: 'SKIPPED' },
      ],
    });
  });

  it('leaves a cut ID absent when the reported IDs it prefixes disagree on pass-vs-fail', () => {
    const result = declaredTests(bundle, {
      existing: phase(bundle.existingIds, [
        ['test_e1', 'passed'],
        ['test_e2', 'passed'],
      ]),
      hidden: phase(bundle.hiddenIds, [
        ['test_trunc[x-(1)-y]', 'passed'],
        ['test_trunc[x-(1)-z]', 'failed'],
      ]),
    });
    expect(result.tests.find((t) => t.id === 'test_trunc[x-(1')).toEqual({
      id: 'test_trunc[x-(1',
      list: 'hidden',
      outcome: 'missing',
    });
  });

  it("resolves a cut ID over SWE-bench's map, which leaves ABSENT entries out", () => {
    const result = declaredTests(bundle, {
      existing: phase(bundle.existingIds, [
        ['test_e1', 'passed'],
        ['test_e2', 'passed'],
      ]),
      hidden: phase(bundle.hiddenIds, [
        ['test_trunc[x-(1)-y]', 'skipped', 'ABSENT'],
        ['test_trunc[x-(1)-z]', 'passed', 'PASSED'],
      ]),
    });
    expect(result.tests.find((t) => t.id === 'test_trunc[x-(1')).toEqual({
      id: 'test_trunc[x-(1',
      list: 'hidden',
      outcome: 'missing',
      swebench: 'PASSED',
    });
  });

  it('says why a list has no tests: no usable report, or its phase never ran', () => {
    const broken: PhaseOutcome = { timedOut: true, oom: false, reportError: 'x', check: null };
    expect(declaredTests(bundle, { existing: broken })).toEqual({
      lists: { hidden: 'not_run', existing: 'no_report' },
      tests: [],
    });
    expect(declaredTests(bundle, null).lists).toEqual({ hidden: 'not_run', existing: 'not_run' });
  });
});
