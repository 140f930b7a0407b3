// What became of each declared test ID in an evaluation: its list (hidden or existing), its
// outcome (Proctor's status, or `missing` from the report) and, when the report gave one, the
// status SWE-bench's log parser would have recorded. Built once per evaluation from its
// checked phases (the verdict's inputs, read, never re-decided), so that a result can keep
// every declared test's status and not only its verdict (results/test-statuses.ts stores it).
import type { Bundle } from './bundle.js';
import { resolveCase, statusMap, type RecordedStatus } from '../grading/swebench-rules.js';
import type { SwebenchStatus } from './report.js';
import {
  declaredOutcomes,
  type GradePhases,
  type PhaseOutcome,
  type TestOutcome,
} from './verdict.js';

export type TestList = 'hidden' | 'existing';
export const TEST_LISTS: readonly TestList[] = ['hidden', 'existing'];

/**
 * How a list's phase ended, for the tests it holds: `reported` (a usable report: every
 * declared ID has an outcome), `no_report` (the phase ran without a usable report: timed out
 * before writing one, malformed, tampered with) or `not_run` (the evaluation ended before it).
 */
export type ListState = 'reported' | 'no_report' | 'not_run';

export interface DeclaredTest {
  id: string;
  list: TestList;
  outcome: TestOutcome;
  /** What the report said SWE-bench's parser would record; absent when it did not say. */
  swebench?: SwebenchStatus;
}

export interface DeclaredTests {
  lists: Record<TestList, ListState>;
  /** Hidden then existing, each in its list's declared order, each ID once per list. */
  tests: DeclaredTest[];
}

function stateOf(phase: PhaseOutcome | undefined): ListState {
  if (phase === undefined) return 'not_run';
  return phase.check === null ? 'no_report' : 'reported';
}

/**
 * Each declared ID's outcome from the phases decideGrade saw (null when the evaluation ended
 * before a phase ran). A list whose phase has no usable report has no tests here; its state
 * says why.
 */
export function declaredTests(
  bundle: Pick<Bundle, 'existingIds' | 'hiddenIds'>,
  phases: GradePhases | null,
): DeclaredTests {
  const byList: Record<TestList, PhaseOutcome | undefined> = {
    hidden: phases?.hidden,
    existing: phases?.existing,
  };
  const lists = { hidden: stateOf(byList.hidden), existing: stateOf(byList.existing) };
  const tests: DeclaredTest[] = [];
  for (const list of TEST_LISTS) {
    const phase = byList[list];
    if (phase?.check == null) continue;
    const outcomes = declaredOutcomes(phase.check);
    // SWE-bench's status map of the report, for IDs the report lacks (a parametrised ID the
    // dataset cut short resolves as grading.py's _resolve_case resolves it).
    let map: Map<string, RecordedStatus> | undefined;
    const resolved = (id: string): SwebenchStatus | undefined => {
      if (phase.report === undefined) return undefined;
      map ??= statusMap(phase.report);
      const key = resolveCase(id, map);
      return key === null ? undefined : map.get(key);
    };
    const seen = new Set<string>();
    for (const id of list === 'hidden' ? bundle.hiddenIds : bundle.existingIds) {
      const outcome = outcomes.get(id);
      if (outcome === undefined || seen.has(id)) continue;
      seen.add(id);
      const given =
        phase.report === undefined
          ? undefined
          : (phase.report.swebench.get(id) ?? (outcome === 'missing' ? resolved(id) : undefined));
      tests.push(
        given === undefined ? { id, list, outcome } : { id, list, outcome, swebench: given },
      );
    }
  }
  return { lists, tests };
}
