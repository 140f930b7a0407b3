// The per-test statuses a grade or baseline result keeps (one JSON document per job, in the
// store's test_statuses table beside the job): what became of each declared test ID, so that
// `report --format swebench`, `report --against`, `status JOB`, export and the API read them
// instead of inferring them from the verdict.
//
// Compact and bounded: IDs are grouped by (list, outcome, SWE-bench status), so each ID is
// written once with no per-test keys, and a task of thousands of passing tests costs little
// more than their names. A document over MAX_STORED_TESTS_BYTES drops the IDs of its largest
// groups (their count stays): those are the passing tests, which a reader can still recover
// as the declared IDs no other group names (swebenchStatus below does). Results written
// before this existed have no document; every reader falls back to the verdict.
import { z } from 'zod';
import { succeeds } from '../grading/swebench-rules.js';
import { ProctorError } from '../errors.js';
import { MAX_TEST_STATUS_JOBS, type JobStore } from '../queue/store.js';
import type {
  DeclaredTest,
  DeclaredTests,
  ListState,
  SwebenchStatus,
  TestList,
  TestOutcome,
} from '../oracle/index.js';

/** The largest stored document, in bytes of JSON (with its groups' IDs dropped above it). */
export const MAX_STORED_TESTS_BYTES = 4 * 1024 * 1024;
/** The most not-passed tests a summary lists (`status JOB`, the API's summary). */
export const MAX_LISTED_TESTS = 50;

// The oracle's value lists, repeated (the report path never loads the oracle); `satisfies`
// keeps them in step with its types.
const LISTS = ['hidden', 'existing'] as const satisfies readonly TestList[];
const OUTCOMES = [
  'passed',
  'failed',
  'error',
  'skipped',
  'missing',
] as const satisfies readonly TestOutcome[];
const SWEBENCH = [
  'PASSED',
  'FAILED',
  'ERROR',
  'SKIPPED',
  'XFAIL',
  'ABSENT',
] as const satisfies readonly SwebenchStatus[];
const STATES = ['reported', 'no_report', 'not_run'] as const satisfies readonly ListState[];

const group = z
  .object({
    outcome: z.enum(OUTCOMES),
    /** Null when the report gave no SWE-bench status for these tests. */
    swebench: z.enum(SWEBENCH).nullable(),
    count: z.number().int().nonnegative(),
    /** Null when dropped to keep the document under MAX_STORED_TESTS_BYTES. */
    ids: z.array(z.string()).nullable(),
  })
  .strict();

const list = z
  .object({
    state: z.enum(STATES),
    groups: z.array(group),
  })
  .strict();

export const storedTestStatuses = z
  .object({ v: z.literal(1), hidden: list, existing: list })
  .strict();

export type StoredTestStatuses = z.output<typeof storedTestStatuses>;
export type StoredGroup = z.output<typeof group>;

/** The document of an evaluation's declared tests, its largest groups' IDs dropped past `maxBytes`. */
export function encodeTestStatuses(
  tests: DeclaredTests,
  maxBytes = MAX_STORED_TESTS_BYTES,
): StoredTestStatuses {
  const doc: StoredTestStatuses = {
    v: 1,
    hidden: { state: tests.lists.hidden, groups: [] },
    existing: { state: tests.lists.existing, groups: [] },
  };
  const byKey = new Map<string, StoredGroup & { ids: string[] }>();
  for (const t of tests.tests) {
    const key = `${t.list}\0${t.outcome}\0${t.swebench ?? ''}`;
    let g = byKey.get(key);
    if (g === undefined) {
      g = { outcome: t.outcome, swebench: t.swebench ?? null, count: 0, ids: [] };
      byKey.set(key, g);
      doc[t.list].groups.push(g);
    }
    g.count++;
    g.ids.push(t.id);
  }
  let size = Buffer.byteLength(JSON.stringify(doc));
  if (size <= maxBytes) return doc;
  const all = [...doc.hidden.groups, ...doc.existing.groups].sort((a, b) => b.count - a.count);
  for (const g of all) {
    if (size <= maxBytes) break;
    size -= Buffer.byteLength(JSON.stringify(g.ids)) - 4; // the array becomes `null`
    g.ids = null;
  }
  return doc;
}

/** A stored document read back; DB_UNREADABLE naming the job when it is not one. */
export function decodeTestStatuses(jobId: number, text: string): StoredTestStatuses {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const parsed = storedTestStatuses.safeParse(value);
  if (!parsed.success) {
    throw new ProctorError(
      'DB_UNREADABLE',
      `job ${jobId}: its stored test statuses are not readable (${JSON.stringify(text.slice(0, 40))})`,
    );
  }
  return parsed.data;
}

/** Every test the document names, hidden then existing (a dropped group's tests are not named). */
export function expandTestStatuses(doc: StoredTestStatuses): DeclaredTest[] {
  const out: DeclaredTest[] = [];
  for (const name of LISTS) {
    for (const g of doc[name].groups) {
      for (const id of g.ids ?? []) {
        out.push(
          g.swebench === null
            ? { id, list: name, outcome: g.outcome }
            : { id, list: name, outcome: g.outcome, swebench: g.swebench },
        );
      }
    }
  }
  return out;
}

export interface ListSummary {
  state: ListState;
  /** Tests by outcome (every declared ID of a reported list, dropped ones included). */
  counts: Record<TestOutcome, number>;
}

export interface TestsSummary {
  hidden: ListSummary;
  existing: ListSummary;
  /** The tests whose outcome is not `passed`, at most MAX_LISTED_TESTS of them. */
  notPassed: DeclaredTest[];
  notPassedCount: number;
  /** Tests counted but not named (dropped to bound the document). */
  unnamed: number;
}

/** Counts by list and outcome, and the first not-passed tests: a bounded view. */
export function summariseTestStatuses(
  doc: StoredTestStatuses,
  maxListed = MAX_LISTED_TESTS,
): TestsSummary {
  const notPassed: DeclaredTest[] = [];
  let notPassedCount = 0;
  let unnamed = 0;
  const summary = (name: TestList): ListSummary => {
    const counts = { passed: 0, failed: 0, error: 0, skipped: 0, missing: 0 };
    for (const g of doc[name].groups) {
      counts[g.outcome] += g.count;
      if (g.ids === null) unnamed += g.count;
      if (g.outcome === 'passed') continue;
      notPassedCount += g.count;
      for (const id of g.ids ?? []) {
        if (notPassed.length >= maxListed) break;
        notPassed.push({
          id,
          list: name,
          outcome: g.outcome,
          ...(g.swebench === null ? {} : { swebench: g.swebench }),
        });
      }
    }
    return { state: doc[name].state, counts };
  };
  return {
    hidden: summary('hidden'),
    existing: summary('existing'),
    notPassed,
    notPassedCount,
    unnamed,
  };
}

/** One line per list for a terminal: `hidden: 2 passed, 1 failed` (or why it has none). */
export function testsSummaryLines(summary: TestsSummary): string[] {
  const lines: string[] = [];
  for (const name of LISTS) {
    const s = summary[name];
    if (s.state !== 'reported') {
      lines.push(`${name}: ${s.state === 'not_run' ? 'not run' : 'no usable report'}`);
      continue;
    }
    const parts = OUTCOMES.filter((o) => s.counts[o] > 0).map((o) => `${s.counts[o]} ${o}`);
    lines.push(`${name}: ${parts.length === 0 ? 'no tests' : parts.join(', ')}`);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// SWE-bench's view

const FROM_OUTCOME: Record<TestOutcome, SwebenchStatus> = {
  passed: 'PASSED',
  failed: 'FAILED',
  error: 'ERROR',
  skipped: 'SKIPPED',
  missing: 'ABSENT',
};

/** The status SWE-bench's parser records: the report's when it gave one, else Proctor's mapped. */
export const swebenchOf = (g: Pick<StoredGroup, 'outcome' | 'swebench'>): SwebenchStatus =>
  g.swebench ?? FROM_OUTCOME[g.outcome];

/**
 * Whether SWE-bench 5.x's grading.py counts a test a success: FAIL_TO_PASS (hidden) when
 * PASSED or XFAIL (`test_passed`); PASS_TO_PASS (existing) when PASSED, XFAIL or SKIPPED
 * (`test_maintained`). Everything else (FAILED, ERROR, SKIPPED for FAIL_TO_PASS, ABSENT) is
 * a failure (`test_failed`).
 */
export function swebenchSuccess(list: TestList, status: SwebenchStatus): boolean {
  return succeeds(list === 'hidden' ? 'FAIL_TO_PASS' : 'PASS_TO_PASS', status);
}

/**
 * Each declared ID's SWE-bench success, by list: from the document, in `declared` order when
 * given. A list whose phase left no usable report counts every declared ID a failure, as
 * SWE-bench does for a test it found no status for. Null for a list that cannot be told
 * whole: a dropped group while `declared` is not given, or more than one dropped group in it.
 */
export function swebenchSplit(
  doc: StoredTestStatuses,
  name: TestList,
  declared?: readonly string[],
): Map<string, boolean> | null {
  const listed = doc[name];
  const out = new Map<string, boolean>();
  if (listed.state !== 'reported') {
    for (const id of declared ?? []) out.set(id, false);
    return declared === undefined ? null : out;
  }
  const named = new Map<string, boolean>();
  const dropped = listed.groups.filter((g) => g.ids === null);
  for (const g of listed.groups) {
    const success = swebenchSuccess(name, swebenchOf(g));
    for (const id of g.ids ?? []) named.set(id, success);
  }
  if (dropped.length > 1 || (dropped.length === 1 && declared === undefined)) return null;
  const rest = dropped[0];
  if (declared === undefined) return named;
  const restSuccess = rest === undefined ? false : swebenchSuccess(name, swebenchOf(rest));
  let unnamed = 0;
  for (const id of declared) {
    const success = named.get(id);
    if (success === undefined) unnamed++;
    out.set(id, success ?? restSuccess);
  }
  // The dropped group must be exactly the declared IDs no group names (the bundle unchanged).
  if (rest !== undefined && unnamed !== rest.count) return null;
  return out;
}

/**
 * The stored documents of these jobs, read MAX_TEST_STATUS_JOBS at a time; a job without one
 * (finished before they were kept, or not a grade) is not in the map.
 */
export async function readTestStatuses(
  store: Pick<JobStore, 'testStatuses'>,
  jobIds: Iterable<number>,
): Promise<Map<number, StoredTestStatuses>> {
  const ids = [...new Set(jobIds)];
  const out = new Map<number, StoredTestStatuses>();
  for (let i = 0; i < ids.length; i += MAX_TEST_STATUS_JOBS) {
    const texts = await store.testStatuses(ids.slice(i, i + MAX_TEST_STATUS_JOBS));
    for (const [id, text] of texts) out.set(id, decodeTestStatuses(id, text));
  }
  return out;
}
