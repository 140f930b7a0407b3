// The hidden tests' preparation: the trusted steps between the existing suite's run (or the
// workspace's start, under SWE-bench's rules) and the run with the hidden tests, as the task
// uid, in this order:
//   0. the existing suite's collect, when there is one: every process of the task killed (the
//      exec's first act, KILL_TASK), then its report read (COLLECT_SCRIPT); from here on no
//      process of the task runs; or, under SWE-bench's rules, where no test has run yet, the
//      candidate's diff (candidateApplyStep: an exec of its own would cost a round trip);
//   1. the hidden test patch, from the host on stdin, never from the diff (APPLY_SCRIPT);
//   2. the canaries of the hidden tests and of a sample of the existing ones, for a protocol-2
//      runner that places them: a Python runner's own step (canaries.ts), or, for a JavaScript
//      runner, a step that reads the test files, Proctor's mutator on the host, and a step that
//      writes every mutated file back (js-canary-step.ts);
//   3. the work tree's git made anew (TREE_SCRIPT, evaluate-tree.ts), the last preparation:
//      nothing changes the tree after it.
// They run in as few execs as the host's part allows (prepare-steps.ts), each step its own
// script with its own arguments, input and timeout, and each reported apart (its exit, its
// output, its time): one exec in all, or two for a JavaScript runner with files to mutate (the
// collect, the apply and the read; then the write and the tree, an exec that starts while
// Proctor mutates the files and takes them on stdin once they are made).
import { ProctorError } from '../errors.js';
import { TEMPLATE_MOUNT, type ExecResult } from '../sandbox/index.js';
import {
  canaryRecord,
  canaryStep,
  runnerPlacesCanaries,
  withExistingSample,
  type CanaryRecord,
} from './canaries.js';
import {
  checkAborted,
  collectStep,
  commandRecord,
  finishPhase,
  lastLines,
  requireRunning,
  type CommandRecord,
  type PhaseContext,
  type StartedPhase,
} from './evaluate-phase.js';
import {
  APPLY_SCRIPT,
  APPLY_TIMEOUT_MS,
  ASSET,
  TREE_SCRIPT,
  TREE_TIMEOUT_MS,
  asset,
} from './evaluate-scripts.js';
import { treeOutcome, type TestTree } from './evaluate-tree.js';
import { failVerdict, type PhaseOutcome, type Verdict } from './verdict.js';
import {
  jsCanaryDialect,
  jsReadStep,
  jsCanariesFailed,
  jsLaterWriteStep,
  jsWriteOutcome,
  mutateJsFiles,
  planJsCanaries,
  type JsCanaryPlan,
} from './js-canary-step.js';
import {
  PREPARE_STDERR_BYTES,
  prepareCommand,
  readPreparedSteps,
  stepTimedOut,
  type PrepStep,
} from './prepare-steps.js';

/** The candidate's diff, applied first, did not apply (`candidateApply` says why). */
export interface CandidateApplyFailed {
  collected: null;
  candidateApply: CommandRecord;
  candidateFailed: true;
  hiddenApply: null;
  applyFailed: null;
}

/** The hidden test patch did not apply (`applyFailed` says why): the run ends here. */
export interface HiddenApplyFailed {
  /** The outcome of the phase collected first, when one was given. */
  collected: PhaseOutcome | null;
  /** The candidate's apply, when it was this preparation's first step. */
  candidateApply: CommandRecord | null;
  candidateFailed: false;
  hiddenApply: CommandRecord;
  applyFailed: string;
}

export interface HiddenPrepared {
  /** The outcome of the phase collected first, when one was given. */
  collected: PhaseOutcome | null;
  /** The candidate's apply, when it was this preparation's first step. */
  candidateApply: CommandRecord | null;
  candidateFailed: false;
  /** The hidden test patch's apply; null when the patch is empty. */
  hiddenApply: CommandRecord | null;
  applyFailed: null;
  /** The canaries placed, when the runner places them. */
  canaries?: CanaryRecord;
  /** The work tree's repository (with a verdict when it could not be made). */
  tree: TestTree;
}

export type HiddenPreparation = CandidateApplyFailed | HiddenApplyFailed | HiddenPrepared;

/** The canaries a phase gets: none, a Python runner's step, or a JavaScript runner's plan. */
export type PlannedCanaries =
  { kind: 'python'; step: PrepStep } | { kind: 'js'; plan: JsCanaryPlan } | null;

/**
 * The canaries of the hidden tests and of a sample of the existing ones, or null when none is
 * placed: only a protocol-2 phase's request can carry the canaries' ids to the test side, and
 * only a runner that says so places them.
 */
export function planCanaries(phase: PhaseContext, runner: Buffer): PlannedCanaries {
  if (phase.protocol === undefined) return null;
  const js = jsCanaryDialect(runner, phase.bundle.testsEnv);
  if (js === null && !runnerPlacesCanaries(runner)) return null;
  const hidden = phase.lists[ASSET.hidden];
  if (hidden === undefined) throw new ProctorError('INTERNAL', `no ID list named ${ASSET.hidden}`);
  const ids = withExistingSample(hidden, phase.bundle.hiddenIds, phase.bundle.existingIds);
  // The in-file sentinels follow the hidden tests alone (the list's first hidden.length
  // bytes): the hidden run reports those, not always the sampled existing ones.
  return js === null
    ? {
        kind: 'python',
        step: canaryStep(
          phase.bundle.workdir,
          ids,
          phase.patchHeaders,
          hidden.length,
          phase.protocol?.code,
        ),
      }
    : { kind: 'js', plan: planJsCanaries(js, ids, phase.patchHeaders, hidden.length) };
}

/**
 * The candidate's diff (its asset), as the separate exec of evaluate.ts applies it, as a step:
 * named `apply`, its time counts as that exec's did.
 */
export function candidateApplyStep(): PrepStep {
  return {
    name: 'apply',
    script: APPLY_SCRIPT,
    args: [asset(ASSET.candidate)],
    stdin: Buffer.alloc(0),
    timeoutMs: APPLY_TIMEOUT_MS,
    keepBytes: PREPARE_STDERR_BYTES,
    stopOnFailure: true,
  };
}

/** The verdict of a candidate whose diff does not apply (its apply's record). */
export function candidateApplyVerdict(
  applied: Pick<CommandRecord, 'exitCode' | 'timedOut' | 'stderr'>,
): Verdict {
  return failVerdict(
    'APPLY_FAILED',
    applied.timedOut
      ? 'git apply did not finish in time'
      : `the diff does not apply: ${lastLines(applied.stderr) || `exit code ${String(applied.exitCode)}`}`,
  );
}

/** The hidden test patch's apply: on stdin, into a private folder for the apply alone. */
export function hiddenApplyStep(patch: Buffer): PrepStep {
  return {
    name: 'hidden_apply',
    script: APPLY_SCRIPT,
    args: ['-'],
    stdin: patch,
    timeoutMs: APPLY_TIMEOUT_MS,
    keepBytes: PREPARE_STDERR_BYTES,
    stopOnFailure: true,
  };
}

/** The work tree's git; `candidate`: a candidate diff was applied (the commit leaves it out). */
export function testTreeStep(candidate: boolean): PrepStep {
  return {
    name: 'test_tree',
    script: TREE_SCRIPT,
    args: [candidate ? asset(ASSET.candidate) : '', TEMPLATE_MOUNT],
    stdin: Buffer.alloc(0),
    timeoutMs: TREE_TIMEOUT_MS,
    keepBytes: PREPARE_STDERR_BYTES,
    stopOnFailure: true,
  };
}

/** The JavaScript canary steps' times count as the canaries', as the host's part does. */
const TIMING: Readonly<Record<string, string>> = {
  canary_read: 'canaries',
  canary_write: 'canaries',
};

const KILLS_FIRST = new Set(['collect']);

/** One exec of `steps`: its result, and each step's record, by name, for those it reported. */
async function runSteps(
  phase: PhaseContext,
  steps: readonly PrepStep[],
): Promise<{ run: ExecResult; records: Map<string, CommandRecord> }> {
  // A phase's collect kills every process of the task before anything else runs.
  const command = prepareCommand(steps, { killFirst: steps.some((s) => KILLS_FIRST.has(s.name)) });
  const run = await phase.timed('hidden_prep', () =>
    phase.exec(command.cmd, command.timeoutMs, command.outputBytes, { stdin: command.stdin }),
  );
  checkAborted(phase.signal, run);
  // A container that died under the exec says nothing about the candidate.
  await requireRunning(phase.docker, phase.containerId, run);
  const read = readPreparedSteps(run.stdout, steps);
  const records = new Map<string, CommandRecord>();
  for (const step of steps) {
    const done = read.get(step.name);
    if (done === undefined) continue;
    if (done.ms !== null) phase.addTime?.(TIMING[step.name] ?? step.name, done.ms);
    records.set(step.name, {
      exitCode: done.exitCode,
      timedOut: stepTimedOut(done, step.timeoutMs),
      durationMs: done.ms ?? run.durationMs,
      stdout: done.stdout.toString('utf8'),
      stderr: done.stderr,
      stdoutBytes: done.stdoutBytes,
      stderrBytes: done.stderrBytes,
      truncated: done.truncated,
    });
  }
  return { run, records };
}

/** A step the exec never reported (it was cut short): the whole exec's record stands for it. */
function missingRecord(whole: ExecResult): CommandRecord {
  const record = commandRecord(whole);
  return {
    ...record,
    // The exec's stdout is the other steps' frames; its stderr is the script's own.
    stdout: '',
    stdoutBytes: 0,
    exitCode: whole.exitCode === 0 ? null : whole.exitCode,
  };
}

/**
 * Runs the hidden tests' preparation (see the top of this file). `candidate`: whether a
 * candidate diff was applied (the tree's commit then leaves it out). `collect`: a phase whose
 * runner has run (the existing suite): its collect (every process of the task killed, then its
 * report read) is the first exec's first step, and its outcome is returned as `collected`.
 * `applyCandidate` (never with `collect`): the candidate's diff is applied first, and the
 * preparation ends there when it does not apply.
 */
export async function prepareHiddenRun(
  phase: PhaseContext,
  input: {
    runner: Buffer;
    hiddenPatch: Buffer;
    candidate: boolean;
    collect?: StartedPhase;
    applyCandidate?: boolean;
  },
): Promise<HiddenPreparation> {
  const workdir = phase.bundle.workdir;
  if (input.applyCandidate && (input.collect || !input.candidate)) {
    throw new ProctorError('INTERNAL', 'a candidate applied first needs a diff and no collect');
  }
  const collect = input.collect ? collectStep(input.collect) : null;
  const candidateApply = input.applyCandidate ? candidateApplyStep() : null;
  const apply = input.hiddenPatch.length > 0 ? hiddenApplyStep(input.hiddenPatch) : null;
  const tree = testTreeStep(input.candidate);
  // A canary catches a candidate's code making a test vacuous; a run without a diff (a
  // baseline's) has none, and its mutants could only raise false alarms (django 11179's turned
  // over assertion beside its failing test) and cost the run its step and their executions.
  const canaries = input.candidate ? planCanaries(phase, input.runner) : null;
  // A JavaScript runner's files go to the host between the two execs; with none to read, one.
  const read =
    canaries?.kind === 'js' && canaries.plan.files.length > 0
      ? jsReadStep(workdir, canaries.plan)
      : null;
  const first = [
    collect,
    candidateApply,
    apply,
    canaries?.kind === 'python' ? canaries.step : null,
    read,
    read === null ? tree : null,
  ].filter((step) => step !== null);
  let { run, records } = await runSteps(phase, first);
  const recordOf = (step: PrepStep) => records.get(step.name) ?? missingRecord(run);

  const collected =
    input.collect && collect
      ? await finishPhase(phase, input.collect, recordOf(collect), 'exec')
      : null;
  const applied = candidateApply === null ? null : recordOf(candidateApply);
  if (applied !== null && applied.exitCode !== 0) {
    return {
      collected: null,
      candidateApply: applied,
      candidateFailed: true,
      hiddenApply: null,
      applyFailed: null,
    };
  }
  let hiddenApply: CommandRecord | null = null;
  if (apply !== null) {
    hiddenApply = recordOf(apply);
    if (hiddenApply.exitCode !== 0) {
      const why = hiddenApply.timedOut
        ? 'git apply did not finish in time'
        : lastLines(hiddenApply.stderr) || `exit code ${String(hiddenApply.exitCode)}`;
      return {
        collected,
        candidateApply: applied,
        candidateFailed: false,
        hiddenApply,
        applyFailed: why,
      };
    }
  }
  let placed: CanaryRecord | undefined;
  if (canaries?.kind === 'python') {
    // A step the exec never reported failed: its record says why, and none is placed.
    placed = canaryRecord(recordOf(canaries.step));
  } else if (canaries?.kind === 'js') {
    placed = canaries.plan.record;
    if (read !== null) {
      const { plan } = canaries;
      const readRecord = recordOf(read);
      // Proctor mutates the files once the exec that writes them has started: the mutation
      // (0.1-0.2 s for a large test file in a fresh process) overlaps the exec's start.
      let mutation: Promise<ReturnType<typeof mutateJsFiles>> | undefined;
      const write = jsLaterWriteStep(workdir, () => {
        mutation = phase.timed('canaries', () =>
          Promise.resolve().then(() => mutateJsFiles(plan, readRecord)),
        );
        return mutation.then((m) => m.writes);
      });
      ({ run, records } = await runSteps(phase, [write, tree]));
      // A mutator that threw fails the job, as it did before the exec.
      const mutated = await mutation;
      placed =
        mutated === undefined
          ? jsCanariesFailed('its exec never asked for the files')
          : mutated.writes.length === 0
            ? mutated.record
            : jsWriteOutcome(mutated.record, mutated.writes, records.get(write.name) ?? null);
    }
  }
  return {
    collected,
    candidateApply: applied,
    candidateFailed: false,
    hiddenApply,
    applyFailed: null,
    ...(placed ? { canaries: placed } : {}),
    tree: treeOutcome(recordOf(tree)),
  };
}
