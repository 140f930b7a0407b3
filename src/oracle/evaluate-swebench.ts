// The run of a task with `[grading] rules = "swebench"`, in the evaluator container: as
// SWE-bench's harness runs an instance, the candidate's diff, the hidden test patch, then ONE
// runner run on FAIL_TO_PASS and PASS_TO_PASS together (hidden.txt then existing.txt, each ID
// once: the tests.txt asset) under test_seconds, collected like any phase (the protocol-2
// collector and its sentinels included). Its report is then read twice, once per list, into
// the `existing` and `hidden` views that swebench-verdict.ts grades.
import type { Bundle } from './bundle.js';
import type { CommandRecord, PhaseContext } from './evaluate-phase.js';
import { ASSET } from './evaluate-scripts.js';
import { candidateApplyVerdict, prepareHiddenRun, runPrepared } from './evaluate-prepare.js';
import { decideSwebenchGrade } from './swebench-verdict.js';
import { checkPhase, failVerdict, type GradePhases, type Verdict } from './verdict.js';

/**
 * The tests.txt asset: the IDs of hidden.txt and existing.txt, each once, sorted, a line each.
 * Sorted, not hidden.txt's first: the one run's list reaches the runner, where the order would
 * tell the hidden tests from the rest.
 */
export function swebenchList(bundle: Pick<Bundle, 'hiddenIds' | 'existingIds'>): Buffer {
  const ids = [...new Set([...bundle.hiddenIds, ...bundle.existingIds])].sort();
  return Buffer.from(ids.map((id) => `${id}\n`).join(''), 'utf8');
}

export interface SwebenchRun {
  verdict: Verdict;
  /** Null when the run ended before the runner (the hidden patch did not apply). */
  phases: GradePhases | null;
  /** The candidate's apply; null without a diff. */
  apply: CommandRecord | null;
  hiddenApply: CommandRecord | null;
  testTree: CommandRecord | null;
}

export async function runSwebenchTests(
  phase: PhaseContext,
  input: { runner: Buffer; hiddenPatch: Buffer; baseline: boolean; candidate: boolean },
): Promise<SwebenchRun> {
  const { bundle } = phase;
  // The candidate's diff, the hidden test patch, the canaries of the FAIL_TO_PASS tests
  // (hidden.txt) and of a sample of the PASS_TO_PASS ones, and the work tree's git, in one exec
  // (evaluate-prepare.ts): the canaries go in before the tree is committed, so git shows them
  // as any other test, and nothing changes the tree after it.
  const prepared = await prepareHiddenRun(phase, {
    runner: input.runner,
    hiddenPatch: input.hiddenPatch,
    candidate: input.candidate,
    applyCandidate: input.candidate,
  });
  if (prepared.candidateFailed) {
    return {
      verdict: candidateApplyVerdict(prepared.candidateApply),
      phases: null,
      apply: prepared.candidateApply,
      hiddenApply: null,
      testTree: null,
    };
  }
  const apply = prepared.candidateApply;
  const hiddenApply = prepared.hiddenApply;
  if (prepared.applyFailed !== null) {
    const why = prepared.applyFailed;
    const detail = input.baseline
      ? `tests/hidden.patch does not apply at base_commit: ${why}`
      : `tests/hidden.patch does not apply after the candidate's changes: ${why}`;
    return {
      verdict: failVerdict('APPLY_FAILED', detail),
      phases: null,
      apply,
      hiddenApply,
      testTree: null,
    };
  }
  const declared = [...new Set([...bundle.hiddenIds, ...bundle.existingIds])];
  const ran = await runPrepared(phase, prepared, 'tests', ASSET.tests, declared);
  const tree = ran.tree;
  if (ran.outcome === null) {
    const verdict = tree.verdict ?? failVerdict('INFRA_ERROR', 'the run never started');
    return { verdict, phases: null, apply, hiddenApply, testTree: tree.record };
  }
  const tests = ran.outcome;
  const view = (ids: readonly string[]) => ({
    ...tests,
    check: tests.report === undefined ? null : checkPhase(ids, tests.report.tests),
  });
  const phases: GradePhases = {
    existing: view(bundle.existingIds),
    hidden: view(bundle.hiddenIds),
    tests,
  };
  return {
    verdict: decideSwebenchGrade(phases),
    phases,
    apply,
    hiddenApply,
    testTree: tree.record,
  };
}
