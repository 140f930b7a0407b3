// The built-in runners: a bundle's tests/run written for its author, under
// the unchanged runner contract (`run LIST REPORT` in the checkout; Proctor's JSON report).
// Each runner is one plain, commented file kept beside this module (src/runners/<name>/run)
// and copied verbatim, so a bundle stays plain files a person can read and edit.
//
// One file, not a runner plus support files: the evaluator materialises tests/run, the two ID
// lists and hidden.patch only (product.md, "The oracle", step 4). So the pytest runner is a
// Python program that is also its own plugin (it copies itself to a temporary folder and runs
// `python3 -m pytest -p` on it), and the node runner writes its reporter to a temporary
// folder before `node --test` loads it.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectPath } from '../paths.js';

export const BUILTIN_RUNNERS = [
  'pytest',
  'node',
  'sympy',
  'django',
  'cargo',
  'go',
  'jest',
  'vitest',
  'mocha',
  'karma',
  'junit',
  'ctest',
] as const;
export type BuiltinRunner = (typeof BUILTIN_RUNNERS)[number];

/** The name of the one file each runner writes into a bundle's tests/ folder. */
export const RUNNER_FILE = 'run';

export function isBuiltinRunner(name: string): name is BuiltinRunner {
  return (BUILTIN_RUNNERS as readonly string[]).includes(name);
}

// From src/runners/ (tsx, tests) and from dist/runners/ alike, the runners are read from src/:
// they are not TypeScript, so the build does not copy them.
const RUNNERS_FOLDER = projectPath('src', 'runners') + '/';

/**
 * A line `# proctor-include: core/<file>` in a runner stands for that file of src/runners/core/:
 * the mechanisms every runner of a language shares (the Python runners' canaries; chai's
 * tripwires, a JavaScript part, inside the mocha runner's program) are written once and put
 * into each runner's one plain file when it is written.
 */
const INCLUDE_LINE = /^# proctor-include: (core\/[a-z0-9_-]+\.(?:py|js))\n/gm;

/** The shared parts the built-in runners include (paths under src/runners/). */
export const RUNNER_CORE = [
  'core/canary.py',
  'core/tripwires.py',
  'core/jest_expect.py',
  'core/vitest_expect.py',
  'core/chai_tripwires.js',
] as const;

/** The bytes of a built-in runner's tests/run, its shared parts included. */
export async function runnerSource(name: BuiltinRunner): Promise<Buffer> {
  const text = (await readFile(join(RUNNERS_FOLDER, name, RUNNER_FILE))).toString('utf8');
  const parts = [...text.matchAll(INCLUDE_LINE)].map((m) => m[1]!);
  const included = new Map<string, string>();
  for (const part of parts) {
    included.set(part, (await readFile(join(RUNNERS_FOLDER, part))).toString('utf8'));
  }
  return Buffer.from(
    text.replace(INCLUDE_LINE, (_, part: string) => included.get(part) ?? ''),
    'utf8',
  );
}

/**
 * Writes the built-in runner `name` into `testsDir` (created if missing): `run`, executable,
 * replacing any file there. Returns the paths written, relative to `testsDir`.
 */
export async function writeRunner(name: BuiltinRunner, testsDir: string): Promise<string[]> {
  const bytes = await runnerSource(name);
  await mkdir(testsDir, { recursive: true });
  const target = join(testsDir, RUNNER_FILE);
  await writeFile(target, bytes);
  // chmod, not writeFile's mode: that one is masked by the umask and ignored for a file that
  // already exists.
  await chmod(target, 0o755);
  return [RUNNER_FILE];
}
