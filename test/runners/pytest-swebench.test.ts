// Tasks graded by SWE-bench's rules (`[grading] rules = "swebench"`) with the built-in pytest
// runner, through the real oracle: the candidate, then the hidden patch, then one run of both
// lists; each verdict is what SWE-bench 5.x's grading.py would decide from `pytest -rA`'s log
// (a skip is summarised as `SKIPPED [1] file:line`, which names no test, so it is ABSENT; an
// XFAIL passes; an absent ID fails; a truncated parametrized ID matches the IDs it prefixes).
import { describe, expect, it } from 'vitest';
import { type Bundle } from '../../src/oracle/bundle.js';
import type { Evaluation } from '../../src/oracle/evaluate.js';
import { renderOracleLog } from '../../src/oracle/oracle-log.js';
import { decideSwebenchBaseline } from '../../src/oracle/swebench-verdict.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { swebenchTask } from '../helpers/grade.js';
import { candidateDiff, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-pytest-swebench');
const SLOW = 300_000;

const TESTS = `import pytest

from calc import add, div


def test_add():
    assert add(1, 2) == 3


@pytest.mark.skip(reason="needs a network")
def test_remote():
    pass


@pytest.mark.xfail(reason="a known bug")
def test_known_bug():
    assert add(2, 2) == 5


@pytest.mark.xfail(reason="flaky upstream")
def test_sometimes():
    assert add(1, 1) == 2


@pytest.mark.parametrize("unit", ["log(photon /cm2)", "log(photon /s)"])
def test_units(unit):
    assert unit.startswith("log(")
`;

const ID = {
  add: 'tests/test_calc.py::test_add',
  skip: 'tests/test_calc.py::test_remote',
  xfail: 'tests/test_calc.py::test_known_bug',
  xpass: 'tests/test_calc.py::test_sometimes',
  gone: 'tests/test_calc.py::test_gone',
  // Cut mid-parameter, as 676 ids of SWE-bench_Verified are (no whitespace at the cut).
  truncated: 'tests/test_calc.py::test_units[log(pho',
  zero: 'tests/test_new.py::test_div_zero',
  // A PASS_TO_PASS test that exists only once the hidden patch is applied.
  newP2p: 'tests/test_new.py::test_div',
  broken: 'tests/test_broken.py::test_x',
};

const SPEC: RepoBundleSpec = {
  id: 'pytest-swebench',
  runner: 'pytest',
  repo: {
    'calc.py': 'def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n',
    'tests/__init__.py': '',
    'tests/test_calc.py': TESTS,
    'tests/test_broken.py': 'import flask\n\n\ndef test_x():\n    pass\n',
  },
  hidden: {
    'tests/test_new.py':
      'from calc import div\n\n\ndef test_div():\n    assert div(4, 2) == 2\n\n\ndef test_div_zero():\n    assert div(1, 0) is None\n',
  },
  gold: {
    'calc.py':
      'def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return None if b == 0 else a / b\n',
  },
  existing: [ID.add, ID.newP2p, ID.truncated],
  hiddenIds: [ID.zero],
};

const suite = runnerSuite(docker, SCOPE, { image: 'runners', spec: SPEC });
const { grade } = suite;

function log(task: Bundle, evaluation: Evaluation): string {
  const at = new Date(0);
  return renderOracleLog({
    kind: 'grade',
    bundle: task,
    image: { portable: false, imageId: suite.imageId, localId: suite.imageId } as never,
    runs: [{ title: 'grade', evaluation }],
    verdict: evaluation.verdict,
    startedAt: at,
    finishedAt: at,
  });
}

describe('SWE-bench rules with the built-in pytest runner', () => {
  it(
    'runs both lists once after the hidden patch: the baseline is sound and the gold patch resolves, a truncated id and a test the patch adds included',
    async () => {
      const task = await swebenchTask(suite.dir);
      const base = await grade(task, null);
      expect(base.phaseRecords.map((r) => r.name)).toEqual(['tests']);
      expect(base.hiddenApply?.exitCode).toBe(0);
      expect(base.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(base.verdict.detail).toContain(`${ID.zero} (FAILED)`);

      const fixed = await grade(task, suite.gold);
      expect(fixed.verdict).toMatchObject({
        verdict: 'PASS',
        detail:
          "resolved by SWE-bench's rules: 3 existing tests maintained and 1 hidden test passed",
      });
      expect(fixed.tests.lists).toEqual({ hidden: 'reported', existing: 'reported' });
      expect(fixed.tests.tests).toEqual(
        expect.arrayContaining([
          { id: ID.zero, list: 'hidden', outcome: 'passed', swebench: 'PASSED' },
          { id: ID.newP2p, list: 'existing', outcome: 'passed', swebench: 'PASSED' },
          // Not reported under its own name: its full ids stand for it.
          { id: ID.truncated, list: 'existing', outcome: 'missing', swebench: 'PASSED' },
        ]),
      );
      expect(fixed.phases?.tests?.check?.undeclared).toEqual([
        'tests/test_calc.py::test_units[log(photon /cm2)]',
        'tests/test_calc.py::test_units[log(photon /s)]',
      ]);

      const baseline = decideSwebenchBaseline({
        runs: [base.phases!],
        gold: fixed.verdict,
      });
      expect(baseline).toMatchObject({ verdict: 'PASS' });
      expect(baseline.testsHash).toBe(base.verdict.testsHash);
    },
    SLOW,
  );

  it(
    'grades skips, xfails, xpasses and absent ids as SWE-bench does from `pytest -rA`',
    async () => {
      // Each case with the gold patch: the lists alone decide.
      const cases: Array<[string, { existing?: string[]; hidden?: string[] }, string, RegExp]> = [
        ['an xfail FAIL_TO_PASS', { hidden: [ID.xfail] }, 'PASS', /resolved/],
        // `SKIPPED [1] tests/test_calc.py:9: needs a network` names no test: ABSENT.
        [
          'a skipped FAIL_TO_PASS',
          { hidden: [ID.skip] },
          'HIDDEN_FAILED',
          /test_remote \(ABSENT\)/,
        ],
        [
          'a skipped PASS_TO_PASS',
          { existing: [ID.add, ID.skip] },
          'EXISTING_FAILED',
          /test_remote \(ABSENT\)/,
        ],
        // `XPASS id reason` is not a status SWE-bench's parser records.
        [
          'a non-strict XPASS',
          { existing: [ID.xpass] },
          'EXISTING_FAILED',
          /test_sometimes \(ABSENT\)/,
        ],
        [
          'an absent PASS_TO_PASS',
          { existing: [ID.gone] },
          'EXISTING_FAILED',
          /test_gone \(ABSENT\)/,
        ],
      ];
      for (const [name, lists, reason, detail] of cases) {
        const evaluation = await grade(await swebenchTask(suite.dir, lists), suite.gold);
        expect({ name, reason: evaluation.verdict.reason }).toEqual({ name, reason });
        expect(evaluation.verdict.detail).toMatch(detail);
      }
    },
    SLOW,
  );

  it(
    'quotes the cause when a listed test file cannot be collected (a module that is not installed)',
    async () => {
      const task = await swebenchTask(suite.dir, { existing: [ID.add, ID.broken] });
      const evaluation = await grade(task, suite.gold);
      expect(evaluation.verdict.reason).toBe('EXISTING_FAILED');
      expect(evaluation.verdict.detail).toMatch(
        /test_broken\.py::test_x \(ABSENT\); the runner says: tests\/test_broken\.py could not be collected: \| E {3}ModuleNotFoundError: No module named 'flask'/,
      );
      expect(log(task, evaluation)).toContain('report cause (the runner says):');
    },
    SLOW,
  );

  it(
    'shows the cause of a conftest that cannot be imported, in the detail and the oracle log',
    async () => {
      const task = await swebenchTask(suite.dir);
      const candidate = candidateDiff(suite.dir, { ...SPEC.gold, 'conftest.py': 'import flask\n' });
      const evaluation = await grade(task, candidate);
      expect(evaluation.verdict.verdict).toBe('FAIL');
      // The session never began: every declared test is an error (SWE-bench's parser
      // records none of them: ABSENT), and the detail quotes the report's cause.
      expect(evaluation.verdict).toMatchObject({ reason: 'EXISTING_FAILED' });
      expect(evaluation.verdict.detail).toMatch(/\(ABSENT\)/);
      expect(evaluation.verdict.detail).toContain(
        "the runner says: ImportError while loading conftest '/repo/conftest.py'. | E   ModuleNotFoundError: No module named 'flask'",
      );
      expect(evaluation.tests.tests.every((t) => t.outcome === 'error')).toBe(true);
      expect(evaluation.tests.tests.length).toBeGreaterThan(0);
      const text = log(task, evaluation);
      expect(text).toMatch(
        /report cause \(the runner says\):\n {2}\| ImportError while loading conftest '\/repo\/conftest\.py'\./,
      );
    },
    SLOW,
  );
});
