// The built-in pytest runner in real grades and baselines, through the oracle (evaluate) on
// Debian's python3-pytest: node ids with spaces, brackets and `::` inside a parameter, a class
// method, a hidden test that lives in a file the hidden patch does not touch (the patch only
// changes a data file), xfail and skip reported as skipped, missing IDs and files absent from
// the report, IDs cut at a space as SWE-bench writes them, and a test that is not listed never
// running (it would hang the phase).
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/bundle.js';
import type { Evaluation } from '../../src/oracle/evaluate.js';
import { declaredOutcomes } from '../../src/oracle/verdict.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { candidateDiff, withIds, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-pytest');
const SLOW = 300_000;

const TEST_FILE = `import os
import time

import pytest

from labels import add, label

DATA = os.path.join(os.path.dirname(__file__), "data")


@pytest.mark.parametrize("text,expected", [("a b", "A B"), ("x[1]", "X[1]"), ("p::q", "P::Q")])
def test_label(text, expected):
    assert label(text) == expected


@pytest.mark.parametrize("text", ["a b", "a c"])
def test_spaced(text):
    assert text != "a c"


class TestAdd:
    def test_small(self):
        assert add(1, 2) == 3


@pytest.mark.xfail(reason="a known bug")
def test_known_bug():
    assert add(2, 2) == 5


@pytest.mark.xfail(reason="flaky upstream")
def test_sometimes():
    assert add(1, 1) == 2


@pytest.mark.xfail(reason="was a bug", strict=True)
def test_fixed_bug():
    assert add(2, 2) == 4


@pytest.fixture
def server():
    raise RuntimeError("no server here")


def test_server(server):
    pass


@pytest.mark.skip(reason="needs a network")
def test_remote():
    pass


def test_not_listed_hangs():
    time.sleep(3600)


def test_cases_from_data():
    with open(os.path.join(DATA, "cases.tsv"), encoding="utf-8") as f:
        for line in f:
            text, expected = line.rstrip("\\n").split("\\t")
            assert label(text) == expected, text
`;

const ID = {
  space: 'tests/test_labels.py::test_label[a b-A B]',
  brackets: 'tests/test_labels.py::test_label[x[1]-X[1]]',
  colons: 'tests/test_labels.py::test_label[p::q-P::Q]',
  method: 'tests/test_labels.py::TestAdd::test_small',
  xfail: 'tests/test_labels.py::test_known_bug',
  skip: 'tests/test_labels.py::test_remote',
  data: 'tests/test_labels.py::test_cases_from_data',
  gone: 'tests/test_labels.py::test_gone',
  noFile: 'tests/test_nowhere.py::test_x',
  hangs: 'tests/test_labels.py::test_not_listed_hangs',
  broken: 'tests/test_broken.py::test_x',
  strictXpass: 'tests/test_labels.py::test_fixed_bug',
  xpass: 'tests/test_labels.py::test_sometimes',
  setupError: 'tests/test_labels.py::test_server',
  // Cut at the first space, as SWE-bench's lists hold them.
  cutOne: 'tests/test_labels.py::test_label[a',
  cutTwo: 'tests/test_labels.py::test_spaced[a',
};

const SPEC: RepoBundleSpec = {
  id: 'pytest-labels',
  runner: 'pytest',
  repo: {
    'labels.py':
      'def add(a, b):\n    return a + b\n\n\ndef label(text):\n    return text.upper()\n',
    'tests/__init__.py': '',
    'tests/test_labels.py': TEST_FILE,
    'tests/data/cases.tsv': 'a\tA\n',
    'tests/test_more.py': 'def test_one():\n    pass\n\n\ndef test_two():\n    assert False\n',
    'tests/test_broken.py': 'import no_such_module\n\n\ndef test_x():\n    pass\n',
  },
  // Only a data file: the hidden test is an existing test that reads it.
  hidden: { 'tests/data/cases.tsv': 'a\tA\n  padded  \tPADDED\n' },
  gold: {
    'labels.py':
      'def add(a, b):\n    return a + b\n\n\ndef label(text):\n    return text.strip().upper()\n',
  },
  existing: [ID.space, ID.brackets, ID.colons, ID.method],
  hiddenIds: [ID.data],
};

const suite = runnerSuite(docker, SCOPE, { image: 'runners', spec: SPEC });
const { grade } = suite;

function outcomes(evaluation: Evaluation, phase: 'existing' | 'hidden') {
  const check = evaluation.phases?.[phase]?.check;
  if (!check) throw new Error(`no ${phase} check: ${JSON.stringify(evaluation.verdict)}`);
  return { outcomes: Object.fromEntries(declaredOutcomes(check)), undeclared: check.undeclared };
}

describe('the built-in pytest runner', () => {
  it(
    'runs node ids with spaces, brackets and :: in parameters, and a class method; a baseline fails the hidden test that a data-only patch changed',
    async () => {
      const evaluation = await grade(suite.bundle, null);
      expect(outcomes(evaluation, 'existing')).toEqual({
        outcomes: {
          [ID.space]: 'passed',
          [ID.brackets]: 'passed',
          [ID.colons]: 'passed',
          [ID.method]: 'passed',
        },
        undeclared: [],
      });
      expect(outcomes(evaluation, 'hidden')).toEqual({
        outcomes: { [ID.data]: 'failed' },
        undeclared: [],
      });
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
    },
    SLOW,
  );

  it(
    'passes the gold patch',
    async () => {
      const evaluation = await grade(suite.bundle, suite.gold);
      expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expect(outcomes(evaluation, 'hidden').outcomes).toEqual({ [ID.data]: 'passed' });
    },
    SLOW,
  );

  it(
    'reports xfail, xpass and skip as skipped, a strict xpass as failed, a fixture or file that fails as error, and leaves out IDs it cannot find',
    async () => {
      const existing = [ID.xfail, ID.skip, ID.strictXpass, ID.setupError, ID.gone, ID.noFile];
      existing.push(ID.broken, ID.xpass, ID.method);
      const task = await loadBundle(withIds(suite.dir, { existing }));
      const evaluation = await grade(task, suite.gold);
      expect(outcomes(evaluation, 'existing')).toEqual({
        outcomes: {
          [ID.xfail]: 'skipped',
          [ID.skip]: 'skipped',
          [ID.strictXpass]: 'failed',
          [ID.setupError]: 'error',
          [ID.gone]: 'missing',
          [ID.noFile]: 'missing',
          [ID.broken]: 'error',
          [ID.xpass]: 'skipped',
          [ID.method]: 'passed',
        },
        undeclared: [],
      });
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TESTS_MISSING' });
    },
    SLOW,
  );

  it(
    'matches an ID cut at its first space to the node ids it was cut from, with their worst status',
    async () => {
      const task = await loadBundle(withIds(suite.dir, { existing: [ID.cutOne, ID.cutTwo] }));
      expect(outcomes(await grade(task, null), 'existing')).toEqual({
        outcomes: { [ID.cutOne]: 'passed', [ID.cutTwo]: 'failed' },
        undeclared: [],
      });
    },
    SLOW,
  );

  it(
    'reports every test of a file listed without ::',
    async () => {
      const task = await loadBundle(withIds(suite.dir, { existing: ['tests/test_more.py'] }));
      const check = (await grade(task, null)).phases?.existing.check;
      expect(check?.missing).toEqual(['tests/test_more.py']);
      expect(check?.undeclared).toEqual([
        'tests/test_more.py::test_one',
        'tests/test_more.py::test_two',
      ]);
    },
    SLOW,
  );

  it(
    'gives every declared test as an error, with the cause, when a conftest cannot be imported (the session never began)',
    async () => {
      const candidate = candidateDiff(suite.dir, { 'conftest.py': 'import no_such_plugin\n' });
      const evaluation = await grade(suite.bundle, candidate);
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'EXISTING_FAILED' });
      expect(evaluation.verdict.detail).toContain(
        "the runner says: ImportError while loading conftest '/repo/conftest.py'.",
      );
      expect(evaluation.verdict.detail).toContain('no_such_plugin');
      expect(outcomes(evaluation, 'existing').outcomes).toEqual({
        [ID.space]: 'error',
        [ID.brackets]: 'error',
        [ID.colons]: 'error',
        [ID.method]: 'error',
      });
      // The hidden phase still runs after the patch, and never begins either.
      expect(outcomes(evaluation, 'hidden').outcomes).toEqual({ [ID.data]: 'error' });
    },
    SLOW,
  );

  it(
    'runs the hanging test once it is listed, and times the phase out',
    async () => {
      // The counterpart of the tests above, which would time out if deselection failed.
      const task = await loadBundle(withIds(suite.dir, { existing: [ID.method, ID.hangs] }));
      const evaluation = await grade(
        { ...task, limits: { ...task.limits, testSeconds: 5 } },
        suite.gold,
      );
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TIMEOUT' });
    },
    SLOW,
  );
});
