// SWE-bench's per-instance report from a row and the declared IDs.
import { describe, expect, it } from 'vitest';
import { instanceReport, type ReportRow } from '../../src/results/index.js';
import { reportRow } from '../helpers/results.js';

const declared = { existing: ['e1', 'e2'], hidden: ['h1', 'h2', 'h3'] };

function row(verdict: 'PASS' | 'FAIL', reason: string, detail = ''): ReportRow {
  return reportRow({
    instanceId: 'org__t',
    class: verdict === 'PASS' ? 'resolved' : 'unresolved',
    verdict,
    reason,
    detail,
  });
}

describe('instanceReport', () => {
  it('lists every declared ID as a success for a PASS', () => {
    expect(instanceReport(row('PASS', 'PASS'), declared)).toEqual({
      patch_is_None: false,
      patch_exists: true,
      patch_successfully_applied: true,
      resolved: true,
      tests_status: {
        FAIL_TO_PASS: { success: ['h1', 'h2', 'h3'], failure: [] },
        PASS_TO_PASS: { success: ['e1', 'e2'], failure: [] },
      },
    });
  });

  it('splits the hidden IDs by the ones the verdict names, when it names them all', () => {
    const r = instanceReport(
      row('FAIL', 'HIDDEN_FAILED', 'hidden phase: 1 test not passed: h2 (failed)'),
      declared,
    );
    expect(r.tests_status).toEqual({
      FAIL_TO_PASS: { success: ['h1', 'h3'], failure: ['h2'] },
      PASS_TO_PASS: { success: ['e1', 'e2'], failure: [] },
    });
    expect(r.resolved).toBe(false);
  });

  it('counts unnamed IDs as failures when the verdict lists only some', () => {
    const r = instanceReport(
      row('FAIL', 'HIDDEN_FAILED', 'hidden phase: 9 tests not passed: h2 (failed), … and 8 more'),
      declared,
    );
    expect(r.tests_status.FAIL_TO_PASS).toEqual({ success: [], failure: ['h1', 'h2', 'h3'] });
  });

  it('marks an unapplied or empty patch', () => {
    const apply = instanceReport(row('FAIL', 'APPLY_FAILED', 'does not apply'), declared);
    expect(apply).toMatchObject({ patch_exists: true, patch_successfully_applied: false });
    expect(apply.tests_status.PASS_TO_PASS.failure).toEqual(['e1', 'e2']);
    const empty = instanceReport(row('FAIL', 'EMPTY_PATCH'), declared);
    expect(empty).toMatchObject({
      patch_is_None: true,
      patch_exists: false,
      patch_successfully_applied: false,
    });
  });
});
