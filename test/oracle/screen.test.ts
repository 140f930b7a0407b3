// The screen of candidate diffs: every rule of the table hits what it is for, honest code of
// the same shape does not, and the gold patches of the examples and fixtures give no hits.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MAX_EXCERPT_CHARS,
  MAX_SCREEN_HITS,
  SCREEN_RULES,
  UNREAD_RULE,
  screenDiff,
} from '../../src/oracle/screen.js';
import { addFile } from '../helpers/diffs.js';
import { ROOT } from '../helpers/processes.js';

/**
 * A git diff changing `path`: `hunk` lines as in a diff body (` ` context, `+` added, `-`
 * removed), starting at line `at` of both files.
 */
function changeFile(path: string, hunk: readonly string[], at = 10): string {
  const old = hunk.filter((l) => !l.startsWith('+')).length;
  const neu = hunk.filter((l) => !l.startsWith('-')).length;
  return [
    `diff --git a/${path} b/${path}`,
    'index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644',
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -${at},${old} +${at},${neu} @@`,
    ...hunk,
    '',
  ].join('\n');
}

const screen = (...diffs: string[]) => screenDiff(Buffer.from(diffs.join('')));
const rulesOf = (...diffs: string[]) => [...new Set(screen(...diffs).hits.map((h) => h.rule))];

// At least one forgery per rule: the shapes hostile candidates took, and their kin.
const SAMPLES: Record<string, Array<[path: string, lines: string[]]>> = {
  'pytest-internals': [
    ['pkg/durations.py', ['import _pytest.reports']],
    ['pkg/a.py', ['from _pytest.reports import TestReport']],
    ['pkg/b.py', ['    orig = TestReport.from_item_and_call']],
    ['pkg/c.py', ['def f(call: CallInfo): pass']],
    ['pkg/d.py', ['import pluggy']],
  ],
  'pytest-hook': [
    ['pkg/plugin.py', ['@pytest.hookimpl(wrapper=True)']],
    ['pkg/plugin.py', ['@pytest.hookimpl(hookwrapper=True)']],
    ['pkg/plugin.py', ['def pytest_runtest_makereport(item, call):']],
    ['pkg/plugin.py', ['def pytest_runtest_logreport(report):']],
    ['pkg/plugin.py', ['def pytest_report_teststatus(report, config):']],
  ],
  'pytest-plugins': [
    ['pkg/__init__.py', ['pytest_plugins = ["pkg._plugin"]']],
    ['setup.py', ['    entry_points={"pytest11": ["x = pkg._plugin"]},']],
  ],
  'pytest-options': [
    ['pkg/x.py', ['os.environ["PYTEST_ADDOPTS"] = "-p pkg._plugin"']],
    ['pkg/x.py', ['    path = sys.argv[sys.argv.index("--junitxml") + 1]']],
    ['pytest.ini', ['[pytest]', 'addopts = -p pkg._plugin']],
  ],
  'pytest-config': [
    ['pyproject.toml', ['[tool.pytest.ini_options]', 'testpaths = ["nothing"]']],
    ['setup.cfg', ['[tool:pytest]', 'python_files = none_*.py']],
  ],
  'unittest-result': [
    ['pkg/x.py', ['unittest.result.TestResult.addFailure = lambda *a: None']],
    ['pkg/y.py', ['from unittest.result import TestResult']],
  ],
  'node-test-internals': [
    ['src/x.js', ["import { run } from 'node:test';"]],
    ['src/y.js', ["const { spec } = require('node:test/reporters');"]],
    ['src/z.mjs', ["stream.on('test:fail', () => {});"]],
    ['src/w.js', ["require('node:test').run({ files: [] });"]],
  ],
  'test-detection': [
    ['pkg/x.py', ['if "pytest" in sys.modules:']],
    ['pkg/y.py', ['    if os.environ.get("PYTEST_CURRENT_TEST"):']],
    ['src/y.js', ['if (process.env.NODE_TEST_CONTEXT) return true;']],
  ],
  proctor: [
    ['pkg/x.py', ['sys.modules["proctor_pytest_runner"]._record = fake']],
    ['src/x.js', ["const r = process.argv.find((a) => a.startsWith('--proctor-report'));"]],
    ['pkg/y.py', ['    os.environ.get("PROCTOR_REPORT")']],
  ],
  'report-file': [
    ['pkg/x.py', ['    open("/tmp/out/report.json", "w")']],
    ['src/x.js', ['const REPORT = process.argv[3];']],
  ],
  'argv-report': [
    ['pkg/x.py', ['import sys', 'with open(sys.argv[-1], "w") as f:', '    f.write("{}")']],
    ['src/x.js', ["fs.writeFileSync(process.argv.at(-1), '{}');"]],
  ],
  'hard-exit': [
    ['pkg/x.py', ['    os._exit(0)']],
    ['src/x.js', ['  process.reallyExit(0);']],
    ['src/y.js', ["  process.kill(process.pid, 'SIGKILL');"]],
  ],
  'exit-at-import': [
    ['pkg/x.py', ['sys.exit(0)']],
    ['pkg/y.py', ['raise SystemExit(0)']],
    ['pkg/z.py', ['if True:', '    sys.exit(0)']],
    ['src/x.js', ['process.exit(0);']],
    ['src/y.js', ['process.exitCode = 0;']],
    ['lib.sh', ['exit 0']],
  ],
  'exit-hook': [
    ['pkg/x.py', ['atexit.register(lambda: os._exit(0))']],
    ['src/x.js', ["process.on('exit', () => { process.exitCode = 0; });"]],
    ['lib.sh', ["trap 'exit 0' EXIT"]],
  ],
  'module-table': [
    ['pkg/x.py', ['sys.modules["pytest"] = fake']],
    ['pkg/y.py', ['sys.modules["proctor_pytest_runner"]._record = fake']],
    ['pkg/z.py', ['sys.meta_path.insert(0, Finder())']],
    ['src/x.js', ['delete require.cache[key];']],
    ['src/y.cjs', ['Module._load = function load(request) {};']],
    ['src/z.mjs', ["module.register('./hooks.mjs', import.meta.url);"]],
  ],
  builtins: [
    ['pkg/x.py', ['builtins.open = fake_open']],
    ['pkg/y.py', ['__builtins__["__import__"] = hook']],
  ],
  'object-walk': [
    ['pkg/x.py', ['for o in gc.get_objects():']],
    ['pkg/y.py', ['    frame = sys._getframe(2)']],
    ['pkg/z.py', ['    caller = inspect.currentframe().f_back']],
  ],
  'trace-hooks': [
    ['pkg/x.py', ['sys.settrace(tracer)']],
    ['pkg/y.py', ['sys.addaudithook(hook)']],
  ],
  'process-internals': [
    ['pkg/x.py', ['open("/proc/1/fd/1", "w")']],
    ['pkg/y.py', ['import ctypes']],
    ['src/x.js', ["process.binding('fs')"]],
  ],
  'runtime-options': [
    ['src/x.js', ["process.env.NODE_OPTIONS = '--require ./hook.cjs';"]],
    ['pkg/x.py', ['os.environ["PYTHONSTARTUP"] = "/tmp/x.py"']],
  ],
  'framework-write': [
    ['pkg/x.py', ['pytest.skip = lambda *a, **k: None']],
    ['pkg/y.py', ['setattr(unittest.TestCase, "run", run)']],
    ['src/x.js', ['globalThis.expect = () => ({ toBe() {} });']],
    ['src/y.js', ["Object.defineProperty(assert, 'equal', { value() {} });"]],
  ],
  'computed-name': [
    ['pkg/x.py', ['p = __import__("p" + "ytest")']],
    ['pkg/y.py', ['f = getattr(sys, name)']],
    ['src/x.js', ["const a = require('node:' + 'assert');"]],
  ],
  conftest: [['conftest.py', ['import pytest']]],
  'pytest-config-file': [['pytest.ini', ['[pytest]']]],
  'python-startup': [
    ['sitecustomize.py', ['x = 1']],
    ['pkg/evil.pth', ['import pkg']],
  ],
  'package-metadata': [['pkg-1.0.dist-info/entry_points.txt', ['[pytest11]', 'x = pkg.p']]],
  'node-test-config': [
    ['.mocharc.json', ['{}']],
    ['jest.config.js', ['module.exports = {};']],
    ['karma.conf.js', ['module.exports = () => {};']],
  ],
  'package-json-test': [
    ['package.json', ['{', '  "scripts": {', '    "test": "true"', '  }', '}']],
  ],
};

describe('screenDiff rules', () => {
  it('has a forgery sample for every rule of the table', () => {
    const ids = new Set(SCREEN_RULES.map((r) => r.id));
    expect(new Set(Object.keys(SAMPLES))).toEqual(ids);
    for (const rule of SCREEN_RULES) {
      expect(rule.why.length).toBeGreaterThan(10);
      expect([rule.pattern, rule.path, rule.scan].filter((x) => x !== undefined)).toHaveLength(1);
    }
  });

  for (const [rule, samples] of Object.entries(SAMPLES)) {
    it(`${rule}: each forgery sample is a hit of the rule`, () => {
      for (const [path, lines] of samples) {
        const hits = screen(addFile(path, lines)).hits.filter((h) => h.rule === rule);
        expect(hits, `${path}: ${lines.join(' / ')}`).not.toHaveLength(0);
        for (const hit of hits) expect(hit.file).toBe(path);
      }
    });
  }

  it('names the file, the new line number and the line of each hit', () => {
    const result = screen(
      changeFile('pkg/durations.py', [' import re', '+import _pytest.reports', ' ', '-x = 1'], 3),
    );
    expect(result).toEqual({
      hits: [
        {
          rule: 'pytest-internals',
          file: 'pkg/durations.py',
          line: 4,
          excerpt: 'import _pytest.reports',
        },
      ],
      count: 1,
      unscreened: 0,
    });
  });

  it('gives a path rule a hit without a line, for old and new paths alike', () => {
    const deleted = [
      'diff --git a/tests/conftest.py b/tests/conftest.py',
      'deleted file mode 100644',
      'index 1111111111111111111111111111111111111111..0000000000000000000000000000000000000000',
      '--- a/tests/conftest.py',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-import pytest',
      '',
    ].join('\n');
    expect(screen(deleted).hits).toEqual([
      { rule: 'conftest', file: 'tests/conftest.py', line: null, excerpt: 'tests/conftest.py' },
    ]);
  });

  it('bounds the hits kept at MAX_SCREEN_HITS and counts them all', () => {
    const lines = Array.from({ length: 80 }, (_, i) => `import _pytest.x${i}`);
    const result = screen(addFile('pkg/x.py', lines));
    expect(result.count).toBe(80);
    expect(result.hits).toHaveLength(MAX_SCREEN_HITS);
    expect(result.hits.at(-1)?.line).toBe(MAX_SCREEN_HITS);
  });

  it('bounds an excerpt, keeps the match in view and escapes control characters', () => {
    const long = `x = "${'a'.repeat(300)}"; import _pytest; y = "${'b'.repeat(300)}"\x1b[2J`;
    const [hit] = screen(addFile('pkg/x.py', [long])).hits;
    expect(hit?.excerpt.length).toBeLessThanOrEqual(MAX_EXCERPT_CHARS);
    expect(hit?.excerpt).toContain('import _pytest');
    const [escaped] = screen(addFile('pkg/y.py', ['import _pytest\x1b[2J'])).hits;
    expect(escaped?.excerpt).toBe('import _pytest\\x1b[2J');
  });

  it('counts a binary file as not screened, and still reads its path', () => {
    const binary = [
      'diff --git a/conftest.py b/conftest.py',
      'new file mode 100644',
      'index 0000000000000000000000000000000000000000..1111111111111111111111111111111111111111',
      'Binary files /dev/null and b/conftest.py differ',
      '',
    ].join('\n');
    expect(screen(binary)).toMatchObject({
      count: 1,
      unscreened: 1,
      hits: [{ rule: 'conftest', line: null }],
    });
  });

  it('reads only added lines: a removed or context line is no hit', () => {
    expect(rulesOf(changeFile('pkg/x.py', [' import _pytest', '-os._exit(0)', '+x = 2']))).toEqual(
      [],
    );
  });

  it('does not read documentation, whose lines never run', () => {
    expect(
      rulesOf(addFile('docs/usage.md', ['Run `pytest -p pkg._plugin` then os._exit(0)'])),
    ).toEqual([]);
  });

  it('looks only at a long line once: a 4 MiB line is screened in linear time', () => {
    const line = `import {${' run,'.repeat(1024 * 1024)}`;
    const started = Date.now();
    screen(addFile('src/x.js', [line]));
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('screenDiff on whole forgeries, written out', () => {
  const FORGERIES: Record<string, Array<[path: string, lines: string[]]>> = {
    'replaces TestReport.from_item_and_call': [
      [
        'durations/__init__.py',
        [
          'import _pytest.reports as _r',
          '_orig = _r.TestReport.from_item_and_call',
          'def _forged(item, call):',
          '    report = _orig(item, call)',
          '    report.outcome = "passed"',
          '    return report',
          '_r.TestReport.from_item_and_call = staticmethod(_forged)',
        ],
      ],
    ],
    'writes the report named on the command line, then exits': [
      [
        'durations/__init__.py',
        [
          'import os, sys',
          'for i, arg in enumerate(sys.argv):',
          '    if arg.startswith("--junitxml"):',
          '        path = arg.split("=", 1)[1] if "=" in arg else sys.argv[i + 1]',
          '        with open(path, "w") as f:',
          '            f.write("<testsuites/>")',
          '        os._exit(0)',
        ],
      ],
    ],
    'adds a conftest.py with a makereport hookwrapper': [
      [
        'conftest.py',
        [
          'import pytest',
          '@pytest.hookimpl(wrapper=True)',
          'def pytest_runtest_makereport(item, call):',
          '    report = yield',
          '    report.outcome = "passed"',
          '    return report',
        ],
      ],
    ],
    "replaces the runner's _record": [
      [
        'durations/__init__.py',
        [
          'import sys',
          'runner = sys.modules.get("proctor_pytest_runner")',
          'if runner is not None:',
          '    runner._record = lambda *a, **k: None',
        ],
      ],
    ],
    'loads its own plugin through pytest.ini': [
      ['pytest.ini', ['[pytest]', 'addopts = -p durations._plugin']],
      [
        'durations/_plugin.py',
        ['def pytest_report_teststatus(report, config):', '    return "passed", ".", "PASSED"'],
      ],
    ],
  };

  for (const [what, files] of Object.entries(FORGERIES)) {
    it(`flags the candidate that ${what}`, () => {
      for (const [path, lines] of files) {
        expect(screen(addFile(path, lines)).count, path).toBeGreaterThan(0);
      }
    });
  }
});

describe('screenDiff on honest code', () => {
  it('does not flag sys.exit inside a test function (pytest.raises(SystemExit))', () => {
    const test = addFile('tests/test_cli.py', [
      'import sys',
      'import pytest',
      '',
      'def test_exit():',
      '    with pytest.raises(SystemExit):',
      '        sys.exit(1)',
    ]);
    expect(rulesOf(test)).toEqual([]);
  });

  it('does not flag exits in a function, a method or a __main__ guard, in Python or JavaScript', () => {
    expect(
      rulesOf(
        changeFile('pkg/cli.py', [' def main():', '+    if bad:', '+        sys.exit(2)', ' ']),
        changeFile('pkg/cli.py', [' if __name__ == "__main__":', '+    sys.exit(main())']),
        changeFile('src/cli.js', [' function main() {', '+  process.exit(1);', ' }']),
        addFile('pkg/shell.py', ['def exit(code=0):', '    raise SystemExit(code)']),
      ),
    ).toEqual([]);
  });

  it('does not flag an indented exit whose enclosing statement the hunk does not show', () => {
    expect(rulesOf(changeFile('pkg/cli.py', ['     x = 1', '+    sys.exit(2)']))).toEqual([]);
  });

  it('does not flag mocking a builtin by name, a fixture, parametrize or other pytest plugins', () => {
    expect(
      rulesOf(
        addFile('tests/test_io.py', [
          'import pytest',
          'import pytest_asyncio',
          'from unittest import mock',
          '',
          '@pytest.fixture',
          'def data(tmp_path):',
          '    return tmp_path / "data.txt"',
          '',
          '@pytest.mark.parametrize("x", [1, 2])',
          'def test_open(x, monkeypatch, capsys):',
          '    with mock.patch("builtins.open") as fake:',
          '        monkeypatch.setattr(sys, "argv", ["prog"])',
          '        assert fake.called',
        ]),
      ),
    ).toEqual([]);
  });

  it('does not flag ordinary Node code: createRequire, argv parsing, an exit code in a function', () => {
    expect(
      rulesOf(
        addFile('src/cli.mjs', [
          "import { createRequire } from 'node:module';",
          'const require = createRequire(import.meta.url);',
          'const args = process.argv.slice(2);',
          'export function main() {',
          '  if (args.length === 0) process.exitCode = 2;',
          '}',
        ]),
      ),
    ).toEqual([]);
  });

  it("does not flag a tox.ini or pyproject.toml change outside pytest's section", () => {
    expect(
      rulesOf(
        changeFile('pyproject.toml', [' [project]', ' name = "x"', '+version = "2"']),
        changeFile('tox.ini', [' [testenv]', '+deps = requests']),
        changeFile('package.json', [
          '   "name": "x",',
          '-  "version": "1.0.0",',
          '+  "version": "1.1.0",',
        ]),
      ),
    ).toEqual([]);
  });

  it('gives no hits for the gold patches of the examples and of the test fixtures', () => {
    const golds = [
      ...readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => join(ROOT, 'examples', d.name, 'solution/gold.patch')),
      ...readdirSync(join(ROOT, 'test/fixtures/bundles'), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => join(ROOT, 'test/fixtures/bundles', d.name, 'solution/gold.patch')),
    ].filter((path) => {
      try {
        readFileSync(path);
        return true;
      } catch {
        return false;
      }
    });
    expect(golds.length).toBeGreaterThanOrEqual(4);
    for (const path of golds) {
      const result = screenDiff(readFileSync(path));
      expect(result.hits, path).toEqual([]);
      expect(result.count, path).toBe(0);
    }
    // sh-country-codes' gold patch has a binary file: counted, not screened.
    expect(
      screenDiff(readFileSync(join(ROOT, 'examples/sh-country-codes/solution/gold.patch')))
        .unscreened,
    ).toBe(1);
  });
});

describe('screenDiff when a reader fails', () => {
  const failing = () => {
    throw new RangeError('Maximum call stack size exceeded');
  };

  it("is a hit naming the file, and the file's raw lines are still screened", () => {
    const diff = addFile('pkg/a.py', ['import _pytest.reports', 'x = 1']);
    const result = screenDiff(Buffer.from(diff), {
      python: failing,
      javascript: failing,
    });
    expect(result.hits).toEqual([
      {
        rule: UNREAD_RULE,
        file: 'pkg/a.py',
        line: null,
        excerpt: 'the reader failed: Maximum call stack size exceeded',
      },
      { rule: 'pytest-internals', file: 'pkg/a.py', line: 1, excerpt: 'import _pytest.reports' },
    ]);
    expect(result.count).toBe(2);
    const js = screenDiff(Buffer.from(addFile('lib/a.ts', ['export const a = 1;'])), {
      python: failing,
      javascript: failing,
    });
    expect(js.hits.map((h) => [h.rule, h.file])).toEqual([[UNREAD_RULE, 'lib/a.ts']]);
  });

  it('never happens with the real readers on thousands of random token sequences', () => {
    const python = [
      'import',
      'from',
      'sys',
      'as',
      'x',
      '=',
      '.',
      ',',
      '(',
      ')',
      '[',
      ']',
      '{',
      '}',
      ':',
      '\n',
      '\n  ',
      'getattr',
      '__import__',
      '"a"',
      "'b'",
      '+',
      'lambda',
      'def',
      'class',
      '\\',
      '"""',
      "f'",
      '#',
      'meta_path',
      '*',
      '**',
      ';',
      'if',
      'else',
      'for',
      'in',
      '@',
      'with',
      '\t',
      '...',
      '0x',
      '%',
      '"%s"',
    ];
    const javascript = [
      'import',
      'require',
      '(',
      ')',
      '[',
      ']',
      '{',
      '}',
      '=>',
      '=',
      '.',
      ',',
      "'node:'",
      "'assert'",
      '+',
      '`',
      '${',
      'globalThis',
      'expect',
      'const',
      'x',
      ';',
      '\n',
      '/*',
      '*/',
      '//',
      '<',
      '>',
      'as',
      'type',
      'function',
      'class',
      '?.',
      '...',
      '/re/g',
    ];
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (const [path, tokens] of [
      ['a.py', python],
      ['a.ts', javascript],
    ] as const) {
      for (let i = 0; i < 2000; i += 1) {
        const words = Array.from({ length: 1 + next(40) }, () => tokens[next(tokens.length)]);
        const result = screenDiff(Buffer.from(addFile(path, words.join(' ').split('\n'))));
        expect(
          result.hits.filter((h) => h.rule === UNREAD_RULE),
          words.join(' '),
        ).toEqual([]);
      }
    }
  });
});
