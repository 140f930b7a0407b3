// Traditional unified diffs (no `diff --git` line, as GNU diff and many models write them):
// rewritten as the git diff of the same changes, checked against the real tools — the rewrite
// applied by `git apply` leaves exactly the tree GNU `patch -p1` leaves from the original —
// and refused, with the line, wherever a reading would have to guess. Through prepareCandidate
// the rewrite is what allow/deny and the screen see.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { loadBundle } from '../../src/oracle/bundle.js';
import { prepareCandidate } from '../../src/oracle/candidate.js';
import { parseDiff } from '../../src/oracle/diff-parse.js';
import { asGitDiff, isTraditionalDiff } from '../../src/oracle/diff-traditional.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const PY_TASK = join(ROOT, 'examples/py-duration-parse');

function write(root: string, files: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const listed = execFileSync('find', ['.', '-type', 'f', '-not', '-path', './.git/*'], {
    cwd: root,
    encoding: 'utf8',
  });
  for (const path of listed.split('\n').filter(Boolean).sort()) {
    out[path.slice(2)] = readFileSync(join(root, path), 'utf8');
  }
  return out;
}

/** GNU `diff -ruN a b` of two trees, as a user's or model's traditional patch. */
function gnuDiff(before: Record<string, string>, after: Record<string, string>): Buffer {
  const dir = tempDir();
  write(join(dir, 'a'), before);
  write(join(dir, 'b'), after);
  mkdirSync(join(dir, 'a'), { recursive: true });
  mkdirSync(join(dir, 'b'), { recursive: true });
  const result = spawnSync('diff', ['-ruN', 'a', 'b'], { cwd: dir });
  expect(result.status).toBe(1); // 1: the trees differ
  return result.stdout;
}

/** The tree `patch -p1` leaves from `patch`, and the one `git apply` leaves from the rewrite. */
function bothWays(before: Record<string, string>, patch: Buffer) {
  const byPatch = tempDir();
  write(byPatch, before);
  execFileSync('patch', ['-p1', '--batch', '--quiet'], { cwd: byPatch, input: patch });
  const byGit = tempDir();
  write(byGit, before);
  execFileSync('git', ['init', '-q'], { cwd: byGit });
  execFileSync('git', ['apply', '--whitespace=nowarn', '-'], {
    cwd: byGit,
    input: asGitDiff(patch),
  });
  return { patch: tree(byPatch), git: tree(byGit) };
}

function refusal(patch: string): string {
  try {
    asGitDiff(Buffer.from(patch));
  } catch (error) {
    expect(isProctorError(error) && error.code).toBe('PATCH_INVALID');
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

const BEFORE = {
  'pkg/core.py': 'def f():\n    return 1\n\n\ndef g():\n    return 2\n',
  'pkg/old.py': 'gone = True\n',
  'docs/with space.txt': 'one\ntwo\n',
  README: 'no newline at the end',
};
const AFTER = {
  'pkg/core.py': 'def f():\n    return 10\n\n\ndef g():\n    -- = 2\n',
  'pkg/new.py': 'made = True\n',
  'docs/with space.txt': 'one\n2\n',
  README: 'now with one\n',
};

describe('asGitDiff', () => {
  it('rewrites GNU diff -ruN output (timestamps, a new, a deleted and a spaced file) so that git apply leaves what patch -p1 leaves', () => {
    const patch = gnuDiff(BEFORE, AFTER);
    expect(isTraditionalDiff(patch)).toBe(true);
    const { patch: byPatch, git: byGit } = bothWays(BEFORE, patch);
    expect(byGit).toEqual(byPatch);
    expect(byGit).toEqual(AFTER);
    const sections = parseDiff(asGitDiff(patch)).map((s) => [
      s.change.kind,
      s.change.newPath ?? s.change.oldPath,
    ]);
    expect(sections).toEqual([
      ['modify', 'README'],
      ['modify', 'docs/with space.txt'],
      ['modify', 'pkg/core.py'],
      ['add', 'pkg/new.py'],
      ['delete', 'pkg/old.py'],
    ]);
  });

  it('reads a model-written patch: a message first, a/ b/ names without dates, a removed line that starts with "-- "', () => {
    const patch = Buffer.from(
      [
        'Fix f and g.',
        '',
        '--- a/pkg/core.py',
        '+++ b/pkg/core.py',
        '@@ -1,6 +1,6 @@',
        ' def f():',
        '-    return 1',
        '+    return 10',
        ' ',
        ' ',
        ' def g():',
        '-    return 2',
        '+    -- = 2',
        '',
      ].join('\n'),
    );
    const { git } = bothWays(BEFORE, patch);
    expect(git['pkg/core.py']).toBe(AFTER['pkg/core.py']);
    expect(asGitDiff(patch).toString()).toMatch(
      /^diff --git a\/pkg\/core.py b\/pkg\/core.py\n--- a\/pkg\/core.py\n\+\+\+ b\/pkg\/core.py\n@@ -1,6/,
    );
  });

  it('reads an epoch date on the absent side as a creation or a deletion, in any time zone, as git apply does', () => {
    const kinds = (patch: string) =>
      parseDiff(asGitDiff(Buffer.from(patch))).map((s) => s.change.kind);
    const dated = '\t2026-12-02 20:35:29.359156484 +0000';
    expect(
      kinds(`--- a/x\t1969-12-31 16:00:00.000000000 -0800\n+++ b/x${dated}\n@@ -0,0 +1 @@\n+a\n`),
    ).toEqual(['add']);
    expect(
      kinds(`--- a/x${dated}\n+++ b/x\t1970-01-01 00:00:00 +0000\n@@ -1 +0,0 @@\n-a\n`),
    ).toEqual(['delete']);
    // Not the epoch (a minute after it), or an epoch date on a side with lines: a modification.
    expect(
      kinds(`--- a/x\t1970-01-01 00:01:00 +0000\n+++ b/x${dated}\n@@ -0,0 +1 @@\n+a\n`),
    ).toEqual(['modify']);
    expect(
      kinds(`--- a/x\t1970-01-01 00:00:00 +0000\n+++ b/x${dated}\n@@ -1 +1 @@\n-a\n+b\n`),
    ).toEqual(['modify']);
  });

  it('leaves a git diff, a blank patch and text without a section as they are', () => {
    const git = Buffer.from('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n');
    expect(asGitDiff(git)).toBe(git);
    const blank = Buffer.from('\n');
    expect(asGitDiff(blank)).toBe(blank);
    const prose = Buffer.from('I could not fix it.\n');
    expect(asGitDiff(prose)).toBe(prose);
  });

  it('refuses, with the line, whatever it would have to guess', () => {
    expect(refusal('--- a/x.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n')).toBe(
      'line 1: `--- ` and `+++ ` name different files ("x.py", "y.py"): a traditional diff cannot rename one',
    );
    expect(refusal('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n')).toBe(
      'line 6: unexpected "+c" after the end of a file\'s changes (a hunk longer than its header says, or stray text)',
    );
    expect(refusal('--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n')).toBe('line 3: hunk truncated');
    expect(refusal('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -9 +9 @@\n')).toBe(
      'line 6: hunk truncated',
    );
    expect(refusal('--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n')).toBe(
      'line 1: both `--- ` and `+++ ` are /dev/null',
    );
    expect(refusal('--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n')).toBe(
      'line 1: path with an empty, `.` or `..` component "../etc/passwd"',
    );
    expect(refusal('--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n')).toBe(
      'line 1: path into .git ".git/config"',
    );
    expect(refusal('--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n')).toBe(
      'line 1: path without an a/ or b/ prefix "x"',
    );
    expect(refusal('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\nnote\n@@ -3 +3 @@\n-c\n+d\n')).toBe(
      'line 7: a hunk outside any `--- `/`+++ ` section',
    );
  });
});

describe('prepareCandidate on a traditional diff', () => {
  it('filters the rewrite by allow/deny, and records it as traditional', async () => {
    const bundle = await loadBundle(PY_TASK);
    const gold = readFileSync(join(PY_TASK, 'solution/gold.patch'), 'latin1');
    // The example's gold patch, its `diff --git` and `index` lines taken out, plus a denied
    // conftest.py created from /dev/null.
    const traditional = Buffer.from(
      gold
        .split('\n')
        .filter((l) => !l.startsWith('diff --git ') && !l.startsWith('index '))
        .join('\n') + '--- /dev/null\n+++ b/conftest.py\n@@ -0,0 +1 @@\n+import pytest\n',
      'latin1',
    );
    expect(traditional.includes('diff --git')).toBe(false);
    const prepared = prepareCandidate(bundle, traditional, Buffer.alloc(0));
    expect(prepared.verdict).toBeUndefined();
    expect(prepared.record.traditional).toBe(true);
    expect(prepared.record.kept).toEqual(
      parseDiff(readFileSync(join(PY_TASK, 'solution/gold.patch'))).map((s) => s.change.newPath),
    );
    expect(prepared.record.dropped).toEqual([
      'dropped conftest.py (denied by **/conftest.py, add, 1 hunk)',
    ]);
    expect(prepared.patch.toString('latin1')).toMatch(/^diff --git /);
  });

  it('fails a traditional diff it refuses as APPLY_FAILED, with the reason', async () => {
    const bundle = await loadBundle(PY_TASK);
    const prepared = prepareCandidate(
      bundle,
      Buffer.from('--- a/x.py\n+++ b/y.py\n@@ -1 +1 @@\n-a\n+b\n'),
      Buffer.alloc(0),
    );
    expect(prepared.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'APPLY_FAILED',
      detail:
        'the diff cannot be read: line 1: `--- ` and `+++ ` name different files ("x.py", "y.py"): a traditional diff cannot rename one',
    });
  });
});
