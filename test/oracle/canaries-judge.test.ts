// How the oracle judges a phase's canaries (canaries.ts, judgeCanaries; pure logic over a
// report): a mutant that passes beside its test that passed is VACUOUS_TEST; one that passes
// beside its test that failed is what honest code that gets the test wrong does (an assertion
// turned over), as the base commit does for a hidden test in a baseline's run without a diff.
import { describe, expect, it } from 'vitest';
import { canaryLines, judgeCanaries, type CanaryRecord } from '../../src/oracle/canaries.js';
import type { TestStatus } from '../../src/oracle/report.js';

const record = (): CanaryRecord => ({
  mutants: [
    {
      id: 'test_pk_none_alt (delete.tests.FastDeleteTests)',
      test: 'test_pk_none (delete.tests.FastDeleteTests)',
      mutation: 'assertIsNone -> assertIsNotNone',
    },
  ],
  uncovered: [],
  sentinels: [],
  sentinelsWhy: 'the runner writes none into the test files',
  error: null,
});

const judge = (canaries: CanaryRecord, test: TestStatus | null, mutant: TestStatus) =>
  judgeCanaries(
    canaries,
    new Map([
      ...(test === null ? [] : [['test_pk_none (delete.tests.FastDeleteTests)', test] as const]),
      ['test_pk_none_alt (delete.tests.FastDeleteTests)', mutant],
    ]),
    new Map(),
  );

describe('judging the canaries', () => {
  it('is VACUOUS_TEST when a mutant passed beside its test that passed, and drops its id', () => {
    const canaries = record();
    const judged = judge(canaries, 'passed', 'passed');
    expect(judged.vacuous).toBe(
      'VACUOUS_TEST: a mutant that no honest code can pass passed: test_pk_none (delete.tests.FastDeleteTests) (assertIsNone -> assertIsNotNone)',
    );
    expect([...judged.tests.keys()]).toEqual(['test_pk_none (delete.tests.FastDeleteTests)']);
    expect(canaryLines(canaries)[1]).toMatch(/: passed \(VACUOUS_TEST\)$/);
  });

  it('holds when a mutant passed beside its test that failed or was not reported, and the log says why', () => {
    for (const test of ['failed', 'error', 'skipped', null] as const) {
      const canaries = record();
      const judged = judge(canaries, test, 'passed');
      expect(judged.vacuous, String(test)).toBeNull();
      expect(judged.tests.has('test_pk_none_alt (delete.tests.FastDeleteTests)')).toBe(false);
      expect(canaryLines(canaries)[1]).toBe(
        `  canary test_pk_none_alt (delete.tests.FastDeleteTests) of test_pk_none (delete.tests.FastDeleteTests): assertIsNone -> assertIsNotNone: passed (its test: ${test ?? 'not reported'}; honest code that fails a test can pass its mutant)`,
      );
    }
  });

  it('holds when the mutant failed, whatever its test did', () => {
    for (const test of ['passed', 'failed'] as const) {
      expect(judge(record(), test, 'failed').vacuous).toBeNull();
    }
  });
});
