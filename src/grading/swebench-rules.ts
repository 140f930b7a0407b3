// SWE-bench's grading rules (swebench/harness/grading.py, 5.x), as pure functions over a
// Proctor report, for tasks with `[grading] rules = "swebench"`. SWE-bench reads a status map
// (test ID → PASSED, FAILED, ERROR, SKIPPED or XFAIL) parsed from the test log; Proctor builds
// the same map from the report: an entry's `swebench` status when the runner gives one (what
// SWE-bench's parser for that repository would have recorded), else its Proctor status mapped
// one to one. An entry marked ABSENT is left out of the map, as SWE-bench's parser would have
// left it out of its own.
//
// Then, as grading.py does it:
// - FAIL_TO_PASS (hidden.txt) succeeds iff its status is PASSED or XFAIL (test_passed); SKIPPED,
//   FAILED, ERROR and absent fail (test_failed, which counts SKIPPED since 5.0);
// - PASS_TO_PASS (existing.txt) succeeds iff PASSED, XFAIL or SKIPPED (test_maintained);
// - an ID that is not a key of the map and has more `[` than `]` (a parametrized ID cut short
//   in the dataset) matches the keys it prefixes, when they all agree on pass-vs-fail
//   (_resolve_case); the first of them then stands for it;
// - a list with no IDs succeeds (compute_fail_to_pass and compute_pass_to_pass: total 0 → 1);
//   the task is resolved iff every ID of both lists succeeds.
import type { SwebenchStatus, TestStatus } from '../oracle/report.js';

/** Which of SWE-bench's lists an ID is graded by: hidden.txt is FAIL_TO_PASS. */
export type SwebenchList = 'FAIL_TO_PASS' | 'PASS_TO_PASS';

/** A status SWE-bench's status map can hold (ABSENT is the lack of a key). */
export type RecordedStatus = Exclude<SwebenchStatus, 'ABSENT'>;

const FROM_PROCTOR: Record<TestStatus, RecordedStatus> = {
  passed: 'PASSED',
  failed: 'FAILED',
  error: 'ERROR',
  skipped: 'SKIPPED',
};

/** The parts of a parsed report SWE-bench's rules read. */
export interface SwebenchReport {
  tests: ReadonlyMap<string, TestStatus>;
  swebench: ReadonlyMap<string, SwebenchStatus>;
}

/** SWE-bench's status map of a report, in report order; ABSENT entries are left out. */
export function statusMap(report: SwebenchReport): Map<string, RecordedStatus> {
  const map = new Map<string, RecordedStatus>();
  for (const [id, status] of report.tests) {
    const recorded = report.swebench.get(id) ?? FROM_PROCTOR[status];
    if (recorded !== 'ABSENT') map.set(id, recorded);
  }
  return map;
}

const PASSING: ReadonlySet<SwebenchStatus> = new Set(['PASSED', 'XFAIL']);

function count(text: string, char: string): number {
  let n = 0;
  for (const c of text) if (c === char) n += 1;
  return n;
}

/**
 * The key of `map` that stands for `id` (grading.py's _resolve_case): `id` itself, else, for
 * an ID with more `[` than `]`, the first key it prefixes when every key it prefixes agrees
 * on pass (PASSED or XFAIL) versus anything else; otherwise null.
 */
export function resolveCase(id: string, map: ReadonlyMap<string, RecordedStatus>): string | null {
  if (map.has(id)) return id;
  if (count(id, '[') <= count(id, ']')) return null;
  let first: string | null = null;
  let passing: boolean | null = null;
  for (const [key, status] of map) {
    if (!key.startsWith(id)) continue;
    const passes = PASSING.has(status);
    if (passing !== null && passes !== passing) return null;
    first ??= key;
    passing = passes;
  }
  return first;
}

/** What SWE-bench's grading reads for `id`: the status of its key, or ABSENT when none. */
export function swebenchStatus(
  id: string,
  map: ReadonlyMap<string, RecordedStatus>,
): SwebenchStatus {
  const key = resolveCase(id, map);
  return key === null ? 'ABSENT' : (map.get(key) ?? 'ABSENT');
}

/** Whether a status counts as success for a list: XFAIL passes; a skip keeps a PASS_TO_PASS. */
export function succeeds(list: SwebenchList, status: SwebenchStatus): boolean {
  return PASSING.has(status) || (list === 'PASS_TO_PASS' && status === 'SKIPPED');
}

export interface ListGrade {
  /** IDs that succeeded, in listed order, each once. */
  success: string[];
  /** IDs that did not, in listed order, each once, with what SWE-bench read for them. */
  failure: Array<{ id: string; status: SwebenchStatus }>;
}

/** One list graded against a status map; a list with no IDs has no failure. */
export function gradeList(
  list: SwebenchList,
  ids: readonly string[],
  map: ReadonlyMap<string, RecordedStatus>,
): ListGrade {
  const grade: ListGrade = { success: [], failure: [] };
  for (const id of new Set(ids)) {
    const status = swebenchStatus(id, map);
    if (succeeds(list, status)) grade.success.push(id);
    else grade.failure.push({ id, status });
  }
  return grade;
}

/**
 * Listed IDs that nothing in the report stands for: not reported (with any status, ABSENT
 * included) and, for a truncated parametrized ID, no reported ID starts with it. What a
 * baseline calls missing (most often an ID in another format than the runner's).
 */
export function unreported(ids: readonly string[], report: SwebenchReport): string[] {
  const keys = [...report.tests.keys()];
  return [...new Set(ids)].filter(
    (id) =>
      !report.tests.has(id) &&
      !(count(id, '[') > count(id, ']') && keys.some((key) => key.startsWith(id))),
  );
}
