// `report --against`: Proctor's outcome per instance against an official grader's (official.ts),
// the way a harness earns trust — agreement, Cohen's kappa, the instances that cannot be
// compared and why, and for each disagreement the tests on which the two differ: from the
// grade's stored per-test statuses (test-statuses.ts), or inferred from its verdict for a
// grade stored before those were kept. Pure over report rows; the declared test IDs and the
// stored statuses of the disagreeing tasks come in from the caller (the CLI and API read
// bundles and the store, this module reads nothing).
//
// Each instance is its first attempt's row (SWE-bench grades one prediction per instance),
// keyed by [source].instance_id, else the task id. Comparable: Proctor resolved or unresolved,
// and the official resolved or unresolved. Not comparable, with why: `error` or `invalid_task`
// here (the machine's fault, or a task its baseline quarantined), not graded here (a task of
// the suite with no row, or one still queued, running or cancelled); missing there, `error`
// there, `empty` there (SWE-bench never runs an empty patch), not run there (incomplete or
// pending). An instance the official file names that the batch's suite lacks is in a class of
// its own, not in this suite: a labels file of the whole benchmark against a suite of some of
// it names hundreds, which say nothing about this grader and must not hide those that failed.
import { ProctorError } from '../errors.js';
import type { LoadedBatch } from './load.js';
import type { OfficialInstance, Official, OfficialShape, OfficialStatus } from './official.js';
import type { ReportRow } from './rows.js';
import { instanceRows, namedIds, suiteInstanceKeys } from './swebench.js';
import { taskClasses } from './summary.js';
import { swebenchSplit, type StoredTestStatuses } from './test-statuses.js';

export type Side = 'resolved' | 'unresolved';

/** Proctor's per-test outcome: `unknown` when the verdict's detail did not name every failure. */
export type ProctorTestStatus = 'success' | 'failure' | 'unknown' | 'not_declared';
export type OfficialTestStatus = 'success' | 'failure' | 'absent';

export interface TestDifference {
  test: string;
  category: 'FAIL_TO_PASS' | 'PASS_TO_PASS';
  proctor: ProctorTestStatus;
  official: OfficialTestStatus;
}

export interface Disagreement {
  instance: string;
  task: string;
  proctor: Side;
  /** Proctor's grade reason (HIDDEN_FAILED, …) and detail. */
  reason: string | null;
  detail: string | null;
  official: Side;
  /**
   * The tests the two differ on; null when either side has no per-test statuses (the
   * official file has no tests_status, or the task's declared IDs could not be read).
   */
  tests: TestDifference[] | null;
  /** Why `tests` is null. */
  testsNote: string | null;
  /**
   * Where Proctor's side of `tests` comes from: `stored` (the grade's per-test statuses, by
   * SWE-bench's grading rules) or `inferred` (from the verdict and its detail: a grade stored
   * before per-test statuses were kept). The official side is always its own tests_status.
   * Null when `tests` is.
   */
  testsFrom: 'stored' | 'inferred' | null;
}

export interface NotComparable {
  instance: string;
  task: string | null;
  /** Proctor's class, or `not_graded`. */
  proctor: string;
  /** The official status, or `missing`. */
  official: OfficialStatus | 'missing';
  why: string;
}

/** An instance the official file names that the batch's suite does not hold. */
export interface NotInSuite {
  instance: string;
  /** The official status. */
  official: OfficialStatus;
}

export interface AgreementCounts {
  bothResolved: number;
  bothUnresolved: number;
  /** Resolved by Proctor, unresolved by the official grader. */
  resolvedHereOnly: number;
  resolvedThereOnly: number;
}

export interface Agreement {
  /** Instances comparable: resolved or unresolved on both sides. */
  comparable: number;
  agree: number;
  /** agree / comparable; null with nothing comparable. */
  rate: number | null;
  /** Cohen's kappa; null when undefined (see `kappaNote`). */
  kappa: number | null;
  kappaNote: string | null;
  /** The comparable instances by (Proctor, official) outcome. */
  counts: AgreementCounts;
}

export interface Parity {
  batch: string;
  shape: OfficialShape;
  agreement: Agreement;
  disagreements: Disagreement[];
  notComparable: NotComparable[];
  /**
   * The instances the official file names that the suite lacks (no task of the batch's
   * recorded suite, or, without one, no job of the batch), by instance; neither comparable
   * nor in `notComparable`.
   */
  notInSuite: NotInSuite[];
}

export interface DeclaredIds {
  existing: readonly string[];
  hidden: readonly string[];
}

/**
 * Cohen's kappa of two raters over the same n items in two classes, with rr both resolved, uu
 * both unresolved, ru resolved here only and ur resolved there only:
 *
 *   κ = (p_o − p_e) / (1 − p_e),  p_o = (rr + uu) / n,
 *   p_e = (rr + ru)/n · (rr + ur)/n + (ur + uu)/n · (ru + uu)/n
 *
 * (observed agreement against the agreement expected by chance from each rater's own class
 * shares). Undefined — null, with the reason — when n = 0, or when p_e = 1: both raters put
 * every instance in the one same class, so agreement is total and there is nothing beyond
 * chance to measure. When only one rater uses a single class, p_e < 1 and κ is defined (0
 * when the other agrees by chance alone, negative when below it).
 */
export function cohensKappa(c: AgreementCounts): { kappa: number | null; note: string | null } {
  const [rr, ru, ur, uu] = [
    c.bothResolved,
    c.resolvedHereOnly,
    c.resolvedThereOnly,
    c.bothUnresolved,
  ];
  const n = rr + ru + ur + uu;
  if (n === 0) return { kappa: null, note: 'undefined: no comparable instances' };
  const po = (rr + uu) / n;
  const pe = ((rr + ru) / n) * ((rr + ur) / n) + ((ur + uu) / n) * ((ru + uu) / n);
  if (pe >= 1) {
    const only = rr > 0 ? 'resolved' : 'unresolved';
    return { kappa: null, note: `undefined: both put every instance in one class (${only})` };
  }
  return { kappa: (po - pe) / (1 - pe), note: null };
}

const NOT_GRADED = 'not_graded';

/** Why an instance is not comparable: what here and what there, joined. */
function whyOf(here: string, there: OfficialStatus | 'missing'): string {
  const parts: string[] = [];
  if (here === NOT_GRADED) parts.push('not graded here');
  else if (here !== 'resolved' && here !== 'unresolved') parts.push(`${here} here`);
  if (there === 'not_run') parts.push('not run there');
  else if (there !== 'resolved' && there !== 'unresolved') parts.push(`${there} there`);
  return parts.join('; ');
}

/** Proctor's status of each declared test, from the verdict (see swebench.ts). */
function proctorTests(row: ReportRow, declared: DeclaredIds) {
  const reason = row.reason ?? '';
  const detail = row.detail ?? '';
  const all = (ids: readonly string[], s: ProctorTestStatus) =>
    new Map(ids.map((t): [string, ProctorTestStatus] => [t, s]));
  const named = (phase: 'existing' | 'hidden', ids: readonly string[]) => {
    const { named: failed, complete } = namedIds(detail, phase, ids);
    return new Map(
      ids.map((t): [string, ProctorTestStatus] => [
        t,
        failed.has(t) ? 'failure' : complete ? 'success' : 'unknown',
      ]),
    );
  };
  if (row.verdict === 'PASS') {
    return { f2p: all(declared.hidden, 'success'), p2p: all(declared.existing, 'success') };
  }
  // The rules run existing then hidden: a hidden failure means the existing suite passed.
  if (reason === 'HIDDEN_FAILED') {
    return { f2p: named('hidden', declared.hidden), p2p: all(declared.existing, 'success') };
  }
  if (reason === 'EXISTING_FAILED') {
    return { f2p: all(declared.hidden, 'unknown'), p2p: named('existing', declared.existing) };
  }
  // The patch did not apply, the tests timed out, no usable report: no test passed.
  return { f2p: all(declared.hidden, 'failure'), p2p: all(declared.existing, 'failure') };
}

/** Proctor's status of each declared test from the grade's stored statuses, or null. */
function storedTests(doc: StoredTestStatuses, declared: DeclaredIds | null | undefined) {
  const of = (list: 'hidden' | 'existing', ids: readonly string[] | undefined) => {
    const map = swebenchSplit(doc, list, ids);
    return map === null
      ? null
      : new Map(
          [...map].map(([t, ok]): [string, ProctorTestStatus] => [t, ok ? 'success' : 'failure']),
        );
  };
  const f2p = of('hidden', declared?.hidden);
  const p2p = of('existing', declared?.existing);
  return f2p && p2p ? { f2p, p2p } : null;
}

function testDifferences(
  mine: { f2p: Map<string, ProctorTestStatus>; p2p: Map<string, ProctorTestStatus> },
  official: OfficialInstance,
): TestDifference[] {
  const out: TestDifference[] = [];
  const categories = [
    ['FAIL_TO_PASS', mine.f2p],
    ['PASS_TO_PASS', mine.p2p],
  ] as const;
  for (const [category, proctor] of categories) {
    const split = official.tests?.[category] ?? { success: [], failure: [] };
    const theirs = new Map<string, OfficialTestStatus>();
    for (const t of split.success) theirs.set(t, 'success');
    for (const t of split.failure) theirs.set(t, 'failure');
    for (const [test, status] of proctor) {
      const other = theirs.get(test) ?? 'absent';
      if (status !== other) out.push({ test, category, proctor: status, official: other });
    }
    for (const [test, other] of theirs) {
      if (!proctor.has(test))
        out.push({ test, category, proctor: 'not_declared', official: other });
    }
  }
  return out;
}

/**
 * Proctor's batch (`rows`) against `official`. `suite` holds the instance keys of the batch's
 * suite (suiteInstanceKeys; null when it recorded none, and then the suite is the rows'
 * instances). `declared` gives the declared IDs of a row's bundle (by bundle path), and
 * `stored` the per-test statuses of a row's grade (by job id), for the per-test differences of
 * the disagreements: the stored statuses when the grade has them, else inferred from the
 * verdict; a disagreement with neither its stored statuses nor its bundle's declared IDs has
 * its tests null with a note.
 */
export function compareWithOfficial(
  batch: string,
  rows: readonly ReportRow[],
  official: Official,
  suite: readonly string[] | null = null,
  declared: ReadonlyMap<string, DeclaredIds | null> = new Map(),
  stored: ReadonlyMap<number, StoredTestStatuses> = new Map(),
): Parity {
  const inSuite = new Set(suite ?? []);
  const byInstance = instanceRows(rows);
  const classes = taskClasses([...byInstance.values()]);
  const counts: AgreementCounts = {
    bothResolved: 0,
    bothUnresolved: 0,
    resolvedHereOnly: 0,
    resolvedThereOnly: 0,
  };
  const disagreements: Disagreement[] = [];
  const notComparable: NotComparable[] = [];
  const notInSuite: NotInSuite[] = [];
  const keys = new Set([...byInstance.keys(), ...official.instances.keys()]);
  for (const key of [...keys].sort()) {
    const row = byInstance.get(key);
    const theirs = official.instances.get(key);
    const here = row ? (classes.get(row.task) ?? NOT_GRADED) : NOT_GRADED;
    const there: OfficialStatus | 'missing' =
      theirs?.status ?? (official.unlisted === null ? 'missing' : official.unlisted);
    // Neither side ran it: nothing to say.
    if (!row && there === 'not_run') continue;
    if (!row && !inSuite.has(key)) {
      // Only an official instance can lack a row, so `there` is its own status.
      notInSuite.push({ instance: key, official: there as OfficialStatus });
      continue;
    }
    const comparable =
      row !== undefined &&
      (here === 'resolved' || here === 'unresolved') &&
      (there === 'resolved' || there === 'unresolved');
    if (!comparable) {
      notComparable.push({
        instance: key,
        task: row?.task ?? null,
        proctor: here,
        official: there,
        why: whyOf(here, there),
      });
      continue;
    }
    if (here === there) {
      counts[here === 'resolved' ? 'bothResolved' : 'bothUnresolved']++;
      continue;
    }
    counts[here === 'resolved' ? 'resolvedHereOnly' : 'resolvedThereOnly']++;
    const ids = row.bundle === null ? undefined : declared.get(row.bundle);
    let tests: TestDifference[] | null = null;
    let testsNote: string | null = null;
    let testsFrom: Disagreement['testsFrom'] = null;
    const doc = row.gradeJobId === null ? undefined : stored.get(row.gradeJobId);
    const mine = doc === undefined ? null : storedTests(doc, ids);
    if (theirs?.tests == null) {
      testsNote = `the official ${official.shape === 'instance_reports' ? 'report' : 'file'} has no tests_status`;
    } else if (mine !== null) {
      tests = testDifferences(mine, theirs);
      testsFrom = 'stored';
    } else if (ids == null) {
      testsNote = `the task's declared tests could not be read${row.bundle === null ? '' : ` (${row.bundle})`}`;
    } else {
      tests = testDifferences(proctorTests(row, ids), theirs);
      testsFrom = 'inferred';
    }
    disagreements.push({
      instance: key,
      task: row.task,
      proctor: here,
      reason: row.reason,
      detail: row.detail,
      official: there,
      tests,
      testsNote,
      testsFrom,
    });
  }
  const agree = counts.bothResolved + counts.bothUnresolved;
  const comparable = agree + counts.resolvedHereOnly + counts.resolvedThereOnly;
  const { kappa, note } = cohensKappa(counts);
  return {
    batch,
    shape: official.shape,
    agreement: {
      comparable,
      agree,
      rate: comparable === 0 ? null : agree / comparable,
      kappa,
      kappaNote: note,
      counts,
    },
    disagreements,
    notComparable,
    notInSuite,
  };
}

/** The bundles whose declared IDs the disagreements need (read them, then compare again). */
export function disagreeingBundles(rows: readonly ReportRow[], parity: Parity): string[] {
  return [...new Set(disagreeingRows(rows, parity).flatMap((r) => r.bundle ?? []))];
}

/** The grade jobs whose stored per-test statuses the disagreements need. */
export function disagreeingGrades(rows: readonly ReportRow[], parity: Parity): number[] {
  return disagreeingRows(rows, parity).flatMap((r) => r.gradeJobId ?? []);
}

function disagreeingRows(rows: readonly ReportRow[], parity: Parity): ReportRow[] {
  const byInstance = instanceRows(rows);
  return parity.disagreements.flatMap((d) => byInstance.get(d.instance) ?? []);
}

/**
 * A loaded batch against `official`, the disagreements' declared tests read by `readDeclared`
 * (the CLI and API pass the oracle's reader: this module reads no bundle). A baseline sweep is
 * refused: the official outcomes are of graded predictions.
 */
export async function parityOfBatch(
  batch: LoadedBatch,
  official: Official,
  readDeclared: (bundles: string[]) => Promise<ReadonlyMap<string, DeclaredIds | null>>,
  readStored: (jobIds: number[]) => Promise<ReadonlyMap<number, StoredTestStatuses>> = () =>
    Promise.resolve(new Map()),
): Promise<Parity> {
  if (batch.kind === 'baseline') {
    throw new ProctorError(
      'USAGE',
      `batch ${batch.batch.id} is a baseline sweep; the official grader's outcomes are of grades (grade --predictions)`,
    );
  }
  const suite = suiteInstanceKeys(batch.rows, batch.suiteTasks);
  const first = compareWithOfficial(batch.batch.id, batch.rows, official, suite);
  if (first.disagreements.length === 0) return first;
  const bundles = disagreeingBundles(batch.rows, first);
  const grades = disagreeingGrades(batch.rows, first);
  return compareWithOfficial(
    batch.batch.id,
    batch.rows,
    official,
    suite,
    bundles.length === 0 ? new Map() : await readDeclared(bundles),
    grades.length === 0 ? new Map() : await readStored(grades),
  );
}
