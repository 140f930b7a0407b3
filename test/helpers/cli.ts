// Runs the real `proctor` binary (bin/proctor.js over dist/) as a child process.
import { spawn } from 'node:child_process';
import { expect } from 'vitest';
import { join } from 'node:path';
import { ROOT, spawnTs } from './processes.js';
import { waitFor } from './wait.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function proctor(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd = ROOT,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'proctor.js'), ...args], {
      cwd,
      env: { ...process.env, PROCTOR_HOME: undefined, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Starts `proctor ARGS` (a `--wait` command) in the background, waits until `ready()`, then
 * cancels job 1 from a second process; returns how the waiting command ended and how long it
 * took after the cancel was asked.
 */
export async function cancelWhileWaiting(
  home: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: () => boolean,
): Promise<{
  code: number | null;
  stdout: string;
  msAfterCancel: number;
  cancelCode: number | null;
}> {
  const waiting = spawnTs(join(ROOT, 'bin', 'proctor.js'), ['--home', home, ...args], {
    ...env,
    PROCTOR_HOME: '',
  });
  await waitFor(ready, { what: 'the job to be under way', timeoutMs: 60_000 });
  const asked = Date.now();
  const cancelled = await proctor(['--home', home, 'cancel', '1']);
  const { code } = await waiting.exited;
  return {
    code,
    stdout: waiting.stdout(),
    msAfterCancel: Date.now() - asked,
    cancelCode: cancelled.code,
  };
}

/**
 * `proctor ARGS` with bytes on stdin and a deadline: a child still running after `timeoutMs`
 * is killed (SIGKILL), so that a command that would hang fails its test instead of hanging it.
 */
export function proctorBounded(
  args: string[],
  {
    input,
    timeoutMs = 20_000,
    env = {},
  }: { input?: Buffer; timeoutMs?: number; env?: NodeJS.ProcessEnv },
): Promise<CliResult & { signal: NodeJS.Signals | null; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'proctor.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, PROCTOR_HOME: undefined, ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    // The command may refuse its input before reading all of it: that is not the test's error.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started }),
    );
  });
}

/** The stored result of job `id` (`proctor status ID --json`). */
export async function resultOf(dir: string, id: number): Promise<Record<string, unknown>> {
  const status = await proctor(['--home', dir, 'status', String(id), '--json']);
  expect(status.code).toBe(0);
  const { jobs } = JSON.parse(status.stdout) as {
    jobs: Array<{ result: Record<string, unknown> }>;
  };
  return jobs[0]!.result;
}
