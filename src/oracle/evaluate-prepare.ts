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
// output, its time): one exec in all, or, for a JavaScript runner with files to mutate, the
// collect, the apply and the read in one, then the write and the tree first in the hidden
// run's own exec (StepsBefore, runPrepared), which starts while Proctor mutates the files and
// takes them on stdin once they are made.
// For a node or vitest runner, a sampled existing test in a file no hidden test names gets its
// mutants in the existing run instead (splitSample, prepareExistingRun): the read in the
// candidate's apply's exec, the write and the tree first in the existing run's exec, and the
// file written back as it was read (`canary_restore`) right after the existing suite's collect.
import { ProctorError } from '../errors.js';
import { TEMPLATE_MOUNT, type ExecResult } from '../sandbox/index.js';
import {
  canaryRecord,
  canaryStep,
  runnerPlacesCanaries,
  existingSample,
  withIds,
  type CanaryRecord,
} from './canaries.js';
import {
  checkAborted,
  collectPhase,
  collectStep,
  commandRecord,
  finishPhase,
  lastLines,
  requireRunning,
  runPhase,
  startPhaseAfterSteps,
  stepRecords,
  type CommandRecord,
  type PhaseContext,
  type RunName,
  type StartedPhase,
  type StepsBefore,
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
  jsWriteStep,
  fileOf as jsFileOf,
  mutateJsFiles,
  parseRead,
  planJsCanaries,
  type JsCanaryPlan,
  type JsWrite,
} from './js-canary-step.js';
import type { JsDialect } from './js-canaries.js';
import {
  PREPARE_STDERR_BYTES,
  prepareCommand,
  readPreparedSteps,
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
  /** The canaries placed, when the runner places them (with `before`: once they ran). */
  canaries?: CanaryRecord;
  /**
   * The work tree's repository (with a verdict when it could not be made), or the last steps,
   * which run first in the hidden run's exec (runPrepared): the JavaScript canaries' write
   * and the tree.
   */
  done: { tree: TestTree } | { before: StepsBefore };
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
export function planCanaries(
  phase: PhaseContext,
  runner: Buffer,
  /** The existing tests sampled for this run (default: existingSample's choice). */
  sample?: readonly string[],
): PlannedCanaries {
  if (phase.protocol === undefined) return null;
  const js = jsCanaryDialect(runner, phase.bundle.testsEnv);
  if (js === null && !runnerPlacesCanaries(runner)) return null;
  const hidden = phase.lists[ASSET.hidden];
  if (hidden === undefined) throw new ProctorError('INTERNAL', `no ID list named ${ASSET.hidden}`);
  const ids = withIds(
    hidden,
    sample ?? existingSample(phase.bundle.hiddenIds, phase.bundle.existingIds),
  );
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

const KILLS_FIRST = new Set(['collect']);

/** One exec of `steps`: its result, and each step's record, by name, for those it reported. */
async function runSteps(
  phase: PhaseContext,
  steps: readonly PrepStep[],
  timing = 'hidden_prep',
): Promise<{ run: ExecResult; records: Map<string, CommandRecord> }> {
  // A phase's collect kills every process of the task before anything else runs.
  const command = prepareCommand(steps, { killFirst: steps.some((s) => KILLS_FIRST.has(s.name)) });
  const run = await phase.timed(timing, () =>
    phase.exec(command.cmd, command.timeoutMs, command.outputBytes, { stdin: command.stdin }),
  );
  checkAborted(phase.signal, run);
  // A container that died under the exec says nothing about the candidate.
  await requireRunning(phase.docker, phase.containerId, run);
  const read = readPreparedSteps(run.stdout, steps);
  return { run, records: stepRecords(phase, steps, read, run.durationMs) };
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
    /** The existing run's canaries (prepareExistingRun), put back first. */
    existing?: ExistingCanaries | null;
    /** The existing tests sampled for this run's canaries (default: existingSample's). */
    sample?: readonly string[];
  },
): Promise<HiddenPreparation> {
  const workdir = phase.bundle.workdir;
  if (input.applyCandidate && (input.collect || !input.candidate)) {
    throw new ProctorError('INTERNAL', 'a candidate applied first needs a diff and no collect');
  }
  const collect = input.collect ? collectStep(input.collect) : null;
  const restored = input.existing ? await input.existing.restore() : [];
  const restore =
    restored.length === 0 ? null : { ...jsWriteStep(workdir, restored), name: 'canary_restore' };
  const candidateApply = input.applyCandidate ? candidateApplyStep() : null;
  const apply = input.hiddenPatch.length > 0 ? hiddenApplyStep(input.hiddenPatch) : null;
  const tree = testTreeStep(input.candidate);
  // A canary catches a candidate's code making a test vacuous; a run without a diff (a
  // baseline's) has none, and its mutants could only raise false alarms (django 11179's turned
  // over assertion beside its failing test) and cost the run its step and their executions.
  const canaries = input.candidate ? planCanaries(phase, input.runner, input.sample) : null;
  // A JavaScript runner's files go to the host between the two execs; with none to read, one.
  const read =
    canaries?.kind === 'js' && canaries.plan.files.length > 0
      ? jsReadStep(workdir, canaries.plan)
      : null;
  const first = [
    collect,
    restore,
    candidateApply,
    apply,
    canaries?.kind === 'python' ? canaries.step : null,
    read,
    read === null ? tree : null,
  ].filter((step) => step !== null);
  const { run, records } = await runSteps(phase, first);
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
  const ready = {
    collected,
    candidateApply: applied,
    candidateFailed: false as const,
    hiddenApply,
  };
  if (canaries?.kind === 'js' && read !== null) {
    const before = jsWriteBefore(workdir, phase, canaries.plan, recordOf(read), tree);
    return { ...ready, applyFailed: null, done: { before } };
  }
  // A Python runner's step the exec never reported failed: its record says why, and none is
  // placed.
  const placed =
    canaries?.kind === 'python'
      ? canaryRecord(recordOf(canaries.step))
      : canaries?.kind === 'js'
        ? canaries.plan.record
        : undefined;
  return {
    ...ready,
    applyFailed: null,
    ...(placed ? { canaries: placed } : {}),
    done: { tree: treeOutcome(recordOf(tree)) },
  };
}

/**
 * Dialects whose ids name their test files and whose runner pays for each file it runs (a
 * process for node:test, a worker's module graph for vitest): a sampled existing test in a file
 * no hidden test names costs the hidden run that file (about 150 ms for one of node's), so its
 * canaries go into the existing run, which runs the file anyway (splitSample). The others
 * (mocha's one process, jest's files known from the hidden patch alone) keep the whole sample
 * in the hidden run.
 */
const SAMPLE_IN_EXISTING: ReadonlySet<JsDialect> = new Set(['node', 'vitest']);

/** The existing run's canaries (a sample of its tests), from the candidate's apply. */
export interface ExistingCanaries {
  /** The record, when no file is to be written (the sample names no file that was read). */
  record?: CanaryRecord;
  /** The mutants' write and the work tree's git, first in the existing run's exec. */
  before?: StepsBefore;
  /** The sampled files' bytes as the read found them, to put back before the hidden test
   * patch applies (an empty list for none); call once the existing run has ended. */
  restore: () => Promise<Array<Pick<JsWrite, 'file' | 'bytes'>>>;
}

/**
 * The candidate's diff (its asset), applied as the task uid, and the read of the files of the
 * existing run's sample (`sample`, from splitSample) in the same exec; `canaries` null when the
 * existing run gets none. The mutants' write and the work tree's git (so that git shows the
 * mutants as any other test) then run first in the existing run's exec (StepsBefore), and the
 * hidden tests' preparation puts the files back before the hidden test patch applies.
 */
export async function prepareExistingRun(
  phase: PhaseContext,
  runner: Buffer,
  /** The existing tests sampled for the existing run (splitSample). */
  sample: readonly string[],
): Promise<{ apply: CommandRecord; canaries: ExistingCanaries | null }> {
  const plan = planExistingSample(phase, runner, sample);
  const read =
    plan !== null && plan.files.length > 0 ? jsReadStep(phase.bundle.workdir, plan) : null;
  const apply = candidateApplyStep();
  if (read === null || plan === null) {
    const applied = await applyAlone(phase, apply);
    const none = () => Promise.resolve([]);
    return {
      apply: applied,
      canaries: plan === null ? null : { record: plan.record, restore: none },
    };
  }
  const { run, records } = await runSteps(phase, [apply, read], 'apply');
  const applied = records.get(apply.name) ?? missingRecord(run);
  if (applied.exitCode !== 0) return { apply: applied, canaries: null };
  const readRecord = records.get(read.name) ?? missingRecord(run);
  const before = jsWriteBefore(phase.bundle.workdir, phase, plan, readRecord, testTreeStep(true));
  return {
    apply: applied,
    canaries: {
      before,
      restore: async () => {
        const writes = await before.writes();
        let originals: Map<string, Buffer | string>;
        try {
          originals = parseRead(readRecord.stdout, plan.files);
        } catch {
          return [];
        }
        return writes.flatMap(({ file }) => {
          const bytes = originals.get(file);
          return Buffer.isBuffer(bytes) ? [{ file, bytes }] : [];
        });
      },
    },
  };
}

/**
 * A grade's sample of existing tests (existingSample), split between the runs: for a runner of
 * SAMPLE_IN_EXISTING, the tests in a file that no hidden test names go to the existing run;
 * the rest (all of them for other runners) to the hidden run, which runs their files anyway.
 */
export function splitSample(
  phase: Pick<PhaseContext, 'protocol' | 'bundle'>,
  runner: Buffer,
): { existing: string[]; hidden: string[] } {
  const { hiddenIds, existingIds } = phase.bundle;
  const chosen = existingSample(hiddenIds, existingIds);
  const dialect = jsCanaryDialect(runner, phase.bundle.testsEnv);
  if (phase.protocol === undefined || dialect === null || !SAMPLE_IN_EXISTING.has(dialect)) {
    return { existing: [], hidden: chosen };
  }
  const hiddenFiles = new Set(hiddenIds.map((id) => jsFileOf(dialect, id)));
  const apart = (id: string) => {
    const file = jsFileOf(dialect, id);
    return file !== null && !hiddenFiles.has(file);
  };
  return { existing: chosen.filter(apart), hidden: chosen.filter((id) => !apart(id)) };
}

/** The plan of the existing run's sample `ids`, or null for none. */
function planExistingSample(
  phase: PhaseContext,
  runner: Buffer,
  ids: readonly string[],
): JsCanaryPlan | null {
  const dialect = jsCanaryDialect(runner, phase.bundle.testsEnv);
  if (phase.protocol === undefined || dialect === null || ids.length === 0) return null;
  return planJsCanaries(dialect, withIds(Buffer.alloc(0), ids), phase.patchHeaders, 0);
}

/** A step in an exec of its own, without PREPARE_SCRIPT's frames (the candidate's apply). */
async function applyAlone(phase: PhaseContext, step: PrepStep): Promise<CommandRecord> {
  const applied = await phase.timed(step.name, () =>
    phase.exec(['sh', '-c', step.script, `proctor-${step.name}`, ...step.args], step.timeoutMs),
  );
  checkAborted(phase.signal, applied);
  return commandRecord(applied);
}

/**
 * The JavaScript canaries' write and the work tree's git, as the steps before the hidden run
 * (StepsBefore): Proctor mutates the files the read step printed (`read`) once that exec has
 * started, so the mutation (0.1-0.2 s for a large test file in a fresh process) overlaps its
 * start, and the run's request names what the write places.
 */
function jsWriteBefore(
  workdir: string,
  phase: PhaseContext,
  plan: JsCanaryPlan,
  read: CommandRecord,
  tree: PrepStep,
): StepsBefore & { writes: () => Promise<JsWrite[]> } {
  let mutation: Promise<ReturnType<typeof mutateJsFiles>> | undefined;
  const write = jsLaterWriteStep(workdir, () => {
    mutation = phase.timed('canaries', () =>
      Promise.resolve().then(() => mutateJsFiles(plan, read)),
    );
    return mutation.then((m) => m.writes);
  });
  return {
    steps: [write, tree],
    // What the write was given (none when its exec never asked for the files).
    writes: async () => (await mutation?.catch(() => undefined))?.writes ?? [],
    placing: async () => {
      const writes = (await mutation)?.writes ?? [];
      return {
        ids: writes.flatMap((w) => [...w.mutants, ...w.sentinels].map((m) => m.id)),
        sentinelsInFiles: writes.some((w) => w.sentinels.length > 0),
      };
    },
    finish: async (records, whole) => {
      // A mutator that threw fails the job, as it did before the exec.
      const mutated = await mutation;
      const canaries =
        mutated === undefined
          ? jsCanariesFailed('its exec never asked for the files')
          : mutated.writes.length === 0
            ? mutated.record
            : jsWriteOutcome(mutated.record, mutated.writes, records.get(write.name) ?? null);
      return { canaries, tree: treeOutcome(records.get(tree.name) ?? missingRecord(whole)) };
    },
  };
}

/**
 * The run of `name` on `list` after a preparation: in the exec of the preparation's last steps
 * when it has them. Its outcome, or null when the work tree's git could not be made (the
 * tree's verdict says why).
 */
export async function runPrepared(
  phase: PhaseContext,
  prepared: HiddenPrepared,
  name: RunName,
  list: string,
  declared: readonly string[],
): Promise<{ tree: TestTree; outcome: PhaseOutcome | null; canaries?: CanaryRecord }> {
  if ('tree' in prepared.done) {
    const { tree } = prepared.done;
    const canaries = prepared.canaries ? { canaries: prepared.canaries } : {};
    if (tree.verdict) return { tree, outcome: null, ...canaries };
    const outcome = await runPhase(phase, name, list, declared, prepared.canaries);
    return { tree, outcome, ...canaries };
  }
  const after = await startPhaseAfterSteps(phase, name, list, declared, prepared.done.before);
  const canaries = after.started.canaries ? { canaries: after.started.canaries } : {};
  // A step that stopped the run, or never reported, leaves the tree's record failed.
  if (after.tree.verdict || !after.ran) {
    if (!after.tree.verdict) throw new ProctorError('INTERNAL', 'the hidden run never started');
    return { tree: after.tree, outcome: null, ...canaries };
  }
  return { tree: after.tree, outcome: await collectPhase(phase, after.started), ...canaries };
}
