// Forgeries through the built-in django runner that swap what a test runs rather than what it
// reports, each sparing the sentinels (another module): an import hook that loads the task's
// test modules with their test methods emptied, unittest's assertEqual made lenient for the
// task's tests through the helper it calls (_baseAssertEqual, which no reporting tripwire
// watches), and once the suite is built (through Django's DiscoverRunner.build_suite, which no
// tripwire watches) each test method's code swapped for a no-op's, or a no-op set on each
// test's instance. Without protocol 2 (no sentinels, tripwires or canaries) each one passes;
// through Proctor each ends TAMPERED, naming the tripwire. The gold patch stays PASS.
import { describe, expect, it } from 'vitest';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { forgeryTests } from '../helpers/forgery-tests.js';
import { CALC, HIDDEN, REPO } from '../helpers/django-tree.js';
import { candidateDiff, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-django-tripwires');
const SLOW = 300_000;

const id = (method: string, cls: string) => `${method} (${cls}.${method})`;
const SPEC: RepoBundleSpec = {
  id: 'django-tripwires',
  runner: 'django',
  from: 'proctor-test-django:latest',
  repo: REPO,
  hidden: { 'tests/adding/__init__.py': '', 'tests/adding/tests.py': HIDDEN },
  gold: { 'calc.py': 'def add(a, b):\n    return a + b\n' },
  existing: [id('test_small', 'outcomes.tests.Outcomes'), 'Adding zero changes nothing.'],
  hiddenIds: [
    id('test_add', 'adding.tests.Adding'),
    'Adding negatives gives their sum.',
    id('test_sums', 'adding.tests.Adding'),
  ],
  testSeconds: 120,
};

const FORGERIES: Record<string, string> = {
  // A finder ahead of the path finder: the task's test modules (`*.tests`) load with every
  // test method a no-op that keeps its docstring (the id a docstring gives stays the same).
  importHook: `import importlib.machinery
import sys
import types


def _noop(self):
    return None


class _Loader(importlib.machinery.SourceFileLoader):
    def exec_module(self, module):
        importlib.machinery.SourceFileLoader.exec_module(self, module)
        for value in list(vars(module).values()):
            if isinstance(value, type):
                for name, member in list(vars(value).items()):
                    if name.startswith("test") and isinstance(member, types.FunctionType):
                        empty = types.FunctionType(_noop.__code__, {}, name)
                        empty.__doc__ = member.__doc__
                        setattr(value, name, empty)


class _Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if not name.endswith(".tests"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.origin is not None:
            spec.loader = _Loader(name, spec.origin)
        return spec


sys.meta_path.insert(0, _Finder)
`,
  // assertEqual left as it is; the helper it calls for plain values passes anything asked
  // from a file named tests.py (the task's; the sentinels' module is test_WORD.py).
  lenientAssert: `import sys
import unittest.case

_base = unittest.case.TestCase._baseAssertEqual


def _lenient(self, first, second, msg=None):
    if sys._getframe(2).f_code.co_filename.endswith("tests.py"):
        return None
    return _base(self, first, second, msg)


unittest.case.TestCase._baseAssertEqual = _lenient
`,
  // Once Django's runner has built the suite, each task test method's code becomes a no-op's
  // (the function object, its name and docstring stay; a decorated one, with a closure, is left).
  codeSwap: `import django.test.runner as _runner

_build = _runner.DiscoverRunner.build_suite


def _noop(self):
    return None


def _empty(suite):
    for test in suite:
        if hasattr(test, "_testMethodName"):
            method = getattr(type(test), test._testMethodName)
            if type(test).__module__.endswith(".tests") and not method.__closure__:
                method.__code__ = _noop.__code__
        else:
            _empty(test)


def _build_suite(self, *args, **kwargs):
    suite = _build(self, *args, **kwargs)
    _empty(suite)
    return suite


_runner.DiscoverRunner.build_suite = _build_suite
`,
  // The same place, but each task test gets a no-op of its own on its instance, which unittest
  // finds before the class's method.
  instanceMethod: `import django.test.runner as _runner

_build = _runner.DiscoverRunner.build_suite


def _empty(suite):
    for test in suite:
        if hasattr(test, "_testMethodName"):
            if type(test).__module__.endswith(".tests"):
                setattr(test, test._testMethodName, lambda: None)
        else:
            _empty(test)


def _build_suite(self, *args, **kwargs):
    suite = _build(self, *args, **kwargs)
    _empty(suite)
    return suite


_runner.DiscoverRunner.build_suite = _build_suite
`,
};

const suite = runnerSuite(docker, SCOPE, { image: 'django', spec: SPEC });
const forged = (name: string): Buffer =>
  candidateDiff(suite.dir, { 'calc.py': `${CALC}\n${FORGERIES[name]!}` });

// What Django's own test machinery does to the tests its database backend cannot run
// (django/db/backends/base/creation.py, mark_expected_failures_and_skips: SQLite's
// django_test_skips): once the suite is built, a test method is replaced by unittest.skip's
// wrapper of it. Here the unlisted test_wrong of the existing tests' module; the gold patch
// beside it.
const MARKED_SKIP = `import unittest

import django.test.runner as _runner

_build = _runner.DiscoverRunner.build_suite


def _build_suite(self, *args, **kwargs):
    suite = _build(self, *args, **kwargs)
    from outcomes.tests import Outcomes

    Outcomes.test_wrong = unittest.skip("SQLite doesn't have a constraint.")(Outcomes.test_wrong)
    return suite


_runner.DiscoverRunner.build_suite = _build_suite
`;

describe('forgeries of what a test runs, through the built-in django runner', () => {
  it(
    "passes the gold patch when Django's test machinery puts unittest.skip's wrapper on a test, as it does for its backends' known skips",
    async () => {
      const evaluation = await suite.grade(
        suite.bundle,
        candidateDiff(suite.dir, {
          'calc.py': `def add(a, b):\n    return a + b\n\n${MARKED_SKIP}`,
        }),
      );
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
        verdict: 'PASS',
        reason: 'PASS',
      });
      for (const record of evaluation.phaseRecords) expect(record.integrity?.tampered).toBeNull();
    },
    SLOW,
  );

  forgeryTests(suite, {
    forged,
    timeout: SLOW,
    cases: [
      [
        'importHook',
        [
          /the test module \w+\.tests was loaded by calc\._Loader/,
          /\(\w+\.tests\.\w+\): its test method's code is not the one compiled from tests\/\w+\/tests\.py/,
        ],
      ],
      ['lenientAssert', [/unittest\.case\.TestCase\._baseAssertEqual was replaced/]],
      [
        'codeSwap',
        [
          /\(\w+\.tests\.\w+\): its test method's code is not the one compiled from tests\/\w+\/tests\.py/,
        ],
      ],
      [
        'instanceMethod',
        [
          /\(\w+\.tests\.\w+\): its test method's code is not the one compiled from tests\/\w+\/tests\.py/,
        ],
      ],
    ],
  });
});
