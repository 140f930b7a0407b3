// How the oracle judges a phase's canaries (canaries.ts, judgeCanaries; pure logic over a
// report): a mutant that passes is VACUOUS_TEST, but beside its test that the phase declares
// and that failed or erred, which is what honest code that gets the test wrong does for an
// assertion turned over (the base commit for a hidden test, in a baseline's run without a
// diff) and fails the grade anyway.
import { describe, expect, it } from 'vitest';
import { canaryLines, judgeCanaries, type CanaryRecord } from '../../src/oracle/canaries.js';
import type { TestStatus } from '../../src/oracle/report.js';

const TEST = 'test_pk_none (delete.tests.FastDeleteTests)';
const MUTANT = 'test_pk_none_alt (delete.tests.FastDeleteTests)';

const record = (): CanaryRecord => ({
  mutants: [{ id: MUTANT, test: TEST, mutation: 'assertIsNone -> assertIsNotNone' }],
  uncovered: [],
  sentinels: [],
  sentinelsWhy: 'the runner writes none into the test files',
  error: null,
});

const judge = (
  canaries: CanaryRecord,
  test: TestStatus | null,
  mutant: TestStatus,
  declared: string[] = [TEST],
) =>
  judgeCanaries(
    canaries,
    new Map([...(test === null ? [] : [[TEST, test] as const]), [MUTANT, mutant]]),
    new Map(),
    declared,
  );

const VACUOUS = `VACUOUS_TEST: a mutant that no honest code can pass passed: ${TEST} (assertIsNone -> assertIsNotNone)`;

describe('judging the canaries', () => {
  it('is VACUOUS_TEST when a mutant passed beside its test that passed, and drops its id', () => {
    const canaries = record();
    const judged = judge(canaries, 'passed', 'passed');
    expect(judged.vacuous).toBe(VACUOUS);
    expect([...judged.tests.keys()]).toEqual([TEST]);
    expect(canaryLines(canaries)[1]).toMatch(/: passed \(VACUOUS_TEST\)$/);
  });

  it('holds when a mutant passed beside its declared test that failed or erred, and the log says why', () => {
    for (const test of ['failed', 'error'] as const) {
      const canaries = record();
      const judged = judge(canaries, test, 'passed');
      expect(judged.vacuous, test).toBeNull();
      expect(judged.tests.has(MUTANT)).toBe(false);
      expect(canaryLines(canaries)[1]).toBe(
        `  canary ${MUTANT} of ${TEST}: assertIsNone -> assertIsNotNone: passed (its test ${test}: honest code that fails a test can pass its mutant)`,
      );
    }
  });

  it('is VACUOUS_TEST beside a test the phase does not declare and no earlier phase failed (an existing test sampled in the hidden phase), even one that failed here', () => {
    expect(judge(record(), 'failed', 'passed', []).vacuous).toBe(VACUOUS);
    const passedEarlier = judgeCanaries(
      record(),
      new Map([
        [TEST, 'failed'],
        [MUTANT, 'passed'],
      ]),
      new Map(),
      [],
      new Set(['another test']),
    );
    expect(passedEarlier.vacuous).toBe(VACUOUS);
  });

  it('holds beside a test an earlier phase of the grade failed (a sampled existing test the candidate broke), whether or not it ran here', () => {
    for (const test of ['failed', null] as const) {
      const canaries = record();
      const judged = judgeCanaries(
        canaries,
        new Map([...(test === null ? [] : [[TEST, test] as const]), [MUTANT, 'passed' as const]]),
        new Map(),
        [],
        new Set([TEST]),
      );
      expect(judged.vacuous, String(test)).toBeNull();
      expect(judged.tests.has(MUTANT)).toBe(false);
    }
  });

  it('is VACUOUS_TEST beside a declared test that was skipped or not reported', () => {
    for (const test of ['skipped', null] as const) {
      expect(judge(record(), test, 'passed').vacuous, String(test)).toBe(VACUOUS);
    }
  });

  it('holds when the mutant failed, whatever its test did', () => {
    for (const test of ['passed', 'failed'] as const) {
      expect(judge(record(), test, 'failed').vacuous).toBeNull();
    }
  });
});
