// The dialect table of `proctor import swebench`: SWE-bench's repositories by the runner that
// speaks their test dialect, and the reason given for a repository that has none.
import { describe, expect, it } from 'vitest';
import picomatch from 'picomatch';
import {
  chooseDialect,
  DIALECT_RULES,
  dialectByCommand,
  jestJsonRow,
  dialectByFiles,
  dialectByIds,
  dialectOf,
  jsRunnerOf,
  SWEBENCH_DIALECTS,
} from '../../src/import/dialects.js';
import { isBuiltinRunner } from '../../src/runners/index.js';

describe('the dialect table', () => {
  it("maps MAP_REPO_TO_PARSER_PY's repositories to sympy, django and pytest", () => {
    expect(dialectOf('sympy/sympy')).toBe('sympy');
    expect(dialectOf('django/django')).toBe('django');
    for (const repo of [
      'astropy/astropy',
      'marshmallow-code/marshmallow',
      'matplotlib/matplotlib',
      'mwaskom/seaborn',
      'pallets/flask',
      'psf/requests',
      'pvlib/pvlib-python',
      'pydata/xarray',
      'pydicom/pydicom',
      'pylint-dev/astroid',
      'pylint-dev/pylint',
      'pytest-dev/pytest',
      'pyvista/pyvista',
      'scikit-learn/scikit-learn',
      'sphinx-doc/sphinx',
      'sqlfluff/sqlfluff',
    ]) {
      expect(dialectOf(repo), repo).toBe('pytest');
    }
    expect(Object.keys(SWEBENCH_DIALECTS)).toHaveLength(44);
  });

  it("maps MAP_REPO_TO_PARSER_RUST's repositories (SWE-bench Multilingual) to cargo", () => {
    for (const repo of [
      'BurntSushi/ripgrep',
      'sharkdp/bat',
      'astral-sh/ruff',
      'tokio-rs/tokio',
      'uutils/coreutils',
      'nushell/nushell',
      'tokio-rs/axum',
    ]) {
      expect(dialectOf(repo), repo).toBe('cargo');
    }
    expect(DIALECT_RULES.cargo).toEqual({
      deny: ['**/.cargo/config', '**/.cargo/config.toml', 'rust-toolchain', 'rust-toolchain.toml'],
      env: {},
    });
  });

  it("maps MAP_REPO_TO_PARSER_GO's repositories (SWE-bench Multilingual) to go", () => {
    for (const repo of [
      'caddyserver/caddy',
      'gin-gonic/gin',
      'gohugoio/hugo',
      'hashicorp/terraform',
      'prometheus/prometheus',
    ]) {
      expect(dialectOf(repo), repo).toBe('go');
    }
    expect(dialectOf('Gin-Gonic/Gin')).toBe('go');
    expect(DIALECT_RULES.go).toEqual({ deny: [], env: {} });
  });

  it("maps MAP_REPO_TO_PARSER_JS's jest and vitest repositories (SWE-bench Multilingual), denying their configuration", () => {
    for (const repo of ['babel/babel', 'facebook/docusaurus', 'immutable-js/immutable-js']) {
      expect(dialectOf(repo), repo).toBe('jest');
    }
    expect(dialectOf('vuejs/core')).toBe('vitest');
    // qunit repositories (three.js) have no dialect; preact's karma has its own (below).
    expect(dialectOf('mrdoob/three.js')).toBeUndefined();
    const denied = (dialect: 'jest' | 'vitest', path: string) =>
      picomatch(DIALECT_RULES[dialect].deny as string[], { dot: true })(path);
    expect(denied('jest', 'jest.config.js')).toBe(true);
    expect(denied('jest', 'packages/x/jest.config.ts')).toBe(true);
    expect(denied('jest', 'src/index.js')).toBe(false);
    expect(denied('vitest', 'vitest.config.ts')).toBe(true);
    expect(denied('vitest', 'vite.config.mts')).toBe(true);
    expect(denied('vitest', 'vitest.workspace.ts')).toBe(true);
    expect(denied('vitest', 'packages/runtime-core/src/index.ts')).toBe(false);
  });

  it("knows the jest rows SWE-bench grades with parse_log_jest_json (parse_log_immutable_js's 2005) by their instance id", () => {
    expect(jestJsonRow('immutable-js__immutable-js-2005')).toBe(true);
    expect(jestJsonRow('immutable-js__immutable-js-2006')).toBe(false);
    expect(jestJsonRow('babel__babel-14532')).toBe(false);
    expect(jestJsonRow('Immutable-js__immutable-js-2005')).toBe(false);
    // A task repository's task.yaml names the parser: that decides, except immutable-js's own,
    // which picks by the pull request.
    expect(jestJsonRow('acme__calc-1', 'parse_log_jest_json')).toBe(true);
    expect(jestJsonRow('immutable-js__immutable-js-2005', 'parse_log_jest')).toBe(false);
    expect(jestJsonRow('immutable-js__immutable-js-2005', 'parse_log_immutable_js')).toBe(true);
    expect(jestJsonRow('immutable-js__immutable-js-2006', 'parse_log_immutable_js')).toBe(false);
  });

  it("maps axios (SPECS_AXIOS: `npx mocha <file> -R tap`, parse_log_tap) to mocha, denying mocha's configuration files", () => {
    expect(dialectOf('axios/axios')).toBe('mocha');
    expect(DIALECT_RULES.mocha.deny).toContain('.mocharc.yml');
    expect(DIALECT_RULES.mocha.deny).toContain('.mocharc.js');
  });

  it("maps preact (`npx karma start karma.conf.js --single-run`, parse_log_karma) to karma, denying karma's and babel's configuration", () => {
    expect(dialectOf('preactjs/preact')).toBe('karma');
    const denied = (path: string) =>
      picomatch(DIALECT_RULES.karma.deny as string[], { dot: true })(path);
    expect(denied('karma.conf.js')).toBe(true);
    expect(denied('babel.config.js')).toBe(true);
    expect(denied('src/diff/index.js')).toBe(false);
    expect(DIALECT_RULES.karma.env).toEqual({ COVERAGE: 'false', BABEL_NO_MODULES: 'true' });
  });

  it("maps MAP_REPO_TO_PARSER_JAVA's repositories (SWE-bench Multilingual) to junit", () => {
    for (const repo of [
      'google/gson',
      'apache/druid',
      'javaparser/javaparser',
      'projectlombok/lombok',
      'apache/lucene',
      'reactivex/rxjava',
    ]) {
      expect(dialectOf(repo), repo).toBe('junit');
    }
    expect(dialectOf('ReactiveX/RxJava')).toBe('junit');
    expect(DIALECT_RULES.junit.deny).toContain('**/junit-platform.properties');
  });

  it('reads a repository in any case, and knows no other (nor an inherited key)', () => {
    expect(dialectOf('SymPy/SymPy')).toBe('sympy');
    expect(dialectOf('Django/django')).toBe('django');
    expect(dialectOf('acme/calc')).toBeUndefined();
    expect(dialectOf('sympy')).toBeUndefined();
    expect(dialectOf('constructor')).toBeUndefined();
    expect(dialectOf('__proto__')).toBeUndefined();
  });

  it("maps MAP_REPO_TO_PARSER_C's fmt and jq (SWE-bench Multilingual) to ctest, and none of its other repositories", () => {
    expect(dialectOf('fmtlib/fmt')).toBe('ctest');
    expect(dialectOf('jqlang/jq')).toBe('ctest');
    for (const repo of [
      'redis/redis',
      'valkey-io/valkey',
      'micropython/micropython',
      'nlohmann/json',
    ]) {
      expect(dialectOf(repo), repo).toBeUndefined();
    }
    expect(DIALECT_RULES.ctest.deny).toEqual([
      '**/gtest/**',
      '**/googletest/**',
      '**/googlemock/**',
    ]);
  });

  it("names a built-in runner for every dialect, and each dialect's test machinery", () => {
    for (const dialect of Object.values(SWEBENCH_DIALECTS)) {
      expect(isBuiltinRunner(dialect), dialect).toBe(true);
    }
    expect(DIALECT_RULES.sympy).toEqual({
      deny: [
        'bin/test',
        'sympy/testing/runtests.py',
        'sympy/utilities/runtests.py',
        'sympy/testing/pytest.py',
        'sympy/utilities/pytest.py',
      ],
      env: { PYTHONWARNINGS: 'ignore::UserWarning,ignore::SyntaxWarning' },
    });
    expect(DIALECT_RULES.django).toEqual({
      deny: ['tests/runtests.py', 'tests/test_sqlite.py'],
      env: {},
    });
    expect(DIALECT_RULES.pytest).toEqual({ deny: ['**/conftest.py'], env: {} });
  });
});

describe("the runner of a row's test patch, by its language", () => {
  const none = () =>
    Promise.reject(new Error('package.json read for a language that does not need it'));
  it.each([
    [['src/a.py', 'tests/test_a.py'], 'Python', 'src/a.py, tests/test_a.py', 'pytest'],
    [['pkg/a_test.py'], 'Python', 'pkg/a_test.py', 'pytest'],
    // Any .py file is Python, whatever its name: python-slugify's tests are test.py.
    [['test.py', 'README.md'], 'Python', 'test.py', 'pytest'],
    [['tests/tests.py', 'docs/x.md'], 'Python', 'tests/tests.py', 'pytest'],
    [['server/http_test.go'], 'Go', 'server/http_test.go', 'go'],
    [['tests/parse.rs'], 'Rust', 'tests/parse.rs', 'cargo'],
    [['src/test/java/AppTest.java'], 'Java', 'src/test/java/AppTest.java', 'junit'],
    [['tests/check.c', 'tests/more.cpp'], 'C or C++', 'tests/check.c, tests/more.cpp', 'ctest'],
    [['a_test.go', 'test_a.py'], 'Python', 'test_a.py', 'pytest'],
  ])('%j: %s (%s): %s', async (paths, language, named, dialect) => {
    expect(await dialectByFiles(paths, none)).toEqual({
      dialect,
      why: `its test patch is ${language} (${named})`,
    });
  });

  it("asks a JavaScript or TypeScript row's package.json, and says why when it cannot tell", async () => {
    const paths = ['test/a.spec.ts', 'test/b.test.js', 'lib/c.mjs', 'd.tsx'];
    const what =
      'its test patch is JavaScript or TypeScript (test/a.spec.ts, test/b.test.js, lib/c.mjs, …)';
    const pkg = (manifest: unknown) => () => Promise.resolve(JSON.stringify(manifest));
    expect(await dialectByFiles(paths, pkg({ devDependencies: { vitest: '1' } }))).toEqual({
      dialect: 'vitest',
      why: `${what} and its package.json depends on vitest`,
    });
    const needs =
      'the jest, vitest, mocha or karma runner (--runner jest, --runner vitest, --runner mocha, --runner karma)';
    for (const [read, why] of [
      [() => Promise.resolve(undefined), 'the base commit has no package.json to say which'],
      [() => Promise.resolve('{ nope'), 'its package.json is not JSON'],
      [pkg({ dependencies: { jest: '1', vitest: '1' } }), 'its package.json names vitest and jest'],
      [pkg({ scripts: { test: 'node t.js' } }), 'its package.json names none of them'],
    ] as const) {
      expect(await dialectByFiles(paths, read)).toEqual({
        reason: `${what}: it needs ${needs}; ${why}`,
      });
    }
  });

  it('decides nothing when no file is of a language it knows', async () => {
    for (const paths of [['docs/x.md', 'data/t.csv'], []]) {
      expect(await dialectByFiles(paths, none)).toEqual({
        reason: 'its test patch names no file of a language this import knows',
      });
    }
  });
});

describe("the runner of a row's test IDs, by their shape", () => {
  it("takes pytest's path::name, django's name (module.Class) and a bare name as sympy's", () => {
    expect(
      dialectByIds([
        'sympy/core/tests/test_sympify.py::test_evaluate_false',
        'test.py::TestSlugify::test_accented_text[a b]',
      ]),
    ).toEqual({ dialect: 'pytest', why: "its test IDs are pytest's node IDs (path::name)" });
    expect(
      dialectByIds([
        'test_zero (calc.tests.CalcTests)',
        'test_div (calc.tests.CalcTests.test_div)',
      ]),
    ).toEqual({ dialect: 'django', why: "its test IDs are django's (name (module.Class))" });
    expect(dialectByIds(['test_evaluate_false', 'test_issue_1'])).toEqual({
      dialect: 'sympy',
      why: "its test IDs are bare names, sympy's",
    });
  });

  it('decides nothing from IDs of mixed shapes, of no known shape, or with any of no known shape', () => {
    expect(dialectByIds(['a/test_x.py::test_a', 'test_b', 'test_c'])).toEqual({
      why: "its test IDs decide nothing: they mix 1 of pytest's node IDs (path::name) and 2 of bare names, sympy's",
    });
    // One bare word among sentences is no evidence of sympy; a django docstring line, as some
    // of SWE-bench's django rows list, leaves the row to the table.
    expect(dialectByIds(['accented text', 'phonetic'])).toEqual({
      why: "its test IDs decide nothing: they mix 1 of bare names, sympy's and 1 of no known shape",
    });
    expect(
      dialectByIds(['test_zero (calc.tests.CalcTests)', 'Regression test for #1234.']),
    ).toEqual({
      why: "its test IDs decide nothing: they mix 1 of django's (name (module.Class)) and 1 of no known shape",
    });
    // A Rust test's module::name is not a pytest node ID.
    expect(dialectByIds(['parser::tests::parses', 'renders a page'])).toEqual({
      why: "its test IDs decide nothing: none is pytest's path::name, django's name (module.Class) or a bare name",
    });
  });
});

describe('the runner of a row: its IDs, then the table, then its test patch', () => {
  const none = () =>
    Promise.reject(new Error('package.json read for a language that does not need it'));
  it("takes a row's pytest node IDs over the table's sympy, and says so", async () => {
    expect(
      await chooseDialect(
        {
          repo: 'sympy/sympy',
          ids: ['sympy/core/tests/test_sympify.py::test_evaluate_false'],
          paths: ['sympy/core/tests/test_sympify.py'],
        },
        none,
      ),
    ).toEqual({
      dialect: 'pytest',
      why: "its test IDs are pytest's node IDs (path::name), over the dialect table's sympy for sympy/sympy",
    });
  });

  it('asks the IDs only of a row whose test patch is Python: a Go test is not sympy', async () => {
    expect(
      await chooseDialect(
        { repo: 'gin-gonic/gin', ids: ['TestContextRender'], paths: ['context_test.go'] },
        none,
      ),
    ).toEqual({ dialect: 'go', why: "the dialect table's runner for gin-gonic/gin" });
    expect(
      await chooseDialect({ repo: 'acme/x', ids: ['TestA'], paths: ['a_test.go'] }, none),
    ).toEqual({
      dialect: 'go',
      why: 'acme/x is not in the dialect table; its test patch is Go (a_test.go)',
    });
  });

  it('falls back to the table, then to the test patch, saying why the IDs did not decide', async () => {
    expect(
      await chooseDialect(
        { repo: 'sympy/sympy', ids: ['a/test_x.py::test_a', 'test_b'], paths: ['a/test_x.py'] },
        none,
      ),
    ).toEqual({
      dialect: 'sympy',
      why: "its test IDs decide nothing: they mix 1 of pytest's node IDs (path::name) and 1 of bare names, sympy's; the dialect table's runner for sympy/sympy",
    });
    expect(
      await chooseDialect(
        { repo: 'acme/slugify', ids: ['Slugify: accents'], paths: ['test.py'] },
        none,
      ),
    ).toEqual({
      dialect: 'pytest',
      why: "its test IDs decide nothing: none is pytest's path::name, django's name (module.Class) or a bare name; acme/slugify is not in the dialect table; its test patch is Python (test.py)",
    });
  });

  it('skips a row only when nothing decides, naming what it needs', async () => {
    expect(
      await chooseDialect({ repo: 'acme/x', ids: ['it works'], paths: ['docs/x.md'] }, none),
    ).toEqual({
      reason:
        'no runner: acme/x is not in the dialect table; its test patch names no file of a language this import knows; it needs a runner of your own (--runner FILE)',
    });
  });
});

describe("a package.json's JavaScript runner", () => {
  const of = (manifest: unknown) => jsRunnerOf(JSON.stringify(manifest));
  it('takes the one its test script runs, before its dependencies', () => {
    expect(
      of({ scripts: { test: 'jest --ci' }, devDependencies: { mocha: '1', jest: '1' } }),
    ).toEqual({ dialect: 'jest', why: "its package.json's test script runs jest" });
    expect(of({ scripts: { test: 'npm run lint && vitest run' } }).dialect).toBe('vitest');
    expect(of({ scripts: { test: 'cross-env COVERAGE=false karma start' } }).dialect).toBe('karma');
    expect(
      of({ scripts: { test: 'mocha test/**/*.js' }, devDependencies: { jest: '1' } }).dialect,
    ).toBe('mocha');
    // A name inside another word, a path or a scoped package is not the runner.
    expect(
      of({
        scripts: { test: 'node ./jest-free/run.js @acme/mocha' },
        devDependencies: { vitest: '1' },
      }),
    ).toEqual({ dialect: 'vitest', why: 'its package.json depends on vitest' });
  });

  it('takes karma over mocha, which karma runs in the browser', () => {
    expect(of({ devDependencies: { karma: '6', mocha: '10', 'karma-mocha': '2' } }).dialect).toBe(
      'karma',
    );
    expect(of({ scripts: { test: 'karma start --single-run && mocha node' } }).dialect).toBe(
      'karma',
    );
  });

  it('decides nothing from two others, none, or fields of the wrong shape', () => {
    expect(of({ devDependencies: { jest: '1', mocha: '1' } })).toEqual({
      why: 'its package.json names jest and mocha',
    });
    expect(of({})).toEqual({ why: 'its package.json names none of them' });
    expect(of({ dependencies: ['jest'] })).toEqual({
      why: "its package.json's scripts or dependencies are not objects",
    });
    expect(of([])).toEqual({ why: "its package.json's scripts or dependencies are not objects" });
  });
});

// SWE-bench's test commands as an eval.sh runs them between its output markers (the test_cmd of
// swebench/harness/constants before 5.0 for the Python repositories, and Multilingual's).
const COMMANDS: Array<[string, string]> = [
  ['astropy/astropy', 'pytest -rA astropy/io/fits/tests/test_checksum.py'],
  ['pallets/flask', 'pytest --no-header -rA --tb=no -p no:cacheprovider tests/test_blueprints.py'],
  ['sphinx-doc/sphinx', 'tox --current-env -epy39 -v -- tests/test_ext_autodoc.py'],
  ['pytest-dev/pytest', 'python -m pytest -rA testing/test_mark.py'],
  [
    'django/django',
    './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 admin_views.tests',
  ],
  [
    'sympy/sympy',
    "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose sympy/core/tests/test_basic.py",
  ],
  ['tokio-rs/tokio', 'cargo test --test sync_mpsc -- --nocapture'],
  ['gin-gonic/gin', 'go test -v ./... -run "^TestContextRenderJSON$"'],
  ['babel/babel', 'yarn jest packages/babel-parser/test --verbose'],
  ['axios/axios', 'npx mocha test/unit/adapters/http.js -R tap'],
  [
    'preactjs/preact',
    'COVERAGE=false BABEL_NO_MODULES=true npx karma start karma.conf.js --single-run --grep=test/browser/render.test.js',
  ],
  ['google/gson', 'mvnd test -B -T 1C -pl gson -Dtest=JsonWriterTest'],
  ['apache/lucene', './gradlew test --tests org.apache.lucene.search.TestBooleanQuery'],
  ['fmtlib/fmt', 'ctest -V -R format-test'],
  ['jqlang/jq', 'make check'],
];

describe("an eval.sh's test command", () => {
  it.each(COMMANDS)('of %s names the runner the dialect table picks for it', (repo, command) => {
    const found = dialectByCommand(command);
    expect(found.dialect).toBe(dialectOf(repo));
  });

  it('decides nothing when it names no program of a runner, or two', () => {
    expect(dialectByCommand('pnpm run test packages/runtime-core --no-watch')).toEqual({
      why: "its eval.sh's test command names no runner's program",
    });
    expect(dialectByCommand('pytest tests/\ncargo test')).toEqual({
      why: "its eval.sh's test command names pytest and cargo test",
    });
  });

  it('decides after the test IDs and before the dialect table, and says so', async () => {
    const none = () => Promise.resolve(undefined);
    // IDs of no known shape leave it to the command, which wins over the table.
    const byCommand = await chooseDialect(
      {
        repo: 'sympy/sympy',
        ids: ['a sentence, not an id'],
        paths: ['sympy/core/tests/test_basic.py'],
        command: 'pytest -rA sympy/core/tests/test_basic.py',
      },
      none,
    );
    expect(byCommand).toEqual({
      dialect: 'pytest',
      why: "its test IDs decide nothing: none is pytest's path::name, django's name (module.Class) or a bare name; its eval.sh runs pytest, over the dialect table's sympy for sympy/sympy",
    });
    // The row's own IDs first, as for rows.
    const byIds = await chooseDialect(
      {
        repo: 'acme/calc',
        ids: ['tests/test_calc.py::test_zero'],
        paths: ['tests/test_calc.py'],
        command: 'cargo test',
      },
      none,
    );
    expect(byIds).toMatchObject({ dialect: 'pytest' });
    // A command that names nothing leaves it to the table, saying why.
    const byTable = await chooseDialect(
      { repo: 'vuejs/core', ids: ['t'], paths: ['a.spec.ts'], command: 'pnpm run test' },
      none,
    );
    expect(byTable).toEqual({
      dialect: 'vitest',
      why: "its eval.sh's test command names no runner's program; the dialect table's runner for vuejs/core",
    });
  });
});
