// The ID lists of a derived bundle, from what the runner reported in the four states
// (docs/suites.md): never guessed.
//
//   existing = passed in all four states;
//   hidden   = passed in base + hidden + gold, and did not pass in base + hidden;
//   flaky    = an outcome (a status, or absence) that differs between runs of one state:
//              dropped from both lists and listed;
//   broken   = passed without the fix (base and base + hidden) but failed or errored with it:
//              the gold patch breaks an existing test, which is an error.
// Skipped (and xfail, which runners report as skipped) tests pass nowhere, so they are in
// neither list.
import type { TestStatus } from '../oracle/index.js';

export const STATES = ['base', 'gold', 'hidden', 'both'] as const;
export type State = (typeof STATES)[number];

/** What each state means, for messages. */
export const STATE_NAMES: Record<State, string> = {
  base: 'base',
  gold: 'base + gold',
  hidden: 'base + hidden',
  both: 'base + hidden + gold',
};

/** Each state's reports, one per repeat. */
export type StateReports = Record<State, Array<Map<string, TestStatus>>>;

export interface Classified {
  existing: string[];
  hidden: string[];
  /** Each flaky test with the state whose runs disagreed and the outcomes seen. */
  flaky: Array<{ id: string; state: State; outcomes: string[] }>;
  /** Tests the gold patch breaks, with the state and status that shows it. */
  broken: Array<{ id: string; state: State; status: string }>;
  /** Tests seen somewhere that are in neither list and neither flaky nor broken. */
  dropped: number;
  /** The first of those (at most LEFT_OUT_SHOWN), each with its outcome in every state. */
  leftOut: Array<{ id: string; outcomes: Record<State, string> }>;
}

/** How many left-out tests a result names (the count covers them all). */
export const LEFT_OUT_SHOWN = 20;

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

export function classify(reports: StateReports): Classified {
  const ids = new Set<string>();
  for (const state of STATES)
    for (const run of reports[state]) for (const id of run.keys()) ids.add(id);
  const result: Classified = {
    existing: [],
    hidden: [],
    flaky: [],
    broken: [],
    dropped: 0,
    leftOut: [],
  };
  const leave = (id: string, outcome: Partial<Record<State, string>>) => {
    result.dropped += 1;
    if (result.leftOut.length < LEFT_OUT_SHOWN) {
      const outcomes = Object.fromEntries(STATES.map((s) => [s, outcome[s] ?? 'absent'])) as Record<
        State,
        string
      >;
      result.leftOut.push({ id, outcomes });
    }
  };
  for (const id of [...ids].sort(byteOrder)) {
    const outcome: Partial<Record<State, string>> = {};
    let flaky = false;
    for (const state of STATES) {
      const seen = reports[state].map((run) => run.get(id) ?? 'absent');
      const distinct = [...new Set(seen)];
      if (distinct.length > 1) {
        result.flaky.push({ id, state, outcomes: distinct });
        flaky = true;
        break;
      }
      outcome[state] = distinct[0] ?? 'absent';
    }
    if (flaky) continue;
    const passed = (state: State) => outcome[state] === 'passed';
    if (STATES.every(passed)) result.existing.push(id);
    else if (passed('both') && !passed('hidden')) result.hidden.push(id);
    else if (passed('base') && passed('hidden')) {
      const bad = (['gold', 'both'] as const).find(
        (s) => outcome[s] === 'failed' || outcome[s] === 'error',
      );
      if (bad !== undefined) result.broken.push({ id, state: bad, status: outcome[bad] ?? '' });
      else leave(id, outcome);
    } else leave(id, outcome);
  }
  return result;
}
