// The canary mutator (src/runners/core/canary.py): one source in every built-in Python runner,
// written for Python 3.6 and run for real on Debian bullseye's Python 3.9, bookworm's 3.11 and
// trixie's 3.13.
// On a test file with each kind of assertion it understands, every original test passes with
// honest code and every mutant fails; what it does not understand is named uncovered.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { RUNNER_CORE, runnerSource } from '../../src/runners/index.js';
import { execFileAsync, fixtureImage } from '../helpers/docker.js';

const PYTHON_RUNNERS = ['pytest', 'django', 'sympy'] as const;
const CORE = readFileSync(new URL('../../src/runners/core/canary.py', import.meta.url), 'utf8');

// Honest code and its tests, in every shape the mutator knows, and three it does not.
const LIBRARY = `def add(a, b):
    return a + b


def div(a, b):
    if b == 0:
        raise ValueError("zero")
    return a / b


def raises(expected, code):
    try:
        code()
    except expected:
        return
    raise AssertionError("did not raise")
`;

const TESTS = `# -*- coding: utf-8 -*-
import unittest

from lib import add, div, raises


def test_int():
    assert add(2, 3) == 5


def test_negative():
    assert add(-1, -1) == -2, "deux négatifs"


def test_string():
    label = "é"; assert add("a", "b") == "ab"


def test_left():
    assert [1, 2] == [add(0, 1),
                      add(1, 1)]


def test_bool():
    assert (add(1, 1) == 2) is True


def test_helper_raises():
    raises(ValueError, lambda: div(1, 0))


def test_loop():
    for value in []:
        assert value == 1


def test_helper_only():
    check = add(1, 1)
    str(check)


STATE = {"strict": False}


def test_restores():
    STATE["strict"] = True
    raises(ValueError, lambda: div(1, 0))
    STATE["strict"] = False
    assert add(1, 1) == 2


def test_restores_last():
    STATE["strict"] = True
    assert add(2, 2) == 4
    STATE["strict"] = False


def test_locals_after():
    assert add(3, 3) == 6
    from lib import div as divide
    x, *rest = [add(1, 1), 3]
    for value in rest:
        assert value == 3
    try:
        import json
    except ImportError:
        pass
    assert divide(x, 1) == 2


def test_strict_off():
    assert STATE["strict"] is False


class AddTest(unittest.TestCase):
    def test_equal(self):
        self.assertEqual(add(2, 3), 5)

    def test_container(self):
        self.assertEqual(
            {"sum": add(1, 1)},
            {"sum": 2},
        )

    def test_true(self):
        self.assertTrue(add(1, 1) == 2)

    def test_raises(self):
        with self.assertRaises(ValueError):
            div(1, 0)

    def test_tuple(self):
        self.assertEqual((add(1, 1), 3), (2, 3))

    class Inner(unittest.TestCase):
        def test_deep(self):
            self.assertEqual(add(1, 1), 2)
`;

const LISTED = [
  'test_int',
  'test_negative',
  'test_string',
  'test_left',
  'test_bool',
  'test_helper_raises',
  'test_loop',
  'test_helper_only',
  'test_restores',
  'test_restores_last',
  'test_locals_after',
  'AddTest::test_equal',
  'AddTest::test_container',
  'AddTest::test_true',
  'AddTest::test_raises',
  'AddTest::test_tuple',
  'AddTest::Inner::test_deep',
].map((name) => `tests/test_lib.py::${name}`);

// Runs every test function and TestCase method of a module by its pytest-style id; prints
// {"id": "passed" | "failed"}. Python 3.5-compatible, no pytest needed.
const RUN_ALL = `import importlib, json, sys, unittest
sys.path[:0] = ["/w", "/w/tests"]
module = importlib.import_module("test_lib")
out = {}
for name, value in sorted(vars(module).items()):
    if name.startswith("test_") and callable(value):
        try:
            value(); out["tests/test_lib.py::" + name] = "passed"
        except Exception:
            out["tests/test_lib.py::" + name] = "failed"
    elif isinstance(value, type) and issubclass(value, unittest.TestCase):
        for method in sorted(vars(value)):
            if method.startswith("test_"):
                result = unittest.TestResult()
                value(method).run(result)
                out["tests/test_lib.py::%s::%s" % (name, method)] = (
                    "passed" if result.wasSuccessful() else "failed")
print(json.dumps(out))
`;

interface StepOutput {
  mutants: Array<{ id: string; test: string; mutation: string }>;
  uncovered: Array<{ test: string; why: string }>;
  sentinels?: Array<{ id: string; test: string; expect: string; calls: string }>;
}

/** The pytest runner's canary step on the sample in `image`, then every test of the result. */
async function placeAndRun(image: string, seed: string) {
  // Compressed: the runner's base64 alone comes near the kernel's limit on one argument.
  const runner = gzipSync(await runnerSource('pytest')).toString('base64');
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const script = [
    'mkdir -p /w/tests',
    `echo ${runner} | base64 -d | gunzip > /tmp/run`,
    `echo ${b64(LIBRARY)} | base64 -d > /w/lib.py`,
    `echo ${b64(TESTS)} | base64 -d > /w/tests/test_lib.py`,
    `echo ${b64(`${LISTED.join('\n')}\ntests/test_gone.py::test_x\n`)} | base64 -d > /tmp/list`,
    `echo ${b64(RUN_ALL)} | base64 -d > /tmp/all.py`,
    `cd / && python3 -I /tmp/run --proctor-canary /w /tmp/list ${seed} > /tmp/out || exit 1`,
    'python3 -c "import sys; print(sys.version_info[:2])"',
    'cat /tmp/out',
    'python3 /tmp/all.py',
    'cat /w/tests/test_lib.py',
  ].join('\n');
  const { stdout } = await execFileAsync('docker', [
    ...['run', '--rm', '--network', 'none', image, 'sh', '-c', script],
  ]);
  const [version, step, results, ...file] = stdout.split('\n');
  return {
    version: version!,
    step: JSON.parse(step!) as StepOutput,
    results: JSON.parse(results!) as Record<string, string>,
    file: file.join('\n'),
  };
}

describe('the canary mutator', { timeout: 300_000 }, () => {
  it.each(PYTHON_RUNNERS)('is in the %s runner as the same bytes, once', async (name) => {
    const source = (await runnerSource(name)).toString('utf8');
    expect(RUNNER_CORE).toContain('core/canary.py');
    expect(source.split(CORE)).toHaveLength(2);
    // The runner's own file holds the include line, not a copy that could drift.
    const own = readFileSync(new URL(`../../src/runners/${name}/run`, import.meta.url), 'utf8');
    expect(own).toContain('# proctor-include: core/canary.py\n');
    expect(own).not.toContain('def canary_file(');
  });

  it('is Python 3.6 (ast.parse with feature_version (3, 6))', async () => {
    const image = await fixtureImage('runners');
    const code = Buffer.from(CORE).toString('base64');
    const { stdout } = await execFileAsync('docker', [
      ...['run', '--rm', '--network', 'none', image, 'python3', '-c'],
      `import ast, base64; ast.parse(base64.b64decode("${code}").decode(), feature_version=(3, 6)); print("ok")`,
    ]);
    expect(stdout.trim()).toBe('ok');
  });

  it.each([
    ['python-bullseye', '(3, 9)'],
    ['runners', '(3, 11)'],
    ['python-trixie', '(3, 13)'],
  ])(
    'on %s (Python %s): every original passes, every mutant fails, the rest is uncovered',
    async (image, version) => {
      const ran = await placeAndRun(await fixtureImage(image), 'a-seed');
      expect(ran.version).toBe(version);
      const covered = LISTED.filter(
        (id) => !/test_loop|test_helper_only|test_restores_last|Inner::test_deep/.test(id),
      );
      expect(ran.step.mutants.map((m) => m.test).sort()).toEqual([...covered].sort());
      for (const id of covered) expect(ran.results[id], id).toBe('passed');
      for (const m of ran.step.mutants) {
        expect(ran.results[m.id], `${m.id}: ${m.mutation}`).toBe('failed');
        // The mutant's name is its original's and a word, in the same class.
        const original = m.test.replace(/::(test_\w+)$/, '');
        expect(m.id.startsWith(`${original}::`)).toBe(true);
        expect(m.id).toMatch(new RegExp(`::${m.test.split('::').pop()!}_[a-z]+$`));
      }
      expect(ran.step.uncovered.sort((a, b) => a.test.localeCompare(b.test))).toEqual([
        { test: 'tests/test_gone.py::test_x', why: 'its file is not in the work tree' },
        {
          test: 'tests/test_lib.py::AddTest::Inner::test_deep',
          why: 'not a test function of a module or of one class',
        },
        {
          test: 'tests/test_lib.py::test_helper_only',
          why: 'no assertion the mutator understands',
        },
        { test: 'tests/test_lib.py::test_loop', why: 'no assertion the mutator understands' },
        {
          test: 'tests/test_lib.py::test_restores_last',
          why: 'its assertions are followed by code a failing copy would skip',
        },
      ]);
      // A mutant skips what its test runs after the changed assertion: never the code that
      // puts state back, which the tests after it would then find changed (sympy's seterr).
      const restores = ran.step.mutants.find((m) => m.test.endsWith('::test_restores'));
      expect(restores?.mutation).toMatch(/^expected value 2 -> \d+$/);
      expect(ran.results['tests/test_lib.py::test_strict_off']).toBe('passed');
      // Each kind of mutation was made.
      const kinds = ran.step.mutants.map((m) => m.mutation).join('\n');
      expect(kinds).toMatch(/expected value -?\d+ -> -?\d+/);
      expect(kinds).toMatch(/raises\(ValueError\) -> a new \w+Error nothing raises/);
      expect(kinds).toMatch(/assertRaises\(ValueError\)/);
      expect(kinds).toMatch(/assertTrue -> assertFalse/);
      expect(kinds).toMatch(/assertEqual expected \{"sum": 2\} -> dict\(/);
      expect(kinds).toMatch(/expected value True -> False/);
      // The pytest runner's sentinels, in the same file: one passes, one fails, each after a
      // listed test, named as the mutants are, calling the library as the tests do.
      const sentinels = ran.step.sentinels ?? [];
      expect(sentinels.map((s) => s.expect).sort()).toEqual(['failed', 'passed']);
      for (const s of sentinels) {
        expect(ran.results[s.id], `${s.id}: ${s.calls}`).toBe(s.expect);
        expect(s.calls).toMatch(/^(add|div)\(/);
        expect(s.id).toMatch(new RegExp(`::${s.test.split('::').pop()!}_[a-z]+$`));
        expect(LISTED).toContain(s.test);
      }
    },
  );

  it('draws different names with another seed, the same with the same one', async () => {
    const image = await fixtureImage('runners');
    const [a, b, c] = await Promise.all([
      placeAndRun(image, 'seed-one'),
      placeAndRun(image, 'seed-one'),
      placeAndRun(image, 'seed-two'),
    ]);
    const ids = (r: typeof a) => r.step.mutants.map((m) => m.id);
    expect(ids(a)).toEqual(ids(b));
    expect(ids(a)).not.toEqual(ids(c));
  });

  it("makes the sentinels' call one the test asserts on, and none with a name the test binds itself", async () => {
    const image = await fixtureImage('runners');
    const files: Record<string, string> = {
      // The module's `a` is not the one the test calls add with: no call a sentinel can make.
      'tests/test_shadow.py': `from lib import add

a = 1


def test_shadowed():
    a = 2
    assert add(a, 1) == 3
`,
      // A call made for its effect comes before the one asserted on; the sentinels make the
      // second.
      'tests/test_effect.py': `import os

from lib import add


def test_effect():
    os.environ.pop("NOT_SET_ANYWHERE", None)
    assert add(1, 1) == 2
`,
    };
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const runner = gzipSync(await runnerSource('pytest')).toString('base64');
    const script = [
      'mkdir -p /w/tests',
      `echo ${runner} | base64 -d | gunzip > /tmp/run`,
      `echo ${b64(LIBRARY)} | base64 -d > /w/lib.py`,
      ...Object.entries(files).map(([path, text]) => `echo ${b64(text)} | base64 -d > /w/${path}`),
      `printf 'tests/test_shadow.py::test_shadowed\\ntests/test_effect.py::test_effect\\n' > /tmp/list`,
      'cd / && python3 -I /tmp/run --proctor-canary /w /tmp/list a-seed',
    ].join('\n');
    const { stdout } = await execFileAsync('docker', [
      ...['run', '--rm', '--network', 'none', image, 'sh', '-c', script],
    ]);
    const step = JSON.parse(stdout) as StepOutput;
    const calls = Object.fromEntries(
      (step.sentinels ?? []).map((s) => [`${s.test} ${s.expect}`, s.calls]),
    );
    expect(calls).toEqual({
      'tests/test_shadow.py::test_shadowed passed': '',
      'tests/test_shadow.py::test_shadowed failed': '',
      'tests/test_effect.py::test_effect passed': 'add(1, 1)',
      'tests/test_effect.py::test_effect failed': 'add(1, 1)',
    });
  });
});

// A file in the shapes that trouble a tokenizer started part-way: decorators, strings over
// several lines, brackets and backslashes across lines, statements after `;`, comments and
// blank lines between definitions, a class with methods and a nested class, a tab,
// definitions in the branches of a `try`.
const TRICKY = `"""A module docstring
over lines."""
import os; import sys
VALUE = {"a": [1,
               2], "b": (3,
                          4)}
LONG = 1 + \\
    2


@staticmethod
# a comment between the decorator and the function
def test_decorated(x=[1, 2,
                      3]):
    s = '''a string
def not_a_function():
    pass
'''
    assert f"{x}" == "[1, 2, 3]"; assert s


class Case(object):
    """A class."""

    attribute = [
        1,
    ]

    @property
    def test_method(self):
        if True:
            return 1
        else:
            return 2\t# a tab before this comment

    class Inner:
        def test_inner(self):
            assert (lambda: 1)() == 1
    x = 1; y = 2


try:
    import json
except ImportError:
    def fallback():
        pass
else:
    def test_in_else():
        assert json
finally:
    class Finally:
        pass


def test_last():
    assert 1 == 1  # a trailing comment
`;

// Every token's start, and the tokens after it, read from the piece the lazy reader takes
// (core/canary.py's _Source.tokens_at) against one tokenization of the whole file; the
// definitions' names and the names the module uses against ast.walk's.
const COMPARE = `import ast, io, sys, tokenize
core = {}
exec(compile(open("/tmp/core.py").read(), "core", "exec"), core)
text = open("/tmp/tricky.py").read()
tree = ast.parse(text)
whole = list(tokenize.generate_tokens(io.StringIO(text).readline))
SKIP = (tokenize.INDENT, tokenize.DEDENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER)
def significant(tokens, row_limit):
    return [tuple(t[:4]) for t in tokens if t[0] not in SKIP and t[2][0] < row_limit][:20]
source = core["_Source"](text, tree)
checked = 0
bad = []
for index, token in enumerate(whole):
    if token[0] in SKIP:
        continue
    found = source.tokens_at(token[2])
    if found is None:
        bad.append(("missing", token[2]))
        continue
    tokens, at = found
    piece = [row for row in source.starts if row > token[2][0]]
    limit = piece[0] if piece else 10 ** 9
    if significant(tokens[at:], limit) != significant(whole[index:], limit):
        bad.append(("differs", token[2]))
    checked += 1
walked = set(n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
used = set(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
words = core["_NameWords"](text, tree)
probe = sorted(used | {"not_a_function", "string", "comment", "absent_everywhere", "staticmethod"})
print(checked, len(source.pieces), bad, core["_names"](tree) == walked,
      [w for w in probe if (w in words) != (w in used)])
`;

describe("the canary mutator's lazy reading of a file", { timeout: 300_000 }, () => {
  it.each([
    ['python-bullseye', '3.9'],
    ['runners', '3.11'],
    ['python-trixie', '3.13'],
  ])(
    'on %s (Python %s) reads every token as a whole tokenization does, and the same names',
    async (image) => {
      const b64 = (text: string) => Buffer.from(text).toString('base64');
      const script = [
        `echo ${b64(CORE)} | base64 -d > /tmp/core.py`,
        `echo ${b64(TRICKY)} | base64 -d > /tmp/tricky.py`,
        `echo ${b64(COMPARE)} | base64 -d > /tmp/compare.py`,
        'python3 /tmp/compare.py',
      ].join('\n');
      const { stdout } = await execFileAsync('docker', [
        ...['run', '--rm', '--network', 'none', await fixtureImage(image), 'sh', '-c', script],
      ]);
      const [checked, pieces, ...rest] = stdout.trim().split(' ');
      // Every significant token of the file was looked up, across several pieces.
      expect(Number(checked)).toBeGreaterThan(100);
      expect(Number(pieces)).toBeGreaterThan(5);
      expect(rest.join(' ')).toBe('[] True []');
    },
  );
});
