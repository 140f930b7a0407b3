import { describe, expect, it } from 'vitest';
import { classify, type StateReports } from '../../src/derive/classify.js';
import type { TestStatus } from '../../src/oracle/index.js';

type Row = Record<string, TestStatus>;
const runs = (...rows: Row[]) => rows.map((row) => new Map(Object.entries(row)));

function reports(base: Row[], gold: Row[], hidden: Row[], both: Row[]): StateReports {
  return { base: runs(...base), gold: runs(...gold), hidden: runs(...hidden), both: runs(...both) };
}

describe('classify', () => {
  it('lists a test passing in all four states as existing and one fixed by gold as hidden', () => {
    const r = classify(
      reports(
        [{ a: 'passed' }],
        [{ a: 'passed' }],
        [{ a: 'passed', h: 'failed' }],
        [{ a: 'passed', h: 'passed' }],
      ),
    );
    expect(r.existing).toEqual(['a']);
    expect(r.hidden).toEqual(['h']);
    expect(r.broken).toEqual([]);
  });

  it('leaves skipped (xfail) tests and tests deleted by the hidden patch out of both lists', () => {
    const r = classify(
      reports(
        [{ x: 'passed', d: 'passed' }],
        [{ x: 'passed', d: 'passed' }],
        [{ x: 'skipped' }],
        [{ x: 'skipped' }],
      ),
    );
    expect(r).toMatchObject({ existing: [], hidden: [], broken: [], dropped: 2 });
    expect(r.leftOut).toEqual([
      { id: 'd', outcomes: { base: 'passed', gold: 'passed', hidden: 'absent', both: 'absent' } },
      { id: 'x', outcomes: { base: 'passed', gold: 'passed', hidden: 'skipped', both: 'skipped' } },
    ]);
  });

  it('drops a test whose outcome varies between runs of a state, and names the state', () => {
    const pass = { f: 'passed' as const };
    const r = classify(reports([pass, pass], [pass, { f: 'failed' }], [pass, pass], [pass, pass]));
    expect(r.flaky).toEqual([{ id: 'f', state: 'gold', outcomes: ['passed', 'failed'] }]);
    expect(r.existing).toEqual([]);
  });

  it('reports a test that passes without the fix and fails or errors with it as broken', () => {
    const r = classify(
      reports(
        [{ b: 'passed', e: 'passed' }],
        [{ b: 'failed', e: 'passed' }],
        [{ b: 'passed', e: 'passed' }],
        [{ b: 'failed', e: 'error' }],
      ),
    );
    expect(r.broken).toEqual([
      { id: 'b', state: 'gold', status: 'failed' },
      { id: 'e', state: 'both', status: 'error' },
    ]);
  });
});
