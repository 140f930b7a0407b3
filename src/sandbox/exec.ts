// Runs one command in an existing container with a wall-clock limit, an abort signal and
// bounded output capture: stdout and stderr are drained continuously into constant-space
// head/tail buffers (output-buffer.ts) while the command runs.
//
// The end: the exec's exit is learnt by polling `exec.inspect()`, never from the end of the
// output stream, because a detached descendant (`setsid sh -c 'sleep 1000' &`) that inherited
// stdout keeps the stream open forever. The output's end only says when to look: every
// inspect waits for it (or 250 ms), so that a short command's exit costs one inspect, not two,
// and a long one is not polled 20 times a second; once it has ended, the polls come every
// 10 ms. After the exit, output is read for at most `drainMs` / `drainBytes` more, then the
// stream is destroyed. Such a descendant is not killed: only a timeout or an abort kills, and
// removing the container ends everything.
//
// The kill: Docker has no API to signal an exec, and `exec.inspect().Pid` is the pid in the
// *host's* namespace (on Docker 20.10, host pid 24331 was pid 47 in the container), which
// Proctor cannot signal through a remote or rootless engine and which means nothing inside
// the container. So every exec carries a random token in its environment (PROCTOR_EXEC_ID),
// inherited by all its descendants, and a second exec, as the same user, runs KILL_SCRIPT: it
// scans /proc for processes whose environ holds the token (so `setsid` does not hide them) and
// SIGKILLs them, every process group they lead and every member of a session they lead (runc
// makes each exec a session and group leader). `kill -KILL -PGID`
// signals a whole group at once, even one that keeps forking, which is what stops a fork bomb;
// the scan repeats until a round finds nothing alive. The script uses shell builtins only,
// because under a saturated pids limit a killer that forks would fail. It cannot find a
// process that both cleared its environment and left the session (`setsid env -i …`); only
// removing the container reaches that. Without /bin/sh in the image the kill fails, and
// execInContainer throws DOCKER_ERROR saying to remove the container.
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { ProctorError, describeError, isProctorError } from '../errors.js';
import { isNotFound, type DockerClient } from './docker.js';
import { createDemuxer, createOutputBuffer } from './output-buffer.js';

export interface ExecOptions {
  /** The program and its arguments, run directly (wrap in `['sh', '-c', …]` for a shell). */
  cmd: string[];
  /** `uid[:gid]` or a user name; default: the container's user. */
  user?: string;
  /** Default: the container's working directory. */
  workdir?: string;
  /** Added to the container's environment. `PROCTOR_EXEC_ID` is reserved. */
  env?: Record<string, string>;
  /** Wall-clock limit from the call; then every process of the command is killed. */
  timeoutMs: number;
  /** Bytes kept per stream, half from the start and half from the end; the rest is counted. */
  outputBytes: number;
  /** How long to keep reading output after the command's process exited. Default 500. */
  drainMs?: number;
  /** How many bytes (both streams) to read at most after it exited. Default 1 MiB. */
  drainBytes?: number;
  /** Aborting kills the command like a timeout, and the result says `aborted`. */
  signal?: AbortSignal;
  /**
   * Bytes for the command's stdin, followed by EOF. Default: no stdin (reads see EOF at once).
   * Held in memory until written, so the caller bounds them (a patch is at most patch_bytes).
   * A function is called once the exec has started and its bytes follow when they are ready,
   * so that making them overlaps the start; if it fails, stdin ends with nothing.
   */
  stdin?: Buffer | (() => Promise<Buffer>);
  /**
   * The command's own time starts when its stderr begins with `marker` (a line its script
   * prints once a trusted first part is done): from then on it has `timeoutMs`; until then,
   * `beforeMs` from the call in all.
   */
  clockFrom?: { marker: string; beforeMs: number };
  /**
   * Told the bytes seen so far on both streams, kept or not, after each chunk: a caller that
   * must stop a command flooding its output (an agent printing without end) aborts `signal`.
   */
  onOutput?: (bytes: number) => void;
}

export interface ExecResult {
  /** The exec's exit code (137 after our own kill); null if it never reported one. */
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  /** Heuristic, see `wasOomKilled`. */
  oomKilled: boolean;
  stdout: string;
  stderr: string;
  /** Bytes seen on each stream, kept or not. */
  stdoutBytes: number;
  stderrBytes: number;
  /** True if either stream was longer than `outputBytes`. */
  truncated: boolean;
  durationMs: number;
}

export const EXEC_DEFAULTS = { drainMs: 500, drainBytes: 1024 * 1024 } as const;
/** The poll after a kill, and between the killer's tries. */
const POLL_MS = 50;
/**
 * The poll while the command's output is open: its end wakes the loop at once, so this only
 * bounds how late the exit of a command whose detached descendant holds the output is seen.
 * Each poll is a round trip to the engine (and work for it), which a 5 s test run paid 100
 * times at 50 ms: the first comes after OPEN_POLL_MS, and each wait is OPEN_POLL_GROWTH times
 * the one before, up to OPEN_POLL_MAX_MS (a 10 s run: 12 looks, where 250 ms made 40; a
 * grade's collector, open for all its phases, as many again).
 */
const OPEN_POLL_MS = 250;
const OPEN_POLL_GROWTH = 1.5;
const OPEN_POLL_MAX_MS = 1_000;
/** The poll once the command's output has ended (its exit is then a moment away). */
const ENDED_POLL_MS = 10;
/** How long the killer may take, and how long the exec may then take to report its exit. */
const KILL_MS = 10_000;
const EXIT_AFTER_KILL_MS = 2_000;
const KILL_ROUNDS = 3;
const TOKEN_VAR = 'PROCTOR_EXEC_ID';
const KILL_DONE = 'proctor-kill: done';

// $1 is the token. Fields after "(comm) " in /proc/PID/stat: state ppid pgrp session.
// A group or session counts as the command's only if its leader carried the token, so the
// container's own init and other execs are never hit.
const KILL_SCRIPT = `tok=$1; groups=' '; sessions=' '; round=0
while [ "$round" -lt 100 ]; do
  round=$((round + 1)); live=0
  for d in /proc/[0-9]*; do
    p=\${d#/proc/}; st=
    [ "$p" = "$$" ] && continue
    { read -r st < "$d/stat"; } 2>/dev/null
    [ -n "$st" ] || continue
    set -- \${st##*) }
    case $1 in Z|X) continue;; esac
    mine=0
    case $groups in *" $3 "*) mine=1;; esac
    case $sessions in *" $4 "*) mine=1;; esac
    if [ "$mine" = 0 ]; then
      { while IFS= read -r line || [ -n "$line" ]; do
          case $line in *"${TOKEN_VAR}=$tok"*) mine=1; break;; esac
        done < "$d/environ"; } 2>/dev/null
      [ "$mine" = 1 ] || continue
      [ "$3" = "$p" ] && groups="$groups$p "
      [ "$4" = "$p" ] && sessions="$sessions$p "
    fi
    live=$((live + 1))
    case $groups in *" $3 "*) kill -KILL -"$3" 2>/dev/null;; esac
    kill -KILL "$p" 2>/dev/null
  done
  [ "$live" = 0 ] && { echo '${KILL_DONE}'; exit 0; }
done
echo 'proctor-kill: processes keep appearing'; exit 1`;

export async function execInContainer(
  docker: DockerClient,
  containerId: string,
  options: ExecOptions,
): Promise<ExecResult> {
  validate(options);
  return runExec(docker, containerId, options, true);
}

/** `canKill` is false for the killer itself, which is bounded by its own script. */
async function runExec(
  docker: DockerClient,
  containerId: string,
  options: ExecOptions,
  canKill: boolean,
): Promise<ExecResult> {
  const started = Date.now();
  const { signal, timeoutMs } = options;
  const drainMs = options.drainMs ?? EXEC_DEFAULTS.drainMs;
  const drainBytes = options.drainBytes ?? EXEC_DEFAULTS.drainBytes;
  const out = createOutputBuffer(options.outputBytes);
  const err = createOutputBuffer(options.outputBytes);
  const token = randomBytes(12).toString('hex');
  const container = docker.getContainer(containerId);
  const waker = createWaker();
  let stream: Duplex | undefined;
  let exited = false;
  let ended = false;
  let drained = 0; // bytes read after the exit
  let reason: 'timeout' | 'abort' | undefined;
  let exitCode: number | null = null;
  let deadline = started + timeoutMs;
  signal?.addEventListener('abort', waker.wake);
  const done = (): ExecResult => ({
    exitCode,
    timedOut: reason === 'timeout',
    aborted: reason === 'abort',
    oomKilled: false,
    stdout: out.text(),
    stderr: err.text(),
    stdoutBytes: out.totalBytes,
    stderrBytes: err.totalBytes,
    truncated: out.truncated || err.truncated,
    durationMs: Date.now() - started,
  });
  try {
    if (signal?.aborted) {
      reason = 'abort';
      return done();
    }
    const env = Object.entries(options.env ?? {}).map(([key, value]) => `${key}=${value}`);
    const exec = await container
      .exec({
        Cmd: options.cmd,
        AttachStdin: options.stdin !== undefined,
        AttachStdout: true,
        AttachStderr: true,
        Tty: false,
        Env: [...env, `${TOKEN_VAR}=${token}`],
        User: options.user,
        WorkingDir: options.workdir,
      })
      .catch((error: unknown) => {
        throw wrap(containerId, 'create an exec', error);
      });
    const stdin = options.stdin;
    stream = await exec
      .start({ hijack: true, stdin: stdin !== undefined })
      .catch((error: unknown) => {
        throw wrap(containerId, 'start an exec', error);
      });
    const onEnd = (): void => {
      ended = true;
      waker.wake();
    };
    stream.on('end', onEnd).on('close', onEnd).on('error', onEnd);
    const demuxer = createDemuxer(out, err);
    const onOutput = options.onOutput;
    const clock = options.clockFrom;
    // Until its marker shows (or cannot any more), the command runs on the clock before it.
    let clocking = clock !== undefined;
    stream.on('data', (chunk: Buffer) => {
      const bytes = demuxer.write(chunk);
      if (clocking && clock && err.totalBytes >= Buffer.byteLength(clock.marker)) {
        clocking = false;
        if (err.text().startsWith(clock.marker)) {
          deadline = Date.now() + timeoutMs;
          waker.wake();
        }
      }
      if (exited && (drained += bytes) >= drainBytes) waker.wake();
      onOutput?.(out.totalBytes + err.totalBytes);
    });
    // The bytes, then a half-close: the engine closes the command's stdin when the hijacked
    // connection's write side ends, while its output keeps arriving on the read side. A
    // command that never reads leaves the write pending; the stream is destroyed at the end.
    if (Buffer.isBuffer(stdin)) stream.end(stdin);
    else if (stdin !== undefined) {
      const input = stream;
      stdin().then(
        (bytes) => input.end(bytes),
        () => input.end(),
      );
    }

    deadline = started + (clock ? clock.beforeMs : timeoutMs);
    let openPoll = OPEN_POLL_MS;
    let killDeadline = Infinity;
    let kills = 0;
    // The first look waits for the output's end (or a poll's time): an inspect right after the
    // start finds almost every command still running, and costs a round trip to the engine.
    if (!ended && !signal?.aborted) {
      await waker.sleep(Math.min(OPEN_POLL_MS, deadline - Date.now()));
    }
    for (;;) {
      const info = await exec.inspect().catch((error: unknown) => {
        if (isNotFound(error)) return 'gone' as const; // the engine forgot it with its container
        throw wrap(containerId, 'inspect an exec', error);
      });
      if (info === 'gone' || (!info.Running && info.ExitCode !== null)) {
        exitCode = info === 'gone' ? null : info.ExitCode;
        break;
      }
      if (reason === undefined && (signal?.aborted || Date.now() >= deadline)) {
        reason = signal?.aborted ? 'abort' : 'timeout';
        if (!canKill) break; // the killer: give up on it, its script is bounded anyway
        killDeadline = 0; // now
      }
      if (Date.now() > killDeadline) {
        // A fork bomb on a loaded machine can outrun one round of the killer (a process forked
        // while it swept): a few rounds, each given time to show the exit, then give up.
        if (kills < KILL_ROUNDS) {
          kills += 1;
          await killCommand(docker, containerId, token, options.user, Date.now() + KILL_MS);
          killDeadline = Date.now() + EXIT_AFTER_KILL_MS;
          continue;
        }
        throw new ProctorError(
          'DOCKER_ERROR',
          `could not kill exec ${exec.id} in container ${containerId}; remove the container`,
          { data: { containerId, execId: exec.id } },
        );
      }
      // Once the output has ended the exit is close behind: look again sooner.
      openPoll = Math.min(openPoll * OPEN_POLL_GROWTH, OPEN_POLL_MAX_MS);
      const poll = ended ? ENDED_POLL_MS : openPoll;
      await waker.sleep(reason ? POLL_MS : Math.min(poll, deadline - Date.now()));
    }

    exited = true;
    const drainUntil = Date.now() + drainMs;
    while (!ended && drained < drainBytes && Date.now() < drainUntil) {
      await waker.sleep(drainUntil - Date.now());
    }
    const result = done();
    result.oomKilled = reason === undefined && (await wasOomKilled(container, exitCode));
    return result;
  } finally {
    signal?.removeEventListener('abort', waker.wake);
    waker.wake(); // clears a pending timer, if any
    if (stream) {
      stream.removeAllListeners('data');
      stream.on('error', () => {}); // a late socket error must not crash the process
      stream.destroy();
    }
  }
}

/**
 * The cgroup OOM killer sends SIGKILL, so an exec it killed exits with 137 (128 + 9), and so
 * does a shell whose last pipeline stage it killed. Without our own kill, 137 is taken as OOM;
 * a command that SIGKILLs itself is the false positive, an OOM-killed child whose parent exits
 * otherwise the false negative. If the container itself died, its State.OOMKilled decides.
 */
async function wasOomKilled(
  container: Docker.Container,
  exitCode: number | null,
): Promise<boolean> {
  if (exitCode !== 137 && exitCode !== null) return false;
  try {
    const { State } = await container.inspect();
    return State.Running ? exitCode === 137 : State.OOMKilled;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw wrap(container.id, 'inspect the container', error);
  }
}

/** Runs KILL_SCRIPT until it reports that nothing of the command is alive, or until `deadline`. */
async function killCommand(
  docker: DockerClient,
  containerId: string,
  token: string,
  user: string | undefined,
  deadline: number,
): Promise<void> {
  // Retried: under a saturated pids limit, starting the killer itself can fail.
  while (Date.now() < deadline) {
    try {
      const cmd = ['/bin/sh', '-c', KILL_SCRIPT, 'proctor-kill', token];
      const timeoutMs = Math.max(1, deadline - Date.now());
      const killer = { cmd, user, timeoutMs, outputBytes: 4096, drainMs: 100 };
      if ((await runExec(docker, containerId, killer, false)).stdout.includes(KILL_DONE)) return;
    } catch (error) {
      // 404: the container is gone; 409: it is not running. Either way so is the command.
      const status = isProctorError(error) ? error.data?.['statusCode'] : undefined;
      if (status === 404 || status === 409) return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function wrap(containerId: string, what: string, error: unknown): ProctorError {
  const statusCode = (error as { statusCode?: number } | null)?.statusCode;
  return new ProctorError(
    'DOCKER_ERROR',
    `could not ${what} in container ${containerId}: ${describeError(error)}`,
    { cause: error, data: { containerId, statusCode } },
  );
}

/** A sleep that `wake()` ends early: the one timer of the poll loop, cleared on every wake. */
function createWaker(): { sleep: (ms: number) => Promise<void>; wake: () => void } {
  let timer: NodeJS.Timeout | undefined;
  let resolveSleep: (() => void) | undefined;
  const wake = (): void => {
    clearTimeout(timer);
    timer = undefined;
    const resolve = resolveSleep;
    resolveSleep = undefined;
    resolve?.();
  };
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      resolveSleep = resolve;
      timer = setTimeout(wake, Math.max(0, ms));
    });
  return { sleep, wake };
}

function validate(options: ExecOptions): void {
  const fail = (what: string, value: unknown): never => {
    throw new ProctorError('SANDBOX_INVALID', `Expected ${what}, got \`${String(value)}\``);
  };
  const { cmd, env = {}, stdin } = options;
  if (stdin !== undefined && !Buffer.isBuffer(stdin) && typeof stdin !== 'function') {
    fail('`stdin` to be a Buffer or a function', typeof stdin);
  }
  if (!Array.isArray(cmd) || cmd.length === 0 || cmd.some((arg) => /\0/.test(arg))) {
    fail('`cmd` to be a non-empty array of strings without NUL', JSON.stringify(cmd));
  }
  const { timeoutMs, outputBytes, drainMs = 0, drainBytes = 0 } = options;
  for (const [name, value] of Object.entries({ timeoutMs, outputBytes, drainMs, drainBytes })) {
    const whole = name.endsWith('Bytes');
    const min = name === 'timeoutMs' ? '> 0' : '>= 0';
    if (!(whole ? Number.isSafeInteger(value) : Number.isFinite(value)) || value < 0)
      fail(`\`${name}\` to be ${whole ? 'an integer' : 'a finite number'} ${min}`, value);
    if (name === 'timeoutMs' && value === 0) fail('`timeoutMs` to be a finite number > 0', value);
  }
  const clock = options.clockFrom;
  if (clock !== undefined && (clock.marker === '' || !(clock.beforeMs > 0))) {
    fail('`clockFrom` to have a marker and a `beforeMs` > 0', JSON.stringify(clock));
  }
  for (const [key, value] of Object.entries(env)) {
    if (!/^[^=\0]+$/.test(key) || key === TOKEN_VAR || /\0/.test(value))
      fail(`\`env\` names without = or NUL (not ${TOKEN_VAR}) and values without NUL`, key);
  }
}
