// The diff filter against real git: each test builds a repository in a temp dir, changes it,
// takes `git diff --binary --full-index`, filters it, and applies the result with
// `git apply --check` and `git apply` to a fresh clone, whose tree must hold exactly the kept
// changes.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import {
  describeDropped,
  filterDiff,
  pathsTouchedBy,
  type DiffRules,
  type FileChange,
} from '../../src/oracle/diff-filter.js';
import { tempDir } from '../helpers/temp.js';

const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
  LC_ALL: 'C',
};

function git(cwd: string, args: string[], input?: Buffer): Buffer {
  const result = spawnSync('git', ['-c', 'core.autocrlf=false', ...args], {
    cwd,
    env: GIT_ENV,
    input,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    throw new Error(`git ${args.join(' ')} failed: ${result.stderr.toString()}`);
  }
  return result.stdout;
}

function write(dir: string, path: string, content: string | Buffer): void {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), content);
}

// Deterministic bytes with NULs and every byte value, so git treats the file as binary.
function binaryBytes(seed: number, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  let x = seed;
  for (let i = 0; i < length; i += 1) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    bytes[i] = i % 97 === 0 ? 0 : x & 0xff;
  }
  return bytes;
}

const LINES = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

/** A committed base repository with text, binary, executable, spaced and unicode files. */
function baseRepo(): string {
  const dir = tempDir('proctor-diff-base-');
  git(dir, ['init', '-q', '-b', 'main']);
  write(dir, 'README.md', '# Project\n');
  write(dir, 'src/app.py', LINES);
  write(dir, 'src/util.py', 'def util():\n    return 1\n');
  write(dir, 'src/old_name.py', LINES.replace('line 7', 'seven'));
  write(dir, 'src/legacy.py', 'legacy = True\n');
  write(dir, 'tests/test_app.py', 'def test_app():\n    assert True\n');
  write(dir, 'bin/run.sh', '#!/bin/sh\necho run\n');
  write(dir, 'assets/logo.bin', binaryBytes(1, 4096));
  write(dir, 'docs/read me.txt', 'spaces\n');
  write(dir, 'docs/spécial.txt', 'unicode\n');
  write(dir, 'docs/latin1.txt', Buffer.from('caf\xe9\nna\xefve\n', 'latin1'));
  write(dir, 'docs/old notes.txt', 'notes\n'.repeat(20));
  write(dir, 'assets/gone.bin', binaryBytes(2, 500));
  write(dir, 'src/empty_gone.txt', '');
  write(dir, 'bin/tool sh', '#!/bin/sh\n');
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'base']);
  return dir;
}

function clone(base: string): string {
  const dir = tempDir('proctor-diff-clone-');
  git(base, ['clone', '-q', base, dir]);
  return dir;
}

/** The candidate's changes as `git diff --binary --full-index`; renames only with `-M`. */
function diffOf(dir: string, flags: string[] = ['--no-renames']): Buffer {
  git(dir, ['add', '-A']);
  return git(dir, ['diff', '--cached', '--binary', '--full-index', ...flags, 'HEAD']);
}

type Tree = Map<string, string>;

/** Path → "mode blob" for every file in a work tree (after staging it). */
function tree(dir: string): Tree {
  git(dir, ['add', '-A']);
  const out = git(dir, ['ls-files', '-s', '-z']).toString('utf8');
  const entries: Tree = new Map();
  for (const record of out.split('\0').filter(Boolean)) {
    // "<mode> <blob> <stage>\t<path>"; the path itself may hold tabs.
    const tab = record.indexOf('\t');
    const [mode, blob] = record.slice(0, tab).split(' ');
    entries.set(record.slice(tab + 1), `${mode} ${blob}`);
  }
  return entries;
}

/** Base tree plus exactly the kept changes, taken from the candidate's tree. */
function expectedTree(base: Tree, candidate: Tree, kept: FileChange[]): Tree {
  const expected = new Map(base);
  for (const change of kept) {
    if ((change.kind === 'rename' || change.kind === 'delete') && change.oldPath !== null) {
      expected.delete(change.oldPath);
    }
    if (change.newPath !== null) expected.set(change.newPath, candidate.get(change.newPath) ?? '');
  }
  return expected;
}

/** `git apply --check`, then `git apply`, on a fresh clone; returns the clone. */
function applyToFresh(base: string, patch: Buffer): string {
  const dir = clone(base);
  if (patch.length > 0) {
    git(dir, ['apply', '--check'], patch);
    git(dir, ['apply'], patch);
  }
  return dir;
}

function expectApplied(
  base: string,
  candidate: string,
  result: { patch: Buffer; kept: FileChange[] },
) {
  const applied = applyToFresh(base, result.patch);
  expect(Object.fromEntries(tree(applied))).toEqual(
    Object.fromEntries(expectedTree(tree(base), tree(candidate), result.kept)),
  );
  return applied;
}

function expectInvalid(patch: Buffer | string, message?: RegExp): void {
  const input = typeof patch === 'string' ? Buffer.from(patch, 'latin1') : patch;
  let thrown: unknown;
  try {
    filterDiff(input, ALLOW_ALL);
  } catch (error) {
    thrown = error;
  }
  expect(isProctorError(thrown, 'PATCH_INVALID'), String(thrown)).toBe(true);
  if (message !== undefined) expect((thrown as Error).message).toMatch(message);
}

const ALLOW_ALL: DiffRules = { allow: ['**'], deny: [], hiddenPaths: [] };

/** A candidate exercising every kind of change git diff writes. */
function everyKindOfChange(base: string): string {
  const dir = clone(base);
  write(dir, 'src/app.py', LINES.replace('line 3\n', 'line three\n').replace('line 25', 'l25'));
  write(dir, 'src/new_module.py', 'print("new")\n');
  rmSync(join(dir, 'src/legacy.py'));
  renameSync(join(dir, 'src/old_name.py'), join(dir, 'src/new_name.py'));
  write(dir, 'src/new_name.py', LINES.replace('line 7', 'seven').replace('line 20', 'twenty'));
  renameSync(join(dir, 'docs/old notes.txt'), join(dir, 'docs/new notes b.txt'));
  rmSync(join(dir, 'assets/gone.bin'));
  chmodSync(join(dir, 'bin/run.sh'), 0o755);
  chmodSync(join(dir, 'bin/tool sh'), 0o755);
  const logo = binaryBytes(1, 4096);
  logo.write('EDITED', 100, 'latin1');
  write(dir, 'assets/logo.bin', logo);
  write(dir, 'assets/icon.bin', binaryBytes(7, 900));
  write(dir, 'docs/read me.txt', 'spaces, edited\n');
  write(dir, 'docs/spécial.txt', 'unicode, edited\n');
  write(dir, 'docs/tab\tname.txt', 'a tab in the name\n');
  write(dir, 'docs/latin1.txt', Buffer.from('caf\xe9\nna\xefve!\n', 'latin1'));
  write(dir, 'tests/test_app.py', 'def test_app():\n    assert 1 == 1\n');
  write(dir, 'tests/test_new.py', 'def test_new():\n    pass\n');
  write(dir, 'empty.txt', '');
  write(dir, 'docs/no-newline.txt', 'no newline at the end');
  return dir;
}

describe('filterDiff with real git repositories', () => {
  it('keeps every file byte-identically when everything is allowed, and the result applies', () => {
    const base = baseRepo();
    const candidate = everyKindOfChange(base);
    const patch = diffOf(candidate, ['-M']);

    const result = filterDiff(patch, ALLOW_ALL);

    expect(result.dropped).toEqual([]);
    expect(result.patch.equals(patch)).toBe(true);
    expect(result.sha256).toMatch(/^[0-9a-f]{64}$/);
    const byPath = new Map(result.kept.map((c) => [c.newPath ?? c.oldPath, c]));
    expect(byPath.get('src/app.py')).toEqual({
      oldPath: 'src/app.py',
      newPath: 'src/app.py',
      kind: 'modify',
      binary: false,
      hunks: 2,
      newMode: '100644',
    });
    expect(byPath.get('src/new_name.py')).toMatchObject({
      oldPath: 'src/old_name.py',
      kind: 'rename',
      hunks: 1,
    });
    expect(byPath.get('docs/new notes b.txt')).toMatchObject({
      oldPath: 'docs/old notes.txt',
      kind: 'rename',
      hunks: 0,
    });
    expect(byPath.get('assets/gone.bin')).toMatchObject({ kind: 'delete', binary: true });
    expect(byPath.get('bin/tool sh')).toMatchObject({ kind: 'mode', oldPath: 'bin/tool sh' });
    expect(byPath.get('src/legacy.py')).toMatchObject({ newPath: null, kind: 'delete' });
    expect(byPath.get('src/new_module.py')).toMatchObject({ oldPath: null, kind: 'add' });
    expect(byPath.get('bin/run.sh')).toMatchObject({ kind: 'mode', hunks: 0, newMode: '100755' });
    expect(byPath.get('assets/logo.bin')).toMatchObject({ kind: 'modify', binary: true });
    expect(byPath.get('assets/icon.bin')).toMatchObject({ kind: 'add', binary: true });
    expect(byPath.get('empty.txt')).toMatchObject({ kind: 'add', hunks: 0, binary: false });
    expect(byPath.get('docs/read me.txt')).toMatchObject({ kind: 'modify', hunks: 1 });
    expect(byPath.get('docs/spécial.txt')).toMatchObject({ kind: 'modify', hunks: 1 });
    expect(byPath.get('docs/tab\tname.txt')).toMatchObject({ kind: 'add', hunks: 1 });
    expect(result.kept).toHaveLength(18);

    const applied = expectApplied(base, candidate, result);
    expect(readFileSync(join(applied, 'assets/logo.bin'))).toEqual(
      readFileSync(join(candidate, 'assets/logo.bin')),
    );
    expect(readFileSync(join(applied, 'docs/latin1.txt'))).toEqual(
      Buffer.from('caf\xe9\nna\xefve!\n', 'latin1'),
    );
  });

  it('keeps empty files that are added and deleted, which have no hunks', () => {
    const base = baseRepo();
    const candidate = clone(base);
    rmSync(join(candidate, 'src/empty_gone.txt'));
    write(candidate, 'src/empty_new.txt', '');
    const result = filterDiff(diffOf(candidate), ALLOW_ALL);
    expect(result.kept).toEqual([
      {
        oldPath: 'src/empty_gone.txt',
        newPath: null,
        kind: 'delete',
        binary: false,
        hunks: 0,
        newMode: null,
      },
      {
        oldPath: null,
        newPath: 'src/empty_new.txt',
        kind: 'add',
        binary: false,
        hunks: 0,
        newMode: '100644',
      },
    ]);
    expectApplied(base, candidate, result);
  });

  it('drops every file under tests/ when tests/** is denied, and logs each one', () => {
    const base = baseRepo();
    const candidate = everyKindOfChange(base);
    const patch = diffOf(candidate, ['-M']);

    const result = filterDiff(patch, { allow: ['**'], deny: ['tests/**'], hiddenPaths: [] });

    expect(result.dropped.map((d) => [d.newPath, d.reason, d.rule])).toEqual([
      ['tests/test_app.py', 'denied', 'tests/**'],
      ['tests/test_new.py', 'denied', 'tests/**'],
    ]);
    expect(describeDropped(result.dropped)).toEqual([
      'dropped tests/test_app.py (denied by tests/**, 1 hunk)',
      'dropped tests/test_new.py (denied by tests/**, add, 1 hunk)',
    ]);
    expect(result.kept).toHaveLength(16);
    expect(result.patch.toString('latin1')).not.toContain('tests/');
    const applied = expectApplied(base, candidate, result);
    expect(readFileSync(join(applied, 'tests/test_app.py'), 'utf8')).toContain('assert True');
  });

  it('keeps only allowed paths and reports the rest as not allowed', () => {
    const base = baseRepo();
    const candidate = everyKindOfChange(base);
    const result = filterDiff(diffOf(candidate, ['-M']), {
      allow: ['src/**', '**/*.bin'],
      deny: [],
      hiddenPaths: [],
    });

    expect(result.kept.map((c) => c.newPath ?? c.oldPath).sort()).toEqual([
      'assets/gone.bin',
      'assets/icon.bin',
      'assets/logo.bin',
      'src/app.py',
      'src/legacy.py',
      'src/new_module.py',
      'src/new_name.py',
    ]);
    expect(new Set(result.dropped.map((d) => d.reason))).toEqual(new Set(['not_allowed']));
    expect(describeDropped(result.dropped)).toContain(
      'dropped bin/run.sh (matches no allow glob, mode, 0 hunks)',
    );
    expect(describeDropped(result.dropped)).toContain(
      'dropped "docs/tab\\tname.txt" (matches no allow glob, add, 1 hunk)',
    );
    expectApplied(base, candidate, result);
  });

  it('drops a candidate file that the hidden test patch also adds', () => {
    const base = baseRepo();
    const gold = clone(base);
    write(gold, 'tests/test_hidden.py', 'def test_hidden():\n    assert fixed()\n');
    write(gold, 'tests/test_app.py', 'def test_app():\n    assert False\n');
    const hiddenPaths = pathsTouchedBy(diffOf(gold));
    expect(hiddenPaths).toEqual(['tests/test_app.py', 'tests/test_hidden.py']);

    const candidate = clone(base);
    write(candidate, 'src/app.py', LINES.replace('line 1\n', 'fixed\n'));
    write(candidate, 'tests/test_hidden.py', 'def test_hidden():\n    assert True\n');
    const result = filterDiff(diffOf(candidate), { allow: ['**'], deny: [], hiddenPaths });

    expect(result.kept.map((c) => c.newPath)).toEqual(['src/app.py']);
    expect(result.dropped).toEqual([
      {
        oldPath: null,
        newPath: 'tests/test_hidden.py',
        kind: 'add',
        binary: false,
        hunks: 1,
        newMode: '100644',
        reason: 'hidden_test_path',
        path: 'tests/test_hidden.py',
        rule: 'tests/test_hidden.py',
      },
    ]);
    expect(describeDropped(result.dropped)).toEqual([
      'dropped tests/test_hidden.py (collides with hidden test path tests/test_hidden.py, add, 1 hunk)',
    ]);
    expectApplied(base, candidate, result);
  });

  it('treats a file where a hidden test directory goes as a collision', () => {
    const base = baseRepo();
    const candidate = clone(base);
    write(candidate, 'tests/unit', 'blocks the hidden tests/unit/ directory\n');
    const result = filterDiff(diffOf(candidate), {
      allow: ['**'],
      deny: [],
      hiddenPaths: ['tests/unit/test_x.py'],
    });
    expect(result.dropped.map((d) => [d.reason, d.rule])).toEqual([
      ['hidden_test_path', 'tests/unit/test_x.py'],
    ]);
  });

  it('drops a rename from src/ into tests/ whole, leaving the source file in place', () => {
    const base = baseRepo();
    const candidate = clone(base);
    mkdirSync(join(candidate, 'tests/helpers'), { recursive: true });
    renameSync(join(candidate, 'src/old_name.py'), join(candidate, 'tests/helpers/old_name.py'));
    write(candidate, 'src/util.py', 'def util():\n    return 2\n');
    const patch = diffOf(candidate, ['-M']);
    expect(patch.toString('latin1')).toContain('rename from src/old_name.py');

    const result = filterDiff(patch, {
      allow: ['src/**', 'tests/**'],
      deny: ['tests/**'],
      hiddenPaths: [],
    });

    expect(result.dropped).toMatchObject([
      {
        oldPath: 'src/old_name.py',
        newPath: 'tests/helpers/old_name.py',
        kind: 'rename',
        reason: 'denied',
        path: 'tests/helpers/old_name.py',
      },
    ]);
    expect(describeDropped(result.dropped)).toEqual([
      'dropped src/old_name.py -> tests/helpers/old_name.py (tests/helpers/old_name.py denied by tests/**, rename, 0 hunks)',
    ]);
    const applied = expectApplied(base, candidate, result);
    expect(readFileSync(join(applied, 'src/old_name.py'), 'utf8')).toContain('seven');
  });

  it('checks the source of a copy against the rules too', () => {
    const base = baseRepo();
    const candidate = clone(base);
    write(candidate, 'src/app_copy.py', LINES);
    git(candidate, ['add', '-A']);
    const patch = git(candidate, [
      'diff',
      '--cached',
      '--binary',
      '--full-index',
      '-C',
      '--find-copies-harder',
      'HEAD',
    ]);
    expect(patch.toString('latin1')).toContain('copy from src/app.py');

    const kept = filterDiff(patch, { allow: ['src/**'], deny: [], hiddenPaths: [] });
    expect(kept.kept).toMatchObject([
      { oldPath: 'src/app.py', newPath: 'src/app_copy.py', kind: 'copy' },
    ]);
    expectApplied(base, candidate, kept);

    const dropped = filterDiff(patch, { allow: ['src/app_copy.py'], deny: [], hiddenPaths: [] });
    expect(dropped.dropped).toMatchObject([{ reason: 'not_allowed', path: 'src/app.py' }]);
  });

  it('keeps a binary file byte-exact when only it is allowed', () => {
    const base = baseRepo();
    const candidate = everyKindOfChange(base);
    const patch = diffOf(candidate);
    const result = filterDiff(patch, { allow: ['assets/logo.bin'], deny: [], hiddenPaths: [] });

    expect(result.kept).toEqual([
      {
        oldPath: 'assets/logo.bin',
        newPath: 'assets/logo.bin',
        kind: 'modify',
        binary: true,
        hunks: 0,
        newMode: '100644',
      },
    ]);
    const text = patch.toString('latin1');
    const start = text.indexOf('diff --git a/assets/logo.bin');
    expect(result.patch.toString('latin1')).toBe(
      text.slice(start, text.indexOf('diff --git', start + 1)),
    );
    const applied = expectApplied(base, candidate, result);
    expect(readFileSync(join(applied, 'assets/logo.bin'))).toEqual(
      readFileSync(join(candidate, 'assets/logo.bin')),
    );
  });

  it('reads git-quoted unicode paths and matches globs against the decoded name', () => {
    const base = baseRepo();
    const candidate = clone(base);
    write(candidate, 'docs/spécial.txt', 'edited\n');
    write(candidate, 'docs/naïve dir/ünï cødé.txt', 'new\n');
    const patch = diffOf(candidate);
    expect(patch.toString('latin1')).toContain('diff --git "a/docs/sp\\303\\251cial.txt"');

    expect(pathsTouchedBy(patch)).toEqual(['docs/naïve dir/ünï cødé.txt', 'docs/spécial.txt']);
    const result = filterDiff(patch, {
      allow: ['docs/**'],
      deny: ['docs/spécial.txt'],
      hiddenPaths: [],
    });
    expect(result.kept.map((c) => c.newPath)).toEqual(['docs/naïve dir/ünï cødé.txt']);
    expect(describeDropped(result.dropped)).toEqual([
      'dropped docs/spécial.txt (denied by docs/spécial.txt, 1 hunk)',
    ]);
    expectApplied(base, candidate, result);
  });

  it('drops the commit message and signature of a git format-patch, keeping the diff', () => {
    const base = baseRepo();
    const candidate = clone(base);
    write(candidate, 'src/util.py', 'def util():\n    return 3\n');
    write(candidate, 'tests/test_util.py', 'def test_util():\n    pass\n');
    git(candidate, ['add', '-A']);
    git(candidate, [
      'commit',
      '-q',
      '-m',
      'Fix util\n\nThe old diff --git behaviour was wrong.\n--- a/tests/x\n+++ b/tests/x\n',
    ]);
    write(candidate, 'src/app.py', LINES.replace('line 9\n', 'nine\n'));
    git(candidate, ['commit', '-q', '-am', 'Second commit']);
    const patch = git(candidate, [
      'format-patch',
      '--stdout',
      '--binary',
      '--full-index',
      'HEAD~2',
    ]);
    expect(patch.toString('latin1')).toMatch(/^From [0-9a-f]{40} /);

    const result = filterDiff(patch, { allow: ['**'], deny: ['tests/**'], hiddenPaths: [] });

    expect(result.kept.map((c) => c.newPath)).toEqual(['src/util.py', 'src/app.py']);
    expect(result.dropped.map((d) => d.newPath)).toEqual(['tests/test_util.py']);
    const text = result.patch.toString('latin1');
    expect(text.startsWith('diff --git a/src/util.py')).toBe(true);
    expect(text).not.toMatch(/Subject:|^-- $/m);
    expectApplied(base, candidate, result);
  });

  it('returns an empty result for an empty patch', () => {
    const result = filterDiff(Buffer.alloc(0), ALLOW_ALL);
    expect(result).toEqual({
      patch: Buffer.alloc(0),
      kept: [],
      dropped: [],
      sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    });
    expect(filterDiff(Buffer.from('\n\n'), ALLOW_ALL).kept).toEqual([]);
  });

  it('computes the SHA-256 of the filtered patch', () => {
    const base = baseRepo();
    const candidate = everyKindOfChange(base);
    const result = filterDiff(diffOf(candidate), { allow: ['src/**'], deny: [], hiddenPaths: [] });
    const hash = spawnSync('sha256sum', { input: result.patch }).stdout.toString().split(' ')[0];
    expect(result.sha256).toBe(hash);
  });
});

describe('filterDiff on malformed or hostile patches', () => {
  const modify = [
    'diff --git a/src/app.py b/src/app.py',
    'index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644',
    '--- a/src/app.py',
    '+++ b/src/app.py',
    '@@ -1,2 +1,2 @@',
    '-line 1',
    '+line one',
    ' line 2',
    '',
  ].join('\n');

  it('accepts the well-formed hand-written section these cases start from', () => {
    expect(filterDiff(Buffer.from(modify), ALLOW_ALL).kept).toHaveLength(1);
  });

  it('rejects garbage', () => {
    expectInvalid('this is not a patch\nat all\n', /no `diff --git` line/);
    expectInvalid(binaryBytes(3, 2000));
  });

  it('rejects a truncated header, hunk or binary patch', () => {
    expectInvalid('diff --git a/src/app.py b/src', /truncated/);
    expectInvalid('diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n', /without `\+\+\+ `/);
    expectInvalid(modify.slice(0, modify.indexOf(' line 2')), /hunk truncated/);
    expectInvalid(modify.slice(0, -1), /hunk truncated/);
    const base = baseRepo();
    const candidate = clone(base);
    write(candidate, 'assets/logo.bin', binaryBytes(9, 3000));
    const binary = diffOf(candidate).toString('latin1');
    expectInvalid(binary.slice(0, Math.floor(binary.length / 2)), /binary patch/);
  });

  it('rejects lines after a hunk that its header does not count, such as a smuggled diff', () => {
    expectInvalid(`${modify}+extra line\n`, /line 9: unexpected/);
    expectInvalid(
      `${modify}garbage\n--- a/tests/test_app.py\n+++ b/tests/test_app.py\n@@ -1 +1 @@\n-a\n+b\n`,
      /unexpected/,
    );
    expectInvalid(
      `${modify}-- \n2.39\n--- a/tests/x\n+++ b/tests/x\n@@ -1 +1 @@\n-a\n+b\n`,
      /traditional/,
    );
    expectInvalid(`--- a/tests/x\n+++ b/tests/x\n@@ -1 +1 @@\n-a\n+b\n${modify}`, /traditional/);
  });

  it('rejects headers whose paths disagree with the diff --git line or each other', () => {
    expectInvalid(
      modify.replace('--- a/src/app.py', '--- a/tests/test_app.py'),
      /paths differ without rename/,
    );
    // git apply trusts ---/+++ over the diff --git line, so this would write tests/t.py.
    expectInvalid(
      modify.replace(
        /--- a\/src\/app.py\n\+\+\+ b\/src\/app.py/,
        '--- a/tests/t.py\n+++ b/tests/t.py',
      ),
      /disagrees/,
    );
    expectInvalid(modify.replace('--- a/src/app.py', '--- /dev/null'), /dev\/null/);
    expectInvalid('diff --git a/x b/y\nold mode 100644\nnew mode 100755\n', /no file name/);
  });

  it('rejects path traversal, absolute paths, NUL and .git paths, naming the path', () => {
    const withPath = (path: string) =>
      modify.replaceAll('a/src/app.py', `a/${path}`).replaceAll('b/src/app.py', `b/${path}`);
    expectInvalid(withPath('../etc/passwd'), /`\.\.` component "..\/etc\/passwd"/);
    expectInvalid(withPath('src/../../x'), /\.\./);
    expectInvalid(withPath('.git/hooks/pre-commit'), /path into \.git ".git\/hooks\/pre-commit"/);
    expectInvalid(withPath('sub/.GIT/config'), /\.git/);
    expectInvalid(
      'diff --git "a/x\\000y" "b/x\\000y"\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n',
      /NUL/,
    );
    expectInvalid(
      'diff --git a/etc/passwd b/src/x\nsimilarity index 100%\nrename from /etc/passwd\nrename to src/x\n',
      /absolute path "\/etc\/passwd"/,
    );
    expectInvalid(withPath('src//app.py'), /empty/);
  });

  it('rejects non-UTF-8 paths and malformed quoting', () => {
    expectInvalid(
      'diff --git "a/caf\\351" "b/caf\\351"\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n',
      /UTF-8/,
    );
    expectInvalid(
      'diff --git "a/x\\q" "b/x\\q"\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n',
      /no file name/,
    );
  });

  it('names the offending file in the error data and message', () => {
    try {
      filterDiff(Buffer.from(modify.replaceAll('src/app.py', 'src/../app.py')), ALLOW_ALL);
      expect.unreachable();
    } catch (error) {
      expect(isProctorError(error, 'PATCH_INVALID')).toBe(true);
      expect((error as Error).message).toContain('src/../app.py');
      expect((error as Error).message).toMatch(/^line 1:/);
      expect(isProctorError(error) && error.data).toMatchObject({ line: 1, path: 'src/../app.py' });
    }
  });
});
