// Files handed to a probe container on its command line (src/sandbox/file-arguments.ts): a
// runner larger than one argument may hold (128 KiB in base64) reaches the container whole,
// through a real sh and a real execve, and the arguments after the files stay "$1", "$2", ….
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileArguments } from '../../src/sandbox/file-arguments.js';

let folder = '';
afterEach(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('fileArguments', () => {
  it('writes files larger than one argument, and empty ones, leaving the rest as $1 and $2', () => {
    folder = mkdtempSync(join(tmpdir(), 'proctor-file-args-'));
    const big = randomBytes(300 * 1024);
    const small = Buffer.from('tests/test_a.py::test_one\n');
    const files = fileArguments(folder, [
      ['run', big],
      ['empty', Buffer.alloc(0)],
      ['list', small],
    ]);
    // 300 KiB is 400 KiB in base64: four arguments, each under the cap.
    expect(files.args.length).toBe(4 + 1 + 1);
    for (const arg of files.args) expect(arg.length).toBeLessThan(128 * 1024);
    const out = execFileSync(
      'sh',
      [
        '-c',
        `set -e\n${files.script}\nprintf '%s|%s' "$1" "$2"`,
        'probe',
        ...files.args,
        'a b',
        'c',
      ],
      { encoding: 'utf8' },
    );
    expect(out).toBe('a b|c');
    expect(readFileSync(join(folder, 'run'))).toEqual(big);
    expect(readFileSync(join(folder, 'empty'))).toEqual(Buffer.alloc(0));
    expect(readFileSync(join(folder, 'list'))).toEqual(small);
  });

  it('refuses a name that is not a plain file name', () => {
    expect(() => fileArguments('/tmp/p', [['../run', Buffer.from('x')]])).toThrow(
      'not a file name for a probe: ../run',
    );
  });
});
