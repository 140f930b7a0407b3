// The child processes of the codex adapter: codex itself, its preflight commands, and the MCP
// bridge codex starts. Each runs in a process group of its own (detached), so that one SIGKILL
// to the group ends codex and everything it started, which a cancel, the deadline or the first
// fatal audit finding must do at once. Pipes are bounded: preflight output is kept up to a
// limit, and stdout lines are split without ever holding more than one line's limit.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { createOutputBuffer } from '../../sandbox/index.js';
import type { Deadline } from '../deadline.js';

/** The most stderr kept of any codex process (its tail is quoted in a failure's detail). */
export const STDERR_BYTES = 64 * 1024;
/** The most stdout kept of a preflight command (the bundled model list is the largest). */
const PREFLIGHT_STDOUT_BYTES = 4 * 1024 * 1024;

export interface Spawned {
  child: ChildProcess;
  /** The exit code; null when killed by a signal or when the spawn failed. */
  exited: Promise<number | null>;
}

/** Starts `command` in a new process group with three pipes. */
export function start(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Spawned {
  const child = spawn(command, args, { env, cwd, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  // Killing the group can close a pipe under a pending write (EPIPE): that is expected, and
  // must not become an uncaught error of the whole worker.
  for (const pipe of [child.stdin, child.stdout, child.stderr]) pipe?.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code));
  });
  return { child, exited };
}

/** SIGKILL to the whole process group (codex and the bridge it started). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Calls `onLine` for each line of `input` without ever holding more than `maxBytes` of one
 * line: a longer line calls `onOversized` once and the rest of the stream is dropped.
 */
export function splitLines(
  input: Readable,
  maxBytes: number,
  onLine: (line: string) => void,
  onOversized: () => void,
): void {
  let parts: Buffer[] = [];
  let size = 0;
  let dropped = false;
  input.on('data', (chunk: Buffer) => {
    if (dropped) return;
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      parts.push(chunk.subarray(start, nl));
      size += nl - start;
      if (size > maxBytes) break;
      onLine(Buffer.concat(parts).toString('utf8'));
      parts = [];
      size = 0;
      start = nl + 1;
    }
    if (size <= maxBytes) {
      parts.push(chunk.subarray(start));
      size += chunk.length - start;
    }
    if (size > maxBytes) {
      dropped = true;
      parts = [];
      onOversized();
    }
  });
  input.on('end', () => {
    if (!dropped && size > 0) onLine(Buffer.concat(parts).toString('utf8'));
  });
}

export interface PreflightOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a short preflight command within the deadline; its exit code and bounded output. */
export async function preflight(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  deadline: Deadline,
  stdin = '',
): Promise<PreflightOutput> {
  const run = start(command, args, env, cwd);
  const out = createOutputBuffer(PREFLIGHT_STDOUT_BYTES);
  const err = createOutputBuffer(STDERR_BYTES);
  run.child.stdout?.on('data', (c: Buffer) => out.write(c));
  run.child.stderr?.on('data', (c: Buffer) => err.write(c));
  run.child.stdin?.end(stdin);
  const timer = setTimeout(() => killGroup(run.child), Math.max(1, deadline.remainingMs()));
  const onAbort = () => killGroup(run.child);
  deadline.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const code = await run.exited;
    return { code, stdout: out.text(), stderr: err.text() };
  } finally {
    clearTimeout(timer);
    deadline.signal.removeEventListener('abort', onAbort);
  }
}
