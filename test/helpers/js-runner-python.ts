// The jest and vitest runners' own Python functions, run on the host's python3 with the runner
// loaded as a module: for tests of their pure logic (no framework runs).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runnerSource } from '../../src/runners/index.js';
import { tempDir } from './temp.js';

/**
 * `code` run with the runner `name` loaded as `runner`, in `cwd` with `env` added; its stdout,
 * or `ValueError: …` when it raised one.
 */
export async function inRunner(
  name: 'jest' | 'vitest',
  code: string,
  stdin: string,
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<string> {
  const path = join(tempDir(), 'run');
  writeFileSync(path, await runnerSource(name));
  const script = `
import importlib.machinery, importlib.util, io, json, sys
loader = importlib.machinery.SourceFileLoader("runner", sys.argv[1])
spec = importlib.util.spec_from_loader("runner", loader)
runner = importlib.util.module_from_spec(spec)
loader.exec_module(runner)
try:
${code
  .split('\n')
  .map((line) => `    ${line}`)
  .join('\n')}
except ValueError as error:
    print("ValueError: %s" % error)
`;
  return execFileSync('python3', ['-c', script, path], {
    input: stdin,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { ...process.env, ...options.env },
  })
    .toString()
    .trim();
}
