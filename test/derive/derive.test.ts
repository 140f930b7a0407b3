// proctor derive on real repositories built here, with real Docker: the split of the fix, the
// one-commit snapshot, the four states and what they decide, and the errors that say which.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { derive, type DeriveOptions } from '../../src/derive/derive.js';
import { isProctorError } from '../../src/errors.js';
import { loadBundle } from '../../src/oracle/index.js';
import { createImageCache } from '../../src/workers/images.js';
import { proctor } from '../helpers/cli.js';
import { ROOT, spawnTs } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { testDocker } from '../helpers/docker.js';
import { leftovers } from '../helpers/home.js';
import { commit, gitIn, newRepo, toolchainEnvironment, pytestRunner } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';

const docker = testDocker();

const CALC = `def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n`;
const CALC_FIXED = `def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    if b == 0:\n        return None\n    return a / b\n`;
const TESTS = `from calc import add, div\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_div():\n    assert div(6, 3) == 2\n\n\ndef test_legacy():\n    assert div(1, 1) == 1\n`;
const TESTS_FIXED = `import json, pathlib\nimport pytest\nfrom calc import add, div\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_div():\n    assert div(6, 3) == 2\n\n\n@pytest.mark.xfail(reason="legacy")\ndef test_legacy():\n    assert div(1, 1) == 1\n\n\n@pytest.mark.parametrize("a", [1, 2])\ndef test_div_zero(a):\n    cases = json.loads((pathlib.Path(__file__).parent / "data" / "cases.json").read_text())\n    assert div(a, cases["zero"]) is None\n`;
const COIN = `import random\n\n\ndef test_coin():\n    assert random.SystemRandom().random() < 0.5\n`;

interface Fixture {
  repo: string;
  base: string;
  fix: string;
}

/** A pytest project whose fix adds a test, data files and an xfail, and deletes a test file. */
function pytestProject(extra: { coin?: boolean } = {}): Fixture {
  const repo = newRepo();
  const base = commit(
    repo,
    {
      'calc.py': CALC,
      'tests/test_calc.py': TESTS,
      'tests/test_old.py': `def test_old():\n    assert True\n`,
      'CHANGELOG.md': '# Changes\n',
      ...(extra.coin ? { 'tests/test_coin.py': COIN } : {}),
    },
    'base',
  );
  const fix = commit(
    repo,
    {
      'calc.py': CALC_FIXED,
      'tests/test_calc.py': TESTS_FIXED,
      'tests/test_old.py': null,
      'tests/data/cases.json': '{"zero": 0}\n',
      'tests/data/blob.bin': Buffer.from([0, 1, 2, 255, 0, 10, 13]),
      'CHANGELOG.md': '# Changes\n\n- div by zero returns None\n',
    },
    'div: return None for a zero divisor\n\nDividing by zero raised ZeroDivisionError; callers want None.',
  );
  return { repo, base, fix };
}

function options(f: Fixture, out: string, more: Partial<DeriveOptions> = {}): DeriveOptions {
  return {
    repo: f.repo,
    base: f.base,
    fix: f.fix,
    environment: toolchainEnvironment(),
    out,
    runner: pytestRunner(),
    repeat: 1,
    workdir: '/repo',
    ...more,
  };
}

async function run(opts: DeriveOptions) {
  const home = tempDir('proctor-home-');
  const notes: string[] = [];
  try {
    const result = await derive(opts, {
      docker,
      images: createImageCache(docker, { dir: join(home, 'cache', 'contexts') }),
      home,
      sandbox: { uid: 1000, gid: 1000 },
      note: (line) => notes.push(line),
    });
    return { result, notes };
  } catch (error) {
    return { error, notes };
  } finally {
    expect(await leftovers(home)).toEqual([]);
  }
}

// Each test builds and runs real containers; on a loaded shared machine that takes minutes.
describe('proctor derive', { timeout: 300_000 }, () => {
  it('writes a bundle whose lists come from the four states and which passes baseline --gold', async () => {
    const f = pytestProject({ coin: true });
    const home = tempDir('proctor-home-');
    const out = join(tempDir('proctor-out-'), 'calc-div');
    const cli = await proctor([
      '--home',
      home,
      'derive',
      '--repo',
      f.repo,
      '--base',
      f.base,
      '--fix',
      f.fix,
      '--environment',
      toolchainEnvironment(),
      '--out',
      out,
      '--id',
      'calc-div',
      '--runner',
      'pytest',
      '--repeat',
      '4',
    ]);
    expect(cli.stderr).not.toMatch(/warning/);
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    const bundle = await loadBundle(out);
    expect(bundle.hiddenIds).toEqual([
      'tests/test_calc.py::test_div_zero[1]',
      'tests/test_calc.py::test_div_zero[2]',
    ]);
    // test_legacy became xfail, test_old.py was deleted, test_coin is flaky: none is listed.
    expect(bundle.existingIds).toEqual([
      'tests/test_calc.py::test_add',
      'tests/test_calc.py::test_div',
    ]);
    expect(cli.stdout).toMatch(/dropped 1 flaky test\(s\):\n\s+tests\/test_coin.py::test_coin/);
    expect(cli.stdout).toContain('excluded CHANGELOG.md');
    expect(cli.stdout).toContain(
      '  left out 2 test(s) that do not pass in every state (skipped, xfail, failing, deleted):\n' +
        '    tests/test_calc.py::test_legacy (base passed, base + gold passed, base + hidden skipped, base + hidden + gold skipped)\n' +
        '    tests/test_old.py::test_old (base passed, base + gold passed, base + hidden absent, base + hidden + gold absent)\n',
    );
    expect(cli.stdout).toMatch(/1 valid, 0 quarantined/);
    const hidden = readFileSync(bundle.paths.hiddenPatch, 'utf8');
    expect(hidden).toContain('deleted file mode 100644');
    expect(hidden).toContain('tests/data/cases.json');
    expect(hidden).toContain('GIT binary patch');
    const gold = readFileSync(bundle.paths.goldPatch ?? '', 'utf8');
    expect(gold).toContain('diff --git a/calc.py b/calc.py');
    expect(gold).not.toContain('CHANGELOG');
    expect(bundle.grading.deny).toContain('**/conftest.py');
    expect(readFileSync(bundle.paths.description, 'utf8')).toContain('callers want None');
    expect(await leftovers(home)).toEqual([]);
  });

  it('derives a node project with the built-in node runner: IDs keyed by name path, a flaky test dropped, a todo and a deleted test left out', async () => {
    const repo = newRepo();
    const lib = `export function div(a, b) {\n  return a / b;\n}\n`;
    const base = commit(
      repo,
      {
        'package.json': '{"type": "module"}\n',
        'lib/div.js': lib,
        'test/div.test.js': `import test, { describe } from 'node:test';\nimport assert from 'node:assert';\nimport { div } from '../lib/div.js';\n\ndescribe('div', () => {\n  test('divides', () => assert.equal(div(6, 3), 2));\n});\n`,
        'test/old.test.js': `import test from 'node:test';\ntest('old', () => {});\n`,
        'test/later.test.js': `import test from 'node:test';\ntest('later', () => {});\n`,
        'test/coin.test.js': `import test from 'node:test';\nimport assert from 'node:assert';\nimport { randomInt } from 'node:crypto';\ntest('coin', () => assert.equal(randomInt(2), 0));\n`,
      },
      'base',
    );
    const fix = commit(
      repo,
      {
        'lib/div.js': lib.replace('return a / b;', 'return b === 0 ? null : a / b;'),
        'test/old.test.js': null,
        'test/later.test.js': `import test from 'node:test';\ntest('later', { todo: 'after the fix' }, () => {});\n`,
        'test/fixtures/zero.json': '{"zero": 0}\n',
        'test/zero.test.js': `import test from 'node:test';\nimport assert from 'node:assert';\nimport { readdirSync, readFileSync } from 'node:fs';\nimport { div } from '../lib/div.js';\n\ntest('zero gives null', () => {\n  const { zero } = JSON.parse(readFileSync(new URL('./fixtures/zero.json', import.meta.url)));\n  assert.equal(div(1, zero), null);\n});\n`,
      },
      'div: null for a zero divisor\n\nInfinity surprised callers.',
    );
    const out = join(tempDir('proctor-out-'), 'node');
    const { result, error } = await run(
      options({ repo, base, fix }, out, { runner: 'node', repeat: 4 }),
    );
    expect(error).toBeUndefined();
    // The random test is dropped as flaky; the one the fix marks todo, and the deleted one,
    // are left out of both lists.
    expect(result?.classified.flaky.map((t) => t.id)).toEqual(['test/coin.test.js::coin']);
    expect(result?.classified.leftOut.map((t) => t.id)).toEqual([
      'test/later.test.js::later',
      'test/old.test.js::old',
    ]);
    expect(result?.bundle.hiddenIds).toEqual(['test/zero.test.js::zero gives null']);
    expect(result?.bundle.existingIds).toEqual(['test/div.test.js::div > divides']);
    expect(result?.hiddenFiles.sort()).toEqual([
      'test/fixtures/zero.json',
      'test/later.test.js',
      'test/old.test.js',
      'test/zero.test.js',
    ]);
    expect(result?.bundle.grading.deny).not.toContain('**/conftest.py');
  });

  it('says which existing test the gold patch breaks', async () => {
    const repo = newRepo();
    const base = commit(repo, { 'calc.py': CALC, 'tests/test_calc.py': TESTS }, 'base');
    const fix = commit(
      repo,
      {
        'calc.py': CALC_FIXED.replace('return a + b', 'return a - b'),
        'tests/test_calc.py': TESTS_FIXED.replace(/@pytest.mark.xfail.*\n/, ''),
        'tests/data/cases.json': '{"zero": 0}\n',
      },
      'fix\n\nbody',
    );
    const out = join(tempDir('proctor-out-'), 'b');
    const { error } = await run(options({ repo, base, fix }, out));
    expect(isProctorError(error, 'DERIVE_FAILED')).toBe(true);
    expect(String(error)).toContain(
      'the gold patch breaks existing tests: tests/test_calc.py::test_add (failed in base + gold)',
    );
  });

  it('refuses a fix whose tests all pass without it: no hidden test', async () => {
    const repo = newRepo();
    const base = commit(repo, { 'calc.py': CALC, 'tests/test_calc.py': TESTS }, 'base');
    const fix = commit(
      repo,
      {
        'calc.py': CALC + '\n# tidy\n',
        'tests/test_calc.py': TESTS + '\n\ndef test_more():\n    assert add(0, 0) == 0\n',
      },
      'tidy\n\nbody',
    );
    const { error } = await run(options({ repo, base, fix }, join(tempDir(), 'x')));
    expect(isProctorError(error, 'DERIVE_FAILED'), String(error)).toBe(true);
    expect(String(error)).toMatch(/no hidden test: .*tests\/test_calc.py/);
  });

  it("prints the runner's last lines when its test process died before reporting (a conftest that cannot import)", async () => {
    const repo = newRepo();
    const base = commit(
      repo,
      {
        'conftest.py': 'raise ImportError("hypothesis is a required dependency")\n',
        'calc.py': CALC,
        'tests/test_calc.py': TESTS,
      },
      'base',
    );
    const fix = commit(
      repo,
      {
        'calc.py': CALC_FIXED,
        'tests/test_calc.py': TESTS + '\n\ndef test_zero():\n    assert div(1, 0) is None\n',
      },
      'fix\n\nbody',
    );
    const home = tempDir('proctor-home-');
    const out = join(tempDir('proctor-out-'), 'c');
    const cli = await proctor([
      '--home',
      home,
      'derive',
      ...['--repo', repo, '--base', base, '--fix', fix, '--out', out],
      ...['--environment', toolchainEnvironment(), '--tests', 'tests/**', '--repeat', '1'],
    ]);
    expect(cli.code).toBe(1);
    // The collector still writes a report (every listed test an error), which says the
    // session never ended, with the report's cause: the first lines of pytest's error.
    expect(cli.stderr).toMatch(
      /proctor: derive: base: the test process ended before the end of its session; the runner says: ImportError while loading conftest/,
    );
    expect(cli.stderr).toContain('ImportError: hypothesis is a required dependency');
    expect(await leftovers(home)).toEqual([]);
  });

  it('removes its containers, volumes and staged bundle when interrupted mid-state (exit 130)', async () => {
    const repo = newRepo();
    const slow = `import time\n\n\ndef test_slow():\n    time.sleep(20)\n`;
    const base = commit(
      repo,
      { 'calc.py': CALC, 'tests/test_calc.py': TESTS, 'tests/test_slow.py': slow },
      'base',
    );
    const fix = commit(
      repo,
      {
        'calc.py': CALC_FIXED,
        'tests/test_calc.py': TESTS + '\n\ndef test_zero():\n    assert div(1, 0) is None\n',
      },
      'fix\n\nbody',
    );
    const home = tempDir('proctor-home-');
    const parent = tempDir('proctor-out-');
    const child = spawnTs(join(ROOT, 'bin', 'proctor.js'), [
      ...['--home', home, 'derive', '--repo', repo, '--base', base, '--fix', fix],
      ...['--environment', toolchainEnvironment(), '--out', join(parent, 'i'), '--repeat', '1'],
    ]);
    await waitFor(() => /running the four states/.test(child.stderr()), {
      what: 'derive to run its first state',
      timeoutMs: 60_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    child.process.kill('SIGINT');
    const { code } = await child.exited;
    expect(code, child.stderr()).toBe(130);
    expect(child.stderr()).toContain('proctor: derive: interrupted; removing what it made');
    expect(readdirSync(parent)).toEqual([]);
    expect(await leftovers(home)).toEqual([]);
  });

  it('refuses bad inputs before any build, each with one line naming the option', async () => {
    const f = pytestProject();
    const exists = tempDir('proctor-out-');
    const noDockerfile = tempDir('proctor-env-');
    const cases: Array<[Partial<DeriveOptions>, RegExp]> = [
      [{ repo: tempDir() }, /^--repo .*: not a git repository$/],
      [{ base: 'nope' }, /^--base nope: no such commit in /],
      [{ fix: 'f'.repeat(40) }, /^--fix f{40}: no such commit in /],
      [{ out: exists }, /^--out .*: already exists$/],
      [{ out: join(f.repo, 'calc.py', 'task') }, /^--out \S+task: \S+calc.py is not a folder$/],
      [
        { runner: join(exists, 'missing') },
        /^--runner .*: not pytest, node, sympy, django, cargo, go, jest, vitest, mocha, karma, junit, ctest, or a file$/,
      ],
      [{ environment: join(exists, 'missing') }, /^--environment .*: not a folder$/],
      [{ environment: noDockerfile }, /^--environment .*: no Dockerfile in it$/],
      [{ workdir: 'repo' }, /^--workdir repo: expected an absolute path/],
      [{ id: 'Calc Div' }, /^--id Calc Div: must match \[a-z0-9\]/],
      [{ description: join(exists, 'missing.md') }, /^--description .*: no such file$/],
      [
        { tests: ['nothing/**'] },
        /^the fix changes no test file \(no path matches nothing\/\*\*\); pass --tests$/,
      ],
      [{ tests: ['**'] }, /^the fix changes only tests: there is no gold patch$/],
    ];
    for (const [more, message] of cases) {
      const out = more.out ?? join(tempDir('proctor-out-'), 'x');
      const { error } = await run(options(f, out, more));
      expect((error as Error | undefined)?.message, JSON.stringify(more)).toMatch(message);
      if (statSync(dirname(out), { throwIfNoEntry: false })?.isDirectory()) {
        expect(readdirSync(dirname(out)).filter((n) => n.startsWith('.'))).toEqual([]);
      }
    }
  });

  it("derives from a bare mirror with --description, installs git into an environment that lacks it, keeps origin as [source].repo and names the task after origin's project", async () => {
    const f = pytestProject();
    // Kept in a folder named `repo`, which names no project: the id comes from origin.
    const mirror = join(tempDir('proctor-mirror-'), 'repo');
    execFileSync('git', ['clone', '-q', '--mirror', f.repo, mirror]);
    execFileSync('git', ['remote', 'set-url', 'origin', 'https://github.com/pytoolz/toolz.git'], {
      cwd: mirror,
    });
    const environment = tempDir('proctor-env-');
    writeFileSync(join(environment, 'Dockerfile'), 'FROM proctor-test-pytest-no-git:latest\n');
    const out = join(tempDir('proctor-out-'), 'mirror');
    const description = join(tempDir(), 'issue.md');
    writeFileSync(description, '# div(1, 0) raises\n\nIt should return None.\n');
    const { result, error, notes } = await run(
      // --tests names the test files alone: the conftest.py glob comes from the runner.
      options({ ...f, repo: mirror }, out, { environment, description, tests: ['tests/**'] }),
    );
    expect(error, notes.join('\n')).toBeUndefined();
    expect(readFileSync(join(out, 'description.md'), 'utf8')).toBe(
      '# div(1, 0) raises\n\nIt should return None.\n',
    );
    expect(notes.join('\n')).not.toMatch(/warning/);
    expect(result?.bundle.hiddenIds).toEqual([
      'tests/test_calc.py::test_div_zero[1]',
      'tests/test_calc.py::test_div_zero[2]',
    ]);
    expect(result?.bundle.id).toBe(`toolz-${f.fix.slice(0, 12)}`);
    // The author's runner file runs pytest: a candidate's conftest.py is denied too.
    expect(result?.bundle.grading.deny).toEqual(['tests/**', '**/conftest.py']);
    expect(result?.bundle.source).toEqual({
      repo: 'pytoolz/toolz',
      base_commit: f.base,
      fix_commit: f.fix,
    });
  });

  it('says in one line why the environment did not build (exit 1), and leaves nothing', async () => {
    const f = pytestProject();
    const cases: Array<[string, RegExp]> = [
      // No git and no package manager to install it with.
      [
        'FROM debian:bookworm-slim\nRUN rm /usr/bin/apt-get\n',
        /^proctor: derive: --environment \S+: the image did not build: the environment needs git: install it in the Dockerfile$/,
      ],
      // The author's own step fails: Docker's reason and the step's last lines.
      [
        'FROM debian:bookworm-slim\nRUN echo "E: Unable to locate package python3-nothing" >&2; exit 100\n',
        /^proctor: derive: --environment \S+: the image did not build: The command .* returned a non-zero code: 100; its last lines:\n.*E: Unable to locate package python3-nothing/s,
      ],
    ];
    for (const [dockerfile, message] of cases) {
      const environment = tempDir('proctor-env-');
      writeFileSync(join(environment, 'Dockerfile'), dockerfile);
      const home = tempDir('proctor-home-');
      const parent = tempDir('proctor-out-');
      const cli = await proctor([
        ...['--home', home, 'derive', '--repo', f.repo, '--base', f.base, '--fix', f.fix],
        ...['--environment', environment, '--out', join(parent, 'x'), '--repeat', '1'],
      ]);
      expect(cli.code, cli.stderr).toBe(1);
      expect(
        cli.stderr
          .trimEnd()
          .split('\n')
          .filter((l) => l.startsWith('proctor: ')),
      ).toHaveLength(1);
      expect(cli.stderr.slice(cli.stderr.indexOf('proctor: derive:')).trimEnd()).toMatch(message);
      expect(readdirSync(parent)).toEqual([]);
      expect(await leftovers(home)).toEqual([]);
    }
  });

  it('takes the one child of --base when --fix is left out, and says why not when there is none or several', async () => {
    const f = pytestProject();
    // Stops right after the inputs are read: the fix it chose is in the note and the diff.
    const { error, notes } = await run(
      options(f, join(tempDir('proctor-out-'), 'x'), { fix: undefined, tests: ['nothing/**'] }),
    );
    expect(String(error)).toMatch(/the fix changes no test file/);
    expect(notes).toContain(
      `--fix ${f.fix.slice(0, 12)}: the one commit whose only parent is --base ${f.base}`,
    );
    const none = await run(
      options({ ...f, base: f.fix }, join(tempDir(), 'x'), { fix: undefined }),
    );
    expect((none.error as Error).message).toMatch(
      /^--fix: no commit of \S+ has --base [0-9a-f]{40} as its only parent; pass --fix$/,
    );
    gitIn(f.repo, ['checkout', '-q', '-b', 'other', f.base]);
    const second = commit(f.repo, { 'calc.py': CALC_FIXED }, 'another fix');
    const several = await run(options(f, join(tempDir(), 'x'), { fix: undefined }));
    const short = [f.fix, second].map((c) => c.slice(0, 12)).sort();
    expect((several.error as Error).message).toBe(
      `--fix: 2 commits have --base ${f.base} as their only parent (${short.join(', ')}); pass --fix`,
    );
  });

  it('says so when the fix has another parent than --base (and when its message is only a title)', async () => {
    const f = pytestProject();
    const middle = commit(f.repo, { 'notes.txt': 'a later, unrelated change\n' }, 'notes');
    const fix = commit(f.repo, { 'calc.py': CALC_FIXED + '\n' }, 'fix again');
    void middle;
    const out = join(tempDir('proctor-out-'), 'p');
    const { result, notes, error } = await run(options({ ...f, fix }, out));
    expect(error).toBeUndefined();
    expect(notes.join('\n')).toMatch(
      /warning: --fix [0-9a-f]{12} has parent\(s\) [0-9a-f]{40}, not --base/,
    );
    expect(result?.goldFiles).toEqual(['calc.py', 'notes.txt']);
    expect(notes.join('\n')).toContain('warning: the fix commit message is only a title');
  });
});
