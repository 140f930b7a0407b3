// Trusted steps run back to back in one exec (PREPARE_SCRIPT), as the task uid while no process
// of the task runs: an exec costs a round trip to the engine and a poll of its exit (70-150 ms
// each on a loaded machine), and the hidden tests' preparation (evaluate-prepare.ts) is a row
// of such steps. Each step stays its own script with its own arguments, its own input, its own
// timeout, and is reported apart (its exit, its output, its time), as when it had an exec.
import { ProctorError } from '../errors.js';
import { KILL_TASK } from './evaluate-scripts.js';

/** One step of PREPARE_SCRIPT. */
export interface PrepStep {
  /** Its name in the frames and among the job's timings (`[a-z_]+`, unique in one exec). */
  name: string;
  /** Run as `sh -c SCRIPT proctor-NAME ARGS…` in the exec's working directory. */
  script: string;
  args: readonly string[];
  /**
   * Its stdin (a private file while the exec runs); empty for none. `later`: bytes made once
   * the exec has started (the last step with any stdin only), so that their making overlaps
   * the exec's start.
   */
  stdin: Buffer | { later: () => Promise<Buffer> };
  /** Killed (SIGKILL to its process group) past this, where the image's `timeout` can. */
  timeoutMs: number;
  /** The first bytes of its stdout that are kept (its stderr keeps PREPARE_STDERR_BYTES). */
  keepBytes: number;
  /** A step that fails ends the exec (the steps after it do not run); otherwise the next runs. */
  stopOnFailure: boolean;
}

/** The first bytes of a step's stderr that are kept. */
export const PREPARE_STDERR_BYTES = 64 * 1024;

// $1 `kill` to kill every process of the task first (KILL_TASK: the exec collects a phase's
// report), else `-`. Then, for each step, its fields and its arguments: `NAME LEN SECONDS MODE
// KEEP SCRIPT ARGC ARG…` (MODE `stop` or `go`, SECONDS 0 for no limit of its own; LEN `-` for
// the rest of stdin, the last step's that has any).
// Stdin holds each step's input, back to back: all of it goes first into a private folder (the
// task uid's, while none of its processes runs; removed when the exec ends), a file per step,
// each file removed as soon as its step has run. Stdout: for each step run, a line
// `proctor-step NAME EXIT START END OUT_BYTES ERR_BYTES` (START and END in ns, when the image's
// date gives them), then its stdout and its stderr in base64 (nothing for an empty one: no
// process is started for it), each ended by a line `.`: base64 holds no space or `.`, so
// nothing a step prints can pass for another step's frame. A step's own arguments are the
// first ARGC of the rest: the `for` list is fixed when the loop starts, so each round drops
// one argument from the front and puts it back at the end while it is one of the step's. A step
// that stops the exec ends it with exit 3 (STEPS_THEN_PHASE_SCRIPT then runs no phase).
export const PREPARE_SCRIPT = String.raw`if [ "$1" = kill ]; then ${KILL_TASK}; fi
shift
d=$(mktemp -d) || exit 125
trap 'rm -rf -- "$d"' EXIT
(
  i=0
  while [ "$#" -gt 0 ]; do
    [ "$#" -ge 7 ] && [ "$#" -ge $((7 + $7)) ] || exit 1
    if [ "$2" = - ]; then cat > "$d/in$i" || exit 1; else head -c "$2" > "$d/in$i" || exit 1; fi
    shift $((7 + $7))
    i=$((i + 1))
  done
) || exit 125
now() { date +%s%N 2>/dev/null || echo -; }
emit() {
  o=0
  e=0
  if [ -s "$d/out" ]; then o=$(wc -c < "$d/out") || exit 125; o=$((o)); fi
  if [ -s "$d/err" ]; then e=$(wc -c < "$d/err") || exit 125; e=$((e)); fi
  printf 'proctor-step %s %s %s %s %s %s\n' "$1" "$2" "$3" "$(now)" "$o" "$e" || exit 125
  if [ "$o" != 0 ]; then head -c "$4" < "$d/out" | base64 || exit 125; fi
  echo .
  if [ "$e" != 0 ]; then head -c ${PREPARE_STDERR_BYTES} < "$d/err" | base64 || exit 125; fi
  echo .
}
k=
if timeout -s KILL 5 true 2> /dev/null; then k=1; fi
i=0
while [ "$#" -gt 0 ]; do
  name=$1 secs=$3 mode=$4 keep=$5 script=$6 argc=$7
  shift 7
  t=$(now)
  (
    j=0
    for a; do
      if [ "$j" -lt "$argc" ]; then set -- "$@" "$a"; fi
      shift
      j=$((j + 1))
    done
    if [ -n "$k" ] && [ "$secs" -gt 0 ]; then
      exec timeout -s KILL "$secs" sh -c "$script" "proctor-$name" "$@"
    fi
    exec sh -c "$script" "proctor-$name" "$@"
  ) < "$d/in$i" > "$d/out" 2> "$d/err"
  s=$?
  rm -f -- "$d/in$i"
  emit "$name" "$s" "$t" "$keep"
  if [ "$s" != 0 ] && [ "$mode" = stop ]; then exit 3; fi
  shift "$argc"
  i=$((i + 1))
done
`;

const STEP_NAME = /^[a-z_]+$/;

/**
 * The exec that runs `steps`: its command line, its stdin, its time and output limits.
 * `killFirst`: every process of the task is killed before the first step (KILL_TASK).
 */
export function prepareCommand(
  steps: readonly PrepStep[],
  options: { killFirst?: boolean } = {},
): {
  cmd: string[];
  /** A function when a step's stdin comes later: call it once the exec has started. */
  stdin: Buffer | (() => Promise<Buffer>);
  timeoutMs: number;
  outputBytes: number;
} {
  const names = new Set<string>();
  const cmd = ['sh', '-c', PREPARE_SCRIPT, 'proctor-prepare', options.killFirst ? 'kill' : '-'];
  let timeoutMs = 0;
  let outputBytes = 4096;
  for (const step of steps) {
    if (!STEP_NAME.test(step.name) || names.has(step.name)) {
      throw new ProctorError(
        'INTERNAL',
        `Expected a step name of [a-z_] used once, got \`${step.name}\``,
      );
    }
    if (!Number.isSafeInteger(step.keepBytes) || step.keepBytes < 0) {
      throw new ProctorError(
        'INTERNAL',
        `Expected \`keepBytes\` to be an integer >= 0, got \`${String(step.keepBytes)}\``,
      );
    }
    if (!Number.isFinite(step.timeoutMs) || step.timeoutMs <= 0) {
      throw new ProctorError(
        'INTERNAL',
        `Expected \`timeoutMs\` to be a finite number > 0, got \`${String(step.timeoutMs)}\``,
      );
    }
    names.add(step.name);
    const later = !Buffer.isBuffer(step.stdin);
    if (
      later &&
      steps
        .slice(steps.indexOf(step) + 1)
        .some((s) => !Buffer.isBuffer(s.stdin) || s.stdin.length > 0)
    ) {
      throw new ProctorError(
        'INTERNAL',
        `Expected the step \`${step.name}\`, whose stdin comes later, to be the last with any stdin`,
      );
    }
    cmd.push(
      step.name,
      Buffer.isBuffer(step.stdin) ? String(step.stdin.length) : '-',
      String(Math.ceil(step.timeoutMs / 1000)),
      step.stopOnFailure ? 'stop' : 'go',
      String(step.keepBytes),
      step.script,
      String(step.args.length),
      ...step.args,
    );
    timeoutMs += step.timeoutMs;
    // Its kept output in base64 (76 characters a line), and its frame.
    outputBytes += base64Bytes(step.keepBytes) + base64Bytes(PREPARE_STDERR_BYTES) + 256;
  }
  const now = steps.flatMap((s) => (Buffer.isBuffer(s.stdin) ? [s.stdin] : []));
  const later = steps.find((s) => !Buffer.isBuffer(s.stdin))?.stdin;
  return {
    cmd,
    stdin:
      later === undefined || Buffer.isBuffer(later)
        ? Buffer.concat(now)
        : async () => Buffer.concat([...now, await later.later()]),
    timeoutMs,
    outputBytes,
  };
}

const base64Bytes = (bytes: number) => Math.ceil(bytes / 57) * 77;

/** One step's part of PREPARE_SCRIPT's output. */
export interface PreparedStep {
  exitCode: number;
  /** In-container wall time, when the image's `date` gives nanoseconds. */
  ms: number | null;
  stdout: Buffer;
  stderr: string;
  stdoutBytes: number;
  stderrBytes: number;
  /** More was printed than the step keeps. */
  truncated: boolean;
}

const STEP_LINE = /^proctor-step ([a-z_]+) (\d+) (\S+) (\S+) (\d+) (\d+)$/;

/**
 * Reads PREPARE_SCRIPT's stdout into its steps, by name; `steps` are the steps it was given
 * (for what each keeps). A frame that is not whole (the exec was cut short), or one of a step
 * not given or given already, ends the reading: the steps before it stand.
 */
export function readPreparedSteps(
  stdout: string,
  steps: readonly Pick<PrepStep, 'name' | 'keepBytes'>[],
): Map<string, PreparedStep> {
  return readPreparedFrames(stdout, steps).steps;
}

/**
 * readPreparedSteps, and where the last whole frame read ends in `stdout` (0 for none): what a
 * command run after the steps printed follows it (STEPS_THEN_PHASE_SCRIPT).
 */
export function readPreparedFrames(
  stdout: string,
  steps: readonly Pick<PrepStep, 'name' | 'keepBytes'>[],
): { steps: Map<string, PreparedStep>; end: number } {
  const read = new Map<string, PreparedStep>();
  const lines = stdout.split('\n');
  let i = 0;
  let framed = 0;
  const block = (): { bytes: Buffer; complete: boolean } => {
    const parts: string[] = [];
    while (i < lines.length && lines[i] !== '.') parts.push(lines[i++]!);
    const complete = i < lines.length;
    i += 1;
    return { bytes: Buffer.from(parts.join(''), 'base64'), complete };
  };
  const offset = (from: number, to: number) =>
    lines.slice(from, to).reduce((sum, line) => sum + line.length + 1, 0);
  while (i < lines.length) {
    const first = i;
    const head = STEP_LINE.exec(lines[i] ?? '');
    if (!head) break;
    const [, name, code, start, end, outBytes, errBytes] = head;
    const step = steps.find((s) => s.name === name);
    if (step === undefined || read.has(name!)) break;
    i += 1;
    const out = block();
    const err = block();
    if (!out.complete || !err.complete) break;
    framed += offset(first, i);
    const ms =
      /^\d+$/.test(start!) && /^\d+$/.test(end!)
        ? Number((BigInt(end!) - BigInt(start!)) / 1_000_000n)
        : null;
    const stdoutBytes = Number(outBytes);
    const stderrBytes = Number(errBytes);
    read.set(name!, {
      exitCode: Number(code),
      ms,
      stdout: out.bytes,
      stderr: err.bytes.toString('utf8'),
      stdoutBytes,
      stderrBytes,
      truncated: stdoutBytes > step.keepBytes || stderrBytes > PREPARE_STDERR_BYTES,
    });
  }
  return { steps: read, end: Math.min(framed, stdout.length) };
}

/**
 * Whether a step that exited 137 was killed by its own limit (GNU timeout's SIGKILL: 128 + 9)
 * rather than by something else (the memory limit): it ran for about that long.
 */
export function stepTimedOut(
  step: Pick<PreparedStep, 'exitCode' | 'ms'>,
  timeoutMs: number,
): boolean {
  return step.exitCode === 137 && (step.ms ?? 0) >= Math.ceil(timeoutMs / 1000) * 1000 - 1000;
}
