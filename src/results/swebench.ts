// `--format swebench`: the summary SWE-bench's harness writes after an evaluation run, and the
// report.json it writes per instance, from Proctor's rows. Keyed by [source].instance_id, or
// the task id for a task that has none.
//
// Per-test statuses: a grade stores each declared test's status beside its result
// (test-statuses.ts); tests_status is then SWE-bench's success or failure of each, by
// grading.py's rules (swebenchSplit). A result stored before those were kept has none, and
// tests_status is derived from the verdict and the declared IDs. PASS: every declared ID is a
// success. HIDDEN_FAILED (the existing suite passed, by the oracle's rule order): PASS_TO_PASS
// all success; the FAIL_TO_PASS IDs the verdict names are failures, and the rest successes when
// the verdict names them all, else failures too. EXISTING_FAILED likewise for PASS_TO_PASS,
// with FAIL_TO_PASS all failure. Any other FAIL (the patch did not apply, a timeout, a missing
// report): every ID is a failure, as SWE-bench counts a test it found no pass for.
import type { ReportRow } from './rows.js';
import { taskClasses } from './summary.js';
import { swebenchSplit, type StoredTestStatuses } from './test-statuses.js';

export interface SwebenchSummary {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  error_ids: string[];
  schema_version: 2;
}

export const instanceKey = (row: Pick<ReportRow, 'instanceId' | 'task'>) =>
  row.instanceId ?? row.task;

/**
 * The instance keys of a batch's suite (its recorded task ids), or null when it recorded none.
 * A task without a row has no instance id on record: it is keyed by its task id.
 */
export function suiteInstanceKeys(
  rows: readonly ReportRow[],
  suiteTasks: readonly string[] | null,
): string[] | null {
  if (suiteTasks === null) return null;
  const keyOfTask = new Map(rows.map((row) => [row.task, instanceKey(row)]));
  return suiteTasks.map((task) => keyOfTask.get(task) ?? task);
}

/**
 * Whether SWE-bench counts the row's prediction as an empty patch (`model_patch` null or
 * empty: never run, in empty_patch_ids, neither completed nor given a report.json).
 */
export const isEmptyPatch = (row: Pick<ReportRow, 'reason'>) => row.reason === 'EMPTY_PATCH';

/** Each task's row for SWE-bench: the first attempt (SWE-bench has one per instance). */
export function instanceRows(rows: readonly ReportRow[]): Map<string, ReportRow> {
  const byInstance = new Map<string, ReportRow>();
  for (const row of rows) {
    const key = instanceKey(row);
    const seen = byInstance.get(key);
    if (!seen || row.attempt < seen.attempt) byInstance.set(key, row);
  }
  return byInstance;
}

export function swebenchSummary(
  rows: readonly ReportRow[],
  suiteInstances: readonly string[] | null,
): SwebenchSummary {
  const byInstance = instanceRows(rows);
  const classes = taskClasses([...byInstance.values()]);
  const ids = {
    submitted: [] as string[],
    completed: [] as string[],
    incomplete: [] as string[],
    resolved: [] as string[],
    unresolved: [] as string[],
    empty: [] as string[],
    error: [] as string[],
  };
  for (const [key, row] of byInstance) {
    ids.submitted.push(key);
    const cls = classes.get(row.task) ?? null;
    if (isEmptyPatch(row)) {
      ids.empty.push(key);
      continue;
    }
    if (cls === 'resolved' || cls === 'unresolved') {
      ids.completed.push(key);
      (cls === 'resolved' ? ids.resolved : ids.unresolved).push(key);
    } else if (cls === 'error' || cls === 'invalid_task') ids.error.push(key);
    else ids.incomplete.push(key);
  }
  const sorted = (list: string[]) => list.sort();
  const total = suiteInstances === null ? byInstance.size : suiteInstances.length;
  if (suiteInstances !== null) {
    for (const key of suiteInstances) if (!byInstance.has(key)) ids.incomplete.push(key);
  }
  return {
    total_instances: total,
    submitted_instances: ids.submitted.length,
    completed_instances: ids.completed.length,
    resolved_instances: ids.resolved.length,
    unresolved_instances: ids.unresolved.length,
    empty_patch_instances: ids.empty.length,
    error_instances: ids.error.length,
    completed_ids: sorted(ids.completed),
    incomplete_ids: sorted(ids.incomplete),
    empty_patch_ids: sorted(ids.empty),
    submitted_ids: sorted(ids.submitted),
    resolved_ids: sorted(ids.resolved),
    unresolved_ids: sorted(ids.unresolved),
    error_ids: sorted(ids.error),
    schema_version: 2,
  };
}

export interface TestSplit {
  success: string[];
  failure: string[];
}

export interface InstanceReport {
  patch_is_None: boolean;
  patch_exists: boolean;
  patch_successfully_applied: boolean;
  resolved: boolean;
  tests_status: { FAIL_TO_PASS: TestSplit; PASS_TO_PASS: TestSplit };
}

// Decided before the diff is applied: TAMPER_SUSPECTED too (the screen fails it on the host).
const NOT_APPLIED = new Set([
  'EMPTY_PATCH',
  'APPLY_FAILED',
  'PATCH_TOO_LARGE',
  'PATCH_REJECTED',
  'TAMPER_SUSPECTED',
]);

/** The IDs a verdict's detail names after `phase: N tests …: `, and whether it named them all. */
export function namedIds(
  detail: string,
  phase: 'existing' | 'hidden',
  declared: readonly string[],
): { named: Set<string>; complete: boolean } {
  const named = new Set<string>();
  const head = `${phase} phase: `;
  if (!detail.startsWith(head)) return { named, complete: false };
  const colon = detail.indexOf(': ', head.length);
  if (colon < 0) return { named, complete: false };
  const list = detail.slice(colon + 2);
  const truncated = /, … and \d+ more$/.test(list);
  const known = new Set(declared);
  let complete = !truncated;
  for (const part of list.replace(/, … and \d+ more$/, '').split(', ')) {
    const id = part.replace(/ \((?:failed|error|skipped)\)$/, '');
    if (known.has(id)) named.add(id);
    else complete = false; // shortened in the detail: cannot tell which declared ID it is
  }
  return { named, complete };
}

function split(ids: readonly string[], failed: Set<string> | 'all' | 'none', complete = true) {
  if (failed === 'all') return { success: [], failure: [...ids] };
  if (failed === 'none') return { success: [...ids], failure: [] };
  const success: string[] = [];
  const failure: string[] = [];
  for (const id of ids) (failed.has(id) || !complete ? failure : success).push(id);
  return { success, failure };
}

/** SWE-bench's success and failure lists of one list's stored statuses, or null (swebenchSplit). */
function storedSplit(
  doc: StoredTestStatuses,
  list: 'hidden' | 'existing',
  declared: readonly string[],
): TestSplit | null {
  const map = swebenchSplit(doc, list, declared.length > 0 ? declared : undefined);
  if (map === null) return null;
  const out: TestSplit = { success: [], failure: [] };
  for (const [id, success] of map) (success ? out.success : out.failure).push(id);
  return out;
}

/**
 * tests_status from a grade's stored per-test statuses, in the declared order when the
 * declared IDs are known; null when they cannot tell every test (see swebenchSplit).
 */
export function storedTestsStatus(
  stored: StoredTestStatuses,
  declared: { existing: readonly string[]; hidden: readonly string[] },
): InstanceReport['tests_status'] | null {
  const f2p = storedSplit(stored, 'hidden', declared.hidden);
  const p2p = storedSplit(stored, 'existing', declared.existing);
  return f2p && p2p ? { FAIL_TO_PASS: f2p, PASS_TO_PASS: p2p } : null;
}

/**
 * SWE-bench's report.json of a row: tests_status from `stored` (the grade's per-test
 * statuses) when given and whole, else inferred from the verdict.
 */
export function instanceReport(
  row: ReportRow,
  declared: { existing: readonly string[]; hidden: readonly string[] },
  stored?: StoredTestStatuses,
): InstanceReport {
  const reason = row.reason ?? '';
  const ran = row.status === 'done' && row.verdict !== null;
  const detail = row.detail ?? '';
  let f2p: TestSplit;
  let p2p: TestSplit;
  const fromStored = stored === undefined ? null : storedTestsStatus(stored, declared);
  if (fromStored !== null) {
    f2p = fromStored.FAIL_TO_PASS;
    p2p = fromStored.PASS_TO_PASS;
  } else if (row.verdict === 'PASS') {
    f2p = split(declared.hidden, 'none');
    p2p = split(declared.existing, 'none');
  } else if (reason === 'HIDDEN_FAILED') {
    const { named, complete } = namedIds(detail, 'hidden', declared.hidden);
    f2p = split(declared.hidden, named, complete);
    p2p = split(declared.existing, 'none');
  } else if (reason === 'EXISTING_FAILED') {
    const { named, complete } = namedIds(detail, 'existing', declared.existing);
    f2p = split(declared.hidden, 'all');
    p2p = split(declared.existing, named, complete);
  } else {
    f2p = split(declared.hidden, 'all');
    p2p = split(declared.existing, 'all');
  }
  return {
    patch_is_None: reason === 'EMPTY_PATCH',
    patch_exists: reason !== 'EMPTY_PATCH',
    patch_successfully_applied: ran && !NOT_APPLIED.has(reason),
    resolved: row.class === 'resolved',
    tests_status: { FAIL_TO_PASS: f2p, PASS_TO_PASS: p2p },
  };
}
