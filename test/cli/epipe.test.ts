// A reader that stops early (`proctor --help | head -1`, `proctor status --json | head`) closes
// the pipe under proctor's output: proctor ends quietly, with no stack trace on stderr.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

it('ends quietly, exit 0, when the reader of its output has gone', async () => {
  const child = spawn(process.execPath, [join(ROOT, 'bin/proctor.js'), '--help'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Gone before proctor writes a byte: its first write meets a closed pipe (EPIPE).
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(stderr).toBe('');
  expect(code).toBe(0);
});
