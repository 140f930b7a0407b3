// [environment] install on real Docker, through `proctor import swebench`: a Python package
// with a src/ layout (nothing imports without the install) whose setup.py also writes an
// ignored version file that the package imports (as setuptools_scm does), on bullseye's
// Python 3.9 with Debian's pip and setuptools (no PyPI here: --no-deps --no-build-isolation).
// The install comes from an install.sh beside the version's Dockerfile, baseline --gold finds
// the task valid (the template carries the ignored file; without the install it is not), and
// an install that fails or that dirties the tree is refused with one line saying how.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { commit, newRepo } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';
import { baseImage } from '../helpers/test-tools.js';

const SETUP = `from setuptools import setup, find_packages

# A generated file, as setuptools_scm writes one: ignored by git, imported by the package.
with open("src/calc/_version.py", "w") as f:
    f.write('version = "0.1"\\n')
setup(name="calc", version="0.1", package_dir={"": "src"}, packages=find_packages("src"))
`;
const INIT = `from ._version import version\n\n\ndef div(a, b):\n    return a / b\n`;
const FIXED = `from ._version import version\n\n\ndef div(a, b):\n    if b == 0:\n        return None\n    return a / b\n`;
const TESTS = `from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n`;
const NEW_TESTS = `${TESTS}\n\ndef test_zero():\n    assert div(1, 0) is None\n`;
const PIP = 'python3 -m pip install --no-deps --no-build-isolation -e .';

const diff = (repo: string, a: string, b: string, path: string) =>
  execFileSync('git', ['diff', '--binary', '--full-index', a, b, '--', path], {
    cwd: repo,
    encoding: 'utf8',
  });

/** acme/calc, a row for each version, and an environment folder per version. */
function fixture(installs: Record<string, string | undefined>) {
  const root = tempDir('proctor-install-');
  const repo = newRepo(join(root, 'repos', 'acme__calc'));
  const base = commit(
    repo,
    {
      'setup.py': SETUP,
      '.gitignore': '*.egg-info/\n__pycache__/\n_version.py\n',
      'src/calc/__init__.py': INIT,
      'tests/test_calc.py': TESTS,
    },
    'base',
  );
  const fix = commit(
    repo,
    { 'src/calc/__init__.py': FIXED, 'tests/test_calc.py': NEW_TESTS },
    'fix',
  );
  const rows = Object.entries(installs).map(([version, install], i) => {
    const dir = join(root, 'env', 'acme__calc', version);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'Dockerfile'), 'FROM proctor-test-pytest-bullseye:latest\n');
    if (install !== undefined) writeFileSync(join(dir, 'install.sh'), `${install}\n`);
    return {
      instance_id: `acme__calc-${i + 1}`,
      repo: 'acme/calc',
      base_commit: base,
      patch: diff(repo, base, fix, 'src'),
      test_patch: diff(repo, base, fix, 'tests'),
      FAIL_TO_PASS: ['tests/test_calc.py::test_zero'],
      PASS_TO_PASS: ['tests/test_calc.py::test_div'],
      problem_statement: 'div(1, 0) raises ZeroDivisionError; it should return None.',
      version,
    };
  });
  const rowsFile = join(root, 'rows.jsonl');
  writeFileSync(rowsFile, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const args = (...more: string[]) => [
    ...['import', 'swebench', rowsFile, '--repos', join(root, 'repos')],
    ...['--environment', join(root, 'env'), '--out', join(root, 'suite'), '--runner', 'pytest'],
    ...more,
  ];
  return { root, args, suite: join(root, 'suite'), repo, base, fix };
}

describe('[environment] install', { timeout: 600_000 }, () => {
  beforeAll(() => {
    baseImage('bullseye');
  }, 300_000);

  it('installs the work tree in the image, so a src/ layout and its generated file import; without it the task is not valid', async () => {
    const f = fixture({ '1.0': PIP, '2.0': undefined });
    const imported = await proctor(f.args());
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const toml = readFileSync(join(f.suite, 'acme__calc-1', 'task.toml'), 'utf8');
    expect(toml).toContain(`install = "${PIP}"`);
    expect(readdirSync(join(f.suite, 'acme__calc-1', 'environment')).sort()).toEqual([
      'Dockerfile',
      'proctor-base.bundle',
    ]);
    expect(readFileSync(join(f.suite, 'acme__calc-2', 'task.toml'), 'utf8')).not.toContain(
      'install',
    );
    const home = tempDir('proctor-home-');
    const baseline = await proctor(['--home', home, 'baseline', f.suite, '--gold', '--wait']);
    expect(baseline.stdout).toMatch(/^acme__calc-1\s+valid\s+PASS/m);
    expect(baseline.stdout).toMatch(/^acme__calc-2\s+(?!valid)/m);
    expect(baseline.stdout).toMatch(/1 valid/);
    expect(await leftovers(home)).toEqual([]);
  });

  it('refuses an install that fails with its exit status and last lines, and one that dirties the tree naming the files', async () => {
    const f = fixture({ '1.0': undefined });
    const failing =
      'python3 -u -c \'import sys; print("step 1"); print("error: no compiler found", file=sys.stderr); sys.exit(3)\'';
    const imported = await proctor(f.args('--install', failing));
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const home = tempDir('proctor-home-');
    const failed = await proctor(['--home', home, 'validate', f.suite]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(
      '[environment] install: the install command failed (exit 3); its last lines: step 1 | error: no compiler found',
    );

    // An error printed before the last lines is named too, ahead of them.
    const early =
      'python3 -u -c \'import sys; print("ERROR: No module named pip", file=sys.stderr); [print("noise %d" % i) for i in range(20)]; sys.exit(5)\'';
    const earlyImport = await proctor(f.args('--install', early, '--force'));
    expect(earlyImport.code, earlyImport.stdout + earlyImport.stderr).toBe(0);
    const earlyFailed = await proctor(['--home', home, 'validate', f.suite]);
    expect(earlyFailed.code).toBe(1);
    expect(earlyFailed.stdout).toContain(
      '[environment] install: the install command failed (exit 5); its first error lines: ERROR: No module named pip | … its last lines: | noise 5 | noise 6 |',
    );
    expect(earlyFailed.stdout).toContain('| noise 19');
    expect(earlyFailed.stdout).not.toContain('noise 4 |');

    // .git/info/exclude does not reach a workspace, so it does not make a file ignored here.
    const dirty = `${PIP} && echo '# edited' >> setup.py && touch stray.txt build.log local.txt && echo local.txt >> .git/info/exclude`;
    const again = await proctor(f.args('--install', dirty, '--force'));
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const refused = await proctor(['--home', home, 'validate', f.suite]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      '[environment] install: the install left 4 file(s) that git does not ignore (its output must be ignored by git or outside the tree): modified setup.py, untracked build.log, untracked local.txt, untracked stray.txt',
    );
    expect(await leftovers(home)).toEqual([]);
  });

  it('derives a bundle with --install: its four states run on the installed tree, and a failing install stops derive in one line', async () => {
    const f = fixture({ '1.0': undefined });
    const env = join(f.root, 'env', 'acme__calc', '1.0');
    const home = tempDir('proctor-home-');
    const derive = (out: string, install: string) =>
      proctor([
        ...['--home', home, 'derive', '--repo', f.repo, '--base', f.base, '--fix', f.fix],
        ...['--environment', env, '--out', join(f.root, out), '--workdir', '/testbed'],
        ...['--install', install, '--repeat', '1'],
      ]);
    const derived = await derive('derived', PIP);
    expect(derived.code, derived.stdout + derived.stderr).toBe(0);
    const bundle = join(f.root, 'derived');
    expect(readFileSync(join(bundle, 'task.toml'), 'utf8')).toContain(`install = "${PIP}"`);
    expect(readFileSync(join(bundle, 'tests', 'hidden.txt'), 'utf8')).toBe(
      'tests/test_calc.py::test_zero\n',
    );
    expect(readFileSync(join(bundle, 'tests', 'existing.txt'), 'utf8')).toBe(
      'tests/test_calc.py::test_div\n',
    );
    const failed = await derive('failed', 'echo building; exit 4');
    expect(failed.code).toBe(1);
    expect(failed.stderr.trimEnd().split('\n').at(-1)).toMatch(
      /^proctor: derive: --environment \S+: the image did not build: \[environment\] install: the install command failed \(exit 4\); its last lines: building$/,
    );
    expect(await leftovers(home)).toEqual([]);
  });

  it('refuses an empty --install and an environment folder with two install files, in one line each', async () => {
    const f = fixture({ '1.0': PIP });
    const empty = await proctor(f.args('--install', ' '));
    expect(empty.code).toBe(2);
    expect(empty.stderr.trimEnd()).toBe('proctor: --install: must be a shell command, not empty');
    const dir = join(f.root, 'env', 'acme__calc', '1.0');
    writeFileSync(join(dir, 'install'), 'true\n');
    const two = await proctor(f.args());
    expect(two.code).toBe(1);
    expect(two.stdout).toContain(
      `skipped row 1 (acme__calc-1): ${join(dir, 'install.sh')} and ${join(dir, 'install')}: keep one install file`,
    );
  });
});
