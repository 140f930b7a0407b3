// The verdicts of a task with `[grading] rules = "swebench"` (task-schema.ts): a grade is PASS
// exactly when SWE-bench's harness would call the instance resolved (swebench-rules.ts), and a
// baseline keeps Proctor's quarantine rules read through SWE-bench's success. The run is one
// (`tests`: both lists after the hidden patch); `existing` and `hidden` are its views, each
// with its list's check, so that tests_hash, flaky detection and the per-test results read
// them as they read Proctor's two phases. Integrity comes first whatever the rules: a forged,
// stopped or unreadable run is graded as under Proctor's rules.
import {
  gradeList,
  statusMap,
  unreported,
  type ListGrade,
  type SwebenchList,
} from '../grading/swebench-rules.js';
import {
  baselineStart,
  causeNote,
  declaredOutcomes,
  failVerdict,
  firstFailure,
  listIds,
  missingDetail,
  passVerdict,
  plural,
  runHash,
  type BaselineInput,
  type GradePhases,
  type PhaseName,
  type PhaseOutcome,
  type Verdict,
} from './verdict.js';

const LIST_OF: Record<PhaseName, SwebenchList> = {
  existing: 'PASS_TO_PASS',
  hidden: 'FAIL_TO_PASS',
};

/** The one run of a SWE-bench grade, or the INFRA_ERROR verdict when there is none. */
function theRun(phases: GradePhases): PhaseOutcome | Verdict {
  if (phases.tests === undefined || phases.hidden === undefined) {
    return failVerdict('INFRA_ERROR', 'the tests did not run', runHash(phases));
  }
  return phases.tests;
}

function isVerdict(value: PhaseOutcome | Verdict): value is Verdict {
  return 'verdict' in value;
}

/** Both lists graded against the run's status map; null without a usable report. */
function gradeLists(phases: GradePhases): Record<PhaseName, ListGrade> | null {
  const report = phases.tests?.report;
  if (report === undefined) return null;
  const map = statusMap(report);
  const ids = (name: PhaseName) => {
    const check = phases[name]?.check;
    return check ? [...declaredOutcomes(check).keys()] : [];
  };
  return {
    existing: gradeList('PASS_TO_PASS', ids('existing'), map),
    hidden: gradeList('FAIL_TO_PASS', ids('hidden'), map),
  };
}

function failures(name: PhaseName, grade: ListGrade, phase: PhaseOutcome | undefined): string {
  const shown = grade.failure.map((t) => `${t.id} (${t.status})`);
  const verb = name === 'existing' ? 'not maintained' : 'not passed';
  return `${name} tests (${LIST_OF[name]}): ${plural(grade.failure.length, 'test')} ${verb} by SWE-bench's rules: ${listIds(shown)}${phase ? causeNote(phase) : ''}`;
}

/**
 * A grade by SWE-bench's rules. Precedence: TAMPERED, TIMEOUT, OOM, REPORT_INVALID (or
 * INFRA_ERROR) of the run; then EXISTING_FAILED (a PASS_TO_PASS ID failed, erred or was not
 * recorded), HIDDEN_FAILED (a FAIL_TO_PASS ID was not PASSED or XFAIL); else PASS. An ID the
 * report lacks is not TESTS_MISSING here but a failure with status ABSENT, as in SWE-bench.
 */
export function decideSwebenchGrade(phases: GradePhases): Verdict {
  const hash = runHash(phases);
  const run = theRun(phases);
  if (isVerdict(run)) return run;
  const failure = firstFailure([['tests', run]], true);
  if (failure !== null) return failVerdict(failure.reason, failure.detail, hash);
  const graded = gradeLists(phases);
  if (graded === null) return failVerdict('INFRA_ERROR', 'tests phase: no report', hash);
  if (graded.existing.failure.length > 0) {
    return failVerdict(
      'EXISTING_FAILED',
      failures('existing', graded.existing, phases.existing),
      hash,
    );
  }
  if (graded.hidden.failure.length > 0) {
    return failVerdict('HIDDEN_FAILED', failures('hidden', graded.hidden, phases.hidden), hash);
  }
  return passVerdict(
    `resolved by SWE-bench's rules: ${plural(graded.existing.success.length, 'existing test')} maintained and ${plural(graded.hidden.success.length, 'hidden test')} passed`,
    hash,
  );
}

/**
 * Whether a baseline run's unmaintained existing tests are excused: every one is ABSENT (it
 * never ran: the hidden tests, applied without the fix, stop its package building or its module
 * loading, as a Go package whose new test calls a method only the fix adds), a hidden test fails
 * too, and the gold patch is resolved, so that the same tests do run and pass in this
 * environment once the fix is there. SWE-bench's harness runs no baseline, and its datasets
 * list such tests in PASS_TO_PASS; without a gold run nothing shows them passing, and the task
 * stays quarantined.
 */
function unbuiltExcused(graded: Record<PhaseName, ListGrade>, gold: Verdict | undefined): boolean {
  return (
    gold?.verdict === 'PASS' &&
    graded.hidden.failure.length > 0 &&
    graded.existing.failure.every((test) => test.status === 'ABSENT')
  );
}

/**
 * A baseline by SWE-bench's rules, Proctor's quarantine rules read through SWE-bench's
 * success: FLAKY; then per run INFRA_ERROR, TAMPERED, a run that timed out or ran out of
 * memory or has no usable report (BASELINE_EXISTING_FAILED: nothing shows the existing tests
 * pass), BASELINE_EXISTING_MISSING (an existing ID nothing in the report stands for),
 * BASELINE_EXISTING_FAILED (one not maintained), BASELINE_HIDDEN_MISSING, BASELINE_HIDDEN_PASSED
 * (every hidden ID already succeeds); then GOLD_FAILED (the gold patch is not resolved). Existing
 * tests that only failed to run without the fix are excused when the gold patch resolves
 * (unbuiltExcused).
 */
export function decideSwebenchBaseline(input: BaselineInput): Verdict {
  const { first, hash, several, flaky } = baselineStart(input);
  if (flaky !== null) return flaky;
  const unbuilt = new Set<string>();

  for (const [index, phases] of input.runs.entries()) {
    const where = several ? ` (run ${index + 1})` : '';
    const run = theRun(phases);
    if (isVerdict(run)) return failVerdict('INFRA_ERROR', `${run.detail}${where}`, hash);
    const failure = firstFailure([['tests', run]], true);
    if (failure?.reason === 'INFRA_ERROR') return failVerdict('INFRA_ERROR', failure.detail, hash);
    if (failure?.reason === 'TAMPERED') {
      return failVerdict('TAMPERED', `without a diff${where}: ${failure.detail}`, hash);
    }
    if (failure !== null) {
      return failVerdict(
        'BASELINE_EXISTING_FAILED',
        `the tests fail without a diff${where}: ${failure.reason}: ${failure.detail}`,
        hash,
      );
    }
    const graded = gradeLists(phases);
    const report = run.report;
    if (graded === null || report === undefined) {
      return failVerdict('INFRA_ERROR', `tests phase: no report${where}`, hash);
    }
    for (const name of ['existing', 'hidden'] as const) {
      const check = phases[name]?.check;
      const missing = check ? unreported([...declaredOutcomes(check).keys()], report) : [];
      if (check && missing.length > 0) {
        const reason =
          name === 'existing' ? 'BASELINE_EXISTING_MISSING' : 'BASELINE_HIDDEN_MISSING';
        return failVerdict(reason, missingDetail(name, { ...check, missing }, where), hash);
      }
      if (name === 'existing' && graded.existing.failure.length > 0) {
        if (unbuiltExcused(graded, input.gold)) {
          for (const test of graded.existing.failure) unbuilt.add(test.id);
          continue;
        }
        return failVerdict(
          'BASELINE_EXISTING_FAILED',
          `existing tests fail without a diff${where}: ${failures('existing', graded.existing, phases.existing)}`,
          hash,
        );
      }
    }
    if (graded.hidden.failure.length === 0) {
      return failVerdict(
        'BASELINE_HIDDEN_PASSED',
        `all ${plural(graded.hidden.success.length, 'hidden test')} pass by SWE-bench's rules without the fix${where}`,
        hash,
      );
    }
  }

  const gold = input.gold;
  if (gold !== undefined && gold.verdict !== 'PASS') {
    if (gold.reason === 'INFRA_ERROR' || gold.reason === 'CANCELLED') {
      return failVerdict(gold.reason, `gold patch: ${gold.detail}`, hash);
    }
    return failVerdict(
      'GOLD_FAILED',
      `gold patch is not resolved: ${gold.reason}: ${gold.detail}`,
      hash,
    );
  }
  const already = gradeLists(first)?.hidden.success ?? [];
  const note =
    already.length > 0 ? `; hidden tests already passing without the fix: ${listIds(already)}` : '';
  const absent =
    unbuilt.size > 0
      ? `; ${plural(unbuilt.size, 'existing test')} did not run without the fix (ABSENT to SWE-bench's parser: the hidden tests do not build or load without it) and the gold patch maintains them: ${listIds([...unbuilt])}`
      : '';
  return passVerdict(
    `by SWE-bench's rules the existing tests are maintained and hidden tests fail without the fix${several ? ` in all ${input.runs.length} runs` : ''}${gold === undefined ? '' : '; gold patch resolved'}${absent}${note}`,
    hash,
  );
}
