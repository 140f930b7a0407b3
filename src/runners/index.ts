// The built-in runners: a bundle's tests/run written for its author, under
// the unchanged runner contract (`run LIST REPORT` in the checkout; Proctor's JSON report).
// Each runner is one plain, commented file: its dialect's part, kept beside this module
// (src/runners/<name>/run), with the shared parts it names (src/runners/core/) put in where it
// names them, so a bundle stays plain files a person can read and edit.
//
// One file, not a runner plus support files: the evaluator materialises tests/run, the two ID
// lists and hidden.patch only (product.md, "The oracle", step 4). So the pytest runner is a
// Python program that is also its own plugin (it copies itself to a temporary folder and runs
// `python3 -m pytest -p` on it), and the node runner writes its reporter to a temporary
// folder before `node --test` loads it.
import { readFileSync } from 'node:fs';
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
 * A line `# proctor-include: core/<file>` in a runner (`// proctor-include: …` inside the
 * JavaScript a shell runner writes) stands for that file of src/runners/core/:
 * the mechanisms the runners share (the run protocol and its collector, the Python runners'
 * test process, canaries and tripwires, the jest and vitest runners' common part and their
 * watches on expect, chai's tripwires inside the mocha runner's program) are written once and
 * put into each runner's one plain file when it is written, so that a fix to one is made once.
 */
const INCLUDE_LINE = /^(?:#|\/\/) proctor-include: (core\/[a-z0-9_-]+\.(?:py|js|cjs))\n/gm;

/** The shared parts the built-in runners include (paths under src/runners/). */
export const RUNNER_CORE = [
  'core/protocol.py',
  'core/python.py',
  'core/canary.py',
  'core/tripwires.py',
  'core/js.py',
  'core/jest_expect.py',
  'core/vitest_expect.py',
  'core/protocol.cjs',
  'core/chai_plugins.js',
  'core/chai_tripwires.js',
  'core/loader.py',
] as const;
export type RunnerCorePart = (typeof RUNNER_CORE)[number];

const PYTHON_DIALECT = [
  'core/protocol.py',
  'core/canary.py',
  'core/python.py',
  'core/tripwires.py',
] as const;

/**
 * The shared parts each built-in runner includes, in the order they stand in it. The mocha and
 * karma runners are shell scripts that write a CommonJS program: they share its run protocol
 * (core/protocol.cjs) and which chai plugins change what their chai tripwires watch
 * (core/chai_plugins.js). The node runner's program is an ES module with a collector of its own
 * (sentinels reported per file): it includes none yet.
 */
export const RUNNER_PARTS: Record<BuiltinRunner, readonly RunnerCorePart[]> = {
  pytest: PYTHON_DIALECT,
  django: PYTHON_DIALECT,
  sympy: PYTHON_DIALECT,
  cargo: ['core/protocol.py', 'core/canary.py'],
  go: ['core/protocol.py', 'core/canary.py'],
  ctest: ['core/protocol.py', 'core/canary.py'],
  junit: ['core/protocol.py', 'core/canary.py'],
  jest: ['core/protocol.py', 'core/jest_expect.py', 'core/js.py'],
  vitest: ['core/protocol.py', 'core/vitest_expect.py', 'core/js.py'],
  node: [],
  mocha: ['core/protocol.cjs', 'core/chai_plugins.js', 'core/chai_tripwires.js'],
  karma: ['core/protocol.cjs', 'core/chai_plugins.js'],
};

/**
 * A line `# proctor-include-text: core/<file>.py NAME` in a Python runner stands for
 * `NAME = "…"`, that file's text as a string: what the runner hands to another interpreter as
 * `-c` (core/loader.py, which Proctor's own exec scripts pass the same way).
 */
const TEXT_INCLUDE_LINE = /^# proctor-include-text: (core\/[a-z0-9_-]+\.py) ([A-Z_]+)\n/gm;

/** The parts each built-in runner holds as text (TEXT_INCLUDE_LINE), in their order. */
export const RUNNER_TEXT_PARTS: Record<BuiltinRunner, readonly RunnerCorePart[]> = {
  pytest: ['core/loader.py'],
  django: ['core/loader.py'],
  sympy: ['core/loader.py'],
  cargo: [],
  go: [],
  ctest: [],
  junit: [],
  jest: [],
  vitest: [],
  node: [],
  mocha: [],
  karma: [],
};

/**
 * A Python string literal of `text` (JSON's escapes are Python's; ASCII only): a character
 * past U+FFFF as `\\U` and eight digits, since Python does not join two `\\u` surrogates.
 */
export function pythonStringLiteral(text: string): string {
  return JSON.stringify(text).replace(/[\ud800-\udbff][\udc00-\udfff]|[\u007f-\uffff]/g, (c) => {
    const point = c.codePointAt(0)!;
    return point > 0xffff
      ? `\\U${point.toString(16).padStart(8, '0')}`
      : `\\u${point.toString(16).padStart(4, '0')}`;
  });
}

/** The bytes of a built-in runner's tests/run, its shared parts included. */
export async function runnerSource(name: BuiltinRunner): Promise<Buffer> {
  const text = (await readFile(join(RUNNERS_FOLDER, name, RUNNER_FILE))).toString('utf8');
  const parts = [
    ...[...text.matchAll(INCLUDE_LINE)].map((m) => m[1]!),
    ...[...text.matchAll(TEXT_INCLUDE_LINE)].map((m) => m[1]!),
  ];
  const included = new Map<string, string>();
  for (const part of parts) {
    included.set(part, (await readFile(join(RUNNERS_FOLDER, part))).toString('utf8'));
  }
  return Buffer.from(
    text
      .replace(INCLUDE_LINE, (_, part: string) => included.get(part) ?? '')
      .replace(
        TEXT_INCLUDE_LINE,
        (_, part: string, variable: string) =>
          `${variable} = ${pythonStringLiteral(included.get(part) ?? '')}\n`,
      ),
    'utf8',
  );
}

let loaderText: string | undefined;

/**
 * core/loader.py's text: `python3 -c LOADER RUNNER ARGS…` runs a Python runner that caches its
 * code (runnerCachesCode, oracle/protocol.ts) with its compiled code shared by a grade's processes.
 */
export function codeLoader(): string {
  loaderText ??= readFileSync(join(RUNNERS_FOLDER, 'core/loader.py'), 'utf8');
  return loaderText;
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
