// `proctor grade` without Docker: what it refuses before anything is stored (a --patch that is
// a symlink, FIFO, device or directory, or larger than the task's patch_bytes, from a file or
// stdin), and how a verdict is printed (once, with the reason only where it adds something).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor, proctorBounded, type CliResult } from '../helpers/cli.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir, tempStore } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const GOLD = join(TASK, 'solution/gold.patch');

/** Exit 2 with one line on stderr, and nothing enqueued or stored in the home. */
async function refused(
  home: string,
  result: CliResult & { signal?: NodeJS.Signals | null },
  what: RegExp,
) {
  expect(result.signal ?? null).toBeNull();
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stderr.trimEnd()).toMatch(what);
  const status = await proctor(['--home', home, 'status', '--json']);
  expect(JSON.parse(status.stdout)).toMatchObject({ counts: { queued: 0 } });
  let stored: string[] = [];
  try {
    stored = readdirSync(join(home, 'artifacts'));
  } catch {
    // No artifact folder at all: nothing stored.
  }
  expect(stored).toEqual([]);
}

/** A copy of the shell task whose patch_bytes is 1 KiB. */
function smallTask(): string {
  const dir = join(tempDir(), 'small');
  cpSync(TASK, dir, { recursive: true });
  const toml = join(dir, 'task.toml');
  writeFileSync(
    toml,
    readFileSync(toml, 'utf8').replace('[limits]', '[limits]\npatch_bytes = 1024'),
  );
  return dir;
}

describe('grade --patch', () => {
  it('refuses a symlink, even to a good patch, without following it', async () => {
    const home = tempDir();
    const link = join(tempDir(), 'link.patch');
    symlinkSync(GOLD, link);
    const result = await proctor(['--home', home, 'grade', TASK, '--patch', link]);
    await refused(
      home,
      result,
      /^proctor: --patch .*link\.patch: a symlink; give the patch file itself$/,
    );
  });

  it('refuses a FIFO at once (the open does not wait for a writer), a device and a directory', async () => {
    const home = tempDir();
    const fifo = join(tempDir(), 'fifo.patch');
    execFileSync('mkfifo', [fifo]);
    const dir = join(tempDir(), 'dir.patch');
    mkdirSync(dir);
    for (const [file, kind] of [
      [fifo, 'a FIFO'],
      ['/dev/null', 'a character device'],
      [dir, 'a directory'],
    ] as const) {
      const result = await proctorBounded(['--home', home, 'grade', TASK, '--patch', file], {
        timeoutMs: 15_000,
      });
      await refused(
        home,
        result,
        new RegExp(`^proctor: --patch ${file}: ${kind}, not a regular file$`),
      );
    }
  }, 60_000);

  it("refuses a patch larger than the task's patch_bytes, from a file or stdin, naming the limit", async () => {
    const home = tempDir();
    const task = smallTask();
    const big = join(tempDir(), 'big.patch');
    const bytes = Buffer.from(readFileSync(GOLD, 'utf8') + `# ${'x'.repeat(2000)}\n`);
    writeFileSync(big, bytes);
    const message = /larger than the task's patch_bytes \(1024 bytes\)$/;
    await refused(home, await proctor(['--home', home, 'grade', task, '--patch', big]), message);
    const piped = await proctorBounded(['--home', home, 'grade', task, '--patch', '-'], {
      input: Buffer.concat([bytes, Buffer.alloc(8 * 1024 * 1024, 'y')]),
    });
    await refused(
      home,
      piped,
      /^proctor: --patch -: the patch on stdin is larger than the task's patch_bytes \(1024 bytes\)$/,
    );
  }, 60_000);

  it('enqueues a patch within the limit, from a file or stdin', async () => {
    const home = tempDir();
    const task = smallTask();
    const file = await proctor(['--home', home, 'grade', task, '--patch', GOLD]);
    expect(file.code).toBe(0);
    expect(file.stdout).toMatch(/^job 1: grade of shell-div-zero enqueued/);
    const piped = await proctorBounded(['--home', home, 'grade', task, '--patch', '-'], {
      input: readFileSync(GOLD),
    });
    expect(piped.stderr).toBe('');
    expect(piped.code).toBe(0);
    expect(piped.stdout).toMatch(/^job 2: grade of shell-div-zero enqueued/);
  }, 60_000);

  it('gives the enqueued job the tries [queue] max_attempts names', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'proctor.toml'), '[queue]\nmax_attempts = 1\n');
    const result = await proctor(['--home', home, 'grade', TASK, '--patch', GOLD]);
    expect(result.code).toBe(0);
    const status = await proctor(['--home', home, 'status', '1', '--json']);
    const { jobs } = JSON.parse(status.stdout) as { jobs: Array<{ maxAttempts: number }> };
    expect(jobs[0]?.maxAttempts).toBe(1);
  }, 60_000);
});

describe('verdicts', () => {
  it('status prints a verdict once, and the reason only where it adds something', async () => {
    const home = tempDir();
    const store = tempStore({ path: join(home, 'proctor.db') });
    const { jobIds } = await store.enqueueBatch({
      jobs: [
        { kind: 'grade', payload: { bundle: TASK, candidate: 'a' } },
        { kind: 'grade', payload: { bundle: TASK, candidate: 'b' } },
      ],
    });
    const results = [
      { verdict: 'PASS', reason: 'PASS', detail: '2 existing tests and 2 hidden tests passed' },
      { verdict: 'FAIL', reason: 'HIDDEN_FAILED', detail: 'hidden phase: 1 test not passed: t' },
    ];
    for (const result of results) {
      const [claimed] = await store.claim('grade', 'w', 1, 60_000);
      await store.complete(
        { id: claimed!.id, attempt: 1 },
        { ...result, testsHash: 'h', log: 'l' },
      );
    }
    const status = await proctor(['--home', home, 'status', ...jobIds.map(String)]);
    expect(status.code).toBe(0);
    expect(status.stdout).not.toContain('PASS PASS');
    expect(status.stdout).toMatch(/\sPASS: 2 existing tests and 2 hidden tests passed$/m);
    expect(status.stdout).toMatch(/\sFAIL HIDDEN_FAILED: hidden phase: 1 test not passed: t$/m);
  });
});
