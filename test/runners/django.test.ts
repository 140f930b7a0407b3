// The built-in django runner on real Django (Debian bookworm's python3-django 3.2, Python
// 3.11), in a work tree laid out as Django's own (tests/runtests.py, the settings module
// test_sqlite, apps as label folders): run directly beside SWE-bench's own command, whose log
// SWE-bench's parse_log_django grades (test/fixtures/django/parse_log_django.py, copied from
// SWE-bench), so that every `swebench` status the runner reports is checked against the real
// parser; and through the oracle (evaluate), where the gold patch passes, the baseline fails,
// an import error in the candidate's code makes every test `error` with its cause, and
// candidates that forge a pass fail.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/bundle.js';
import { runnerSource } from '../../src/runners/index.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { expectSentinelsHeld, outcomes } from '../helpers/grade.js';
import { HIDDEN, inImage, readReport, REPO, statuses, workTree } from '../helpers/django-tree.js';
import { leftovers } from '../helpers/home.js';
import {
  candidateDiff,
  withIds,
  type Files,
  type RepoBundleSpec,
} from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';
import { commit, newRepo } from '../helpers/repos.js';
import { proctor } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-django');
const SLOW = 300_000;
const IMAGE = 'proctor-test-django:latest';

const id = (method: string, cls: string) => `${method} (outcomes.tests.${cls}.${method})`;
const ID = {
  small: id('test_small', 'Outcomes'),
  wrong: id('test_wrong', 'Outcomes'),
  broken: id('test_broken', 'Outcomes'),
  remote: id('test_remote', 'Outcomes'),
  knownBug: id('test_known_bug', 'Outcomes'),
  fixedBug: id('test_fixed_bug', 'Outcomes'),
  documented: 'Adding zero changes nothing.',
  documentedWrong: 'Two and two make five.',
  cases: id('test_cases', 'Outcomes'),
  casePass: id('test_cases_pass', 'Outcomes'),
  afterSubtests: id('test_z_after_subtests', 'Outcomes'),
  query: id('test_query', 'Database'),
  setupError: id('test_one', 'Unavailable'),
  gone: id('test_gone', 'Outcomes'),
  // Python 3.11's subtest line, as parse_log_django keys it.
  subtest: `${id('test_cases', 'Outcomes')} (a=1)`,
  // The failure summary's `FAIL: test_wrong (…)`, which the parser keys by its first word.
  bare: 'test_wrong',
};
const HIDDEN_ID = {
  add: 'test_add (adding.tests.Adding.test_add)',
  negative: 'Adding negatives gives their sum.',
  sums: 'test_sums (adding.tests.Adding.test_sums)',
};

const STATUSES: Record<string, [string, string]> = {
  [ID.small]: ['passed', 'PASSED'],
  [ID.wrong]: ['failed', 'FAILED'],
  [ID.broken]: ['error', 'ERROR'],
  [ID.remote]: ['skipped', 'SKIPPED'],
  [ID.knownBug]: ['skipped', 'ABSENT'],
  [ID.fixedBug]: ['failed', 'ABSENT'],
  [ID.documented]: ['passed', 'PASSED'],
  [ID.documentedWrong]: ['failed', 'FAILED'],
  [ID.cases]: ['failed', 'ABSENT'],
  [ID.casePass]: ['passed', 'PASSED'],
  [ID.afterSubtests]: ['passed', 'PASSED'],
  [ID.query]: ['passed', 'PASSED'],
  [ID.setupError]: ['error', 'ABSENT'],
  [ID.subtest]: ['failed', 'FAILED'],
  [ID.bare]: ['failed', 'FAILED'],
};

const SPEC: RepoBundleSpec = {
  id: 'django-outcomes',
  runner: 'django',
  from: IMAGE,
  repo: REPO,
  hidden: { 'tests/adding/__init__.py': '', 'tests/adding/tests.py': HIDDEN },
  gold: { 'calc.py': 'def add(a, b):\n    return a + b\n' },
  existing: [ID.small, ID.documented],
  hiddenIds: Object.values(HIDDEN_ID),
  testSeconds: 120,
};

const suite = runnerSuite(docker, SCOPE, { image: 'django', spec: SPEC });
const { grade } = suite;

describe('the built-in django runner, directly', () => {
  it(
    "reports each outcome as Proctor's status and as parse_log_django records it from SWE-bench's own command",
    async () => {
      const root = workTree();
      writeFileSync(join(root, 'list'), [...Object.keys(STATUSES), ID.gone].join('\n') + '\n');
      await inImage(
        IMAGE,
        root,
        [
          'python3 /w/run /w/list /w/report.json > /w/runner.log 2>&1',
          './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 outcomes.tests > /w/swebench.log 2>&1',
          'python3 /w/parse_log_django.py /w/swebench.log > /w/parsed.json',
        ].join('; '),
      );
      const report = readReport(root);
      expect(statuses(report)).toEqual(STATUSES);
      // The same run's statuses, as SWE-bench's parser reads its own command's log.
      const parsed = JSON.parse(readFileSync(join(root, 'parsed.json'), 'utf8')) as Record<
        string,
        string
      >;
      for (const test of report.tests) {
        expect([test.id, test.swebench]).toEqual([test.id, parsed[test.id] ?? 'ABSENT']);
      }
      expect(report.cause).toMatch(/RuntimeError: no service/);
      // The runner's output is runtests.py's, as SWE-bench's command prints it.
      expect(readFileSync(join(root, 'runner.log'), 'utf8')).toMatch(
        /test_small \(outcomes\.tests\.Outcomes\.test_small\) \.\.\. ok/,
      );
    },
    SLOW,
  );

  it(
    'reports IDs in the form the list uses: unittest before Python 3.11 (`test_x (module.Class)`)',
    async () => {
      const root = workTree();
      const old = (m: string, c: string) => `${m} (outcomes.tests.${c})`;
      const list = [
        old('test_small', 'Outcomes'),
        old('test_wrong', 'Outcomes'),
        old('test_cases', 'Outcomes'),
        old('test_cases_pass', 'Outcomes'),
        old('test_z_after_subtests', 'Outcomes'),
        old('test_one', 'Unavailable'),
      ];
      writeFileSync(join(root, 'list'), list.join('\n') + '\n');
      await inImage(IMAGE, root, 'python3 /w/run /w/list /w/report.json > /w/runner.log 2>&1');
      expect(statuses(readReport(root))).toEqual({
        [list[0]!]: ['passed', 'PASSED'],
        [list[1]!]: ['failed', 'FAILED'],
        // Before 3.11 unittest prints nothing after a test whose subtest failed, so the next
        // test's `... ok` ends the same line: the parser records neither.
        [list[2]!]: ['failed', 'ABSENT'],
        [list[3]!]: ['passed', 'ABSENT'],
        [list[4]!]: ['passed', 'PASSED'],
        [list[5]!]: ['error', 'ABSENT'],
      });
    },
    SLOW,
  );

  it(
    "reports every listed test error, with the error and its traceback's last lines as the cause, when runtests.py dies before its tests",
    async () => {
      const root = workTree({ 'calc.py': 'raise ImportError("calc is broken")\n' });
      writeFileSync(join(root, 'list'), `${ID.small}\n${ID.documented}\n`);
      await inImage(IMAGE, root, 'python3 /w/run /w/list /w/report.json > /w/runner.log 2>&1');
      const report = readReport(root);
      expect(statuses(report)).toEqual({
        [ID.small]: ['error', 'ABSENT'],
        [ID.documented]: ['error', 'ABSENT'],
      });
      // The error first, then the traceback's last lines, through the checkout's frame.
      expect(report.cause).toMatch(/^ImportError: calc is broken\n/);
      expect(report.cause).toMatch(/File "\/w\/repo\/calc\.py", line 1/);
    },
    SLOW,
  );

  it(
    'runs every test of a folder listed as a path, and nothing when the list is empty',
    async () => {
      const root = workTree();
      writeFileSync(join(root, 'list'), 'tests/outcomes\n');
      writeFileSync(join(root, 'empty'), '');
      await inImage(
        IMAGE,
        root,
        'python3 /w/run /w/list /w/report.json > /w/runner.log 2>&1; python3 /w/run /w/empty /w/empty.json',
      );
      const ids = readReport(root).tests.map((t) => t.id);
      expect(ids).toContain(ID.small);
      expect(ids).toContain(ID.query);
      // Not Unavailable.test_one: its class never started, so no test of it is known.
      expect(ids).toHaveLength(12);
      expect(JSON.parse(readFileSync(join(root, 'empty.json'), 'utf8'))).toEqual({
        schema: 1,
        tests: [],
      });
    },
    SLOW,
  );
});

/** Appended to calc.py: the candidate's code, which runtests.py and the tests import. */
const forged = (code: string): Files => ({
  'calc.py': `def add(a, b):\n    return a - b\n\n${code}`,
});

const FORGERIES: Record<string, Files> = {
  // unittest's result made to count a failure as a success.
  resultPatch: forged(`import unittest.result as _r

_r.TestResult.addFailure = lambda self, test, err: self.addSuccess(test)
`),
  // Every TestCase run reported a success.
  unittestRun: forged(`import unittest

def _run(self, result=None):
    result.startTest(self)
    result.addSuccess(self)
    result.stopTest(self)


unittest.TestCase.run = _run
`),
  // assertEqual made a no-op: unittest.case is watched whole now, and the sentinels see it too.
  assertEqualNoop: forged(`import unittest

unittest.TestCase.assertEqual = lambda self, first, second, msg=None: None
`),
  // The runner's own sender made to say ok.
  runnerPatch: forged(`import sys

_m = sys.modules.get("proctor_django_runner")
if _m is not None:
    _send = _m._send

    def _forged(message):
        if message.get("k") in ("fail", "error", "sub"):
            message["k"] = "ok"
        _send(message)

    _m._send = _forged
`),
  // What SWE-bench's parser would take for passes, printed: the runner reads no output.
  fakeLines: forged(`import sys

for _id in ("test_add (adding.tests.Adding.test_add)", "Adding negatives gives their sum.",
            "test_sums (adding.tests.Adding.test_sums)"):
    sys.stdout.write(_id + " ... ok\\n")
    sys.stderr.write(_id + " ... ok\\n")
`),
  // Straight into the outcome stream (its descriptor and the sentinels' module are on the
  // test process's command line): every test it can name ok, the end, exit.
  streamForgery: forged(`import json
import os
import re

_cmd = open("/proc/self/cmdline", "rb").read().split(b"\\0")
if b"--proctor-boot" in _cmd:
    _at = _cmd.index(b"--proctor-boot")
    _fd, _label, _path = int(_cmd[_at + 1]), _cmd[_at + 2].decode(), _cmd[_at + 3].decode()
    _tests = [(m, _label + "." + c) for c, m in re.findall(r"class (\\w+)\\(.*?def (test_\\w+)", open(_path).read(), re.S)]
    _tests += [(m, "adding.tests.Adding") for m in ("test_add", "test_negative", "test_sums")]
    _lines = [json.dumps({"t": "ev", "k": "ok", "m": m, "c": c}) for m, c in _tests]
    os.write(_fd, ("\\n".join(_lines + [json.dumps({"t": "end"})]) + "\\n").encode())
    os._exit(0)
`),
  exitAtImport: forged('import os\nos._exit(0)\n'),
};

describe('the built-in django runner under the oracle', () => {
  it(
    'fails the baseline (the hidden tests fail) and passes the gold patch, with the sentinels holding',
    async () => {
      const baseline = await grade(suite.bundle, null);
      expect(baseline.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(outcomes(baseline, 'existing')).toEqual({
        [ID.small]: 'passed',
        [ID.documented]: 'passed',
      });
      expect(outcomes(baseline, 'hidden')).toEqual({
        [HIDDEN_ID.add]: 'failed',
        [HIDDEN_ID.negative]: 'failed',
        [HIDDEN_ID.sums]: 'failed',
      });
      const evaluation = await grade(suite.bundle, suite.gold);
      expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expectSentinelsHeld(evaluation);
    },
    SLOW,
  );

  it(
    "makes every test error, not tampered, when the candidate's code cannot be imported",
    async () => {
      const evaluation = await grade(
        suite.bundle,
        candidateDiff(suite.dir, { 'calc.py': 'raise ImportError("calc is broken")\n' }),
      );
      expect(evaluation.verdict.verdict).toBe('FAIL');
      expect(evaluation.phases?.existing.tampered ?? null).toBeNull();
      expect(outcomes(evaluation, 'existing')).toEqual({
        [ID.small]: 'error',
        [ID.documented]: 'error',
      });
    },
    SLOW,
  );

  it(
    'finds listed tests of a module the hidden patch does not touch, failed and skipped as they are',
    async () => {
      const task = await loadBundle(withIds(suite.dir, { existing: [ID.wrong, ID.remote] }));
      expect(outcomes(await grade(task, suite.gold), 'existing')).toEqual({
        [ID.wrong]: 'failed',
        [ID.remote]: 'skipped',
      });
    },
    SLOW,
  );

  const cases: Array<[string, string, RegExp]> = [
    ['resultPatch', 'TAMPERED', /tripwire: unittest\.result\.TestResult\.addFailure was replaced/],
    ['unittestRun', 'TAMPERED', /tripwire: unittest\.case\.TestCase\.run was replaced/],
    ['assertEqualNoop', 'TAMPERED', /tripwire: unittest\.case\.TestCase\.assertEqual was replaced/],
    ['runnerPatch', 'TAMPERED', /tripwire: proctor_django_runner\._send was replaced/],
    ['streamForgery', 'TAMPERED', /sentinel \w+ \(must be (failed|error)\) reported passed/],
    ['fakeLines', 'HIDDEN_FAILED', /not passed/],
    ['exitAtImport', 'REPORT_INVALID', /ended before the end of its session/],
  ];
  it.each(cases)(
    'fails the %s forgery: %s',
    async (name, reason, detail) => {
      const evaluation = await grade(suite.bundle, candidateDiff(suite.dir, FORGERIES[name]!));
      expect(evaluation.verdict.verdict).toBe('FAIL');
      expect(evaluation.verdict.reason).toBe(reason);
      expect(evaluation.verdict.detail).toMatch(detail);
    },
    SLOW,
  );
});

describe('proctor derive --runner django', () => {
  it(
    'derives the lists by running the scope (tests/*/**/test*.py) in four states, and the bundle passes baseline --gold',
    async () => {
      const repo = newRepo();
      const base = commit(repo, REPO, 'base');
      const fix = commit(
        repo,
        {
          'calc.py': 'def add(a, b):\n    return a + b\n',
          'tests/adding/__init__.py': '',
          'tests/adding/tests.py': HIDDEN,
        },
        'add: return the sum',
      );
      const environment = tempDir('proctor-env-');
      writeFileSync(join(environment, 'Dockerfile'), `FROM ${IMAGE}\n`);
      const home = tempDir('proctor-home-');
      const out = join(tempDir('proctor-out-'), 'django-add');
      const cli = await proctor([
        ...['--home', home, 'derive', '--repo', repo, '--base', base, '--fix', fix],
        ...['--environment', environment, '--out', out, '--runner', 'django', '--repeat', '1'],
      ]);
      expect(cli.code, cli.stdout + cli.stderr).toBe(0);
      const task = await loadBundle(out);
      // Reported under the running Python's form (3.11); a docstring test too.
      expect(task.hiddenIds).toEqual([
        HIDDEN_ID.add,
        'test_negative (adding.tests.Adding.test_negative)',
        HIDDEN_ID.sums,
      ]);
      expect(task.existingIds).toContain(ID.small);
      expect(task.existingIds).not.toContain(ID.wrong);
      expect(readFileSync(join(out, 'tests/run'))).toEqual(await runnerSource('django'));
      expect(cli.stdout).toMatch(/1 valid, 0 quarantined/);
      expect(await leftovers(home)).toEqual([]);
    },
    SLOW,
  );
});
