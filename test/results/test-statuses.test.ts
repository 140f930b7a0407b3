// The stored form of per-test statuses: grouped, bounded, read back; and SWE-bench's view of
// them by grading.py's rules.
import { describe, expect, it } from 'vitest';
import type { DeclaredTests } from '../../src/oracle/index.js';
import {
  decodeTestStatuses,
  encodeTestStatuses,
  expandTestStatuses,
  summariseTestStatuses,
  swebenchSplit,
} from '../../src/results/index.js';

const reported = { hidden: 'reported', existing: 'reported' } as const;

function tests(list: DeclaredTests['tests']): DeclaredTests {
  return { lists: reported, tests: list };
}

describe('stored per-test statuses', () => {
  it('group IDs by list, outcome and SWE-bench status, and read back to the same tests', () => {
    const input = tests([
      { id: 'a', list: 'hidden', outcome: 'passed', swebench: 'PASSED' },
      { id: 'b', list: 'hidden', outcome: 'passed', swebench: 'PASSED' },
      { id: 'c', list: 'hidden', outcome: 'failed' },
      { id: 'd', list: 'existing', outcome: 'missing' },
    ]);
    const doc = encodeTestStatuses(input);
    expect(doc.hidden.groups).toEqual([
      { outcome: 'passed', swebench: 'PASSED', count: 2, ids: ['a', 'b'] },
      { outcome: 'failed', swebench: null, count: 1, ids: ['c'] },
    ]);
    const back = decodeTestStatuses(1, JSON.stringify(doc));
    expect(expandTestStatuses(back)).toEqual(input.tests);
    expect(summariseTestStatuses(back, 1)).toMatchObject({
      notPassed: [{ id: 'c', list: 'hidden', outcome: 'failed' }],
      notPassedCount: 2,
      unnamed: 0,
    });
  });

  it("drop the largest groups' IDs past the byte bound, keeping their counts, and recover them from the declared IDs", () => {
    const passed = Array.from({ length: 1_000 }, (_, i) => `test_${i}`);
    const input = tests([
      ...passed.map((id) => ({ id, list: 'existing' as const, outcome: 'passed' as const })),
      { id: 'test_broken', list: 'existing', outcome: 'error' },
      { id: 'h', list: 'hidden', outcome: 'passed' },
    ]);
    const doc = encodeTestStatuses(input, 2_000);
    expect(Buffer.byteLength(JSON.stringify(doc))).toBeLessThanOrEqual(2_000);
    expect(doc.existing.groups[0]).toEqual({
      outcome: 'passed',
      swebench: null,
      count: 1_000,
      ids: null,
    });
    expect(doc.existing.groups[1]?.ids).toEqual(['test_broken']);
    expect(summariseTestStatuses(doc).unnamed).toBe(1_000);
    const declared = [...passed, 'test_broken'];
    const split = swebenchSplit(doc, 'existing', declared);
    expect(split?.get('test_7')).toBe(true);
    expect(split?.get('test_broken')).toBe(false);
    // Without the declared IDs, or when they no longer match the count, it cannot be told.
    expect(swebenchSplit(doc, 'existing')).toBeNull();
    expect(swebenchSplit(doc, 'existing', [...declared, 'test_new'])).toBeNull();
  });

  it("count success as SWE-bench's grading.py does for FAIL_TO_PASS and PASS_TO_PASS", () => {
    const statuses = ['PASSED', 'XFAIL', 'SKIPPED', 'FAILED', 'ERROR', 'ABSENT'] as const;
    const doc = encodeTestStatuses(
      tests(
        statuses.flatMap((s) => [
          { id: `h_${s}`, list: 'hidden' as const, outcome: 'passed' as const, swebench: s },
          { id: `e_${s}`, list: 'existing' as const, outcome: 'passed' as const, swebench: s },
        ]),
      ),
    );
    const f2p = swebenchSplit(doc, 'hidden');
    const p2p = swebenchSplit(doc, 'existing');
    expect(statuses.map((s) => f2p?.get(`h_${s}`))).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
    expect(statuses.map((s) => p2p?.get(`e_${s}`))).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
    // Without a SWE-bench status, Proctor's maps: skipped fails FAIL_TO_PASS, missing is ABSENT.
    const plain = encodeTestStatuses(
      tests([
        { id: 's', list: 'hidden', outcome: 'skipped' },
        { id: 'm', list: 'existing', outcome: 'missing' },
        { id: 'k', list: 'existing', outcome: 'skipped' },
      ]),
    );
    expect([...(swebenchSplit(plain, 'hidden') ?? [])]).toEqual([['s', false]]);
    expect([...(swebenchSplit(plain, 'existing') ?? [])]).toEqual([
      ['m', false],
      ['k', true],
    ]);
  });

  it('count every declared test of a list without a usable report a failure', () => {
    const doc = encodeTestStatuses({
      lists: { hidden: 'not_run', existing: 'no_report' },
      tests: [],
    });
    expect([...(swebenchSplit(doc, 'hidden', ['a']) ?? [])]).toEqual([['a', false]]);
    expect(swebenchSplit(doc, 'existing')).toBeNull();
  });

  it('refuse a stored document that is not one, naming the job in one line', () => {
    for (const text of ['{', '{"v":2}', JSON.stringify({ v: 1, hidden: {}, existing: {} })]) {
      expect(() => decodeTestStatuses(42, text)).toThrow(
        /^job 42: its stored test statuses are not readable \(/,
      );
    }
  });
});
