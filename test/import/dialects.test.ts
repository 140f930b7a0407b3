// The dialect table of `proctor import swebench`: SWE-bench's repositories by the runner that
// speaks their test dialect, and the reason given for a repository that has none.
import { describe, expect, it } from 'vitest';
import picomatch from 'picomatch';
import {
  DIALECT_RULES,
  dialectOf,
  noDialectReason,
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

describe('the reason for a repository without a dialect', () => {
  const head = 'repository acme/x has no built-in test dialect';
  it.each([
    [['src/a.py', 'tests/test_a.py'], 'tests/test_a.py', 'the pytest runner (--runner pytest)'],
    [['pkg/a_test.py'], 'pkg/a_test.py', 'the pytest runner (--runner pytest)'],
    [['server/http_test.go'], 'server/http_test.go', 'the go runner (--runner go)'],
    [['tests/parse.rs'], 'tests/parse.rs', 'the cargo runner (--runner cargo)'],
    [
      ['test/a.spec.ts', 'test/b.test.js', 'lib/c.mjs', 'd.tsx'],
      'test/a.spec.ts, test/b.test.js, lib/c.mjs, …',
      'the jest, vitest, mocha or karma runner (--runner jest, --runner vitest, --runner mocha, --runner karma)',
    ],
    [
      ['src/test/java/AppTest.java'],
      'src/test/java/AppTest.java',
      'the junit runner (--runner junit)',
    ],
    [
      ['tests/check.c', 'tests/more.cpp'],
      'tests/check.c, tests/more.cpp',
      'the ctest runner (--runner ctest)',
    ],
  ])('%j needs %s… %s', (paths, named, needs) => {
    expect(noDialectReason('acme/x', paths)).toBe(
      `${head}; by its test patch (${named}) it needs ${needs}`,
    );
  });

  it('prefers a Python test file to the others, and asks for a runner of your own when no file says', () => {
    expect(noDialectReason('acme/x', ['a_test.go', 'test_a.py'])).toContain(
      'by its test patch (test_a.py) it needs the pytest runner (--runner pytest)',
    );
    for (const paths of [['tests/tests.py', 'docs/x.md'], []]) {
      expect(noDialectReason('acme/x', paths)).toBe(
        `${head}; its test patch names no test file this import knows; it needs a runner of your own (--runner FILE)`,
      );
    }
  });
});
