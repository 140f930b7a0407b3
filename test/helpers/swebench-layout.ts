// A small Python project in a src layout (only an interpreter it is installed into can import
// `calc`) as SWE-bench rows and images use it: its repository with a base commit and a fix,
// the row of that fix, and an image of its own clone at /testbed built from a Dockerfile.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { proctor } from './cli.js';
import { dockerCli, pushImage } from './registry.js';
import { sweName, testbedContext } from '../../bench/swebench-layout.js';
import { commit, newRepo, type Files } from './repos.js';
import { onCleanup } from './temp.js';

export { sweName };

export const SRC_CALC = {
  calc: `def div(a, b):\n    return a / b\n`,
  fixed: `def div(a, b):\n    if b == 0:\n        return None\n    return a / b\n`,
  tests: `from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n`,
  setup: `from setuptools import setup\n\nsetup(name="calc", version="0.1", packages=["calc"], package_dir={"": "src"})\n`,
} as const;
export const SRC_CALC_NEW_TESTS = `${SRC_CALC.tests}\n\ndef test_zero():\n    assert div(1, 0) is None\n`;

/**
 * The Dockerfile's steps before the install: FROM the testbed fixture (Debian's python3 with
 * pytest, an environment at conda's path, /opt/miniconda3/envs/testbed, which Debian's python3
 * does not see), then the clone at /testbed.
 */
export const TESTBED_STEPS = [
  'FROM proctor-test-testbed:latest',
  'COPY testbed /testbed',
  'WORKDIR /testbed',
] as const;

/** Installs the project in develop mode into the environment, as SWE-bench's install does. */
export const DEVELOP_INSTALL =
  '/opt/miniconda3/envs/testbed/bin/pip install --no-deps --no-build-isolation --no-index -e .';

/** A git diff of `path` between two commits, binary and full-index, as SWE-bench's are. */
export function diff(repo: string, a: string, b: string, path: string): string {
  return execFileSync('git', ['diff', '--binary', '--full-index', a, b, '--', path], {
    cwd: repo,
    encoding: 'utf8',
  });
}

/**
 * The project at `dir`: the base commit (its files, `base` over them) and the fix (`fix` over
 * the fixed module and the new tests).
 */
export function srcCalcRepo(dir: string, base: Files = {}, fix: Files = {}) {
  const repo = newRepo(dir);
  const baseCommit = commit(
    repo,
    {
      'setup.py': SRC_CALC.setup,
      'src/calc/__init__.py': SRC_CALC.calc,
      'tests/test_calc.py': SRC_CALC.tests,
      '.gitignore': '*.egg-info/\nbuild/\n__pycache__/\n',
      ...base,
    },
    'base',
  );
  const fixCommit = commit(
    repo,
    { 'src/calc/__init__.py': SRC_CALC.fixed, 'tests/test_calc.py': SRC_CALC_NEW_TESTS, ...fix },
    'fix',
  );
  return { repo, base: baseCommit, fix: fixCommit };
}

/** The SWE-bench row of the fix: gold patch `src`, test patch `tests`. */
export function srcCalcRow(repo: string, base: string, fix: string) {
  return {
    instance_id: 'acme__calc-1',
    repo: 'acme/calc',
    base_commit: base,
    patch: diff(repo, base, fix, 'src'),
    test_patch: diff(repo, base, fix, 'tests'),
    problem_statement: 'div(1, 0) raises ZeroDivisionError; it should return None.',
    hints_text: '',
    created_at: '2024-02-01T00:00:00Z',
    version: '0.1',
    environment_setup_commit: base,
    FAIL_TO_PASS: JSON.stringify(['tests/test_calc.py::test_zero']),
    PASS_TO_PASS: JSON.stringify(['tests/test_calc.py::test_div']),
  };
}

/**
 * An image of the repository's own clone at `base` (no remote, as SWE-bench's are made), its
 * build context `root/context` with the clone at `testbed/`; tagged locally, removed after the
 * test. Returns the tag.
 */
export async function testbedImage(
  root: string,
  repo: string,
  base: string,
  dockerfile: string,
  name: string,
): Promise<string> {
  const context = join(root, 'context');
  testbedContext(context, repo, base);
  writeFileSync(join(context, 'Dockerfile'), dockerfile);
  const tag = `${name}:${randomBytes(4).toString('hex')}`;
  await dockerCli('build', '-q', '--network', 'host', '-t', tag, context);
  onCleanup(async () => {
    await dockerCli('rmi', tag).catch(() => undefined);
  });
  return tag;
}

/**
 * The project's repository under `root` (`base` and `fix` over its files, as srcCalcRepo), its
 * row, and an image of it: TESTBED_STEPS, then `install`'s Dockerfile lines (default: the
 * develop-mode install alone).
 */
export async function srcCalcImage(
  root: string,
  name: string,
  install: readonly string[] = [`RUN ${DEVELOP_INSTALL}`],
  base: Files = {},
  fix: Files = {},
) {
  const made = srcCalcRepo(join(root, 'repo'), base, fix);
  const dockerfile = [...TESTBED_STEPS, ...install, ''].join('\n');
  const tag = await testbedImage(root, made.repo, made.base, dockerfile, name);
  return { tag, row: srcCalcRow(made.repo, made.base, made.fix), base: made.base, fix: made.fix };
}

/**
 * `proctor baseline BUNDLE --gold --wait` of a task whose job errs (not judged): the job's
 * `status --json`, where its error is.
 */
export async function erringBaseline(home: string, bundle: string, id: string): Promise<string> {
  const result = await proctor(['--home', home, 'baseline', bundle, '--gold', '--wait']);
  expect(result.code, result.stdout + result.stderr).not.toBe(0);
  const job = new RegExp(`^${id}\\s+error\\s.*\\s(\\d+)\\s*$`, 'm').exec(result.stdout)?.[1];
  expect(job, result.stdout).toBeDefined();
  return (await proctor(['--home', home, 'status', job ?? '', '--json'])).stdout;
}

/**
 * Pushes `tag` as the image of each instance and drops those names from the engine, so that
 * only the registry has them (a baseline must pull); the digest pushed.
 */
export async function pushAsInstances(tag: string, host: string, ids: string[]): Promise<string> {
  let digest = '';
  for (const id of ids) digest = await pushImage(tag, sweName(host, id));
  await dockerCli('rmi', ...ids.map((id) => sweName(host, id)));
  return digest;
}
