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
import { leftovers } from '../helpers/home.js';
import { commit, newRepo, toolchainEnvironment } from '../helpers/repos.js';
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
  const names = [
    'sympy/sympy',
    'django/django',
    'psf/requests',
    'acme/calc',
    'immutable-js/immutable-js',
  ];
  for (const name of names) {
    execFileSync('git', ['clone', '-q', '--bare', repo, join(repos, name.replace('/', '__'))]);
  }
  const environment = join(root, 'env');
  mkdirSync(environment);
  writeFileSync(join(environment, 'Dockerfile'), 'FROM debian:bookworm-slim\n');
  const row = (repoName: string, ids: Ids = IDS[repoName] ?? NODE_IDS) => ({
    instance_id: `${repoName.replace('/', '__')}-1`,
    repo: repoName,
    base_commit: base,
    patch: diff(repo, base, fix, 'calc.py'),
    test_patch: diff(repo, base, fix, 'tests'),
    FAIL_TO_PASS: ids[0],
    PASS_TO_PASS: ids[1],
    problem_statement: 'div(1, 0) raises; it should return None.',
  });
  const rowsOf = (list: unknown[]) => {
    // Each in a folder of its own, under one name: [source].dataset is the file's name.
    const dir = tempDir('proctor-rows-');
    const path = join(dir, 'rows.jsonl');
    writeFileSync(path, list.map((r) => JSON.stringify(r)).join('\n') + '\n');
    return path;
  };
  const rows = (...repoNames: string[]) => rowsOf(repoNames.map((r) => row(r)));
  const out = join(root, 'suite');
  const args = (rowsFile: string, ...more: string[]) => [
    ...['import', 'swebench', rowsFile, '--repos', repos],
    ...['--environment', environment, '--out', out, ...more],
  ];
  return { root, repo, base, row, rows, rowsOf, out, args, environment };
}

/** FAIL_TO_PASS and PASS_TO_PASS. */
type Ids = [string[], string[]];
const NODE_IDS: Ids = [['tests/test_calc.py::test_zero'], ['tests/test_calc.py::test_div']];
/** Each dialect's rows as SWE-bench writes them: bare names for sympy, name (module.Class) for django. */
const IDS: Record<string, Ids> = {
  'sympy/sympy': [['test_zero'], ['test_div']],
  'django/django': [
    ['test_zero (tests.test_calc.CalcTests)'],
    ['test_div (tests.test_calc.CalcTests)'],
  ],
};
const BY_NODE_IDS = "its test IDs are pytest's node IDs (path::name)";

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
    for (const [id, runner, why] of [
      ['sympy__sympy-1', 'sympy', "its test IDs are bare names, sympy's"],
      ['django__django-1', 'django', "its test IDs are django's (name (module.Class))"],
      ['psf__requests-1', 'pytest', BY_NODE_IDS],
    ] as const) {
      expect(result.stdout).toContain(
        `written   ${id}  row ${['sympy', 'django', 'pytest'].indexOf(runner) + 1} (${id})  runner ${runner} (${why})  environment ${f.environment}\n`,
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

  it("imports a row of a repository without a dialect by its IDs, else its test patch's language, says why on the row's line, and --runner overrides it", async () => {
    const f = fixture();
    const unshaped: Ids = [['calc: zero'], ['calc: div']];
    const rows = f.rowsOf([
      f.row('acme/calc'),
      { ...f.row('acme/calc', unshaped), instance_id: 'acme__calc-2' },
      f.row('psf/requests'),
    ]);
    const result = await proctor(f.args(rows));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `written   acme__calc-1  row 1 (acme__calc-1)  runner pytest (${BY_NODE_IDS})  environment ${f.environment}\n`,
    );
    expect(result.stdout).toContain(
      `written   acme__calc-2  row 2 (acme__calc-2)  runner pytest (its test IDs decide nothing: none is pytest's path::name, django's name (module.Class) or a bare name; acme/calc is not in the dialect table; its test patch is Python (tests/test_calc.py))  environment ${f.environment}\n`,
    );
    expect(result.stdout).toMatch(/^written {3}psf__requests-1 .* runner pytest /m);
    const bundle = await loadBundle(join(f.out, 'acme__calc-2'));
    expect(readFileSync(bundle.paths.runner)).toEqual(await runnerSource('pytest'));
    expect(bundle.grading.deny).toEqual(['tests/test_calc.py', '**/conftest.py']);
    expect(bundle.grading.rules).toBe('swebench');
    const json = await proctor(f.args(rows, '--json'));
    expect(JSON.parse(json.stdout)).toMatchObject({
      rows: [
        { id: 'acme__calc-1', status: 'unchanged', runner: 'pytest', why: BY_NODE_IDS },
        {
          id: 'acme__calc-2',
          status: 'unchanged',
          runner: 'pytest',
          why: expect.stringContaining('its test patch is Python (tests/test_calc.py)'),
        },
        { id: 'psf__requests-1', status: 'unchanged', runner: 'pytest' },
      ],
    });
    const own = join(f.root, 'own-run');
    writeFileSync(own, '#!/bin/sh\nexit 0\n');
    const again = await proctor(f.args(rows, '--runner', own, '--force'));
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain(`runner ${own} (--runner)  environment`);
    expect(again.stdout).not.toContain('its test patch is');
    expect(readFileSync(join(f.out, 'acme__calc-2', 'tests', 'run'), 'utf8')).toBe(
      '#!/bin/sh\nexit 0\n',
    );
  });

  it("gives a sympy row whose IDs are pytest node IDs the pytest runner, over the table, keeping sympy's machinery denied", async () => {
    const f = fixture();
    const result = await proctor(f.args(f.rows('sympy/sympy'), '--only', 'sympy__sympy-1'));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^written {3}sympy__sympy-1 .* runner sympy /m);
    const nodeIds = f.rowsOf([f.row('sympy/sympy', NODE_IDS)]);
    const again = await proctor(f.args(nodeIds, '--force'));
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain(
      `rewritten sympy__sympy-1  row 1 (sympy__sympy-1)  runner pytest (${BY_NODE_IDS}, over the dialect table's sympy for sympy/sympy)  environment ${f.environment}\n`,
    );
    const bundle = await loadBundle(join(f.out, 'sympy__sympy-1'));
    expect(readFileSync(bundle.paths.runner)).toEqual(await runnerSource('pytest'));
    expect(bundle.grading.deny).toEqual(['tests/test_calc.py', ...SYMPY_DENY, '**/conftest.py']);
    expect(bundle.testsEnv).toEqual(SYMPY_ENV);
  });

  it('tells the jest runner that a row SWE-bench grades with parse_log_jest_json lists describe blocks and title, and no other row', async () => {
    const f = fixture();
    const jestIds: Ids = [['Calc > div > refuses zero'], ['Calc > div > divides']];
    const rows = f.rowsOf(
      ['2005', '2006'].map((n) => ({
        ...f.row('immutable-js/immutable-js', jestIds),
        instance_id: `immutable-js__immutable-js-${n}`,
      })),
    );
    const result = await proctor(f.args(rows));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    // The row's line, then its note.
    const lines = result.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('written   immutable-js__immutable-js-2005 '));
    expect(lines[at]).toContain(
      "runner jest (its test IDs decide nothing: none is pytest's path::name, django's name (module.Class) or a bare name; the dialect table's runner for immutable-js/immutable-js)",
    );
    expect(lines[at + 1]).toBe(
      '  note: its ids are parse_log_jest_json\'s (describe blocks and title joined by " > "): [tests] env RUNNER_JEST_IDS = "json"',
    );
    const json = await loadBundle(join(f.out, 'immutable-js__immutable-js-2005'));
    expect(readFileSync(json.paths.runner)).toEqual(await runnerSource('jest'));
    expect(json.testsEnv).toEqual({ RUNNER_JEST_IDS: 'json' });
    const verbose = await loadBundle(join(f.out, 'immutable-js__immutable-js-2006'));
    expect(verbose.testsEnv).toEqual({});
    expect(result.stdout).not.toMatch(/immutable-js-2006.*\n {2}note:/);
  });

  it("chooses, for each language of a test patch, the runner a repository without a dialect needs, asking a JavaScript row's package.json", async () => {
    const f = fixture();
    const repos = join(f.root, 'repos');
    const JS = 'JavaScript or TypeScript';
    const kinds: Array<[string, Record<string, string>, string[], string, string | undefined]> = [
      ['go', {}, ['server/http_test.go'], 'Go', 'go'],
      ['rust', {}, ['tests/parse.rs'], 'Rust', 'cargo'],
      ['java', {}, ['src/test/AppTest.java'], 'Java', 'junit'],
      ['cpp', {}, ['tests/check.cpp'], 'C or C++', 'ctest'],
      [
        'js',
        { 'package.json': '{"devDependencies":{"jest":"29"}}\n' },
        ['test/a.test.js'],
        JS,
        'jest',
      ],
      [
        'ts',
        { 'package.json': '{"scripts":{"test":"vitest run"}}\n' },
        ['src/a.spec.ts'],
        JS,
        'vitest',
      ],
      ['bare', {}, ['test/a.test.js'], JS, undefined],
      ['other', {}, ['docs/notes.md'], '', undefined],
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
    for (const [kind, files, paths, language, runner] of kinds) {
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
        `  runner ${runner} (acme/${kind} is not in the dialect table; its test patch is ${language} (${paths.join(', ')})${why})  environment`,
      );
      expect(readFileSync(join(f.out, `acme__${kind}-1`, 'tests', 'run'))).toEqual(
        await runnerSource(runner as never),
      );
    }
    expect(result.stdout).toContain(
      'skipped row 7 (acme__bare-1): no runner: acme/bare is not in the dialect table; its test patch is JavaScript or TypeScript (test/a.test.js): it needs the jest, vitest, mocha or karma runner (--runner jest, --runner vitest, --runner mocha, --runner karma); the base commit has no package.json to say which\n',
    );
    expect(result.stdout).toContain(
      'skipped row 8 (acme__other-1): no runner: acme/other is not in the dialect table; its test patch names no file of a language this import knows; it needs a runner of your own (--runner FILE)\n',
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

/**
 * A repository shaped as python-slugify is: the package in slugify/, its tests in one test.py
 * at the top (a name pytest's default patterns never collect), unittest classes in it.
 */
function slugifyFixture(ids: 'node' | 'unshaped') {
  const root = tempDir('proctor-import-slugify-');
  const repos = join(root, 'repos');
  const repo = newRepo(join(repos, 'un33k__python-slugify'));
  const TESTS = [
    'import unittest',
    'from slugify import slugify',
    '',
    '',
    'class TestSlugify(unittest.TestCase):',
    '    def test_phonetic(self):',
    "        self.assertEqual(slugify('Hello World'), 'hello-world')",
    '',
  ].join('\n');
  const NEW_TESTS = `${TESTS}\n    def test_accented_text(self):\n        self.assertEqual(slugify('Café Über'), 'cafe-uber')\n`;
  const base = commit(
    repo,
    {
      'slugify/__init__.py': 'from .slugify import slugify\n',
      'slugify/slugify.py':
        "import re\n\n\ndef slugify(text):\n    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')\n",
      'test.py': TESTS,
      'setup.py': "from setuptools import setup\nsetup(name='python-slugify')\n",
    },
    'base',
  );
  const fix = commit(
    repo,
    {
      'slugify/slugify.py':
        "import re\nimport unicodedata\n\n\ndef slugify(text):\n    text = unicodedata.normalize('NFKD', text).encode('ascii', 'ignore').decode()\n    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')\n",
      'test.py': NEW_TESTS,
    },
    'fix',
  );
  const [failing, passing] =
    ids === 'node'
      ? ['test.py::TestSlugify::test_accented_text', 'test.py::TestSlugify::test_phonetic']
      : ['accented text', 'phonetic'];
  const row = {
    instance_id: `un33k__python-slugify-${ids === 'node' ? 1 : 2}`,
    repo: 'un33k/python-slugify',
    base_commit: base,
    patch: diff(repo, base, fix, 'slugify'),
    test_patch: diff(repo, base, fix, 'test.py'),
    FAIL_TO_PASS: [failing],
    PASS_TO_PASS: [passing],
    problem_statement: 'slugify drops accented letters; it should transliterate them.',
  };
  const rows = join(root, 'rows.jsonl');
  writeFileSync(rows, JSON.stringify(row) + '\n');
  const out = join(root, 'suite');
  const args = [
    ...['import', 'swebench', rows, '--repos', repos],
    ...['--environment', toolchainEnvironment(), '--out', out],
  ];
  return { args, out, id: row.instance_id };
}

describe('proctor import swebench: a top-level test.py', { timeout: 600_000 }, () => {
  it('imports a slugify-shaped row with the pytest runner, denies test.py, and its gold passes baseline', async () => {
    const f = slugifyFixture('node');
    const result = await proctor(f.args);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `written   ${f.id}  row 1 (${f.id})  runner pytest (${BY_NODE_IDS})  environment`,
    );
    const bundle = await loadBundle(join(f.out, f.id));
    expect(readFileSync(bundle.paths.runner)).toEqual(await runnerSource('pytest'));
    // The test patch's file is denied as a test file, whatever its name.
    expect(bundle.grading.deny).toEqual(['test.py', '**/conftest.py']);
    const home = tempDir('proctor-home-');
    const baseline = await proctor(['--home', home, 'baseline', f.out, '--gold', '--wait']);
    expect(baseline.code, baseline.stdout + baseline.stderr).toBe(0);
    expect(baseline.stdout).toMatch(/1 valid, 0 quarantined/);
    expect(await leftovers(home)).toEqual([]);
  });

  it('takes the pytest runner from the test patch when the IDs say nothing: test.py is Python', async () => {
    const f = slugifyFixture('unshaped');
    const result = await proctor(f.args);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(
      "runner pytest (its test IDs decide nothing: they mix 1 of bare names, sympy's and 1 of no known shape; un33k/python-slugify is not in the dialect table; its test patch is Python (test.py))",
    );
    const bundle = await loadBundle(join(f.out, f.id));
    expect(bundle.grading.deny).toEqual(['test.py', '**/conftest.py']);
  });
});
