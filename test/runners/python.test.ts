// RUNNER_PYTHON: the pytest, django and sympy runners run their test side on the interpreter it
// names (SWE-bench's images keep the project's Python in /opt/miniconda3/envs/testbed), with
// its folder first on PATH, and refuse one that is not there; without it nothing changes.
// Each runner runs in the runners' test image, as the task's code would.
import { describe, expect, it } from 'vitest';
import { runnerSource } from '../../src/runners/index.js';
import { fileArguments } from '../../src/sandbox/file-arguments.js';
import { fixtureImage, execFileAsync } from '../helpers/docker.js';

const WRAPPER = String.raw`#!/bin/sh
echo "ran on the wrapper, PATH=$PATH" > /tmp/marker
exec python3 "$@"`;

/** Runs `run LIST REPORT` with `env` in the runners' image; its exit, stderr and the marker. */
async function runWith(runner: 'pytest' | 'django' | 'sympy', python: string | undefined) {
  const image = await fixtureImage('runners');
  // The runner is over one argument's 128 KiB in base64: it goes in chunks.
  const files = fileArguments('/tmp', [['run', await runnerSource(runner)]]);
  const script = [
    files.script,
    'chmod +x /tmp/run',
    `printf '%s\\n' '${WRAPPER.replaceAll("'", "'\\''")}' > /tmp/py && chmod +x /tmp/py`,
    'touch /tmp/list',
    `${python === undefined ? '' : `RUNNER_PYTHON=${python} `}/tmp/run /tmp/list /tmp/report; echo "exit $?"`,
    'cat /tmp/marker 2>/dev/null || echo "no marker"',
  ].join('\n');
  const { stdout, stderr } = await execFileAsync('docker', [
    ...['run', '--rm', '--network', 'none', '--workdir', '/tmp', image, 'sh', '-c', script],
    ...['runner-python', ...files.args],
  ]);
  return { stdout, stderr };
}

describe('RUNNER_PYTHON', { timeout: 300_000 }, () => {
  it.each(['pytest', 'django', 'sympy'] as const)(
    'makes the %s runner run again on that interpreter, its folder first on PATH',
    async (runner) => {
      const { stdout } = await runWith(runner, '/tmp/py');
      expect(stdout).toMatch(/^ran on the wrapper, PATH=\/tmp:/m);
    },
  );

  it.each(['pytest', 'django', 'sympy'] as const)(
    'makes the %s runner refuse an interpreter the image lacks, in one line (exit 2)',
    async (runner) => {
      const { stdout, stderr } = await runWith(runner, '/opt/miniconda3/envs/testbed/bin/python');
      expect(stdout).toContain('exit 2');
      expect(stderr).toBe(
        'proctor: RUNNER_PYTHON /opt/miniconda3/envs/testbed/bin/python: no such interpreter in this image\n',
      );
    },
  );

  it('leaves the runner on its own python3 without it', async () => {
    const { stdout } = await runWith('pytest', undefined);
    expect(stdout).toContain('no marker');
  });
});
