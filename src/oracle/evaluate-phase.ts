// One test phase of an evaluation, in the evaluator container: the runner on an ID list
// under test_seconds, then collect (kill every process of the task uid, detached daemons
// included, then read the report: a regular file, not a symlink, at most the report limit)
// and check the report against the declared IDs.
import { randomBytes } from 'node:crypto';
import { ProctorError, describeError } from '../errors.js';
import type { DockerClient, ExecResult } from '../sandbox/index.js';
import type { Bundle } from './bundle.js';
import {
  ASSET,
  COLLECT_SCRIPT,
  COLLECT_TIMEOUT_MS,
  EVALUATOR_PATHS,
  PHASE_SCRIPT,
  asset,
} from './evaluate-scripts.js';
import { DEFAULT_REPORT_LIMITS, excerpt, parseReport, type TestStatus } from './report.js';
import { checkPhase, type PhaseName, type PhaseOutcome } from './verdict.js';

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

export interface PhaseRecord {
  name: PhaseName;
  /** The runner: its exit status and output are logged, never graded. */
  run: CommandRecord;
  oomKilled: boolean;
  report: {
    format: 'json' | 'junit' | null;
    bytes: number;
    error: string | null;
    problems: string[];
    /** Reported IDs that were not declared (logged and ignored), first 50. */
    undeclared: string[];
    undeclaredCount: number;
  };
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
async function requireRunning(docker: DockerClient, id: string, result: ExecResult) {
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

/** What a phase needs of its evaluation. */
export interface PhaseContext {
  docker: DockerClient;
  bundle: Bundle;
  containerId: string;
  exec: (cmd: string[], timeoutMs: number, outputBytes?: number) => Promise<ExecResult>;
  timed: <T>(step: string, work: () => Promise<T>) => Promise<T>;
  signal?: AbortSignal;
  evaluation: { phaseRecords: PhaseRecord[] };
  onReport?: (phase: PhaseName, tests: ReadonlyMap<string, TestStatus>) => void;
}

export async function runPhase(
  phase: PhaseContext,
  name: PhaseName,
  list: string,
): Promise<PhaseOutcome> {
  const { docker, bundle, containerId: id, exec, timed, signal, evaluation } = phase;
  const { limits } = bundle;
  const dir = `${EVALUATOR_PATHS.out}/${name}-${randomBytes(8).toString('hex')}`;
  const run = await timed(name, () =>
    exec(
      ['sh', '-c', PHASE_SCRIPT, 'proctor-phase', dir, asset(ASSET.runner), asset(list)],
      limits.testSeconds * 1000,
      limits.outputBytes,
    ),
  );
  checkAborted(signal, run);
  // A container that died under the run (removed, the engine restarted) says nothing
  // about the candidate: an exit 137 then is not an OOM kill.
  await requireRunning(docker, id, run);
  const maxBytes = DEFAULT_REPORT_LIMITS.maxBytes;
  const collected = await timed('collect', () =>
    exec(
      ['sh', '-c', COLLECT_SCRIPT, 'proctor-collect', `${dir}/report`, String(maxBytes)],
      COLLECT_TIMEOUT_MS,
      // base64 of maxBytes, with its line breaks.
      Math.ceil(((maxBytes + 3) * 4) / 3 / 76) * 77 + 16,
    ),
  );
  checkAborted(signal, collected);
  await requireRunning(docker, id, collected);
  const size = Number(/proctor-report-size (\d+)/.exec(collected.stderr)?.[1] ?? NaN);
  const record: PhaseRecord = {
    name,
    run: commandRecord(run),
    oomKilled: run.oomKilled,
    report: {
      format: null,
      bytes: Number.isFinite(size) ? size : 0,
      error: null,
      problems: [],
      undeclared: [],
      undeclaredCount: 0,
    },
  };
  evaluation.phaseRecords.push(record);
  const declared = name === 'existing' ? bundle.existingIds : bundle.hiddenIds;
  const outcome: PhaseOutcome = {
    timedOut: run.timedOut,
    oom: run.oomKilled,
    reportError: null,
    check: null,
  };
  if (collected.exitCode === 6) {
    outcome.reportError = `the report is ${size} bytes; at most ${maxBytes} are read`;
  } else if (collected.exitCode !== 0) {
    outcome.reportError =
      lastLines(collected.stderr.replace(/^proctor-report-size \d+\n?/m, '')) ||
      `reading the report failed (exit ${String(collected.exitCode)})`;
  } else {
    try {
      const bytes = Buffer.from(collected.stdout, 'base64');
      if (bytes.length !== size) {
        throw new ProctorError(
          'REPORT_INVALID',
          `read ${bytes.length} of the report's ${size} bytes`,
        );
      }
      const parsed = parseReport(bytes);
      phase.onReport?.(name, parsed.tests);
      record.report.format = parsed.format;
      record.report.problems = parsed.problems;
      outcome.check = checkPhase(declared, parsed.tests);
      record.report.undeclared = outcome.check.undeclared.slice(0, 50);
      record.report.undeclaredCount = outcome.check.undeclared.length;
    } catch (error) {
      outcome.reportError = describeError(error);
    }
  }
  record.report.error = outcome.reportError;
  return outcome;
}
