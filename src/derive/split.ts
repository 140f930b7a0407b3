// Splitting a fix commit's diff into the bundle's two patches. The diff is git's own
// (`--binary --full-index --no-renames`: deletions, binary and data files byte-exact; a
// rename is its deletion and its addition, so each side lands in the patch its path belongs
// to), cut into whole-file sections, each copied byte for byte:
// - a file any path of which matches a test glob goes to tests/hidden.patch;
// - else a file matching an exclude glob is left out, and listed;
// - else it goes to solution/gold.patch.
import picomatch from 'picomatch';
import { parseDiff } from '../oracle/diff-parse.js';
import type { BuiltinRunner } from '../runners/index.js';

/** A built-in runner's, or `file` for a runner of the user's own. */
export type Ecosystem = BuiltinRunner | 'file';

/** Where tests live, per runner ecosystem (`--tests` replaces these). */
export const DEFAULT_TEST_GLOBS: Record<Ecosystem, readonly string[]> = {
  pytest: [
    '**/tests/**',
    '**/test/**',
    '**/testing/**',
    '**/test_*.py',
    '**/*_test.py',
    '**/conftest.py',
  ],
  // sympy's own runner (bin/test): test_*.py files in the tests/ folders under sympy/.
  sympy: ['**/tests/**', '**/test_*.py'],
  node: [
    '**/test/**',
    '**/tests/**',
    '**/__tests__/**',
    '**/*.test.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
    '**/*.spec.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
  ],
  // Django's layout: everything under tests/ is the test suite (runtests.py, the settings, the
  // apps), as SWE-bench splits a django fix into its patch and its test patch.
  django: ['tests/**'],
  // Rust: integration tests (tests/ of each package) and their data; unit tests share their
  // file with the code they test, so a fix that adds one needs --tests.
  cargo: ['**/tests/**', '**/testdata/**', '**/snapshots/**'],
  // Go: the _test.go files and the testdata/ folders go ignores when it builds.
  go: ['**/*_test.go', '**/testdata/**'],
  // jest and vitest: their default test files (jest's testMatch, vitest's include), and the
  // __tests__/ and __snapshots__/ folders beside them.
  jest: [
    '**/__tests__/**',
    '**/__snapshots__/**',
    '**/*.test.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
    '**/*.spec.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
  ],
  vitest: [
    '**/__tests__/**',
    '**/__snapshots__/**',
    '**/*.test.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
    '**/*.spec.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
  ],
  // mocha: its default spec folder (test/), and spec or test files anywhere.
  mocha: ['**/test/**', '**/tests/**', '**/*.spec.{js,cjs,mjs}', '**/*.test.{js,cjs,mjs}'],
  // karma: mocha's places, preact's test/browser/ among them.
  karma: [
    '**/test/**',
    '**/tests/**',
    '**/*.spec.{js,cjs,mjs,jsx,ts,tsx}',
    '**/*.test.{js,cjs,mjs,jsx,ts,tsx}',
  ],
  // Java (Maven's and Gradle's layout): each module's src/test/, its resources included.
  junit: ['**/src/test/**'],
  // C and C++: the test folders (GoogleTest sources, make check scripts) and *_test.c* files.
  ctest: ['tests/**', 'test/**', '**/*_test.c*'],
  // An author's own runner: either ecosystem's locations.
  file: [
    '**/tests/**',
    '**/test/**',
    '**/__tests__/**',
    '**/test_*.py',
    '**/*_test.py',
    '**/conftest.py',
    '**/*.test.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
    '**/*.spec.{js,cjs,mjs,jsx,ts,cts,mts,tsx}',
  ],
};

/** Left out of both patches (`--exclude` replaces these); matched case-insensitively. */
export const DEFAULT_EXCLUDE_GLOBS: readonly string[] = [
  '**/{CHANGELOG,CHANGES,HISTORY,NEWS,RELEASE_NOTES,RELEASE-NOTES,RELEASENOTES}{,.md,.rst,.txt,.markdown,.adoc}',
  '**/{changelog.d,changes,newsfragments,release-notes,releasenotes,whatsnew}/**',
  '**/{VERSION,VERSION.txt,_version.py}',
];

export interface SplitDiff {
  hidden: Buffer;
  gold: Buffer;
  hiddenFiles: string[];
  goldFiles: string[];
  /** Files left out, each with the exclude glob that matched. */
  excluded: Array<{ path: string; glob: string }>;
}

const matcher = (globs: readonly string[], nocase: boolean) => {
  const tests = globs.map((glob) => ({
    glob,
    test: picomatch(glob, { dot: true, windows: false, nocase }),
  }));
  return (path: string) => tests.find((t) => t.test(path))?.glob;
};

export function splitDiff(
  diff: Buffer,
  rules: { tests: readonly string[]; exclude: readonly string[] },
): SplitDiff {
  const isTest = matcher(rules.tests, false);
  const isExcluded = matcher(rules.exclude, true);
  const hidden: Buffer[] = [];
  const gold: Buffer[] = [];
  const result: SplitDiff = {
    hidden: Buffer.alloc(0),
    gold: Buffer.alloc(0),
    hiddenFiles: [],
    goldFiles: [],
    excluded: [],
  };
  for (const section of parseDiff(diff)) {
    const paths = [section.change.oldPath, section.change.newPath].filter(
      (p): p is string => p !== null,
    );
    const bytes = diff.subarray(section.start, section.end);
    const path = paths[paths.length - 1] ?? '';
    if (paths.some((p) => isTest(p) !== undefined)) {
      hidden.push(bytes);
      result.hiddenFiles.push(path);
      continue;
    }
    const glob = paths.map(isExcluded).find((g) => g !== undefined);
    if (glob !== undefined) {
      result.excluded.push({ path, glob });
      continue;
    }
    gold.push(bytes);
    result.goldFiles.push(path);
  }
  result.hidden = Buffer.concat(hidden);
  result.gold = Buffer.concat(gold);
  return result;
}
