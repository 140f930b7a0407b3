import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEFAULT_EXCLUDE_GLOBS, DEFAULT_TEST_GLOBS, splitDiff } from '../../src/derive/split.js';
import { commit, newRepo } from '../helpers/repos.js';

function diffOf(repo: string, a: string, b: string): Buffer {
  return execFileSync('git', ['diff', '--binary', '--full-index', '--no-renames', a, b], {
    cwd: repo,
  });
}

describe('splitDiff', () => {
  it('puts test files in the hidden patch, excludes changelogs, and keeps the rest as gold', () => {
    const repo = newRepo();
    const base = commit(repo, { 'src/a.py': 'a\n', 'tests/old.py': 'x\n', 'NEWS.rst': 'n\n' }, 'b');
    const fix = commit(
      repo,
      {
        'src/a.py': 'b\n',
        'src/history.py': 'code\n',
        'tests/old.py': null,
        'tests/data/x.bin': Buffer.from([0, 255, 1]),
        'pkg/test_b.py': 'def test_b(): pass\n',
        'NEWS.rst': 'n\nmore\n',
        VERSION: '2\n',
      },
      'f',
    );
    const split = splitDiff(diffOf(repo, base, fix), {
      tests: DEFAULT_TEST_GLOBS.pytest,
      exclude: DEFAULT_EXCLUDE_GLOBS,
    });
    expect(split.hiddenFiles.sort()).toEqual(['pkg/test_b.py', 'tests/data/x.bin', 'tests/old.py']);
    expect(split.goldFiles.sort()).toEqual(['src/a.py', 'src/history.py']);
    expect(split.excluded.map((e) => e.path).sort()).toEqual(['NEWS.rst', 'VERSION']);
    expect(split.hidden.toString()).toContain('GIT binary patch');
    expect(split.hidden.toString()).toContain('deleted file mode');
  });

  it.each(['jest', 'vitest'] as const)(
    "puts %s's test files, __tests__/ and snapshots in the hidden patch, and source beside them in the gold",
    (ecosystem) => {
      const repo = newRepo();
      const base = commit(repo, { 'src/calc.ts': 'a\n', 'package.json': '{}\n' }, 'b');
      const fix = commit(
        repo,
        {
          'src/calc.ts': 'b\n',
          'src/calc.test.ts': 't\n',
          'src/ui/button.spec.tsx': 't\n',
          'packages/x/__tests__/parse.js': 't\n',
          'packages/x/__tests__/__snapshots__/parse.js.snap': 's\n',
          'packages/x/src/testing.ts': 'code\n',
        },
        'f',
      );
      const split = splitDiff(diffOf(repo, base, fix), {
        tests: DEFAULT_TEST_GLOBS[ecosystem],
        exclude: DEFAULT_EXCLUDE_GLOBS,
      });
      expect(split.hiddenFiles.sort()).toEqual([
        'packages/x/__tests__/__snapshots__/parse.js.snap',
        'packages/x/__tests__/parse.js',
        'src/calc.test.ts',
        'src/ui/button.spec.tsx',
      ]);
      expect(split.goldFiles.sort()).toEqual(['packages/x/src/testing.ts', 'src/calc.ts']);
    },
  );

  it('splits a rename across the two patches by path', () => {
    const repo = newRepo();
    const base = commit(repo, { 'tests/helper.py': 'shared\n'.repeat(20) }, 'b');
    const fix = commit(
      repo,
      { 'tests/helper.py': null, 'src/helper.py': 'shared\n'.repeat(20) },
      'move',
    );
    const split = splitDiff(diffOf(repo, base, fix), { tests: ['tests/**'], exclude: [] });
    expect(split.hiddenFiles).toEqual(['tests/helper.py']);
    expect(split.goldFiles).toEqual(['src/helper.py']);
  });
});
