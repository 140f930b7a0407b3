// The figures of a baseline sweep and the comparison of two sweeps, from baseline rows
// (baseline.ts). Pure.
//
// Images: a sweep's tasks often share an image (bundles that differ only in their tests), and
// concurrent jobs of one image wait on one build; so each image counts once, with the longest
// time any of its jobs spent getting it (the build or pull; a later job finds it ready).
import type { BaselineRow, Validity } from './baseline.js';
import { percentile } from './stats.js';

/** How many of the most flaky tests, slowest tasks and so on a summary lists. */
export const BASELINE_TOP = 10;

export interface BaselineTask {
  task: string;
  job: number;
  status: BaselineRow['status'];
  /** Null while queued or running, and when cancelled (see status). */
  validity: Validity | null;
  reason: string | null;
  detail: string | null;
  flakyTests: string[];
  jobMs: number | null;
}

export interface BaselineSummary {
  batch: string;
  label: string | null;
  /** Tasks of the batch (one row each). */
  tasks: number;
  validity: Record<Validity, number>;
  /** Tasks queued or running, and cancelled. */
  pending: number;
  cancelled: number;
  /** Tasks by reason (the job's error code for one that failed), most first. */
  reasons: Array<{ reason: string; tasks: number }>;
  /** The most runs of any task (`--repeat N`), and how many tasks had their gold patch graded. */
  runs: number | null;
  goldGraded: number;
  /** Tasks in which some test flipped, and the tests that flipped in the most tasks. */
  flakyTasks: number;
  flakyTests: Array<{ test: string; tasks: string[] }>;
  slowest: Array<{ task: string; jobMs: number }>;
  /** Each image once, the longest time a job spent getting it, most first; their sum. */
  images: Array<{ image: string; tasks: number; imageMs: number | null }>;
  imageMs: number | null;
  wallMs: number | null;
  jobMsP50: number | null;
  jobMsP95: number | null;
  incomplete: boolean;
  incompleteBecause: string[];
  /** Every task, sorted by id. */
  perTask: BaselineTask[];
}

const byCountThenName =
  <T>(count: (x: T) => number, name: (x: T) => string) =>
  (a: T, b: T) =>
    count(b) - count(a) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0);

export function summariseBaseline(input: {
  batch: string;
  label: string | null;
  rows: readonly BaselineRow[];
}): BaselineSummary {
  const { rows } = input;
  const validity: Record<Validity, number> = { valid: 0, quarantined: 0, error: 0 };
  const reasons = new Map<string, number>();
  const flaky = new Map<string, string[]>();
  const images = new Map<string, { tasks: number; imageMs: number | null }>();
  const jobTimes: number[] = [];
  let pending = 0;
  let cancelled = 0;
  let runs: number | null = null;
  let goldGraded = 0;
  let flakyTasks = 0;
  let first: number | null = null;
  let last: number | null = null;
  for (const row of rows) {
    if (row.validity !== null) validity[row.validity]++;
    else if (row.status === 'cancelled') cancelled++;
    else pending++;
    if (row.validity !== null && row.reason !== null) {
      reasons.set(row.reason, (reasons.get(row.reason) ?? 0) + 1);
    }
    if (row.runs !== null) runs = Math.max(runs ?? 0, row.runs);
    if (row.gold !== null) goldGraded++;
    if (row.flakyTests.length > 0) flakyTasks++;
    for (const test of row.flakyTests) {
      const tasks = flaky.get(test);
      if (tasks) tasks.push(row.task);
      else flaky.set(test, [row.task]);
    }
    if (row.image !== null) {
      const seen = images.get(row.image) ?? { tasks: 0, imageMs: null };
      seen.tasks++;
      if (row.imageMs !== null) seen.imageMs = Math.max(seen.imageMs ?? 0, row.imageMs);
      images.set(row.image, seen);
    }
    if (row.jobMs !== null) jobTimes.push(row.jobMs);
    if (row.startedAt !== null) first = Math.min(first ?? Infinity, row.startedAt);
    if (row.finishedAt !== null) last = Math.max(last ?? -Infinity, row.finishedAt);
  }
  const imageList = [...images].map(([image, v]) => ({ image, ...v }));
  const incompleteBecause: string[] = [];
  if (pending > 0) incompleteBecause.push(`${pending} tasks queued or running`);
  if (cancelled > 0) incompleteBecause.push(`${cancelled} tasks cancelled`);
  return {
    batch: input.batch,
    label: input.label,
    tasks: rows.length,
    validity,
    pending,
    cancelled,
    reasons: [...reasons]
      .map(([reason, tasks]) => ({ reason, tasks }))
      .sort(
        byCountThenName(
          (r) => r.tasks,
          (r) => r.reason,
        ),
      ),
    runs,
    goldGraded,
    flakyTasks,
    flakyTests: [...flaky]
      .map(([test, tasks]) => ({ test, tasks }))
      .sort(
        byCountThenName(
          (f) => f.tasks.length,
          (f) => f.test,
        ),
      )
      .slice(0, BASELINE_TOP),
    slowest: rows
      .filter((r): r is BaselineRow & { jobMs: number } => r.jobMs !== null)
      .map((r) => ({ task: r.task, jobMs: r.jobMs }))
      .sort(
        byCountThenName(
          (r) => r.jobMs,
          (r) => r.task,
        ),
      )
      .slice(0, BASELINE_TOP),
    images: imageList.sort(
      byCountThenName(
        (i) => i.imageMs ?? -1,
        (i) => i.image,
      ),
    ),
    imageMs: imageList.some((i) => i.imageMs !== null)
      ? imageList.reduce((sum, i) => sum + (i.imageMs ?? 0), 0)
      : null,
    wallMs: first !== null && last !== null ? Math.max(0, last - first) : null,
    jobMsP50: percentile(jobTimes, 50),
    jobMsP95: percentile(jobTimes, 95),
    incomplete: incompleteBecause.length > 0,
    incompleteBecause,
    perTask: rows.map((r) => ({
      task: r.task,
      job: r.job,
      status: r.status,
      validity: r.validity,
      reason: r.reason,
      detail: r.detail,
      flakyTests: r.flakyTests,
      jobMs: r.jobMs,
    })),
  };
}

/** A task's state in one sweep, for a comparison. */
export interface BaselineState {
  validity: Validity;
  reason: string | null;
  detail: string | null;
}

export interface BaselineComparison {
  batch: string;
  reference: string;
  /** Tasks decided (valid, quarantined or error) in both sweeps. */
  paired: number;
  /** Tasks in only one sweep, or undecided (queued, running, cancelled) in one. */
  unpaired: number;
  bothValid: number;
  bothQuarantined: number;
  /** valid in the reference, quarantined now; and the other way. */
  validToQuarantined: number;
  quarantinedToValid: number;
  /** Paired tasks whose validity or reason differs, by task id: the reference's, then now. */
  changed: Array<{ task: string; from: BaselineState; to: BaselineState }>;
}

export function compareBaselines(
  batch: string,
  rows: readonly BaselineRow[],
  reference: string,
  referenceRows: readonly BaselineRow[],
): BaselineComparison {
  const decided = (list: readonly BaselineRow[]) =>
    new Map(list.filter((r) => r.validity !== null).map((r) => [r.task, r]));
  const now = decided(rows);
  const before = decided(referenceRows);
  const all = new Set([...rows.map((r) => r.task), ...referenceRows.map((r) => r.task)]);
  const c: BaselineComparison = {
    batch,
    reference,
    paired: 0,
    unpaired: 0,
    bothValid: 0,
    bothQuarantined: 0,
    validToQuarantined: 0,
    quarantinedToValid: 0,
    changed: [],
  };
  const state = (r: BaselineRow): BaselineState => ({
    validity: r.validity as Validity,
    reason: r.reason,
    detail: r.detail,
  });
  for (const task of [...all].sort()) {
    const a = before.get(task);
    const b = now.get(task);
    if (!a || !b) {
      c.unpaired++;
      continue;
    }
    c.paired++;
    if (a.validity === 'valid' && b.validity === 'valid') c.bothValid++;
    else if (a.validity === 'quarantined' && b.validity === 'quarantined') c.bothQuarantined++;
    else if (a.validity === 'valid' && b.validity === 'quarantined') c.validToQuarantined++;
    else if (a.validity === 'quarantined' && b.validity === 'valid') c.quarantinedToValid++;
    if (a.validity !== b.validity || a.reason !== b.reason) {
      c.changed.push({ task, from: state(a), to: state(b) });
    }
  }
  return c;
}
