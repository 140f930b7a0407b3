// What derive asks the runner to run: the scope's paths, one per LIST line, each selecting
// every test under it (the built-in runners' rule for a line without `::`; an author's runner
// also sees PROCTOR_DISCOVER=1). Without --scope, the scope is every file that the runner's
// own discovery would take as a test file, in the base tree or the fix's (so tests the fix
// adds or deletes are run in every state where they exist); an author's runner gets `.`.
import picomatch from 'picomatch';
import { git } from './git.js';
import type { Ecosystem } from './split.js';

/** Test files as pytest (default python_files) and node --test (its default patterns) find them. */
export const DISCOVERY_GLOBS: Record<Exclude<Ecosystem, 'file'>, readonly string[]> = {
  pytest: ['**/test_*.py', '**/*_test.py'],
  // DiscoverRunner's pattern (test*.py), inside the apps under tests/ (not tests/test_sqlite.py).
  django: ['tests/*/**/test*.py'],
  sympy: ['sympy/**/test_*.py'],
  // Every Rust file: the cargo runner runs the targets they belong to (lib, bins, tests).
  cargo: ['**/*.rs'],
  // The go runner runs the packages of these files (every test of each, under PROCTOR_DISCOVER).
  go: ['**/*_test.go'],
  // jest's default testMatch; vitest's default include (under PROCTOR_DISCOVER, each runs the
  // test files of its paths and reports every test).
  jest: ['**/__tests__/**/*.{js,jsx,ts,tsx}', '**/*.{test,spec}.{js,jsx,ts,tsx}'],
  vitest: ['**/*.{test,spec}.{js,cjs,mjs,jsx,ts,cts,mts,tsx}'],
  // The mocha runner runs every test of these files (under PROCTOR_DISCOVER).
  mocha: ['test/**/*.{js,cjs,mjs}', '**/*.spec.{js,cjs,mjs}', '**/*.test.{js,cjs,mjs}'],
  // The karma runner runs every test of its configuration's files (under PROCTOR_DISCOVER); the
  // paths only say that there are tests.
  karma: [
    'test/**/*.{js,cjs,mjs,jsx,ts,tsx}',
    '**/*.spec.{js,cjs,mjs,jsx,ts,tsx}',
    '**/*.test.{js,cjs,mjs,jsx,ts,tsx}',
  ],
  // The junit runner runs the test classes of these files (every test of each, under PROCTOR_DISCOVER).
  junit: ['**/src/test/**/*.java'],
  // The ctest runner reports every test of the build (gtest, CTest) or every script under these.
  ctest: ['tests/**', 'test/**', '**/*_test.c*'],
  node: [
    '**/*.test.{js,cjs,mjs}',
    '**/*-test.{js,cjs,mjs}',
    '**/*_test.{js,cjs,mjs}',
    '**/test-*.{js,cjs,mjs}',
    '**/test.{js,cjs,mjs}',
    '**/test/**/*.{js,cjs,mjs}',
  ],
};

export async function defaultScope(
  repo: string,
  commits: readonly string[],
  ecosystem: Ecosystem,
): Promise<string[]> {
  if (ecosystem === 'file') return ['.'];
  const match = picomatch([...DISCOVERY_GLOBS[ecosystem]], { dot: false, windows: false });
  const files = new Set<string>();
  for (const commit of commits) {
    const listed = await git(repo, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', commit]);
    for (const path of listed.toString('utf8').split('\0')) {
      if (path !== '' && !path.split('/').includes('node_modules') && match(path)) files.add(path);
    }
  }
  return [...files].sort();
}
