// One test phase of an evaluation, in the evaluator container: the runner on an ID list
// under test_seconds, then collect (kill every process of the task uid, detached daemons
// included, then read the report: a regular file, not a symlink, at most the report limit)
// and check the report against the declared IDs.
import { randomBytes } from 'node:crypto';
import { ProctorError, describeError } from '../errors.js';
import type { DockerClient, ExecResult } from '../sandbox/index.js';
import type { Bundle } from './bundle.js';
import { judgeCanaries, sentinelsInFiles, type CanaryRecord } from './canaries.js';
import {
  ASSET,
  CHANNEL_SCRIPT,
  COLLECT_SCRIPT,
  COLLECT_TIMEOUT_MS,
  KILL_TASK,
  COLLECTOR_SCRIPT,
  COLLECTOR_OUTPUT_BYTES,
  COLLECTOR_REPORT_WAIT_MS,
  COLLECTOR_WAIT_ROUNDS,
  EVALUATOR_PATHS,
  PHASE_SCRIPT,
  STEPS_DONE,
  STEPS_THEN_PHASE_SCRIPT,
  asset,
  codeCacheArgs,
  type CodeCache,
} from './evaluate-scripts.js';
import {
  checkIntegrity,
  integritySchema,
  sentinelRequest,
  type Integrity,
  type SentinelRequest,
} from './protocol.js';
import { DEFAULT_REPORT_LIMITS, excerpt, parseReport, type TestStatus } from './report.js';
import {
  prepareCommand,
  PREPARE_SCRIPT,
  readPreparedFrames,
  stepTimedOut,
  type PreparedStep,
  type PrepStep,
} from './prepare-steps.js';
import type { TestTree } from './evaluate-tree.js';
import { causeExcerpt, checkPhase, type PhaseName, type PhaseOutcome } from './verdict.js';

export interface CommandRecord {
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  stdoutBytes: number;
  stderrBytes: number;
  truncated: boolean;
}

/** A runner run: one of Proctor's two phases, or `tests`, SWE-bench's rules' one run. */
export type RunName = PhaseName | 'tests';

export interface PhaseRecord {
  name: RunName;
  /** The runner: its exit status and output are logged, never graded. */
  run: CommandRecord;
  oomKilled: boolean;
  report: {
    format: 'json' | 'junit' | null;
    bytes: number;
    /**
     * What read it: the collector, which printed the last report on its own output
     * (COLLECTOR_REPORT), or an exec of the task's uid (COLLECT_SCRIPT).
     */
    readBy: 'collector' | 'exec';
    error: string | null;
    problems: string[];
    /** Reported IDs that were not declared (logged and ignored), first 50. */
    undeclared: string[];
    undeclaredCount: number;
    /** The report's `cause`, when it gave one (quoted in the oracle log). */
    cause?: string;
  };
  /** For a protocol-2 runner: its collector's run, and what the integrity checks found. */
  integrity?: {
    collector: CommandRecord | null;
    /** The sentinels' names and statuses, for the oracle log only (never stored elsewhere). */
    sentinels: Array<{ name: string; expect: string; status: string | null }>;
    tampered: string | null;
  };
  /** The canaries placed for the phase and what each reported (canaries.ts): oracle log only. */
  canaries?: CanaryRecord;
}

export function commandRecord(result: ExecResult): CommandRecord {
  return {
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    stdout: result.stdout,
    stderr: result.stderr,
    stdoutBytes: result.stdoutBytes,
    stderrBytes: result.stderrBytes,
    truncated: result.truncated,
  };
}

/** Throws the abort reason when the run was cancelled; the caller's pool settles the job. */
export function checkAborted(signal: AbortSignal | undefined, result?: ExecResult): void {
  if (signal?.aborted || result?.aborted) {
    throw new ProctorError('CANCELLED', 'the evaluation was cancelled', {
      cause: signal?.reason,
    });
  }
}

/**
 * Throws when the container stopped. Asked only after an exit that a dying container gives
 * (none, or by a signal: everything in it is SIGKILLed); any other exit came from a process
 * that ran to its end in a running container, so no inspect is spent on the common path.
 */
export async function requireRunning(
  docker: DockerClient,
  id: string,
  result: Pick<ExecResult, 'exitCode'>,
): Promise<void> {
  if (result.exitCode !== null && result.exitCode < 128) return;
  let running = false;
  try {
    running = (await docker.getContainer(id).inspect()).State.Running;
  } catch {
    running = false;
  }
  if (!running) {
    throw new ProctorError('DOCKER_ERROR', 'the evaluator container stopped under the run');
  }
}

export function lastLines(text: string, n = 5): string {
  return excerpt(text.trim().split('\n').slice(-n).join('; '));
}

export interface PhaseExecOptions {
  /** Another user than the task's (`uid:gid`): the protocol-2 collector's. */
  user?: string;
  /** As execInContainer's: a function's bytes are made once the exec has started. */
  stdin?: Buffer | (() => Promise<Buffer>);
  /** As execInContainer's: the time limit counts from a marker on stderr. */
  clockFrom?: { marker: string; beforeMs: number };
}

export interface Protocol {
  /** In their order: the collector also prints the last one's report (COLLECTOR_REPORT). */
  phases: Partial<Record<RunName, { dir: string; request: SentinelRequest }>>;
  collector: Promise<ExecResult | Error>;
  /** The runner's code, compiled once for the grade (CODE_CACHE_NOTE), when it caches it. */
  code?: CodeCache;
}

/** What a phase needs of its evaluation. */
export interface PhaseContext {
  docker: DockerClient;
  bundle: Bundle;
  containerId: string;
  exec: (
    cmd: string[],
    timeoutMs: number,
    outputBytes?: number,
    options?: PhaseExecOptions,
  ) => Promise<ExecResult>;
  /**
   * Present when the runner speaks protocol 2 (protocol.ts): each phase's folder and request,
   * and the collector serving them all (startCollector), started before the first phase.
   */
  protocol?: Protocol;
  timed: <T>(step: string, work: () => Promise<T>) => Promise<T>;
  /** Adds a time measured elsewhere (inside the container) to a step's timing. */
  addTime?: (step: string, ms: number) => void;
  signal?: AbortSignal;
  evaluation: { phaseRecords: PhaseRecord[] };
  /**
   * Each ID-list asset's bytes, by its name: a run's list reaches its runner on stdin (see
   * LIST_HANDOVER), never through the asset, which only the collector's uid can read.
   */
  lists: Readonly<Record<string, Buffer>>;
  /** The hidden test patch's headers (patch-headers.ts), handed to every run's runner. */
  patchHeaders: Buffer;
  onReport?: (phase: PhaseName, tests: ReadonlyMap<string, TestStatus>) => void;
  /** See EvaluateInput.unstartedIsInvalid. */
  unstartedIsInvalid?: boolean;
  /**
   * The tests an earlier phase of the grade declared and saw fail or err (filled as each phase
   * is read): beside one of them, a later phase's passing mutant is honest code's too (an
   * existing test sampled into the hidden phase, broken by the candidate at its turned check),
   * and that failure fails the grade anyway.
   */
  failedEarlier?: Set<string>;
}

/**
 * One runner run on the ID list `list` (an asset's name), checked against `declared` (by
 * default the bundle's list of that name; the `tests` run gives both).
 */
export async function runPhase(
  phase: PhaseContext,
  name: RunName,
  list: string,
  declared: readonly string[] = name === 'existing'
    ? phase.bundle.existingIds
    : phase.bundle.hiddenIds,
  /** The canaries placed in the work tree for this phase (evaluate-prepare.ts), if any. */
  canaries?: CanaryRecord,
): Promise<PhaseOutcome> {
  return collectPhase(phase, await startPhase(phase, name, list, declared, canaries));
}

/**
 * Collects a started phase's report, and reads it (finishPhase): the last phase's from its
 * collector's own output when the collector prints it (COLLECTOR_REPORT), else by an exec of
 * its own.
 */
export async function collectPhase(
  phase: PhaseContext,
  started: StartedPhase,
): Promise<PhaseOutcome> {
  const printed = await phase.timed('collect', () => printedReport(phase, started));
  if (printed !== null) return finishPhase(phase, started, printed, 'collector');
  const step = collectStep(started);
  const collected = await phase.timed('collect', () =>
    phase.exec(
      ['sh', '-c', `${KILL_TASK}\n${step.script}`, 'proctor-collect', ...step.args],
      step.timeoutMs,
      step.keepBytes,
    ),
  );
  checkAborted(phase.signal, collected);
  await requireRunning(phase.docker, phase.containerId, collected);
  return finishPhase(phase, started, collected, 'exec');
}

/** COLLECTOR_REPORT's frame: the end of the collector's stdout. */
const REPORT_FRAME = /(?:^|\n)proctor-report (\d+)\n([A-Za-z0-9+/]*={0,2})\nproctor-report-end\n$/;

/**
 * The last phase's report as its collector printed it (COLLECTOR_REPORT), in COLLECT_SCRIPT's
 * form, once the collector has ended; null when the phase is not the last, its run did not end
 * by itself, or the collector gave no frame within COLLECTOR_REPORT_WAIT_MS.
 */
async function printedReport(
  phase: PhaseContext,
  started: StartedPhase,
): Promise<Pick<ExecResult, 'exitCode' | 'stdout' | 'stderr'> | null> {
  const protocol = phase.protocol;
  const last = protocol === undefined ? undefined : Object.keys(protocol.phases).at(-1);
  if (protocol === undefined || started.request === null || last !== started.name) {
    return null;
  }
  // A run that did not end by itself, or whose shell did not (a signal: the kill at its end
  // may not have run), is read after a kill of its own, at once.
  const exit = started.run.exitCode;
  if (started.run.timedOut || started.run.aborted || exit === null || exit >= 128) return null;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const cut = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), COLLECTOR_REPORT_WAIT_MS);
    onAbort = () => resolve(null);
    phase.signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const ended = await Promise.race([protocol.collector, cut]);
    if (ended === null || ended instanceof Error || ended.exitCode !== 0) return null;
    const frame = REPORT_FRAME.exec(ended.stdout);
    if (!frame) return null;
    return { exitCode: 0, stdout: frame[2] ?? '', stderr: `proctor-report-size ${frame[1]}\n` };
  } finally {
    clearTimeout(timer);
    if (onAbort) phase.signal?.removeEventListener('abort', onAbort);
  }
}

/** A phase whose runner has run, its report not yet collected (collectStep, finishPhase). */
export interface StartedPhase {
  name: RunName;
  declared: readonly string[];
  canaries: CanaryRecord | undefined;
  /** The phase's output folder: its report is there. */
  dir: string;
  request: SentinelRequest | null;
  run: ExecResult;
  /** The ids the request named as canaries (some may not have been placed: a failed write). */
  requested: readonly string[];
}

/**
 * Trusted steps that run first in a phase's exec (STEPS_THEN_PHASE_SCRIPT), while nothing of
 * the task runs: the last of the hidden tests' preparation (evaluate-prepare.ts).
 */
export interface StepsBefore {
  steps: readonly PrepStep[];
  /**
   * Once the steps' stdin is made: the ids of the canaries and in-file sentinels they place,
   * which the phase's request carries, and whether any sentinel is in the files.
   */
  placing: () => Promise<{ ids: string[]; sentinelsInFiles: boolean }>;
  /**
   * The phase's canaries and the work tree's git, from the steps' records (`whole`: the exec's
   * result, for a step it never reported). Rejects when making the steps' stdin failed.
   */
  finish: (
    records: ReadonlyMap<string, CommandRecord>,
    whole: ExecResult,
  ) => Promise<{ canaries: CanaryRecord | undefined; tree: TestTree }>;
}

/** A phase started after StepsBefore: `ran` false when a step stopped it (the tree's verdict
 * then says why) or the steps never all reported. */
export interface StartedAfterSteps {
  started: StartedPhase;
  tree: TestTree;
  ran: boolean;
  records: ReadonlyMap<string, CommandRecord>;
}

/** The job's timings of steps run in a phase's exec: the canaries' write counts as theirs. */
const STEP_TIMING: Readonly<Record<string, string>> = {
  canary_read: 'canaries',
  canary_write: 'canaries',
};

/**
 * The records of the steps an exec of PREPARE_SCRIPT reported (`read`: its frames), by name,
 * each step's in-container time added to the job's timings.
 */
export function stepRecords(
  phase: Pick<PhaseContext, 'addTime'>,
  steps: readonly PrepStep[],
  read: ReadonlyMap<string, PreparedStep>,
  /** A step's duration when the image's date gives no nanoseconds. */
  unknownMs = 0,
): Map<string, CommandRecord> {
  const records = new Map<string, CommandRecord>();
  for (const step of steps) {
    const done = read.get(step.name);
    if (done === undefined) continue;
    if (done.ms !== null) phase.addTime?.(STEP_TIMING[step.name] ?? step.name, done.ms);
    records.set(step.name, {
      exitCode: done.exitCode,
      timedOut: stepTimedOut(done, step.timeoutMs),
      durationMs: done.ms ?? unknownMs,
      stdout: done.stdout.toString('utf8'),
      stderr: done.stderr,
      stdoutBytes: done.stdoutBytes,
      stderrBytes: done.stderrBytes,
      truncated: done.truncated,
    });
  }
  return records;
}

/**
 * The runner on the ID list `list` under test_seconds (runPhase's first part): ends when its
 * process does, the container checked to be running still.
 */
export async function startPhase(
  phase: PhaseContext,
  name: RunName,
  list: string,
  declared: readonly string[] = name === 'existing'
    ? phase.bundle.existingIds
    : phase.bundle.hiddenIds,
  canaries?: CanaryRecord,
): Promise<StartedPhase> {
  const { bundle, exec, timed } = phase;
  const { limits } = bundle;
  const planned = phaseRequest(phase, name);
  // Sentinels the trusted step wrote into the test files replace the phase's file of them:
  // the test side is asked for none, and none are checked in the collector's report.
  const request = withInFileSentinels(planned.request, sentinelsInFiles(canaries));
  // The canaries' and in-file sentinels' ids go to the test side among the listed ones; the
  // collector needs none of them (it reports whatever the tests report).
  const requested = [...(canaries?.mutants ?? []), ...(canaries?.sentinels ?? [])].map((m) => m.id);
  const command = phaseCommand(phase, planned.dir, list, request);
  const run = await timed(name, () =>
    exec(command.cmd, limits.testSeconds * 1000, limits.outputBytes, {
      stdin: command.stdin(request, requested),
    }),
  );
  await checkRun(phase, run);
  return { name, declared, canaries, dir: planned.dir, request, run, requested };
}

/**
 * startPhase after `before`'s steps, in the same exec (STEPS_THEN_PHASE_SCRIPT): the request
 * is made once the steps' stdin is (their canaries' ids in it), and the runner's own time,
 * output and exit are told apart from the steps'. The exec's test_seconds start when the steps
 * are done (STEPS_DONE).
 */
export async function startPhaseAfterSteps(
  phase: PhaseContext,
  name: RunName,
  list: string,
  declared: readonly string[],
  before: StepsBefore,
): Promise<StartedAfterSteps> {
  const { bundle, exec, timed } = phase;
  const { limits } = bundle;
  const testMs = limits.testSeconds * 1000;
  const planned = phaseRequest(phase, name);
  const steps = prepareCommand(before.steps);
  let request = planned.request;
  let requested: string[] = [];
  const command = phaseCommand(phase, planned.dir, list, request);
  const stdin = async () => {
    const after = Buffer.isBuffer(steps.stdin) ? steps.stdin : await steps.stdin();
    const placing = await before.placing();
    request = withInFileSentinels(planned.request, placing.sentinelsInFiles);
    requested = placing.ids;
    const own = command.stdin(request, requested);
    // The phase's own bytes' length is only known with the request: a first line gives it.
    return Buffer.concat([Buffer.from(`${own.length}\n`), own, after]);
  };
  const args = [...command.cmd.slice(4), '', '', '', '', '', ''].slice(0, 6);
  const frameBytes = steps.outputBytes;
  const run = await timed(name, () =>
    exec(
      [
        'sh',
        '-c',
        STEPS_THEN_PHASE_SCRIPT,
        'proctor-steps-phase',
        PREPARE_SCRIPT,
        command.cmd[2]!,
        ...args,
        ...steps.cmd.slice(5),
      ],
      limits.testSeconds * 1000,
      limits.outputBytes + 2 * frameBytes,
      // test_seconds from the steps' end; the steps have their own limits before it.
      { stdin, clockFrom: { marker: STEPS_DONE, beforeMs: steps.timeoutMs + testMs } },
    ),
  );
  checkAborted(phase.signal, run);
  await requireRunning(phase.docker, phase.containerId, run);
  const frames = readPreparedFrames(run.stdout, before.steps);
  const records = stepRecords(phase, before.steps, frames.steps);
  const stepsMs = [...records.values()].reduce((sum, r) => sum + r.durationMs, 0);
  phase.addTime?.(name, -stepsMs);
  const ran =
    before.steps.every((step) => records.has(step.name)) &&
    before.steps.every((step) => !step.stopOnFailure || records.get(step.name)?.exitCode === 0);
  const { canaries, tree } = await before.finish(records, run);
  const ownMs = Math.max(0, run.durationMs - stepsMs);
  const marker = `${STEPS_DONE}\n`;
  const stderr = run.stderr.startsWith(marker) ? run.stderr.slice(marker.length) : run.stderr;
  const own: ExecResult = {
    ...run,
    stdout: run.stdout.slice(frames.end),
    stdoutBytes: Math.max(0, run.stdoutBytes - Buffer.byteLength(run.stdout.slice(0, frames.end))),
    stderr,
    stderrBytes: Math.max(0, run.stderrBytes - (run.stderr.length - stderr.length)),
    durationMs: ownMs,
    // The exec's clock is the run's own; a run that took longer by its own count times out too.
    timedOut: run.timedOut || (ran && ownMs > testMs),
  };
  const started = { name, declared, canaries, dir: planned.dir, request, run: own, requested };
  return { started, tree, ran, records };
}

/** The phase's folder and request as the collector planned them (none for protocol 1). */
function phaseRequest(
  phase: PhaseContext,
  name: RunName,
): { dir: string; request: SentinelRequest | null } {
  const planned = phase.protocol?.phases[name];
  return { dir: planned?.dir ?? phaseDir(), request: planned?.request ?? null };
}

/** The request less its sentinels, when the trusted step wrote them into the test files. */
function withInFileSentinels(
  request: SentinelRequest | null,
  inFiles: boolean,
): SentinelRequest | null {
  return request !== null && inFiles ? { ...request, sentinels: [] } : request;
}

/** The phase's script and arguments, and its stdin for a request and the canaries' ids. */
function phaseCommand(
  phase: PhaseContext,
  dir: string,
  list: string,
  request: SentinelRequest | null,
): { cmd: string[]; stdin: (request: SentinelRequest | null, canaries: string[]) => Buffer } {
  const ids = phase.lists[list];
  if (ids === undefined) throw new ProctorError('INTERNAL', `no ID list named ${list}`);
  const protocol2 = request !== null;
  return {
    cmd: [
      'sh',
      '-c',
      protocol2 ? CHANNEL_SCRIPT : PHASE_SCRIPT,
      'proctor-phase',
      dir,
      asset(ASSET.runner),
      String(ids.length),
      String(phase.patchHeaders.length),
      ...(protocol2 ? codeCacheArgs(phase.protocol?.code) : []),
    ],
    stdin: (sent, canaries) =>
      Buffer.concat([
        ids,
        phase.patchHeaders,
        ...(sent === null
          ? []
          : [requestBytes([canaries.length > 0 ? { ...sent, canaries } : sent])]),
      ]),
  };
}

/** Throws when the run was cancelled, or its container died under it. */
async function checkRun(phase: PhaseContext, run: ExecResult): Promise<void> {
  checkAborted(phase.signal, run);
  // A container that died under the run (removed, the engine restarted) says nothing
  // about the candidate: an exit 137 then is not an OOM kill.
  await requireRunning(phase.docker, phase.containerId, run);
}

/**
 * Reading a started phase's report (COLLECT_SCRIPT), as a step: run alone (runPhase, after
 * KILL_TASK), or as the first step of the hidden tests' preparation (evaluate-prepare.ts),
 * whose exec kills every process of the task first.
 */
export function collectStep(started: StartedPhase): PrepStep {
  const maxBytes = DEFAULT_REPORT_LIMITS.maxBytes;
  return {
    name: 'collect',
    script: COLLECT_SCRIPT,
    args: [
      `${started.dir}/report`,
      String(maxBytes),
      ...(started.request === null ? [] : [String(COLLECTOR_WAIT_ROUNDS)]),
    ],
    stdin: Buffer.alloc(0),
    timeoutMs: COLLECT_TIMEOUT_MS,
    // base64 of maxBytes, with its line breaks.
    keepBytes: Math.ceil(((maxBytes + 3) * 4) / 3 / 76) * 77 + 16,
    stopOnFailure: false,
  };
}

/**
 * A started phase's outcome from its collect (`collected`: COLLECT_SCRIPT's exit and output),
 * its record added to the evaluation's.
 */
export async function finishPhase(
  phase: PhaseContext,
  started: StartedPhase,
  collected: Pick<ExecResult, 'exitCode' | 'stdout' | 'stderr'>,
  readBy: 'collector' | 'exec',
): Promise<PhaseOutcome> {
  const { evaluation } = phase;
  const { name, declared, canaries, request, run } = started;
  const maxBytes = DEFAULT_REPORT_LIMITS.maxBytes;
  const size = Number(/proctor-report-size (\d+)/.exec(collected.stderr)?.[1] ?? NaN);
  const record: PhaseRecord = {
    name,
    run: commandRecord(run),
    oomKilled: run.oomKilled,
    report: {
      format: null,
      bytes: Number.isFinite(size) ? size : 0,
      readBy,
      error: null,
      problems: [],
      undeclared: [],
      undeclaredCount: 0,
    },
  };
  const collectorRun = phase.protocol ? await settled(phase.protocol.collector) : null;
  if (request !== null) {
    record.integrity = {
      collector:
        collectorRun instanceof Error || collectorRun === null ? null : commandRecord(collectorRun),
      sentinels: [],
      tampered: null,
    };
  }
  if (canaries) record.canaries = canaries;
  evaluation.phaseRecords.push(record);
  const outcome: PhaseOutcome = {
    timedOut: run.timedOut,
    oom: run.oomKilled,
    reportError: null,
    check: null,
  };
  if (collectorRun instanceof Error && collected.exitCode !== 0) {
    outcome.reportError = `the runner's collector failed: ${describeError(collectorRun)}`;
  } else if (collectorRun && !(collectorRun instanceof Error) && collected.exitCode !== 0) {
    outcome.reportError = `the runner's collector ended (exit ${String(collectorRun.exitCode)}) without this phase's report: ${lastLines(collectorRun.stderr) || lastLines(collectorRun.stdout) || 'no output'}`;
  } else if (collected.exitCode === 6) {
    outcome.reportError = `the report is ${size} bytes; at most ${maxBytes} are read`;
  } else if (collected.exitCode !== 0) {
    outcome.reportError =
      lastLines(collected.stderr.replace(/^proctor-report-size \d+\n?/m, '')) ||
      `reading the report failed (exit ${String(collected.exitCode)})`;
    // No report at all: the runner's own last words are all there is to say why (an import
    // error in a conftest before its first test, a runner that could not start).
    const last = collected.exitCode === 4 ? lastLines(run.stderr) || lastLines(run.stdout) : '';
    if (last !== '') outcome.reportError += `; the runner's last lines: ${last}`;
  } else {
    try {
      const bytes = Buffer.from(collected.stdout, 'base64');
      if (bytes.length !== size) {
        throw new ProctorError(
          'REPORT_INVALID',
          `read ${bytes.length} of the report's ${size} bytes`,
        );
      }
      let parsed = parseReport(bytes);
      // The canaries leave the report before anything else reads it.
      const judged = canaries
        ? judgeCanaries(canaries, parsed.tests, parsed.swebench, declared, phase.failedEarlier)
        : null;
      if (judged) parsed = { ...parsed, tests: judged.tests, swebench: judged.swebench };
      // So do the ids the request named whose file was not written (a failed write).
      if (started.requested.length > 0) {
        const named = new Set(started.requested);
        parsed = {
          ...parsed,
          tests: new Map([...parsed.tests].filter(([id]) => !named.has(id))),
          swebench: new Map([...parsed.swebench].filter(([id]) => !named.has(id))),
        };
      }
      // Logged even when the report cannot be used (a session that never started).
      if (parsed.cause !== undefined) record.report.cause = parsed.cause;
      if (request !== null && record.integrity) {
        const integrity = readIntegrity(parsed.integrity);
        const checked = checkIntegrity(integrity, request);
        record.integrity.sentinels = request.sentinels.map((s) => ({
          ...s,
          status: integrity?.sentinels.find((r) => r.name === s.name)?.status ?? null,
        }));
        // A forged outcome stream says more than a vacuous test: the tripwire or sentinel first.
        const tampered =
          checked.tampered ??
          (checked.invalid === null ? (judged?.sentinels ?? judged?.vacuous ?? null) : null);
        record.integrity.tampered = tampered;
        outcome.tampered = tampered;
        if (
          checked.invalid !== null &&
          checked.tampered === null &&
          integrity?.started === false &&
          !phase.unstartedIsInvalid
        ) {
          // The test process stopped before its session began (an import error in a
          // conftest, a module missing): no test ran, so every declared test is an error,
          // whatever the stream said (nothing in it can make a pass), and the report's cause
          // says why. SWE-bench's parser records nothing from such a log: ABSENT.
          parsed = {
            ...parsed,
            tests: new Map(declared.map((id) => [id, 'error' as const])),
            swebench: new Map(declared.map((id) => [id, 'ABSENT' as const])),
            problems: [
              ...parsed.problems,
              `the test process never began its session: every declared test is an error`,
            ],
          };
        } else if (checked.invalid !== null) {
          // The report's own cause (the first lines of the error that stopped the tests) says
          // more than the runner's last lines, when it gives one.
          const last = lastLines(run.stderr) || lastLines(run.stdout);
          const why =
            parsed.cause !== undefined && parsed.cause.trim() !== ''
              ? `; the runner says: ${causeExcerpt(parsed.cause)}`
              : last
                ? `; the runner's last lines: ${last}`
                : '';
          throw new ProctorError('REPORT_INVALID', `${checked.invalid}${why}`);
        }
      }
      // The `tests` run is the state after the hidden patch: what derive calls `hidden`.
      phase.onReport?.(name === 'tests' ? 'hidden' : name, parsed.tests);
      record.report.format = parsed.format;
      record.report.problems = parsed.problems;
      outcome.report = { tests: parsed.tests, swebench: parsed.swebench };
      if (parsed.cause !== undefined) outcome.cause = parsed.cause;
      outcome.check = checkPhase(declared, parsed.tests);
      for (const t of outcome.check.notPassed) {
        if (t.status === 'failed' || t.status === 'error') phase.failedEarlier?.add(t.id);
      }
      record.report.undeclared = outcome.check.undeclared.slice(0, 50);
      record.report.undeclaredCount = outcome.check.undeclared.length;
    } catch (error) {
      outcome.reportError = describeError(error);
    }
  }
  record.report.error = outcome.reportError;
  return outcome;
}

function requestBytes(requests: readonly SentinelRequest[]): Buffer {
  return Buffer.from(requests.map((r) => `${JSON.stringify(r)}\n`).join(''), 'utf8');
}

/**
 * A fresh output folder for a run (random name: nothing can have made it before; no phase's
 * name, which the runner's command line would show the tests).
 */
function phaseDir(): string {
  return `${EVALUATOR_PATHS.out}/${randomBytes(8).toString('hex')}`;
}

/** The promise's value if it has settled, else null, at once. */
async function settled<T>(promise: Promise<T>): Promise<T | null> {
  return Promise.race([promise, new Promise<null>((resolve) => setImmediate(() => resolve(null)))]);
}

/** A protocol-2 report's `integrity` object, or undefined when it is absent or malformed. */
function readIntegrity(raw: unknown): Integrity | undefined {
  const parsed = integritySchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Plans an evaluation's phases for a protocol-2 runner and starts their one collector (as
 * another uid; see COLLECTOR_SCRIPT) without waiting for it: before each phase it makes that
 * phase's folder and socket and waits for the tests' one connection. The first phase's
 * collector also saves the base commit's test configuration, before any candidate code runs.
 * `sentinels`: false for a run without a candidate, whose phases then ask for none.
 * The returned promise never rejects; the collector ends after the last phase, or with the
 * container.
 */
export function startCollector(
  exec: PhaseContext['exec'],
  user: string,
  testSeconds: number,
  lists: Partial<Record<RunName, string>>,
  options: { sentinels: boolean; code?: CodeCache },
): Protocol {
  const config = `${EVALUATOR_PATHS.out}/base-config-${randomBytes(8).toString('hex')}`;
  const names = (['existing', 'hidden', 'tests'] as const).filter((n) => lists[n] !== undefined);
  const planned = names.map((name, index) => {
    // The first run's collector saves the base commit's test configuration.
    const request = sentinelRequest(config, index === 0);
    return {
      name,
      list: lists[name] ?? '',
      dir: phaseDir(),
      request: options.sentinels ? request : { ...request, sentinels: [] },
    };
  });
  const phases: Protocol['phases'] = Object.fromEntries(
    planned.map((p) => [p.name, { dir: p.dir, request: p.request }]),
  );
  const collector = exec(
    [
      'sh',
      '-c',
      COLLECTOR_SCRIPT,
      'proctor-collector',
      asset(ASSET.runner),
      ...codeCacheArgs(options.code),
      ...planned.flatMap((p) => [asset(p.list), p.dir]),
    ],
    // Both phases, the hidden tests' apply and the collects, with room to spare: the
    // container's removal ends it in any case.
    (2 * testSeconds + 600) * 1000,
    COLLECTOR_OUTPUT_BYTES,
    { user, stdin: requestBytes(planned.map((p) => p.request)) },
  ).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
  return { phases, collector, ...(options.code ? { code: options.code } : {}) };
}
