// Runs the real `proctor` binary (bin/proctor.js over dist/) as a child process.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './processes.js';

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
