// Which runner `proctor import swebench` writes: the built-in runner of the row's repository
// (sympy, django, pytest), or --runner's for every row (a built-in one, or the user's own file
// copied byte for byte); the SWE-bench grading rules, the dialect's deny lines and [tests]
// env; a row of a repository without a dialect given the runner its test patch's language asks
// for (a JavaScript row's by its package.json), or skipped saying which it needs; and every
// bad --runner refused in one line before anything is written.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle, runnerRunsPytest } from '../../src/oracle/index.js';
import { runnerSource } from '../../src/runners/index.js';
import { proctor } from '../helpers/cli.js';
import { commit, newRepo } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';

const diff = (repo: string, a: string, b: string, ...paths: string[]) =>
  execFileSync('git', ['diff', '--binary', '--full-index', a, b, '--', ...paths], {
    cwd: repo,
    encoding: 'utf8',
  });

/**
 * One calc repository cloned under the names of sympy, django, requests and acme/calc (one
 * without a dialect), a row for each, and an environment that nothing builds here.
 */
function fixture() {
  const root = tempDir('proctor-import-runner-');
  const repos = join(root, 'repos');
  const repo = newRepo(join(root, 'origin'));
  const base = commit(
    repo,
    {
      'calc.py': 'def div(a, b):\n    return a / b\n',
      'tests/test_calc.py':
        'from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n',
    },
    'base',
  );
  const fix = commit(
    repo,
    {
      'calc.py': 'def div(a, b):\n    return None if b == 0 else a / b\n',
      'tests/test_calc.py':
        'from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n\n\ndef test_zero():\n    assert div(1, 0) is None\n',
    },
    'fix',
  );
  mkdirSync(repos);
  const names = ['sympy/sympy', 'django/django', 'psf/requests', 'acme/calc'];
  for (const name of names) {
    execFileSync('git', ['clone', '-q', '--bare', repo, join(repos, name.replace('/', '__'))]);
  }
  const environment = join(root, 'env');
  mkdirSync(environment);
  writeFileSync(join(environment, 'Dockerfile'), 'FROM debian:bookworm-slim\n');
  const row = (repoName: string) => ({
    instance_id: `${repoName.replace('/', '__')}-1`,
    repo: repoName,
    base_commit: base,
    patch: diff(repo, base, fix, 'calc.py'),
    test_patch: diff(repo, base, fix, 'tests'),
    FAIL_TO_PASS: ['tests/test_calc.py::test_zero'],
    PASS_TO_PASS: ['tests/test_calc.py::test_div'],
    problem_statement: 'div(1, 0) raises; it should return None.',
  });
  const rows = (...repoNames: string[]) => {
    // Each in a folder of its own, under one name: [source].dataset is the file's name.
    const dir = tempDir('proctor-rows-');
    const path = join(dir, 'rows.jsonl');
    writeFileSync(path, repoNames.map((r) => JSON.stringify(row(r))).join('\n') + '\n');
    return path;
  };
  const out = join(root, 'suite');
  const args = (rowsFile: string, ...more: string[]) => [
    ...['import', 'swebench', rowsFile, '--repos', repos],
    ...['--environment', environment, '--out', out, ...more],
  ];
  return { root, repo, base, row, rows, out, args, environment };
}

const SYMPY_DENY = [
  'bin/test',
  'sympy/testing/runtests.py',
  'sympy/utilities/runtests.py',
  'sympy/testing/pytest.py',
  'sympy/utilities/pytest.py',
];
const DJANGO_DENY = ['tests/runtests.py', 'tests/test_sqlite.py'];
const SYMPY_ENV = { PYTHONWARNINGS: 'ignore::UserWarning,ignore::SyntaxWarning' };

/** conftest.py is denied for any runner that runs pytest, as validate judges it. */
const conftestFor = async (runner: string) =>
  (await runnerRunsPytest(runner)) ? ['**/conftest.py'] : [];

describe('proctor import swebench: the runner', { timeout: 120_000 }, () => {
  it("writes the runner of each row's repository, SWE-bench's rules, its deny lines and [tests] env, and says which runner", async () => {
    const f = fixture();
    const result = await proctor(f.args(f.rows('sympy/sympy', 'django/django', 'psf/requests')));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    for (const [id, runner] of [
      ['sympy__sympy-1', 'sympy'],
      ['django__django-1', 'django'],
      ['psf__requests-1', 'pytest'],
    ] as const) {
      expect(result.stdout).toContain(
        `written   ${id}  row ${['sympy', 'django', 'pytest'].indexOf(runner) + 1} (${id})  runner ${runner}  environment ${f.environment}\n`,
      );
      const bundle = await loadBundle(join(f.out, id));
      expect(readFileSync(bundle.paths.runner)).toEqual(await runnerSource(runner));
      expect(statSync(bundle.paths.runner).mode & 0o777).toBe(0o755);
      expect(bundle.grading.rules).toBe('swebench');
      expect(readFileSync(join(bundle.dir, 'task.toml'), 'utf8')).toContain('rules = "swebench"');
    }
    const sympy = await loadBundle(join(f.out, 'sympy__sympy-1'));
    expect(sympy.grading.deny).toEqual([
      'tests/test_calc.py',
      ...SYMPY_DENY,
      ...(await conftestFor(sympy.paths.runner)),
    ]);
    expect(sympy.testsEnv).toEqual(SYMPY_ENV);
    expect(readFileSync(join(sympy.dir, 'task.toml'), 'utf8')).toContain(
      `[tests.env]\nPYTHONWARNINGS = "ignore::UserWarning,ignore::SyntaxWarning"\n`,
    );
    const django = await loadBundle(join(f.out, 'django__django-1'));
    expect(django.grading.deny).toEqual([
      'tests/test_calc.py',
      ...DJANGO_DENY,
      ...(await conftestFor(django.paths.runner)),
    ]);
    expect(django.testsEnv).toEqual({});
    expect(readFileSync(join(django.dir, 'task.toml'), 'utf8')).not.toContain('[tests');
    const requests = await loadBundle(join(f.out, 'psf__requests-1'));
    expect(requests.grading.deny).toEqual(['tests/test_calc.py', '**/conftest.py']);
    expect(requests.testsEnv).toEqual({});

    // --json carries the runner too; a second run finds the bundles unchanged.
    const json = await proctor(f.args(f.rows('sympy/sympy'), '--json'));
    expect(JSON.parse(json.stdout)).toMatchObject({
      rows: [{ id: 'sympy__sympy-1', status: 'unchanged', runner: 'sympy' }],
    });
  });

  it("imports a row of a repository without a dialect with the runner its test patch's language asks for, says so, and --runner overrides it", async () => {
    const f = fixture();
    const rows = f.rows('acme/calc', 'psf/requests');
    const result = await proctor(f.args(rows));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^written {3}acme__calc-1 .* runner pytest /m);
    expect(result.stdout).toContain(
      '  note: runner pytest: acme/calc is not in the dialect table, so the runner is chosen by its test patch (tests/test_calc.py); --runner overrides\n',
    );
    expect(result.stdout).toMatch(/^written {3}psf__requests-1 .* runner pytest /m);
    const bundle = await loadBundle(join(f.out, 'acme__calc-1'));
    expect(readFileSync(bundle.paths.runner)).toEqual(await runnerSource('pytest'));
    expect(bundle.grading.deny).toEqual(['tests/test_calc.py', '**/conftest.py']);
    expect(bundle.grading.rules).toBe('swebench');
    const json = await proctor(f.args(rows, '--json'));
    expect(JSON.parse(json.stdout)).toMatchObject({
      rows: [
        {
          id: 'acme__calc-1',
          status: 'unchanged',
          runner: 'pytest',
          notes: [expect.stringContaining('chosen by its test patch')],
        },
        { id: 'psf__requests-1', status: 'unchanged', runner: 'pytest' },
      ],
    });
    const own = join(f.root, 'own-run');
    writeFileSync(own, '#!/bin/sh\nexit 0\n');
    const again = await proctor(f.args(rows, '--runner', own, '--force'));
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).not.toContain('chosen by its test patch');
    expect(readFileSync(join(f.out, 'acme__calc-1', 'tests', 'run'), 'utf8')).toBe(
      '#!/bin/sh\nexit 0\n',
    );
  });

  it("chooses, for each language of a test patch, the runner a repository without a dialect needs, asking a JavaScript row's package.json", async () => {
    const f = fixture();
    const repos = join(f.root, 'repos');
    const kinds: Array<[string, Record<string, string>, string[], string | undefined]> = [
      ['go', {}, ['server/http_test.go'], 'go'],
      ['rust', {}, ['tests/parse.rs'], 'cargo'],
      ['java', {}, ['src/test/AppTest.java'], 'junit'],
      ['cpp', {}, ['tests/check.cpp'], 'ctest'],
      ['js', { 'package.json': '{"devDependencies":{"jest":"29"}}\n' }, ['test/a.test.js'], 'jest'],
      [
        'ts',
        { 'package.json': '{"scripts":{"test":"vitest run"}}\n' },
        ['src/a.spec.ts'],
        'vitest',
      ],
      ['bare', {}, ['test/a.test.js'], undefined],
      ['other', {}, ['tests/tests.py'], undefined],
    ];
    const rows = kinds.map(([kind, files, paths]) => {
      // A repository each, cloned under its row's name: a package.json is one row's alone.
      const repo = newRepo();
      const base = commit(repo, { README: `${kind}\n`, ...files }, `${kind} base`);
      const added = commit(
        repo,
        { 'lib.txt': `${kind} fixed\n`, ...Object.fromEntries(paths.map((p) => [p, `${kind}\n`])) },
        kind,
      );
      execFileSync('git', ['clone', '-q', '--bare', repo, join(repos, `acme__${kind}`)]);
      return {
        ...f.row('acme/calc'),
        instance_id: `acme__${kind}-1`,
        repo: `acme/${kind}`,
        base_commit: base,
        patch: diff(repo, base, added, 'lib.txt'),
        test_patch: diff(repo, base, added, ...paths),
      };
    });
    const file = join(f.root, 'langs.jsonl');
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const result = await proctor(f.args(file));
    expect(result.code).toBe(1);
    for (const [kind, files, paths, runner] of kinds) {
      if (runner === undefined) continue;
      expect(result.stdout).toMatch(
        new RegExp(`^written {3}acme__${kind}-1 .* runner ${runner} `, 'm'),
      );
      const why =
        'package.json' in files
          ? kind === 'js'
            ? ' and its package.json depends on jest'
            : " and its package.json's test script runs vitest"
          : '';
      expect(result.stdout).toContain(
        `  note: runner ${runner}: acme/${kind} is not in the dialect table, so the runner is chosen by its test patch (${paths.join(', ')})${why}; --runner overrides\n`,
      );
      expect(readFileSync(join(f.out, `acme__${kind}-1`, 'tests', 'run'))).toEqual(
        await runnerSource(runner as never),
      );
    }
    expect(result.stdout).toContain(
      'skipped row 7 (acme__bare-1): repository acme/bare has no built-in test dialect; by its test patch (test/a.test.js) it needs the jest, vitest, mocha or karma runner (--runner jest, --runner vitest, --runner mocha, --runner karma); the base commit has no package.json to say which\n',
    );
    expect(result.stdout).toContain(
      'skipped row 8 (acme__other-1): repository acme/other has no built-in test dialect; its test patch names no test file this import knows; it needs a runner of your own (--runner FILE)\n',
    );
    expect(result.stdout).toContain('6 written, 0 rewritten, 0 unchanged, 2 skipped');
    expect(existsSync(join(f.out, 'acme__bare-1'))).toBe(false);
  });

  it('takes --runner for every row over the table, adding its machinery to the repository’s', async () => {
    const f = fixture();
    const result = await proctor(
      f.args(f.rows('sympy/sympy', 'psf/requests'), '--runner', 'django'),
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^written {3}sympy__sympy-1 .* runner django /m);
    expect(result.stdout).toMatch(/^written {3}psf__requests-1 .* runner django /m);
    const sympy = await loadBundle(join(f.out, 'sympy__sympy-1'));
    const django = await runnerSource('django');
    expect(readFileSync(sympy.paths.runner)).toEqual(django);
    const conftest = await conftestFor(sympy.paths.runner);
    expect(sympy.grading.deny).toEqual([
      'tests/test_calc.py',
      ...SYMPY_DENY,
      ...DJANGO_DENY,
      ...conftest,
    ]);
    // The repository's env stays: its code prints the same warnings whichever runner runs it.
    expect(sympy.testsEnv).toEqual(SYMPY_ENV);
    const requests = await loadBundle(join(f.out, 'psf__requests-1'));
    expect(readFileSync(requests.paths.runner)).toEqual(django);
    expect(requests.grading.deny).toEqual(['tests/test_calc.py', '**/conftest.py', ...DJANGO_DENY]);
  });

  it('copies --runner FILE byte for byte as an executable tests/run, for every row', async () => {
    const f = fixture();
    // A wrapper of the user's: not executable where it lies, not UTF-8 throughout.
    const wrapper = join(f.root, 'run-with-service.sh');
    const bytes = Buffer.concat([
      Buffer.from('#!/bin/sh\n# starts a local service, then the tests\nexport CALC_MODE=strict\n'),
      Buffer.from([0xff, 0xfe, 0x0a]),
      Buffer.from('exec python3 -m pytest "$@"\n'),
    ]);
    writeFileSync(wrapper, bytes);
    chmodSync(wrapper, 0o644);
    const plain = join(f.root, 'plain-run');
    writeFileSync(plain, '#!/bin/sh\nexec ./check "$@"\n');
    const result = await proctor(f.args(f.rows('acme/calc', 'sympy/sympy'), '--runner', wrapper));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(`^written {3}acme__calc-1 .* runner ${wrapper} `, 'm'),
    );
    const calc = await loadBundle(join(f.out, 'acme__calc-1'));
    expect(readFileSync(calc.paths.runner)).toEqual(bytes);
    expect(statSync(calc.paths.runner).mode & 0o777).toBe(0o755);
    expect(statSync(wrapper).mode & 0o777).toBe(0o644);
    // It names pytest: conftest.py is denied, as derive and validate judge a runner file.
    expect(calc.grading.deny).toEqual(['tests/test_calc.py', '**/conftest.py']);
    expect(calc.grading.rules).toBe('swebench');
    const sympy = await loadBundle(join(f.out, 'sympy__sympy-1'));
    expect(readFileSync(sympy.paths.runner)).toEqual(bytes);
    expect(sympy.grading.deny).toEqual(['tests/test_calc.py', ...SYMPY_DENY, '**/conftest.py']);
    expect(sympy.testsEnv).toEqual(SYMPY_ENV);

    // One that does not name pytest: the test patch's files alone.
    const g = fixture();
    const other = await proctor(g.args(g.rows('acme/calc'), '--runner', plain));
    expect(other.code, other.stdout + other.stderr).toBe(0);
    const bundle = await loadBundle(join(g.out, 'acme__calc-1'));
    expect(readFileSync(bundle.paths.runner, 'utf8')).toBe('#!/bin/sh\nexec ./check "$@"\n');
    expect(bundle.grading.deny).toEqual(['tests/test_calc.py']);
  });

  it('refuses an unknown --runner, and a FILE that is missing, not a regular file or empty, in one line (exit 2)', async () => {
    const f = fixture();
    const rows = f.rows('sympy/sympy');
    const folder = join(f.root, 'a-folder');
    mkdirSync(folder);
    const empty = join(f.root, 'empty-run');
    writeFileSync(empty, '');
    const cases: Array<[string, string]> = [
      [
        'rspec',
        'proctor: --runner rspec: not a built-in runner (pytest, node, sympy, django, cargo, go, jest, vitest, mocha, karma, junit, ctest) nor a file; pass one of them, or FILE, a runner of your own',
      ],
      [join(f.root, 'missing.sh'), `proctor: --runner ${join(f.root, 'missing.sh')}: no such file`],
      [folder, `proctor: --runner ${folder}: not a regular file`],
      [empty, `proctor: --runner ${empty}: is empty; a runner is a program`],
    ];
    for (const [runner, message] of cases) {
      const result = await proctor(f.args(rows, '--runner', runner));
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toBe(`${message}\n`);
      expect(result.stdout).toBe('');
      expect(existsSync(f.out)).toBe(false);
    }
  });
});
