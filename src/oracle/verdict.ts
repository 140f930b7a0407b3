// The rules of the runner contract and of the oracle's verdict, as pure functions: whether a
// phase's report satisfies its declared test IDs, the `tests_hash` gate line, which reason a
// failed grade is given, and when baseline quarantines a task. Nothing here runs a container;
// callers pass what happened and get a Verdict back.
import { createHash } from 'node:crypto';
import { ProctorError } from '../errors.js';
import { describeMissing } from './missing-ids.js';
import { excerpt, type SwebenchStatus, type TestStatus } from './report.js';

/** Stable reason codes, stored with every verdict; never renamed, only added to. */
export const REASONS = [
  'PASS',
  'APPLY_FAILED',
  'EXISTING_FAILED',
  'HIDDEN_FAILED',
  'TESTS_MISSING',
  'TIMEOUT',
  'OOM',
  'REPORT_INVALID',
  'PATCH_TOO_LARGE',
  'PATCH_REJECTED',
  'INFRA_ERROR',
  'BASELINE_HIDDEN_PASSED',
  'BASELINE_EXISTING_FAILED',
  'GOLD_FAILED',
  'FLAKY',
  'CANCELLED',
  'BASELINE_HIDDEN_MISSING',
  'BASELINE_EXISTING_MISSING',
  /** A prediction whose patch is null or empty: recorded without running anything. */
  'EMPTY_PATCH',
  /**
   * The run's integrity checks failed (protocol.ts): a sentinel test with the wrong status, or
   * a tripwire of the runner fired. The candidate's code forged, or tried to forge, outcomes.
   */
  'TAMPERED',
  /** The candidate screen (screen.ts) hit, and the task has `[grading] tamper = "fail"`. */
  'TAMPER_SUSPECTED',
  /**
   * An impossible variant (task-impossible.ts) whose gold patch passes: the change to its
   * hidden tests contradicts nothing, so the variant cannot tell a cheat from a fix.
   */
  'IMPOSSIBLE_GOLD_PASSED',
] as const;

export type Reason = (typeof REASONS)[number];

export function isReason(value: unknown): value is Reason {
  return typeof value === 'string' && (REASONS as readonly string[]).includes(value);
}

/** The outcome of one grade or baseline. `verdict` is PASS exactly when `reason` is PASS. */
export interface Verdict {
  verdict: 'PASS' | 'FAIL';
  reason: Reason;
  /** One human-readable line for the oracle log and the status page; bounded. */
  detail: string;
  /** testsHash of the declared IDs that ran, or null when no phase produced a usable report. */
  testsHash: string | null;
}

export function passVerdict(detail: string, hash: string | null): Verdict {
  return { verdict: 'PASS', reason: 'PASS', detail, testsHash: hash };
}

/** A FAIL verdict; also what callers use for reasons decided before any phase runs. */
export function failVerdict(
  reason: Exclude<Reason, 'PASS'>,
  detail: string,
  hash: string | null = null,
): Verdict {
  return { verdict: 'FAIL', reason, detail, testsHash: hash };
}

// ---------------------------------------------------------------------------------------------
// One phase against its declared IDs

export type NotPassedStatus = Exclude<TestStatus, 'passed'>;

export interface PhaseCheck {
  /** Every declared ID is in the report and passed. */
  ok: boolean;
  /** Declared IDs absent from the report, in declared order. */
  missing: string[];
  /** Declared IDs reported with another status than passed, in declared order. */
  notPassed: Array<{ id: string; status: NotPassedStatus }>;
  /** Reported IDs that were not declared, in report order: to be logged, never graded. */
  undeclared: string[];
  /** Declared IDs reported as passed, in declared order. */
  passed: string[];
}

/**
 * Applies the runner contract to one phase: a declared ID missing from the report, or not
 * `passed`, fails the phase; reported IDs that were not declared are listed and ignored.
 * A declared ID listed twice counts once.
 */
export function checkPhase(
  declared: readonly string[],
  report: ReadonlyMap<string, TestStatus>,
): PhaseCheck {
  const wanted = new Set(declared);
  const missing: string[] = [];
  const notPassed: PhaseCheck['notPassed'] = [];
  const passed: string[] = [];
  for (const id of wanted) {
    const status = report.get(id);
    if (status === undefined) missing.push(id);
    else if (status === 'passed') passed.push(id);
    else notPassed.push({ id, status });
  }
  const undeclared = [...report.keys()].filter((id) => !wanted.has(id));
  return {
    ok: missing.length === 0 && notPassed.length === 0,
    missing,
    notPassed,
    undeclared,
    passed,
  };
}

/** What became of each declared ID of a checked phase: its status, or `missing`. */
export type TestOutcome = TestStatus | 'missing';

export function declaredOutcomes(check: PhaseCheck): Map<string, TestOutcome> {
  const outcomes = new Map<string, TestOutcome>();
  for (const id of check.passed) outcomes.set(id, 'passed');
  for (const { id, status } of check.notPassed) outcomes.set(id, status);
  for (const id of check.missing) outcomes.set(id, 'missing');
  return outcomes;
}

/** Declared IDs that ran: reported with a status other than skipped. */
export function idsThatRan(check: PhaseCheck): string[] {
  return [
    ...check.passed,
    ...check.notPassed.filter((t) => t.status !== 'skipped').map((t) => t.id),
  ];
}

// ---------------------------------------------------------------------------------------------
// The gate line

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * The `tests_hash` of the gate output: SHA-256 (lowercase hex) of the UTF-8 bytes of the IDs
 * sorted by UTF-16 code unit (JavaScript's default sort; this differs from byte order only
 * for characters above U+FFFF against U+E000–U+FFFF), de-duplicated and joined with `\n`, with
 * no trailing newline. The empty list hashes the empty string.
 *
 * Pass the declared test IDs that ran, of both phases; the caller decides what ran (for a
 * grade, decideGrade uses idsThatRan: declared IDs reported with a status other than skipped).
 * IDs come from one-per-line files, so one containing a newline would make the hash ambiguous
 * and is refused.
 */
export function testsHash(ids: readonly string[]): string {
  for (const id of ids) {
    if (id.includes('\n')) {
      throw new ProctorError('INTERNAL', `test ID "${excerpt(id)}" contains a newline`);
    }
  }
  const sorted = [...new Set(ids)].sort();
  return createHash('sha256').update(sorted.join('\n'), 'utf8').digest('hex');
}

/** The line the oracle prints for the gate: `tests_hash=<64 hex>`. */
export function gateLine(hash: string): string {
  if (!HEX_SHA256.test(hash)) {
    throw new ProctorError('INTERNAL', `Expected a SHA-256 hex digest, got \`${excerpt(hash)}\``);
  }
  return `tests_hash=${hash}`;
}

// ---------------------------------------------------------------------------------------------
// Grade

export type PhaseName = 'existing' | 'hidden';

/** What happened in one run of `RUNNER LIST REPORT`. */
export interface PhaseOutcome {
  /** The run exceeded its wall-clock limit and was stopped. */
  timedOut: boolean;
  /** The run was killed for exceeding its memory limit. */
  oom: boolean;
  /** Why the report could not be used (absent, too large, malformed), else null. */
  reportError: string | null;
  /**
   * Why the run counts as forged (a sentinel with the wrong status, a tripwire), else null.
   * Only runners that speak protocol 2 are checked; for others it is always null.
   */
  tampered?: string | null;
  /** checkPhase of the parsed report against the declared IDs; null without a usable report. */
  check: PhaseCheck | null;
  /**
   * The usable report's statuses, every ID of it (declared or not), and the `swebench` ones
   * its entries gave: what SWE-bench's rules read (swebench-rules.ts) and what each declared
   * ID's result records. Absent without a usable report.
   */
  report?: {
    tests: ReadonlyMap<string, TestStatus>;
    swebench: ReadonlyMap<string, SwebenchStatus>;
  };
  /** The report's `cause` (the runner's account of why its tests are errors), if any. */
  cause?: string;
}

export interface GradePhases {
  existing: PhaseOutcome;
  /** Absent when the oracle did not run the hidden tests (say, after the existing suite timed out). */
  hidden?: PhaseOutcome;
  /**
   * Under SWE-bench's rules, the one run of both lists after the hidden patch; `existing` and
   * `hidden` are then views of it, the same run with each list's own check.
   */
  tests?: PhaseOutcome;
}

export type Failure = { reason: Exclude<Reason, 'PASS'>; detail: string };
type Rule = (name: PhaseName | 'tests', phase: PhaseOutcome) => Failure | null;

const MAX_LISTED_IDS = 5;
/** Lines of a report's `cause` quoted in a verdict's detail (one line, through excerpt). */
const CAUSE_LINES = 3;

/** The first lines of a report's `cause`, on one bounded line. */
export function causeExcerpt(cause: string): string {
  const lines = cause
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return excerpt(lines.slice(0, CAUSE_LINES).join(' | '));
}

/**
 * `; the runner says: …` when some declared tests of the phase are errors or missing and its
 * report gives a cause (an import error that stopped them all, say), else nothing.
 */
export function causeNote(phase: PhaseOutcome): string {
  const check = phase.check;
  if (phase.cause === undefined || phase.cause.trim() === '' || check === null) return '';
  const erred = check.missing.length > 0 || check.notPassed.some((t) => t.status === 'error');
  return erred ? `; the runner says: ${causeExcerpt(phase.cause)}` : '';
}

export function listIds(ids: readonly string[]): string {
  const shown = ids.slice(0, MAX_LISTED_IDS).map((id) => excerpt(id));
  const more = ids.length - shown.length;
  return more > 0 ? `${shown.join(', ')}, … and ${more} more` : shown.join(', ');
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

// The precedence of failure reasons, most fundamental first. Each rule is tried on the
// existing phase, then the hidden one, before the next rule. A run stopped for time or memory
// leaves at best a partial report, so those come before anything read from the report; an
// unusable report comes before its contents; a declared test that never reported (renamed,
// deleted, collection broke) before tests that ran and failed.
//
// TAMPERED comes first: a forged run's timing, memory and report say nothing true. The first
// four rules are about the run, the last two about the declared IDs in its report.
const RUN_RULES: readonly Rule[] = [
  (name, p) =>
    p.tampered !== undefined && p.tampered !== null
      ? { reason: 'TAMPERED', detail: `${name} phase: ${p.tampered}` }
      : null,
  (name, p) =>
    p.timedOut ? { reason: 'TIMEOUT', detail: `${name} phase exceeded its time limit` } : null,
  (name, p) => (p.oom ? { reason: 'OOM', detail: `${name} phase ran out of memory` } : null),
  (name, p) => {
    if (p.reportError !== null) {
      return { reason: 'REPORT_INVALID', detail: `${name} phase: ${excerpt(p.reportError)}` };
    }
    if (p.check === null) {
      // Neither a report nor a reason for its absence: the harness lost track, not the candidate.
      return { reason: 'INFRA_ERROR', detail: `${name} phase: no report and no report error` };
    }
    return null;
  },
];

const LIST_RULES: readonly Rule[] = [
  (name, p) =>
    p.check !== null && p.check.missing.length > 0
      ? {
          reason: 'TESTS_MISSING',
          detail: `${name} phase: ${plural(p.check.missing.length, 'declared test')} missing from the report: ${listIds(p.check.missing)}${causeNote(p)}`,
        }
      : null,
  (name, p) =>
    p.check !== null && p.check.notPassed.length > 0
      ? {
          reason: name === 'existing' ? 'EXISTING_FAILED' : 'HIDDEN_FAILED',
          detail: `${name} phase: ${plural(p.check.notPassed.length, 'test')} not passed: ${listIds(p.check.notPassed.map((t) => `${t.id} (${t.status})`))}${causeNote(p)}`,
        }
      : null,
];

const RULES: readonly Rule[] = [...RUN_RULES, ...LIST_RULES];

function phasesOf(run: GradePhases): Array<[PhaseName, PhaseOutcome]> {
  const phases: Array<[PhaseName, PhaseOutcome]> = [['existing', run.existing]];
  if (run.hidden !== undefined) phases.push(['hidden', run.hidden]);
  return phases;
}

/**
 * The first failure by the precedence of RULES; with `runOnly`, of the rules about the run
 * alone (TAMPERED, TIMEOUT, OOM, REPORT_INVALID or INFRA_ERROR), not its declared IDs.
 */
export function firstFailure(
  phases: ReadonlyArray<[PhaseName | 'tests', PhaseOutcome]>,
  runOnly = false,
): Failure | null {
  for (const rule of runOnly ? RUN_RULES : RULES) {
    for (const [name, phase] of phases) {
      const failure = rule(name, phase);
      if (failure !== null) return failure;
    }
  }
  return null;
}

/** testsHash over idsThatRan of every phase with a usable report; null when there is none. */
export function runHash(run: GradePhases): string | null {
  const checks = phasesOf(run).flatMap(([, phase]) => (phase.check === null ? [] : [phase.check]));
  return checks.length === 0 ? null : testsHash(checks.flatMap(idsThatRan));
}

/**
 * The verdict of a grade from its two phases. Precedence, first match wins, existing before
 * hidden within a rule: TAMPERED, TIMEOUT, OOM, REPORT_INVALID (INFRA_ERROR if a phase has neither a
 * report nor a report error), TESTS_MISSING, EXISTING_FAILED, HIDDEN_FAILED; then INFRA_ERROR
 * if the hidden phase did not run; else PASS. Reasons decided before the phases
 * (APPLY_FAILED, PATCH_TOO_LARGE, PATCH_REJECTED, CANCELLED, …) are the caller's failVerdict.
 */
export function decideGrade(phases: GradePhases): Verdict {
  const hash = runHash(phases);
  const failure = firstFailure(phasesOf(phases));
  if (failure !== null) return failVerdict(failure.reason, failure.detail, hash);
  if (phases.hidden === undefined) {
    return failVerdict('INFRA_ERROR', 'hidden phase did not run', hash);
  }
  const existing = phases.existing.check?.passed.length ?? 0;
  const hidden = phases.hidden.check?.passed.length ?? 0;
  return passVerdict(
    `${plural(existing, 'existing test')} and ${plural(hidden, 'hidden test')} passed`,
    hash,
  );
}

// ---------------------------------------------------------------------------------------------
// Baseline

/**
 * IDs whose outcome is not the same in every run, sorted by code unit. An ID absent from some
 * runs' maps but present in others has flipped too. Fewer than two runs flip nothing.
 */
export function findFlaky<V>(runs: ReadonlyArray<ReadonlyMap<string, V>>): string[] {
  const ids = new Set<string>();
  for (const run of runs) for (const id of run.keys()) ids.add(id);
  const flipped: string[] = [];
  for (const id of ids) {
    const first = runs[0]?.has(id) ?? false;
    const value = runs[0]?.get(id);
    if (runs.some((run) => run.has(id) !== first || run.get(id) !== value)) flipped.push(id);
  }
  return flipped.sort();
}

/** How a phase ended, at the level that must agree across repeated baselines. */
function phaseEnding(phase: PhaseOutcome | undefined): string {
  if (phase === undefined) return 'not run';
  if (phase.timedOut) return 'timed out';
  if (phase.oom) return 'ran out of memory';
  if (phase.reportError !== null || phase.check === null) return 'had no usable report';
  return 'reported';
}

/** The declared IDs of one phase whose outcome differs between repeated baseline runs. */
function flippedIn(runs: readonly GradePhases[], name: PhaseName): string[] {
  const outcomes = runs.flatMap((run) => {
    const check = run[name]?.check;
    return check === null || check === undefined ? [] : [declaredOutcomes(check)];
  });
  return findFlaky(outcomes);
}

/**
 * Every declared ID that flipped between repeated baseline runs, existing then hidden, each
 * once: what a baseline result records as its flaky tests (the FLAKY detail names only the
 * first few).
 */
export function flakyTests(runs: readonly GradePhases[]): string[] {
  if (runs.length < 2) return [];
  return [...new Set([...flippedIn(runs, 'existing'), ...flippedIn(runs, 'hidden')])];
}

export function flakyDetail(runs: readonly GradePhases[]): string | null {
  const parts: string[] = [];
  for (const name of ['existing', 'hidden'] as const) {
    const endings = runs.map((run) => phaseEnding(run[name]));
    if (new Set(endings).size > 1) {
      parts.push(`${name} phase ${endings.map((e, i) => `${e} in run ${i + 1}`).join(', ')}`);
    }
    const flipped = flippedIn(runs, name);
    if (flipped.length > 0) {
      parts.push(`${name} tests that flipped: ${listIds(flipped)}`);
    }
  }
  return parts.length === 0 ? null : parts.join('; ');
}

export interface BaselineInput {
  /** The baseline runs (no diff applied), in order; more than one to detect flaky tests. */
  runs: readonly GradePhases[];
  /** The grade of the gold patch, when the bundle has one. */
  gold?: Verdict;
}

/** The detail of BASELINE_*_MISSING: the missing IDs, each with the nearest reported one. */
export function missingDetail(phase: PhaseName, check: PhaseCheck, where: string): string {
  return describeMissing({
    phase,
    missing: check.missing,
    declared: check.missing.length + check.notPassed.length + check.passed.length,
    reported: check.undeclared,
    where,
  });
}

/**
 * What every baseline decision (Proctor's rules and SWE-bench's) starts from: the first run's
 * tests hash (and the run), whether there are several runs (each detail then names its run), and the FLAKY
 * verdict when they disagree, which comes before anything one run says.
 */
export function baselineStart(input: BaselineInput): {
  first: GradePhases;
  hash: string | null;
  several: boolean;
  flaky: Verdict | null;
} {
  const [first] = input.runs;
  if (first === undefined) throw new ProctorError('INTERNAL', 'decideBaseline needs a run');
  const hash = runHash(first);
  const several = input.runs.length > 1;
  const flaky = several ? flakyDetail(input.runs) : null;
  return {
    first,
    hash,
    several,
    flaky: flaky === null ? null : failVerdict('FLAKY', flaky, hash),
  };
}

/**
 * Whether a task is sound: without a diff the existing suite must PASS and every hidden test
 * must be in the report and FAIL, repeatably, and the gold patch (if any) must PASS. A FAIL
 * verdict quarantines the task. Precedence: FLAKY (repeated runs disagree: then no single run
 * can be trusted), then per run in order BASELINE_EXISTING_MISSING (a declared existing ID
 * absent from a usable report), BASELINE_EXISTING_FAILED, BASELINE_HIDDEN_MISSING and
 * BASELINE_HIDDEN_PASSED, then GOLD_FAILED. A declared ID the report never holds is not a
 * failing test but one that never ran under that name (most often an ID in another format
 * than the runner reports), which would fail every grade. Otherwise any failure of the hidden
 * phase counts as failing (a timeout or a crash can be the very bug the task is about); a
 * runner that can never pass is caught by the gold patch. INFRA_ERROR and CANCELLED pass
 * through unchanged, as they say nothing about the task. `testsHash` is that of the first run.
 */
export function decideBaseline(input: BaselineInput): Verdict {
  const { first, hash, several, flaky } = baselineStart(input);
  if (flaky !== null) return flaky;

  for (const [index, run] of input.runs.entries()) {
    const where = several ? ` (run ${index + 1})` : '';
    const existing = firstFailure([['existing', run.existing]]);
    if (existing?.reason === 'INFRA_ERROR')
      return failVerdict('INFRA_ERROR', existing.detail, hash);
    if (existing?.reason === 'TESTS_MISSING' && run.existing.check !== null) {
      const detail = missingDetail('existing', run.existing.check, where);
      return failVerdict('BASELINE_EXISTING_MISSING', detail, hash);
    }
    if (existing?.reason === 'TAMPERED') {
      return failVerdict('TAMPERED', `without a diff${where}: ${existing.detail}`, hash);
    }
    if (existing !== null) {
      return failVerdict(
        'BASELINE_EXISTING_FAILED',
        `existing suite fails without a diff${where}: ${existing.reason}: ${existing.detail}`,
        hash,
      );
    }
    if (run.hidden === undefined) {
      return failVerdict('INFRA_ERROR', `hidden phase did not run${where}`, hash);
    }
    const hidden = firstFailure([['hidden', run.hidden]]);
    if (hidden?.reason === 'INFRA_ERROR') return failVerdict('INFRA_ERROR', hidden.detail, hash);
    // Without a diff nothing can forge: a failed integrity check means the runner does not
    // keep its protocol in this image, and every grade would fail the same way.
    if (hidden?.reason === 'TAMPERED') {
      return failVerdict('TAMPERED', `without a diff${where}: ${hidden.detail}`, hash);
    }
    if (hidden?.reason === 'TESTS_MISSING' && run.hidden.check !== null) {
      const detail = missingDetail('hidden', run.hidden.check, where);
      return failVerdict('BASELINE_HIDDEN_MISSING', detail, hash);
    }
    if (hidden === null) {
      const count = run.hidden.check?.passed.length ?? 0;
      return failVerdict(
        'BASELINE_HIDDEN_PASSED',
        `all ${plural(count, 'hidden test')} pass without the fix${where}`,
        hash,
      );
    }
  }

  const gold = input.gold;
  if (gold !== undefined && gold.verdict !== 'PASS') {
    if (gold.reason === 'INFRA_ERROR' || gold.reason === 'CANCELLED') {
      return failVerdict(gold.reason, `gold patch: ${excerpt(gold.detail)}`, hash);
    }
    return failVerdict(
      'GOLD_FAILED',
      `gold patch does not pass: ${gold.reason}: ${excerpt(gold.detail)}`,
      hash,
    );
  }

  const alreadyPassing = first.hidden?.check?.passed ?? [];
  const note =
    alreadyPassing.length > 0
      ? `; hidden tests already passing without the fix: ${listIds(alreadyPassing)}`
      : '';
  return passVerdict(
    `existing suite passes and hidden tests fail without the fix${several ? ` in all ${input.runs.length} runs` : ''}${gold === undefined ? '' : '; gold patch passes'}${note}`,
    hash,
  );
}
