// Task classes from attempt rows: a task of one row has that row's class; a task of several
// follows the rule of src/results/summary.ts (invalid wins, then the lowest scored sample,
// then error, else pending).
import { describe, expect, it } from 'vitest';
import { taskClasses, type OutcomeClass, type ReportRow } from '../../src/results/index.js';
import { reportRow } from '../helpers/results.js';

function row(task: string, attempt: number, cls: OutcomeClass | null): ReportRow {
  return reportRow({
    task,
    attempt,
    jobIds: [attempt],
    status: cls === null ? 'queued' : 'done',
    class: cls,
    verdict: null,
    reason: null,
  });
}

describe('taskClasses', () => {
  it('gives a task of one row its class, in first-seen order', () => {
    const classes = taskClasses([
      row('c', 1, 'error'),
      row('a', 1, 'resolved'),
      row('b', 1, null),
      row('d', 1, 'invalid_task'),
      row('e', 1, 'unresolved'),
    ]);
    expect([...classes]).toEqual([
      ['c', 'error'],
      ['a', 'resolved'],
      ['b', null],
      ['d', 'invalid_task'],
      ['e', 'unresolved'],
    ]);
  });

  it('applies the rule to a task of several rows, keeping its first-seen place', () => {
    const classes = taskClasses([
      row('s', 2, 'resolved'),
      row('one', 1, 'unresolved'),
      row('s', 1, 'unresolved'),
      row('s', 3, 'error'),
      row('i', 1, 'resolved'),
      row('i', 2, 'invalid_task'),
      row('e', 1, 'error'),
      row('e', 2, null),
      row('p', 1, null),
      row('p', 2, null),
    ]);
    expect([...classes]).toEqual([
      ['s', 'unresolved'],
      ['one', 'unresolved'],
      ['i', 'invalid_task'],
      ['e', 'error'],
      ['p', null],
    ]);
  });
});
