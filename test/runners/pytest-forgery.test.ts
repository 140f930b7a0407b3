// Candidates that fix nothing and try to forge a PASS through the built-in pytest runner, graded
// by the real oracle on Debian's python3-pytest: each ends FAIL. Per layer (integrity.ts, the
// runner's header) there is a forgery that only that layer catches: the tripwires (a report
// patch that spares the sentinels' file), the collector (a report written where the test
// process finds its path, then an exit before the session ends) and the base configuration (a
// pytest.ini that loads a plugin of the candidate's). The sentinels catch every blanket
// forgery, and two of them (test functions made no-ops, assertEqual made a no-op) are now
// seen by the tripwires too, which watch the collection of test functions and the assertion
// helpers. The honest gold patch stays PASS, and no sentinel ever shows in what a grade
// stores.
import { describe, expect, it } from 'vitest';
import { type Evaluation } from '../../src/oracle/evaluate.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { expectSentinelsHeld, reported } from '../helpers/grade.js';
import { CALC, CALC_REPO } from '../helpers/calc-repo.js';
import { candidateDiff, type Files, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-pytest-forgery');
const SLOW = 300_000;

const HIDDEN = `from calc import add


def test_add():
    assert add(2, 3) == 5


def test_negative():
    assert add(-1, -1) == -2
`;

const HIDDEN_CASE = `import unittest

from calc import add


class AddTest(unittest.TestCase):
    def test_add_case(self):
        self.assertEqual(add(2, 3), 5)
`;

const ID = {
  zero: 'tests/test_calc.py::test_zero',
  same: 'tests/test_calc.py::test_same',
  add: 'tests/test_hidden.py::test_add',
  negative: 'tests/test_hidden.py::test_negative',
  addCase: 'tests/test_hidden_case.py::AddTest::test_add_case',
};

/** Appended to calc.py: the candidate's code, which the tests import. */
const forged = (code: string): Files => ({ 'calc.py': `${CALC}\n${code}` });

const FORGERIES: Record<string, Files> = {
  // The first forgery: every report marked passed.
  reportPatch: forged(`import _pytest.reports as _r

_orig = _r.TestReport.from_item_and_call.__func__


def _forged(cls, item, call):
    report = _orig(cls, item, call)
    report.outcome = "passed"
    report.longrepr = None
    return report


_r.TestReport.from_item_and_call = classmethod(_forged)
`),
  // The tripwires alone: the same patch, sparing every file but the task's own tests, so
  // the sentinels (in a new file) report honestly.
  reportPatchSparingSentinels: forged(`import _pytest.reports as _r

_orig = _r.TestReport.from_item_and_call.__func__


def _forged(cls, item, call):
    report = _orig(cls, item, call)
    if item.nodeid.startswith(("tests/test_hidden.py::", "tests/test_calc.py::")):
        report.outcome = "passed"
        report.longrepr = None
    return report


_r.TestReport.from_item_and_call = classmethod(_forged)
`),
  // Every test function becomes a no-op, through pytest's collection: the sentinel that must
  // fail passes, and a tripwire sees the method replaced.
  noOpTests: forged(`import _pytest.python as _p

_getobj = _p.Function._getobj


def _noop(self):
    obj = _getobj(self)
    def run(*args, **kwargs):
        return None
    run.__name__ = getattr(obj, "__name__", "test")
    return run


_p.Function._getobj = _noop
`),
  // The runner's own module: its outcome sender made to say passed.
  runnerPatch: forged(`import sys

_m = sys.modules.get("proctor_pytest_runner")
if _m is not None:
    _send = _m._send

    def _forged(message):
        if message.get("t") == "outcome":
            message["status"] = "passed"
        _send(message)

    _m._send = _forged
    _m._record = lambda test_id, status: None
`),
  // Straight into the outcome stream: every listed id passed, the session ended, exit.
  streamForgery: forged(`import json
import os
import sys


def _arg(name):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


_fd, _ids = _arg("--proctor-fd"), _arg("--proctor-ids")
if _fd and _ids:
    lines = [json.dumps({"t": "hello", "v": 2})]
    for test_id in open(_ids).read().split("\\n"):
        if test_id:
            lines.append(json.dumps({"t": "outcome", "node": test_id, "when": "call",
                                     "ids": [test_id], "status": "passed"}))
    lines.append(json.dumps({"t": "end"}))
    os.write(int(_fd), ("\\n".join(lines) + "\\n").encode())
    os._exit(0)
`),
  // The report itself: its path from the arguments (the old runner's --proctor-report or
  // --junitxml), else the collector's folder from the runner's own command line, then exit.
  reportWriter: forged(`import json
import os
import sys

_report = None
for _flag in ("--proctor-report", "--junitxml"):
    if _flag in sys.argv:
        _report = sys.argv[sys.argv.index(_flag) + 1]
if _report is None:
    _pid = os.getppid()
    _cmd = open("/proc/%d/cmdline" % _pid, "rb").read().split(b"\\0")
    if b"--proctor-channel" in _cmd:
        _report = os.path.join(os.path.dirname(_cmd[_cmd.index(b"--proctor-channel") + 1].decode()), "report")
_ids = [l for l in open(sys.argv[sys.argv.index("--proctor-ids") + 1]).read().split("\\n") if l]
try:
    with open(_report, "w") as f:
        json.dump({"schema": 1, "tests": [{"id": i, "status": "passed"} for i in _ids]}, f)
except OSError:
    pass
os._exit(0)
`),
  // A plugin of the candidate's, loaded through the test configuration.
  iniPlugin: {
    'pytest.ini': '[pytest]\naddopts = -p calc_plugin\n',
    'calc_plugin.py': `import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
`,
  },
  // A conftest at the top (this bundle denies only tests/**): a hook wrapper passing all.
  conftest: {
    'conftest.py': `import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
`,
  },
  exitAtImport: forged('import os\nos._exit(0)\n'),
  // unittest-style tests: every TestCase run reported a success (a tripwire watches run).
  unittestRun: forged(`import unittest

_run = unittest.TestCase.run


def _forged(self, result=None):
    result.addSuccess(self)
    return result


unittest.TestCase.run = _forged
`),
  // assertEqual made a no-op: the sentinel's unittest copy that must fail passes, and a
  // tripwire sees the method replaced.
  assertEqualNoop: forged(`import unittest

unittest.TestCase.assertEqual = lambda self, first, second, msg=None: None
`),
  // A plugin "installed" in the checkout: python -m pytest puts the checkout on sys.path, and
  // pytest autoloads the pytest11 entry points of every distribution it finds there.
  distInfoPlugin: {
    'calc_tools-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: calc-tools\nVersion: 1.0\n',
    'calc_tools-1.0.dist-info/entry_points.txt': '[pytest11]\ncalc_tools = calc_tools_plugin\n',
    'calc_tools_plugin.py': `import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if "sentinel" not in item.nodeid:
        outcome.get_result().outcome = "passed"
`,
  },
};

const SPEC: RepoBundleSpec = {
  id: 'pytest-forgery',
  runner: 'pytest',
  repo: CALC_REPO,
  hidden: { 'tests/test_hidden.py': HIDDEN, 'tests/test_hidden_case.py': HIDDEN_CASE },
  gold: { 'calc.py': 'def add(a, b):\n    return a + b\n' },
  existing: [ID.zero, ID.same],
  hiddenIds: [ID.add, ID.negative, ID.addCase],
};

const suite = runnerSuite(docker, SCOPE, { image: 'runners', spec: SPEC });
/** The bundle graded against `candidate` (null: a baseline). */
const grade = (candidate: Buffer | null): Promise<Evaluation> =>
  suite.grade(suite.bundle, candidate);

describe('forgeries through the built-in pytest runner', () => {
  it(
    'passes the gold patch every time, with the sentinels and tripwires holding and never stored',
    async () => {
      for (let i = 0; i < 3; i += 1) {
        const evaluation = await grade(suite.gold);
        expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
        expect(reported(evaluation).sort()).toEqual(Object.values(ID).sort());
        // Both phases ran the protocol: three sentinels each, each as it must be.
        expectSentinelsHeld(evaluation);
      }
    },
    SLOW,
  );

  it(
    'quarantines nothing: the baseline is valid (hidden tests fail, existing pass)',
    async () => {
      const evaluation = await grade(null);
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(evaluation.phases?.existing.tampered ?? null).toBeNull();
    },
    SLOW,
  );

  const cases: Array<[string, string, RegExp]> = [
    ['reportPatch', 'TAMPERED', /TestReport\.from_item_and_call was replaced/],
    ['reportPatchSparingSentinels', 'TAMPERED', /tripwire: _pytest\.reports\.TestReport/],
    [
      'noOpTests',
      'TAMPERED',
      /tripwire: tests\/test_\w+\.py::test_\w+: its test function's code is not the one compiled/,
    ],
    ['runnerPatch', 'TAMPERED', /tripwire: proctor_pytest_runner\._send was replaced/],
    ['streamForgery', 'TAMPERED', /sentinel \w+ \(must be (failed|error)\) reported passed/],
    ['reportWriter', 'REPORT_INVALID', /ended before the end of its session/],
    ['iniPlugin', 'HIDDEN_FAILED', /not passed/],
    ['conftest', 'TAMPERED', /sentinel \w+ \(must be (failed|error)\) reported passed/],
    ['exitAtImport', 'REPORT_INVALID', /ended before the end of its session/],
    ['distInfoPlugin', 'HIDDEN_FAILED', /not passed/],
    ['unittestRun', 'TAMPERED', /tripwire: unittest\.case\.TestCase\.run was replaced/],
    ['assertEqualNoop', 'TAMPERED', /tripwire: unittest\.case\.TestCase\.assertEqual was replaced/],
  ];
  it.each(cases)(
    'fails the %s forgery: %s',
    async (name, reason, detail) => {
      const evaluation = await grade(candidateDiff(suite.dir, FORGERIES[name]!));
      expect(evaluation.verdict.verdict).toBe('FAIL');
      expect(evaluation.verdict.reason).toBe(reason);
      expect(evaluation.verdict.detail).toMatch(detail);
      // The sentinels' ids are in no stored list, whatever the run reported.
      expect(reported(evaluation).every((id) => Object.values(ID).includes(id))).toBe(true);
    },
    SLOW,
  );

  it.each(['noOpTests', 'assertEqualNoop'])(
    'the sentinels see the %s forgery too: the one that must fail passed',
    async (name) => {
      const evaluation = await grade(candidateDiff(suite.dir, FORGERIES[name]!));
      const wrong = evaluation.phaseRecords.flatMap((r) =>
        (r.integrity?.sentinels ?? []).filter((s) => s.status !== s.expect),
      );
      expect(wrong.some((s) => s.expect === 'failed' && s.status === 'passed')).toBe(true);
    },
    SLOW,
  );
});
