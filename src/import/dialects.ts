// Which built-in runner grades a SWE-bench row, by its repository, as SWE-bench's harness
// picks a log parser (MAP_REPO_TO_PARSER_PY in swebench/harness/log_parsers/python.py) and a
// test command (test_cmd per repository and version, swebench/harness/constants/python.py
// before 5.0's restructure). sympy runs bin/test, django tests/runtests.py, every other
// repository of SWE-bench's Python set pytest (sphinx through tox, which runs pytest). The
// Rust repositories of SWE-bench Multilingual (MAP_REPO_TO_PARSER_RUST, all parse_log_cargo)
// run `cargo test`; its Go repositories (MAP_REPO_TO_PARSER_GO, parse_log_gotest; test_cmd
// `go test -v <packages> -run …` per version in constants/go.py) the go runner; its jest
// repositories (MAP_REPO_TO_PARSER_JS: parse_log_jest, `yarn jest <files> --verbose`) the jest
// runner, vuejs/core (parse_log_vitest, `vitest --reporter=verbose`) the vitest runner. Of the
// other JavaScript ones, axios runs `npx mocha <file> -R tap` (SPECS_AXIOS, parse_log_tap): the mocha
// runner; preact `karma start --single-run` (parse_log_karma): the karma runner. Its Java repositories (MAP_REPO_TO_PARSER_JAVA: parse_log_maven,
// parse_log_gradle_custom, parse_log_ant; test_cmd `mvnd test -Dtest=…`, `./gradlew test
// --tests …`, `ant test.instance` per version in constants/java.py): the junit runner.
// Of its C and C++ repositories (MAP_REPO_TO_PARSER_C), fmt (parse_log_googletest on
// `ctest -V`) and jq (parse_log_jq on `make check`) the ctest runner; redis and valkey (Tcl's
// `./runtest`), micropython (run-tests.py) and nlohmann/json (doctest's XML) speak dialects no
// runner has yet.
//
// A dialect also names the files that make up its test machinery: the import denies them, so
// that a candidate cannot change how its tests are run or reported (a candidate's
// conftest.py is a pytest plugin; bin/test and runtests.py decide what sympy and django run
// and report). Its [tests] env is what SWE-bench's test_cmd sets on the command line.

import { z } from 'zod';
import type { BuiltinRunner } from '../runners/index.js';

/**
 * The SWE-bench dialects: each is a built-in runner of the same name (src/runners/); the node
 * runner speaks no SWE-bench dialect.
 */
export type Dialect = Exclude<BuiltinRunner, 'node'>;

export interface DialectRules {
  /** [grading] deny globs, added to the test patch's own files. */
  deny: readonly string[];
  /** [tests] env. */
  env: Readonly<Record<string, string>>;
}

export const DIALECT_RULES: Readonly<Record<Dialect, DialectRules>> = {
  pytest: { deny: ['**/conftest.py'], env: {} },
  sympy: {
    // bin/test imports sympy.testing.runtests (sympy.utilities.runtests before 1.6); the tests
    // take XFAIL, SKIP, slow and raises from sympy.testing.pytest (sympy.utilities.pytest
    // before), and XFAIL counts as a pass under SWE-bench's rules. No gold patch of SWE-bench
    // Lite's sympy rows touches any of them.
    deny: [
      'bin/test',
      'sympy/testing/runtests.py',
      'sympy/utilities/runtests.py',
      'sympy/testing/pytest.py',
      'sympy/utilities/pytest.py',
    ],
    // TEST_SYMPY = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C
    // --verbose": a warning printed by the code under test would otherwise break the
    // doctests and the parser's lines.
    env: { PYTHONWARNINGS: 'ignore::UserWarning,ignore::SyntaxWarning' },
  },
  // TEST_DJANGO = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1".
  django: { deny: ['tests/runtests.py', 'tests/test_sqlite.py'], env: {} },
  // A .cargo/config can choose the compiler wrapper, the flags and the program that runs the
  // test binaries (target.<triple>.runner); a rust-toolchain file the toolchain. SWE-bench's
  // test_cmd sets RUSTFLAGS per task and version (mostly -Awarnings), not per repository: an
  // import leaves it to the row's [tests] env, which must match the image's install build.
  cargo: {
    deny: ['**/.cargo/config', '**/.cargo/config.toml', 'rust-toolchain', 'rust-toolchain.toml'],
    env: {},
  },
  // `go test` itself is the machinery, outside the tree: nothing of the repository's decides
  // how its tests run or are reported (a candidate's TestMain or init() runs inside the test
  // binary, as the rest of its code does; the runner's sentinels answer for that).
  go: { deny: [], env: {} },
  // jest's and vitest's configuration runs in the framework's own process, beside the
  // runners' reporter, and names the runner, reporters, setup files and transforms: the
  // runners use HEAD's when the work tree's differs, and the import denies the files too
  // (a `jest` key in package.json is left to the runner: a fix may need to touch the file).
  jest: { deny: ['**/jest.config.{js,ts,mjs,cjs,json}'], env: {} },
  vitest: {
    deny: [
      '**/vitest.config.{js,ts,mjs,cjs,mts,cts}',
      '**/vite.config.{js,ts,mjs,cjs,mts,cts}',
      '**/vitest.{workspace,unit.config,e2e.config}.{js,ts,mjs,cjs,mts,cts,json}',
    ],
    env: {},
  },
  // Mocha reads its configuration from the checkout (`require` names setup files that run
  // before every test file): SWE-bench's `npx mocha … -R tap` takes the base commit's.
  mocha: {
    deny: [
      '.mocharc',
      '.mocharc.js',
      '.mocharc.cjs',
      '.mocharc.json',
      '.mocharc.jsonc',
      '.mocharc.yml',
      '.mocharc.yaml',
    ],
    env: {},
  },
  // The junit runner runs the tests in a JVM of its own (the build tool only compiles), but
  // JUnit reads its configuration from the classpath: junit-platform.properties can deactivate
  // every @Disabled condition or turn on extension autodetection, through META-INF/services.
  // Maven's .mvn/ (jvm.config, extensions.xml) and the wrappers decide what the build runs.
  junit: {
    deny: [
      '**/junit-platform.properties',
      '**/META-INF/services/org.junit.**',
      '**/.mvn/**',
      '**/mvnw',
      '**/gradlew',
      '**/gradle/wrapper/**',
    ],
    env: {},
  },
  // GoogleTest decides a test's exit and its JSON report: a copy vendored in the tree (fmt's
  // test/gtest) is test machinery, as Debian's libgtest-dev is.
  ctest: { deny: ['**/gtest/**', '**/googletest/**', '**/googlemock/**'], env: {} },
  // The karma server runs the project's karma configuration, and the bundler's configuration
  // it loads (preact's babel.config.js), as its own code. COVERAGE=false BABEL_NO_MODULES=true
  // is what SWE-bench's preact command sets.
  karma: {
    deny: ['**/karma.conf.*', '**/karma.config.*', '**/babel.config.*', '**/.babelrc*'],
    env: { COVERAGE: 'false', BABEL_NO_MODULES: 'true' },
  },
};

/**
 * MAP_REPO_TO_PARSER_PY's, _RUST's, _GO's, _JS's, _JAVA's and (fmt, jq) _C's repositories,
 * by the runner that speaks their dialect (keys in lower case).
 */
export const SWEBENCH_DIALECTS: Readonly<Record<string, Dialect>> = {
  'astropy/astropy': 'pytest',
  'django/django': 'django',
  'marshmallow-code/marshmallow': 'pytest',
  'matplotlib/matplotlib': 'pytest',
  'mwaskom/seaborn': 'pytest',
  'pallets/flask': 'pytest',
  'psf/requests': 'pytest',
  'pvlib/pvlib-python': 'pytest',
  'pydata/xarray': 'pytest',
  'pydicom/pydicom': 'pytest',
  'pylint-dev/astroid': 'pytest',
  'pylint-dev/pylint': 'pytest',
  'pytest-dev/pytest': 'pytest',
  'pyvista/pyvista': 'pytest',
  'scikit-learn/scikit-learn': 'pytest',
  'sphinx-doc/sphinx': 'pytest',
  'sqlfluff/sqlfluff': 'pytest',
  'sympy/sympy': 'sympy',
  'astral-sh/ruff': 'cargo',
  'burntsushi/ripgrep': 'cargo',
  'nushell/nushell': 'cargo',
  'sharkdp/bat': 'cargo',
  'tokio-rs/axum': 'cargo',
  'tokio-rs/tokio': 'cargo',
  'uutils/coreutils': 'cargo',
  // MAP_REPO_TO_PARSER_GO (SWE-bench Multilingual).
  'caddyserver/caddy': 'go',
  'gin-gonic/gin': 'go',
  'gohugoio/hugo': 'go',
  'hashicorp/terraform': 'go',
  'prometheus/prometheus': 'go',
  // MAP_REPO_TO_PARSER_JS's jest and vitest repositories of SWE-bench Multilingual
  // (parse_log_jest; parse_log_vitest for vuejs/core; immutable-js's 2005 row reads jest's
  // --json through jq instead, whose ids carry the describe blocks: the jest runner's
  // RUNNER_JEST_IDS=json, set by jestJsonRow).
  'babel/babel': 'jest',
  'facebook/docusaurus': 'jest',
  'immutable-js/immutable-js': 'jest',
  'vuejs/core': 'vitest',
  // SPECS_AXIOS (`npx mocha <file> -R tap -g …`, read by parse_log_tap).
  'axios/axios': 'mocha',
  // preact: `npx karma start karma.conf.js --single-run --grep=<file>`, read by parse_log_karma.
  'preactjs/preact': 'karma',
  // MAP_REPO_TO_PARSER_JAVA (SWE-bench Multilingual).
  'apache/druid': 'junit',
  'apache/lucene': 'junit',
  'google/gson': 'junit',
  'javaparser/javaparser': 'junit',
  'projectlombok/lombok': 'junit',
  'reactivex/rxjava': 'junit',
  // MAP_REPO_TO_PARSER_C (SWE-bench Multilingual): the two whose dialect the ctest runner speaks.
  'fmtlib/fmt': 'ctest',
  'jqlang/jq': 'ctest',
};

/**
 * The rows of a jest repository that SWE-bench grades with parse_log_jest_json instead of
 * parse_log_jest: its test_cmd runs `jest --silent --json` through jq (JEST_JSON_JQ_TRANSFORM),
 * and a test's id is its describe blocks and its title joined by " > ". immutable-js's
 * parse_log_immutable_js picks the parser by the row's pull request (2005 the JSON one, 2006
 * the verbose one; any other is an error there).
 */
const SWEBENCH_JEST_JSON_ROWS: ReadonlySet<string> = new Set(['immutable-js__immutable-js-2005']);

/**
 * Whether SWE-bench reads a row's jest run with parse_log_jest_json (ids with describe blocks):
 * by the log parser a task repository's task.yaml names (`logParser`), else, when it names
 * none or immutable-js's own (which picks one by the pull request), by the row's instance id.
 */
export function jestJsonRow(instanceId: string, logParser?: string): boolean {
  if (logParser === 'parse_log_jest_json') return true;
  if (logParser !== undefined && logParser !== 'parse_log_immutable_js') return false;
  return SWEBENCH_JEST_JSON_ROWS.has(instanceId);
}

/** The dialect of a row's `repo` (owner/name, as GitHub spells it or in any case). */
export function dialectOf(repo: string): Dialect | undefined {
  const lower = repo.toLowerCase();
  return Object.hasOwn(SWEBENCH_DIALECTS, lower) ? SWEBENCH_DIALECTS[lower] : undefined;
}

export const isDialect = (name: string): name is Dialect => Object.hasOwn(DIALECT_RULES, name);

/** JavaScript's runners, in the order a package.json that names several is read. */
const JS_RUNNERS = ['karma', 'vitest', 'jest', 'mocha'] as const satisfies readonly Dialect[];
const JS_NEEDS =
  'the jest, vitest, mocha or karma runner (--runner jest, --runner vitest, --runner mocha, --runner karma)';

/**
 * The language of a test patch's files, for a row the IDs and the table leave undecided: the
 * first rule that matches any of `paths` (Python before Go, and so on). Any `.py` file is
 * Python, whatever its name (python-slugify's tests are `test.py` at the top). A rule with a
 * dialect decides alone; JavaScript's asks the repository's package.json.
 */
const NEEDS: ReadonlyArray<{ match: RegExp; language: string; needs: string; dialect?: Dialect }> =
  [
    {
      match: /\.py$/,
      language: 'Python',
      needs: 'the pytest runner (--runner pytest)',
      dialect: 'pytest',
    },
    { match: /\.go$/, language: 'Go', needs: 'the go runner (--runner go)', dialect: 'go' },
    {
      match: /\.rs$/,
      language: 'Rust',
      needs: 'the cargo runner (--runner cargo)',
      dialect: 'cargo',
    },
    {
      match: /\.(?:[cm]?js|jsx|[cm]?ts|tsx)$/,
      language: 'JavaScript or TypeScript',
      needs: JS_NEEDS,
    },
    {
      match: /\.java$/,
      language: 'Java',
      needs: 'the junit runner (--runner junit)',
      dialect: 'junit',
    },
    {
      match: /\.(?:c|cc|cpp|cxx|h|hh|hpp)$/,
      language: 'C or C++',
      needs: 'the ctest runner (--runner ctest)',
      dialect: 'ctest',
    },
  ];

/** At most this many of the deciding files are named in the reason. */
const NAMED_FILES = 3;

const Manifest = z.object({
  scripts: z.record(z.string(), z.unknown()).optional(),
  dependencies: z.record(z.string(), z.unknown()).optional(),
  devDependencies: z.record(z.string(), z.unknown()).optional(),
});

/**
 * The JavaScript runner a package.json (its text at the base commit, or undefined when there
 * is none) asks for: the one its `test` script runs, else the one among its dependencies;
 * karma over mocha when both are named (karma runs mocha's tests in the browser). Two
 * others, or none, decide nothing, and `why` says so.
 */
export function jsRunnerOf(packageJson: string | undefined): { dialect?: Dialect; why: string } {
  if (packageJson === undefined) return { why: 'the base commit has no package.json to say which' };
  let parsed: z.infer<typeof Manifest>;
  try {
    const result = Manifest.safeParse(JSON.parse(packageJson));
    if (!result.success)
      return { why: "its package.json's scripts or dependencies are not objects" };
    parsed = result.data;
  } catch {
    return { why: 'its package.json is not JSON' };
  }
  const narrow = (names: Dialect[]) =>
    names.includes('karma') ? names.filter((n) => n !== 'mocha') : names;
  const script = parsed.scripts?.['test'];
  if (typeof script === 'string') {
    const ran = narrow(
      JS_RUNNERS.filter((n) => new RegExp(`(?:^|[^\\w@/.-])${n}(?:$|[^\\w.-])`).test(script)),
    );
    if (ran.length === 1)
      return { dialect: ran[0]!, why: `its package.json's test script runs ${ran[0]!}` };
  }
  const deps = new Set([
    ...Object.keys(parsed.dependencies ?? {}),
    ...Object.keys(parsed.devDependencies ?? {}),
  ]);
  const named = narrow(JS_RUNNERS.filter((n) => deps.has(n)));
  if (named.length === 1)
    return { dialect: named[0]!, why: `its package.json depends on ${named[0]!}` };
  return {
    why:
      named.length === 0
        ? 'its package.json names none of them'
        : `its package.json names ${named.join(' and ')}`,
  };
}

/**
 * The runner for a row whose test patch touches `paths`, by the language of its files (Python
 * before Go, and so on; for JavaScript and TypeScript, by `packageJson`, the repository's
 * package.json at the base commit, read only when asked for). `why` says how it was chosen;
 * `reason` why none was.
 */
export async function dialectByFiles(
  paths: readonly string[],
  packageJson: () => Promise<string | undefined>,
): Promise<{ dialect: Dialect; why: string } | { reason: string }> {
  for (const { match, language, needs, dialect } of NEEDS) {
    const hits = paths.filter((p) => match.test(p));
    if (hits.length === 0) continue;
    const named = hits.slice(0, NAMED_FILES).join(', ') + (hits.length > NAMED_FILES ? ', …' : '');
    const js = dialect === undefined ? jsRunnerOf(await packageJson()) : undefined;
    const chosen = dialect ?? js?.dialect;
    const what = `its test patch is ${language} (${named})`;
    if (chosen === undefined) return { reason: `${what}: it needs ${needs}; ${js?.why ?? ''}` };
    return { dialect: chosen, why: `${what}${js !== undefined ? ` and ${js.why}` : ''}` };
  }
  return { reason: 'its test patch names no file of a language this import knows' };
}

/**
 * The shapes of test IDs that name a Python dialect, as SWE-bench and the datasets after it
 * write them: pytest's node ID `path.py::name` (any dataset that runs pytest, sympy's rows
 * included), django's `name (module.Class)` (runtests.py's verbose lines) and sympy's bare
 * test function name (bin/test's). The path must be a `.py` file, so that a Rust test's
 * `module::name` is not taken for pytest's.
 */
const ID_SHAPES: ReadonlyArray<{ dialect: Dialect; match: RegExp; shape: string }> = [
  { dialect: 'pytest', match: /^[^\n]*?\.py::[^\n]+$/, shape: "pytest's node IDs (path::name)" },
  {
    dialect: 'django',
    match: /^[A-Za-z_]\w* \([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\)$/,
    shape: "django's (name (module.Class))",
  },
  { dialect: 'sympy', match: /^[A-Za-z_]\w*$/, shape: "bare names, sympy's" },
];

/**
 * The dialect a row's own test IDs name: the one shape every ID has. An ID of no known shape
 * (a django docstring line, a sentence) or two known shapes decide nothing, and `why` says so:
 * one bare word among sentences is no evidence of sympy.
 */
export function dialectByIds(ids: readonly string[]): { dialect?: Dialect; why: string } {
  const unique = [...new Set(ids)];
  const counts = ID_SHAPES.map((s) => ({
    ...s,
    n: unique.filter((id) => s.match.test(id)).length,
  }));
  const found = counts.filter((c) => c.n > 0);
  const others = unique.length - found.reduce((sum, c) => sum + c.n, 0);
  const [only] = found;
  if (only !== undefined && found.length === 1 && others === 0) {
    return { dialect: only.dialect, why: `its test IDs are ${only.shape}` };
  }
  if (found.length === 0) {
    return {
      why: "its test IDs decide nothing: none is pytest's path::name, django's name (module.Class) or a bare name",
    };
  }
  const parts = [
    ...found.map((c) => `${c.n} of ${c.shape}`),
    ...(others > 0 ? [`${others} of no known shape`] : []),
  ];
  return { why: `its test IDs decide nothing: they mix ${parts.join(' and ')}` };
}

/**
 * The programs a SWE-bench test command runs, by the dialect whose runner speaks for them: the
 * commands of swebench/harness/constants (TEST_PYTEST, TEST_DJANGO, TEST_SYMPY, sphinx's tox,
 * Multilingual's cargo, go, jest, vitest, mocha, karma, Maven, Gradle, ant, ctest and make
 * check), as a task repository's eval.sh runs them between its output markers.
 */
const COMMAND_SHAPES: ReadonlyArray<{ dialect: Dialect; match: RegExp; program: string }> = [
  { dialect: 'django', match: /(?:^|[\s/])runtests\.py\b/, program: "django's runtests.py" },
  { dialect: 'sympy', match: /(?:^|[\s/])bin\/test\b/, program: "sympy's bin/test" },
  {
    dialect: 'pytest',
    match: /(?:^|[\s/;&|(])(?:py\.test|pytest|tox)(?:\s|$)|-m\s+pytest\b/,
    program: 'pytest',
  },
  { dialect: 'cargo', match: /\bcargo\s+(?:\+\S+\s+)?(?:test|nextest)\b/, program: 'cargo test' },
  { dialect: 'go', match: /\bgo\s+test\b/, program: 'go test' },
  { dialect: 'karma', match: /\bkarma\b/, program: 'karma' },
  { dialect: 'vitest', match: /\bvitest\b/, program: 'vitest' },
  { dialect: 'jest', match: /\bjest\b/, program: 'jest' },
  { dialect: 'mocha', match: /\bmocha\b/, program: 'mocha' },
  {
    dialect: 'junit',
    match: /(?:^|[\s/;&|(])(?:mvnw?|mvnd|gradlew?|ant)(?:\s|$)/,
    program: 'Maven, Gradle or ant',
  },
  {
    dialect: 'ctest',
    match: /(?:^|[\s/;&|(])ctest\b|\bmake\b.*\bcheck\b/,
    program: 'ctest or make check',
  },
];

/**
 * The dialect a test command (an eval.sh's lines between its output markers) runs: the one
 * whose program it names (karma over mocha, as in a package.json). None, or two, decide
 * nothing, and `why` says so.
 */
export function dialectByCommand(command: string): { dialect?: Dialect; why: string } {
  const found = COMMAND_SHAPES.filter((s) => s.match.test(command));
  const named = found.some((s) => s.dialect === 'karma')
    ? found.filter((s) => s.dialect !== 'mocha')
    : found;
  const [only] = named;
  if (only !== undefined && named.length === 1) {
    return { dialect: only.dialect, why: `its eval.sh runs ${only.program}` };
  }
  if (named.length === 0) return { why: "its eval.sh's test command names no runner's program" };
  return {
    why: `its eval.sh's test command names ${named.map((s) => s.program).join(' and ')}`,
  };
}

export interface RowForRunner {
  /** owner/name. */
  repo: string;
  /** FAIL_TO_PASS and PASS_TO_PASS. */
  ids: readonly string[];
  /** The files the test patch touches. */
  paths: readonly string[];
  /** A task repository's test command (its eval.sh between the output markers), if any. */
  command?: string;
}

/**
 * The runner of a row, and why: by its own test IDs first (when its test patch is Python: the
 * ID shapes are those of Python's dialects, and a Go test's bare name is not sympy's), then by
 * a task repository's test command, then by the repository's dialect table, then by the
 * language of its test patch. `reason` says why nothing decided: the row then needs --runner.
 */
export async function chooseDialect(
  row: RowForRunner,
  packageJson: () => Promise<string | undefined>,
): Promise<{ dialect: Dialect; why: string } | { reason: string }> {
  const table = dialectOf(row.repo);
  const python = row.paths.some((p) => p.endsWith('.py'));
  const byIds = python ? dialectByIds(row.ids) : undefined;
  if (byIds?.dialect !== undefined) {
    const over =
      table !== undefined && table !== byIds.dialect
        ? `, over the dialect table's ${table} for ${row.repo}`
        : '';
    return { dialect: byIds.dialect, why: `${byIds.why}${over}` };
  }
  let undecided = byIds !== undefined ? `${byIds.why}; ` : '';
  if (row.command !== undefined) {
    const byCommand = dialectByCommand(row.command);
    if (byCommand.dialect !== undefined) {
      const over =
        table !== undefined && table !== byCommand.dialect
          ? `, over the dialect table's ${table} for ${row.repo}`
          : '';
      return { dialect: byCommand.dialect, why: `${undecided}${byCommand.why}${over}` };
    }
    undecided += `${byCommand.why}; `;
  }
  if (table !== undefined) {
    return { dialect: table, why: `${undecided}the dialect table's runner for ${row.repo}` };
  }
  const notInTable = `${row.repo} is not in the dialect table`;
  const byFiles = await dialectByFiles(row.paths, packageJson);
  if ('dialect' in byFiles) {
    return { dialect: byFiles.dialect, why: `${undecided}${notInTable}; ${byFiles.why}` };
  }
  return {
    reason: `no runner: ${undecided}${notInTable}; ${byFiles.reason}${byFiles.reason.includes('it needs') ? '' : '; it needs a runner of your own (--runner FILE)'}`,
  };
}
