// The dialect table of `proctor import swebench`: SWE-bench's repositories by the runner that
// speaks their test dialect, and the reason given for a repository that has none.
import { describe, expect, it } from 'vitest';
import picomatch from 'picomatch';
import {
  DIALECT_RULES,
  dialectOf,
  dialectByFiles,
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

describe('the runner of a repository without a dialect', () => {
  const head = 'repository acme/x has no built-in test dialect';
  const none = () =>
    Promise.reject(new Error('package.json read for a language that does not need it'));
  it.each([
    [['src/a.py', 'tests/test_a.py'], 'tests/test_a.py', 'pytest'],
    [['pkg/a_test.py'], 'pkg/a_test.py', 'pytest'],
    [['server/http_test.go'], 'server/http_test.go', 'go'],
    [['tests/parse.rs'], 'tests/parse.rs', 'cargo'],
    [['src/test/java/AppTest.java'], 'src/test/java/AppTest.java', 'junit'],
    [['tests/check.c', 'tests/more.cpp'], 'tests/check.c, tests/more.cpp', 'ctest'],
    [['a_test.go', 'test_a.py'], 'test_a.py', 'pytest'],
  ])('%j: chosen by the files (%s) alone: %s', async (paths, named, dialect) => {
    expect(await dialectByFiles('acme/x', paths, none)).toEqual({
      dialect,
      note: `runner ${dialect}: acme/x is not in the dialect table, so the runner is chosen by its test patch (${named}); --runner overrides`,
    });
  });

  it("asks a JavaScript or TypeScript row's package.json, and says why when it cannot tell", async () => {
    const paths = ['test/a.spec.ts', 'test/b.test.js', 'lib/c.mjs', 'd.tsx'];
    const named = 'test/a.spec.ts, test/b.test.js, lib/c.mjs, …';
    const pkg = (manifest: unknown) => () => Promise.resolve(JSON.stringify(manifest));
    expect(
      await dialectByFiles('acme/x', paths, pkg({ devDependencies: { vitest: '1' } })),
    ).toEqual({
      dialect: 'vitest',
      note: `runner vitest: acme/x is not in the dialect table, so the runner is chosen by its test patch (${named}) and its package.json depends on vitest; --runner overrides`,
    });
    const needs =
      'the jest, vitest, mocha or karma runner (--runner jest, --runner vitest, --runner mocha, --runner karma)';
    for (const [read, why] of [
      [() => Promise.resolve(undefined), 'the base commit has no package.json to say which'],
      [() => Promise.resolve('{ nope'), 'its package.json is not JSON'],
      [pkg({ dependencies: { jest: '1', vitest: '1' } }), 'its package.json names vitest and jest'],
      [pkg({ scripts: { test: 'node t.js' } }), 'its package.json names none of them'],
    ] as const) {
      expect(await dialectByFiles('acme/x', paths, read)).toEqual({
        reason: `${head}; by its test patch (${named}) it needs ${needs}; ${why}`,
      });
    }
  });

  it('asks for a runner of your own when no file says', async () => {
    for (const paths of [['tests/tests.py', 'docs/x.md'], []]) {
      expect(await dialectByFiles('acme/x', paths, none)).toEqual({
        reason: `${head}; its test patch names no test file this import knows; it needs a runner of your own (--runner FILE)`,
      });
    }
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
