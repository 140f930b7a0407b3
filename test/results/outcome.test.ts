// The outcome class of every finished grade and solve: each verdict reason, each status, and
// each failure code, against the rules of docs/results.md.
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';
import { REASONS } from '../../src/oracle/verdict.js';
import { JOB_KINDS, JOB_STATUSES } from '../../src/queue/constants.js';
import { OUTCOME_CLASSES, outcomeOf, type OutcomeClass } from '../../src/results/outcome.js';

const grade = (result: unknown) =>
  outcomeOf({ kind: 'grade', status: 'done', result, errorCode: null });
const solve = (result: unknown) =>
  outcomeOf({ kind: 'solve', status: 'done', result, errorCode: null });

/** What every grade reason means, written out by hand (a new reason must be added here). */
const GRADE_CLASS: Record<(typeof REASONS)[number], OutcomeClass> = {
  PASS: 'resolved',
  APPLY_FAILED: 'unresolved',
  EXISTING_FAILED: 'unresolved',
  HIDDEN_FAILED: 'unresolved',
  TESTS_MISSING: 'unresolved',
  TIMEOUT: 'unresolved',
  OOM: 'unresolved',
  REPORT_INVALID: 'unresolved',
  PATCH_TOO_LARGE: 'unresolved',
  PATCH_REJECTED: 'unresolved',
  EMPTY_PATCH: 'unresolved',
  TAMPERED: 'unresolved',
  TAMPER_SUSPECTED: 'unresolved',
  INFRA_ERROR: 'error',
  CANCELLED: 'error',
  // Baseline-only reasons never end a grade; were one to, it is not the candidate's fault.
  BASELINE_HIDDEN_PASSED: 'error',
  BASELINE_EXISTING_FAILED: 'error',
  BASELINE_HIDDEN_MISSING: 'error',
  BASELINE_EXISTING_MISSING: 'error',
  GOLD_FAILED: 'error',
  FLAKY: 'error',
  IMPOSSIBLE_GOLD_PASSED: 'error',
};

describe('outcomeOf', () => {
  it('names the four classes of the contract', () => {
    expect(OUTCOME_CLASSES).toEqual(['resolved', 'unresolved', 'error', 'invalid_task']);
  });

  it('classes a done grade by its reason, for every reason there is', () => {
    for (const reason of REASONS) {
      const verdict = reason === 'PASS' ? 'PASS' : 'FAIL';
      expect({ reason, outcome: grade({ verdict, reason }) }).toEqual({
        reason,
        outcome: GRADE_CLASS[reason],
      });
    }
  });

  it('classes any grade of a quarantined task as invalid_task, a PASS included', () => {
    const quarantined = { reason: 'BASELINE_HIDDEN_PASSED', job: 4 };
    expect(grade({ verdict: 'PASS', reason: 'PASS', quarantined })).toBe('invalid_task');
    expect(grade({ verdict: 'FAIL', reason: 'HIDDEN_FAILED', quarantined })).toBe('invalid_task');
    expect(grade({ verdict: 'FAIL', reason: 'EMPTY_PATCH', quarantined })).toBe('invalid_task');
    expect(grade({ verdict: 'PASS', reason: 'PASS', quarantined: null })).toBe('resolved');
  });

  it('classes a done grade without a usable result as error', () => {
    expect(grade(null)).toBe('error');
    expect(grade({ verdict: 'FAIL' })).toBe('error');
    expect(grade({ verdict: 'FAIL', reason: 'SOMETHING_NEW' })).toBe('error');
  });

  it('classes a done solve: FAIL is the solver’s, a provider error the machine’s, PASS its grade’s', () => {
    for (const reason of [
      'SOLVER_TURN_LIMIT',
      'SOLVER_TOOL_CALL_LIMIT',
      'SOLVER_TOKEN_LIMIT',
      'SOLVER_TIMEOUT',
      'SOLVER_PROTOCOL_ERROR',
      'PATCH_REJECTED',
      'EMPTY_PATCH',
    ]) {
      expect({ reason, outcome: solve({ verdict: 'FAIL', reason }) }).toEqual({
        reason,
        outcome: 'unresolved',
      });
    }
    expect(solve({ verdict: 'FAIL', reason: 'SOLVER_PROVIDER_ERROR' })).toBe('error');
    expect(solve({ verdict: 'PASS', reason: 'SOLVED' })).toBeNull();
  });

  it('classes a failed solve of a quarantined task as invalid_task, whatever its reason', () => {
    const quarantined = { reason: 'BASELINE_HIDDEN_PASSED', job: 4 };
    for (const reason of ['SOLVER_TURN_LIMIT', 'EMPTY_PATCH', 'SOLVER_PROVIDER_ERROR']) {
      expect(solve({ verdict: 'FAIL', reason, quarantined })).toBe('invalid_task');
    }
    expect(solve({ verdict: 'FAIL', reason: 'SOLVER_TURN_LIMIT', quarantined: null })).toBe(
      'unresolved',
    );
    // A solve that finished is still judged by its grade (which records the quarantine too).
    expect(solve({ verdict: 'PASS', reason: 'SOLVED', quarantined })).toBeNull();
  });

  it('classes a failed grade or solve as error, or invalid_task when the bundle is invalid', () => {
    for (const kind of ['grade', 'solve'] as const) {
      for (const code of ERROR_CODES) {
        const expected = code === 'BUNDLE_INVALID' ? 'invalid_task' : 'error';
        expect({
          kind,
          code,
          outcome: outcomeOf({ kind, status: 'failed', result: null, errorCode: code }),
        }).toEqual({ kind, code, outcome: expected });
      }
      expect(outcomeOf({ kind, status: 'failed', result: null, errorCode: null })).toBe('error');
    }
  });

  it('gives no class while a job is queued or running, nor to a cancelled one', () => {
    for (const kind of ['grade', 'solve'] as const) {
      for (const status of ['queued', 'running', 'cancelled'] as const) {
        const result = { verdict: 'PASS', reason: 'PASS' };
        expect(outcomeOf({ kind, status, result, errorCode: 'CANCELLED' })).toBeNull();
      }
    }
  });

  it('gives no class to the other kinds, whatever their status', () => {
    for (const kind of JOB_KINDS.filter((k) => k !== 'grade' && k !== 'solve')) {
      for (const status of JOB_STATUSES) {
        const result = { verdict: 'FAIL', reason: 'HIDDEN_FAILED' };
        expect(outcomeOf({ kind, status, result, errorCode: 'DOCKER_ERROR' })).toBeNull();
      }
    }
  });
});
