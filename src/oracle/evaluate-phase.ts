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
  CHANNEL_SCRIPT,
  COLLECT_SCRIPT,
  COLLECT_TIMEOUT_MS,
  COLLECTOR_GRACE_MS,
  COLLECTOR_SCRIPT,
  COLLECTOR_TIMEOUT_MS,
  EVALUATOR_PATHS,
  KILL_TASK_SCRIPT,
  PHASE_SCRIPT,
  asset,
} from './evaluate-scripts.js';
import {
  checkIntegrity,
  integritySchema,
  sentinelRequest,
  type Integrity,
  type SentinelRequest,
} from './integrity.js';
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
  /** For a protocol-2 runner: its collector's run, and what the integrity checks found. */
  integrity?: {
    collector: CommandRecord | null;
    /** The sentinels' names and statuses, for the oracle log only (never stored elsewhere). */
    sentinels: Array<{ name: string; expect: string; status: string | null }>;
    tampered: string | null;
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

export interface PhaseExecOptions {
  /** Another user than the task's (`uid:gid`): the protocol-2 collector's. */
  user?: string;
  stdin?: Buffer;
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
   * Present when the runner speaks protocol 2 (integrity.ts): the collector's user, and the
   * folder where the first phase's collector keeps the base commit's test configuration.
   */
  protocol?: { collectorUser: string; configDir: string };
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
  const request = phase.protocol
    ? sentinelRequest(phase.protocol.configDir, name === 'existing')
    : null;
  const collector =
    phase.protocol && request
      ? startCollector(phase, phase.protocol.collectorUser, dir, list, request)
      : null;
  const run = await timed(name, () =>
    request === null
      ? exec(
          ['sh', '-c', PHASE_SCRIPT, 'proctor-phase', dir, asset(ASSET.runner), asset(list)],
          limits.testSeconds * 1000,
          limits.outputBytes,
        )
      : exec(
          ['sh', '-c', CHANNEL_SCRIPT, 'proctor-phase', dir, asset(ASSET.runner), asset(list)],
          limits.testSeconds * 1000,
          limits.outputBytes,
          { stdin: requestBytes(request) },
        ),
  );
  const collectorRun =
    collector === null ? null : await timed('collector', () => finishCollector(phase, collector));
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
  if (request !== null) {
    record.integrity = { collector: collectorRun, sentinels: [], tampered: null };
  }
  evaluation.phaseRecords.push(record);
  const declared = name === 'existing' ? bundle.existingIds : bundle.hiddenIds;
  const outcome: PhaseOutcome = {
    timedOut: run.timedOut,
    oom: run.oomKilled,
    reportError: null,
    check: null,
  };
  if (collectorRun !== null && collectorRun.exitCode !== 0 && collected.exitCode !== 0) {
    outcome.reportError = `the runner's collector failed (exit ${String(collectorRun.exitCode)}): ${lastLines(collectorRun.stderr) || lastLines(collectorRun.stdout) || 'no output'}`;
  } else if (collected.exitCode === 6) {
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
      if (request !== null && record.integrity) {
        const integrity = readIntegrity(parsed.integrity);
        const checked = checkIntegrity(integrity, request);
        record.integrity.sentinels = request.sentinels.map((s) => ({
          ...s,
          status: integrity?.sentinels.find((r) => r.name === s.name)?.status ?? null,
        }));
        record.integrity.tampered = checked.tampered;
        outcome.tampered = checked.tampered;
        if (checked.invalid !== null) {
          const cause = lastLines(run.stderr) || lastLines(run.stdout);
          throw new ProctorError(
            'REPORT_INVALID',
            cause ? `${checked.invalid}; the runner's last lines: ${cause}` : checked.invalid,
          );
        }
      }
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

function requestBytes(request: SentinelRequest): Buffer {
  return Buffer.from(`${JSON.stringify(request)}\n`, 'utf8');
}

/** A protocol-2 report's `integrity` object, or undefined when it is absent or malformed. */
function readIntegrity(raw: unknown): Integrity | undefined {
  const parsed = integritySchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/**
 * Starts the phase's collector (as another uid; see COLLECTOR_SCRIPT) without waiting for it:
 * it makes its folder and socket, then waits for the tests' one connection. Never rejects.
 */
function startCollector(
  phase: PhaseContext,
  user: string,
  dir: string,
  list: string,
  request: SentinelRequest,
): Promise<ExecResult | Error> {
  const timeoutMs = phase.bundle.limits.testSeconds * 1000 + COLLECTOR_TIMEOUT_MS;
  return phase
    .exec(
      ['sh', '-c', COLLECTOR_SCRIPT, 'proctor-collector', dir, asset(ASSET.runner), asset(list)],
      timeoutMs,
      16 * 1024,
      { user, stdin: requestBytes(request) },
    )
    .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
}

/**
 * Waits for the collector once the tests ended. It ends by itself when the tests' session
 * ends; when something the tests left still holds the channel open, the task uid's processes
 * are killed and it gets a little longer. Its run goes into the oracle log.
 */
async function finishCollector(
  phase: PhaseContext,
  collector: Promise<ExecResult | Error>,
): Promise<CommandRecord | null> {
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), COLLECTOR_GRACE_MS);
  });
  let result = await Promise.race([collector, grace]);
  clearTimeout(timer);
  if (result === null) {
    await phase.exec(['sh', '-c', KILL_TASK_SCRIPT], COLLECT_TIMEOUT_MS);
    result = await collector;
  }
  if (result instanceof Error) throw result;
  return commandRecord(result);
}
