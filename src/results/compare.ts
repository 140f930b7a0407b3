// `report A --compare B`: A's tasks against the reference batch B's, paired by task id, each
// task by its class (see summary.ts). Only tasks scored (resolved or unresolved) in both
// batches are paired; the rest are counted apart, never guessed.
import { taskClasses } from './summary.js';
import type { ReportRow } from './rows.js';
import {
  mcnemarExact,
  pairedDifference,
  type PairedCounts,
  type PairedDifference,
} from './stats.js';

export type Flip = 'pass_to_fail' | 'fail_to_pass' | 'both_pass' | 'both_fail';

export interface Comparison extends PairedCounts {
  /** The batch compared, and the reference it is compared with (`--compare`). */
  batch: string;
  reference: string;
  paired: number;
  /** Tasks in only one batch, or not scored in one of them. */
  unpaired: number;
  /** Exact McNemar two-sided p on pass→fail against fail→pass. */
  mcnemarP: number;
  /** rate(batch) − rate(reference) over the paired tasks, with its 95 % interval. */
  difference: PairedDifference | null;
  /** Each paired task's flip, by task id (sorted). */
  tasks: Array<{ task: string; flip: Flip }>;
}

export function compareBatches(
  batch: string,
  rows: readonly ReportRow[],
  reference: string,
  referenceRows: readonly ReportRow[],
): Comparison {
  const now = taskClasses(rows);
  const before = taskClasses(referenceRows);
  const counts: PairedCounts = { bothPass: 0, passToFail: 0, failToPass: 0, bothFail: 0 };
  const tasks: Comparison['tasks'] = [];
  const all = new Set([...now.keys(), ...before.keys()]);
  for (const task of [...all].sort()) {
    const a = before.get(task);
    const b = now.get(task);
    const scoredBoth =
      (a === 'resolved' || a === 'unresolved') && (b === 'resolved' || b === 'unresolved');
    if (!scoredBoth) continue;
    const flip: Flip =
      a === 'resolved'
        ? b === 'resolved'
          ? 'both_pass'
          : 'pass_to_fail'
        : b === 'resolved'
          ? 'fail_to_pass'
          : 'both_fail';
    if (flip === 'both_pass') counts.bothPass++;
    else if (flip === 'pass_to_fail') counts.passToFail++;
    else if (flip === 'fail_to_pass') counts.failToPass++;
    else counts.bothFail++;
    tasks.push({ task, flip });
  }
  return {
    batch,
    reference,
    ...counts,
    paired: tasks.length,
    unpaired: all.size - tasks.length,
    mcnemarP: mcnemarExact(counts.passToFail, counts.failToPass),
    difference: pairedDifference(counts),
    tasks,
  };
}
