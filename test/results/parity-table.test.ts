import { describe, expect, it } from 'vitest';
import type { Parity } from '../../src/results/parity.js';
import { labelsOf, parityRow, parityTable, totalRow } from '../../src/results/parity-table.js';

type Report = Pick<Parity, 'agreement' | 'disagreements' | 'notComparable'>;

function report(
  counts: Parity['agreement']['counts'],
  notComparable: Array<[string, string, string]>,
  kappa: number | null = null,
): Report {
  const comparable =
    counts.bothResolved +
    counts.bothUnresolved +
    counts.resolvedHereOnly +
    counts.resolvedThereOnly;
  const agree = counts.bothResolved + counts.bothUnresolved;
  return {
    agreement: {
      comparable,
      agree,
      rate: comparable === 0 ? null : agree / comparable,
      kappa,
      kappaNote: null,
      counts,
    },
    disagreements: Array.from(
      { length: counts.resolvedHereOnly + counts.resolvedThereOnly },
      (_, i) => ({
        instance: `d-${i}`,
        task: `d-${i}`,
        proctor: 'unresolved' as const,
        reason: 'TIMEOUT',
        detail: null,
        official: 'resolved' as const,
        tests: null,
        testsNote: null,
        testsFrom: null,
      }),
    ),
    notComparable: notComparable.map(([instance, proctor, why]) => ({
      instance,
      task: proctor === 'not_graded' ? null : instance,
      proctor,
      official: 'unresolved' as const,
      why,
    })),
  };
}

describe('the parity table', () => {
  it('takes the labels of one submission from the evaluations file, over the chosen rows only', () => {
    const evaluations = [
      { instance_id: 'a-1', resolved_by: [{ name: 'm' }, { name: 'other' }] },
      { instance_id: 'a-2', resolved_by: [{ name: 'other' }] },
      { instance_id: 'a-3' },
      { instance_id: 'b-9', resolved_by: [{ name: 'm' }] },
    ];
    const predictions = [
      { instance_id: 'a-1', model_patch: 'diff --git a/x b/x\n' },
      { instance_id: 'a-2', model_patch: '' },
      { instance_id: 'a-3', model_patch: null },
      { instance_id: 'a-4', model_patch: '  \n' },
    ];
    expect(labelsOf('m', evaluations, predictions, ['a-1', 'a-2', 'a-3', 'a-4', 'a-5'])).toEqual({
      resolved: ['a-1'],
      // a-5 has no prediction at all: not "no generation", simply not submitted.
      no_generation: ['a-2', 'a-3', 'a-4'],
    });
  });

  it('counts graded and valid from the instances not comparable, and groups their reasons', () => {
    const row = parityRow(
      'coder',
      10,
      report(
        { bothResolved: 2, bothUnresolved: 4, resolvedHereOnly: 0, resolvedThereOnly: 1 },
        [
          ['e-1', 'unresolved', 'empty there'],
          ['q-1', 'invalid_task', 'invalid_task here'],
          ['n-1', 'not_graded', 'not graded here'],
        ],
        0.5,
      ),
    );
    expect(row).toMatchObject({
      predictions: 10,
      graded: 9,
      valid: 8,
      comparable: 7,
      agree: 6,
      kappa: 0.5,
      disagreements: 1,
      notComparable: [
        { why: 'empty there', count: 1 },
        { why: 'invalid_task here', count: 1 },
        { why: 'not graded here', count: 1 },
      ],
    });
  });

  it("sums the submissions and computes kappa again from the summed counts, as docs/results.md's last row", () => {
    // The published figures: 32 both resolved, 158 both unresolved, 2 resolved there only.
    const a = parityRow(
      'a',
      82,
      report({ bothResolved: 20, bothUnresolved: 100, resolvedHereOnly: 0, resolvedThereOnly: 1 }, [
        ['e-1', 'unresolved', 'empty there'],
      ]),
    );
    const b = parityRow(
      'b',
      67,
      report({ bothResolved: 12, bothUnresolved: 58, resolvedHereOnly: 0, resolvedThereOnly: 1 }, [
        ['e-2', 'unresolved', 'empty there'],
        ['q-2', 'invalid_task', 'invalid_task here'],
      ]),
    );
    const all = totalRow([a, b]);
    expect(all).toMatchObject({ predictions: 149, comparable: 192, agree: 190, disagreements: 2 });
    expect(all.kappa?.toFixed(3)).toBe('0.963');
    expect(all.notComparable).toEqual([
      { why: 'empty there', count: 2 },
      { why: 'invalid_task here', count: 1 },
    ]);
    const lines = parityTable([a, b]);
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe(
      '| submission | predictions | graded | valid | comparable | agree | κ | disagreements | not comparable (why) |',
    );
    expect(lines[2]).toContain('| a | 82 | 82 | 82 | 121 | 120 (99.2 %) |');
    expect(lines[4]).toBe(
      '| all | 149 | 149 | 148 | 192 | 190 (99.0 %) | 0.963 | 2 | counts: both resolved 32, both unresolved 158, resolved here only 0, resolved there only 2 |',
    );
  });

  it('prints no agreement and no kappa where nothing was comparable, and no total for one submission', () => {
    const none = parityRow(
      'none',
      1,
      report({ bothResolved: 0, bothUnresolved: 0, resolvedHereOnly: 0, resolvedThereOnly: 0 }, [
        ['n-1', 'not_graded', 'not graded here'],
      ]),
    );
    expect(parityTable([none])).toEqual([
      '| submission | predictions | graded | valid | comparable | agree | κ | disagreements | not comparable (why) |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      '| none | 1 | 0 | 0 | 0 | - | - | 0 | 1 not graded here |',
    ]);
  });
});
