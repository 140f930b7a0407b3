// Sentinels inside the hidden test files, through the built-in pytest runner and the real
// oracle (src/runners/core/canary.py writes them in the trusted step, src/oracle/canaries.ts
// judges them): one that must pass and one that must fail, each right after a listed test, in
// its class, named as the file's tests are, calling the code under test as that file's tests
// do, and committed with the file. A forgery that disarms the tests of git-tracked files (a
// hook registered late that sets each tracked item's runtest to a no-op) spared the sentinels
// of a file of their own, which git does not track: in the existing phase, which keeps that
// file, they still hold; in the hidden phase the must-fail one now passes. The hidden tests'
// assertions are ones the canaries' mutator does not understand, so that in the hidden
// tests' file only the sentinels see the forgery. The example py-duration-parse's gold stays
// PASS.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/bundle.js';
import { canaryLines, judgeCanaries, type CanaryRecord } from '../../src/oracle/canaries.js';
import { type Evaluation } from '../../src/oracle/evaluate.js';
import { renderOracleLog } from '../../src/oracle/oracle-log.js';
import { resolveImage } from '../../src/sandbox/index.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { forgeryTests } from '../helpers/forgery-tests.js';
import { expectSentinelsHeld, gradeIn, reported } from '../helpers/grade.js';
import { ROOT } from '../helpers/processes.js';
import { candidateDiff, withIds, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-pytest-sentinels');
const SLOW = 300_000;

const CALC = 'def add(a, b):\n    return a - b\n';

const EXISTING = `from calc import add


def test_zero():
    assert add(0, 0) == 0


class TestOuter:
    class TestInner:
        def test_nested_zero(self):
            assert add(0, 0) == 0
`;

// Assertions the mutator does not understand (a comparison other than ==, an isinstance):
// no canary is placed, the sentinels alone are in the file.
const HIDDEN = `import unittest

from calc import add


def test_add():
    assert add(2, 3) > 4


class AddTest(unittest.TestCase):
    def test_add_case(self):
        self.assertGreater(add(2, 3), 4)


class TestOuter:
    class TestInner:
        def test_nested(self):
            assert add(2, 3) > 4
`;

const ID = {
  zero: 'tests/test_calc.py::test_zero',
  add: 'tests/test_hidden.py::test_add',
  addCase: 'tests/test_hidden.py::AddTest::test_add_case',
};

// Tests of a class in a class: the runner places nothing after them.
const NESTED = {
  existing: 'tests/test_calc.py::TestOuter::TestInner::test_nested_zero',
  hidden: 'tests/test_hidden.py::TestOuter::TestInner::test_nested',
};

// A plugin registered during collection, on the plugin manager found through the garbage
// collector: every item of a file git tracks runs nothing.
const LATE_HOOK = `${CALC}

import gc
import subprocess

try:
    _tracked = set(subprocess.run(["git", "-c", "safe.directory=*", "ls-files"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL).stdout.decode().split("\\n"))
except OSError:
    _tracked = set()


class _Late:
    def pytest_itemcollected(self, item):
        if item.nodeid.split("::", 1)[0] in _tracked:
            item.runtest = lambda: None


for _obj in gc.get_objects():
    if type(_obj).__name__ == "PytestPluginManager":
        _obj.register(_Late(), "calc-late")
        break
`;

const SPEC: RepoBundleSpec = {
  id: 'pytest-sentinels',
  runner: 'pytest',
  repo: { 'calc/__init__.py': CALC, 'tests/__init__.py': '', 'tests/test_calc.py': EXISTING },
  hidden: { 'tests/test_hidden.py': HIDDEN },
  gold: { 'calc/__init__.py': CALC.replace('a - b', 'a + b') },
  existing: [ID.zero],
  hiddenIds: [ID.add, ID.addCase],
};

const suite = runnerSuite(docker, SCOPE, { image: 'runners', spec: SPEC });
const forged = (): Buffer => candidateDiff(suite.dir, { 'calc/__init__.py': LATE_HOOK });
const hiddenRecord = (evaluation: Evaluation) =>
  evaluation.phaseRecords.find((p) => p.name === 'hidden');

function logOf(evaluation: Evaluation): string {
  return renderOracleLog({
    kind: 'grade',
    bundle: suite.bundle,
    image: { portable: false, kind: 'local_build', imageId: 'x', localId: 'x' },
    runs: [{ title: 'grade', evaluation }],
    verdict: evaluation.verdict,
    startedAt: new Date(0),
    finishedAt: new Date(1),
  });
}

describe('sentinels in the hidden test files, through the built-in pytest runner', () => {
  forgeryTests(suite, {
    forged,
    cases: [['lateHook', [/runtest was set on its item/]]],
    timeout: SLOW,
  });

  it(
    'asks for no sentinels in a run without a diff, in a file or in the tests, and says so',
    async () => {
      const evaluation = await suite.grade(suite.bundle, null);
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(evaluation.phaseRecords).toHaveLength(2);
      for (const phase of evaluation.phaseRecords) {
        expect(phase.integrity).toMatchObject({ sentinels: [], tampered: null });
        expect(phase.canaries).toBeUndefined();
      }
      expect(logOf(evaluation)).toContain(
        'integrity: tripwires held (no sentinels: the run has no candidate)',
      );
      // The gold run has them: a file of three in each phase, or a pair in the test files.
      const gold = await suite.grade(suite.bundle, suite.gold);
      expect(logOf(gold)).not.toContain('no sentinels');
      expectSentinelsHeld(gold);
    },
    SLOW,
  );

  it(
    'writes a must-pass and a must-fail sentinel after the hidden tests, calling add as they do, and stores none',
    async () => {
      const evaluation = await suite.grade(suite.bundle, suite.gold);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
      expectSentinelsHeld(evaluation);
      const hidden = hiddenRecord(evaluation)!;
      // No canary of a hidden test: their assertions are not the mutator's (the sampled
      // existing test has one).
      expect(hidden.canaries?.mutants.map((m) => m.test)).toEqual([ID.zero]);
      // A pair in the hidden tests' file, after hidden tests only: none after the sampled
      // existing test, which the hidden run does not report (nor judge a sentinel by).
      const sentinels = hidden.canaries?.sentinels ?? [];
      expect(sentinels.map((s) => s.expect).sort()).toEqual(['failed', 'passed']);
      for (const s of sentinels) {
        expect([ID.add, ID.addCase]).toContain(s.test);
        expect(s.calls).toBe('add(2, 3)');
        // Named as the test it follows, in its class: `test_add_<word>`.
        expect(s.id).toMatch(
          s.test === ID.add
            ? /^tests\/test_hidden\.py::test_add_[a-z]+$/
            : /^tests\/test_hidden\.py::AddTest::test_add_case_[a-z]+$/,
        );
      }
      // The existing phase (no canary step before it) keeps its file of sentinels.
      const existing = evaluation.phaseRecords.find((p) => p.name === 'existing');
      expect(existing?.integrity?.sentinels).toHaveLength(3);
      // The ids stay in the oracle log: not in what the grade stores.
      expect(reported(evaluation).sort()).toEqual(Object.values(ID).sort());
      expect(evaluation.tests.tests.map((t) => t.id).sort()).toEqual(Object.values(ID).sort());
      expect(evaluation.verdict.detail ?? '').not.toContain('test_add_');
      const log = logOf(evaluation);
      for (const s of sentinels) {
        expect(log).toContain(
          `  sentinel ${s.id} in the file of ${s.test} (must be ${s.expect}, calls ${s.calls}): ${s.expect}`,
        );
      }
      expect(log).not.toContain('sentinels: in a file of their own');
    },
    SLOW,
  );

  it(
    'sees the no-op made of every tracked test in its must-fail sentinel, which the file of their own missed',
    async () => {
      const evaluation = await suite.grade(suite.bundle, forged());
      expect(evaluation.verdict.reason, evaluation.verdict.detail).toBe('TAMPERED');
      // The existing phase's sentinels, untracked, held: only the tripwire saw it there.
      const existing = evaluation.phaseRecords.find((p) => p.name === 'existing');
      for (const s of existing?.integrity?.sentinels ?? []) expect(s.status).toBe(s.expect);
      expect(existing?.integrity?.sentinels).toHaveLength(3);
      // In the hidden tests' file, committed with it, the must-fail sentinel ran as a no-op.
      const sentinels = hiddenRecord(evaluation)?.canaries?.sentinels ?? [];
      expect(sentinels.length).toBeGreaterThan(0);
      for (const s of sentinels) expect(s.status, `${s.expect} after ${s.test}`).toBe('passed');
      expect(logOf(evaluation)).toMatch(
        /sentinel \S+ in the file of \S+ \(must be failed, calls add\(\d, \d\)\): passed/,
      );
    },
    SLOW,
  );

  it(
    "keeps the sentinels' file of their own when no listed test is in a file it parsed, and says so",
    async () => {
      // Every listed test (and the sampled existing one) is in a class in a class.
      const task = await loadBundle(
        withIds(suite.dir, { existing: [NESTED.existing], hidden: [NESTED.hidden] }),
      );
      const evaluation = await suite.grade(task, suite.gold);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
      const hidden = hiddenRecord(evaluation)!;
      expect(hidden.canaries?.sentinels).toEqual([]);
      expect(hidden.integrity?.sentinels).toHaveLength(3);
      for (const s of hidden.integrity?.sentinels ?? []) expect(s.status).toBe(s.expect);
      expect(logOf(evaluation)).toContain(
        '  sentinels: in a file of their own, not in the test files: no listed test is in a file the runner parsed',
      );
    },
    SLOW,
  );

  it(
    'places none after a sampled existing test alone, which the hidden run does not report, and says so',
    async () => {
      // The hidden test is in a class in a class; the sampled existing one is a plain function.
      const task = await loadBundle(
        withIds(suite.dir, { existing: [ID.zero], hidden: [NESTED.hidden] }),
      );
      const evaluation = await suite.grade(task, suite.gold);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
      const hidden = hiddenRecord(evaluation)!;
      // The existing test still gets its canary, in its file.
      expect(hidden.canaries?.mutants.map((m) => m.test)).toEqual([ID.zero]);
      expect(hidden.canaries?.sentinels).toEqual([]);
      expect(hidden.integrity?.sentinels).toHaveLength(3);
      for (const s of hidden.integrity?.sentinels ?? []) expect(s.status).toBe(s.expect);
      expect(logOf(evaluation)).toContain(
        '  sentinels: in a file of their own, not in the test files: no hidden test is in a file the runner parsed (only sampled existing ones)',
      );
    },
    SLOW,
  );

  it(
    "passes the example py-duration-parse's gold patch with its sentinels in the hidden file",
    async () => {
      const bundle = await loadBundle(join(ROOT, 'examples', 'py-duration-parse'));
      const image = (await resolveImage(docker, bundle.environment)).localId;
      const gold = readFileSync(bundle.paths.goldPatch ?? '');
      const evaluation = await gradeIn(docker, SCOPE, image, bundle, gold);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
      expectSentinelsHeld(evaluation);
      const record = hiddenRecord(evaluation)!.canaries!;
      expect(record.sentinels).toHaveLength(2);
      for (const s of record.sentinels) {
        expect(s.id).toMatch(/^tests\/test_durations\.py::test_[a-z_]+$/);
        expect(s.calls).toMatch(/^(parse_duration|format_duration)\(/);
      }
      const lines = canaryLines(record).join('\n');
      expect(lines).toMatch(
        /sentinel \S+ in the file of \S+ \(must be passed, calls \w+\(.*\)\): passed/,
      );
      expect(lines).toMatch(
        /sentinel \S+ in the file of \S+ \(must be failed, calls \w+\(.*\)\): failed/,
      );
    },
    SLOW,
  );
});

// How the oracle judges them (pure logic over a report).
describe('judging the in-file sentinels', () => {
  const record = (): CanaryRecord => ({
    mutants: [],
    uncovered: [],
    sentinels: [
      { id: 't.py::test_a_x', test: 't.py::test_a', expect: 'passed', calls: 'f(1)' },
      { id: 't.py::test_a_y', test: 't.py::test_a', expect: 'failed', calls: 'f(1)' },
    ],
    sentinelsWhy: null,
    error: null,
  });
  const judge = (statuses: Record<string, 'passed' | 'failed' | 'error' | 'skipped'>) =>
    judgeCanaries(record(), new Map(Object.entries(statuses)), new Map(), []);

  it('holds when the must-pass one passed and the must-fail one failed, and drops both ids', () => {
    const judged = judge({
      't.py::test_a': 'passed',
      't.py::test_a_x': 'passed',
      't.py::test_a_y': 'failed',
    });
    expect(judged.sentinels).toBeNull();
    expect([...judged.tests.keys()]).toEqual(['t.py::test_a']);
  });

  it('is TAMPERED when the must-fail one passed, whatever the test it follows did', () => {
    const judged = judge({
      't.py::test_a': 'failed',
      't.py::test_a_x': 'failed',
      't.py::test_a_y': 'passed',
    });
    expect(judged.sentinels).toBe(
      'sentinel beside t.py::test_a in its file (must be failed) reported passed',
    );
  });

  it('is TAMPERED when the must-pass one did not pass after a test that passed', () => {
    const judged = judge({
      't.py::test_a': 'passed',
      't.py::test_a_x': 'skipped',
      't.py::test_a_y': 'failed',
    });
    expect(judged.sentinels).toBe(
      'sentinel beside t.py::test_a in its file (must be passed) reported skipped',
    );
  });

  it('is TAMPERED when either is missing from the report after a test that passed', () => {
    const judged = judge({ 't.py::test_a': 'passed' });
    expect(judged.sentinels).toMatch(
      /must be passed\) was not reported; .*must be failed\) was not reported/,
    );
  });

  it('lets a must-pass one fail with the test it follows (a broken setUp fails both honestly)', () => {
    const judged = judge({
      't.py::test_a': 'error',
      't.py::test_a_x': 'error',
      't.py::test_a_y': 'error',
    });
    expect(judged.sentinels).toBeNull();
  });

  it('lets a must-pass one that never finished go beside a declared test that failed or erred (a crash took it), but not beside passing ones', () => {
    const declared = ['t.py::test_a', 't.py::test_b'];
    for (const [b, sentinel, wrong] of [
      ['error', 'error', false],
      ['failed', null, false],
      [null, 'error', false],
      ['passed', 'error', true],
      ['failed', 'failed', true],
    ] as const) {
      const statuses = new Map<string, 'passed' | 'failed' | 'error'>([
        ['t.py::test_a', 'passed'],
        ['t.py::test_a_y', 'failed'],
      ]);
      if (b !== null) statuses.set('t.py::test_b', b);
      if (sentinel !== null) statuses.set('t.py::test_a_x', sentinel);
      const judged = judgeCanaries(record(), statuses, new Map(), declared);
      expect(judged.sentinels !== null, `${b} ${sentinel}`).toBe(wrong);
    }
  });
});
