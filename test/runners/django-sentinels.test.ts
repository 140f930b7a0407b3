// Sentinels inside the hidden test files, through the built-in django runner and the real
// oracle (src/runners/core/canary.py writes them in the trusted step, the runner's
// canary_targets, canary_id and sentinel_files say where and under which id,
// src/oracle/canaries.ts judges them): on real Django (bookworm's python3-django, Python 3.11),
// a must-pass and a must-fail method in the listed test's own TestCase class, right after it,
// calling add as it does, committed with the file, and reported under the listed test's id
// form. A forgery aimed at the git-tracked test files (Django's SimpleTestCase.__call__, which
// no tripwire watches, made to report a success without running a test of a tracked module)
// spared the sentinels of a module of their own, which git does not track: in the existing
// phase, which keeps that module, they still hold; in the hidden phase the must-fail one now
// passes. The hidden tests' assertions are ones the canaries' mutator does not understand, so
// that in the hidden tests' module only the sentinels see the forgery.
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/bundle.js';
import { canaryLines } from '../../src/oracle/canaries.js';
import { type Evaluation } from '../../src/oracle/evaluate.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { CALC, REPO } from '../helpers/django-tree.js';
import { expectSentinelsHeld, hiddenRecord, reported } from '../helpers/grade.js';
import {
  candidateDiff,
  withIds,
  withoutProtocol,
  type RepoBundleSpec,
} from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-django-sentinels');
const SLOW = 300_000;
const IMAGE = 'proctor-test-django:latest';

// Assertions the mutator does not understand (assertGreater, assertLess): no canary of a
// hidden test, the sentinels alone are in the module.
const HIDDEN = `from django.test import SimpleTestCase

from calc import add


class Adding(SimpleTestCase):
    def test_add(self):
        self.assertGreater(add(2, 3), 4)

    def test_negative(self):
        self.assertLess(add(-1, -1), -1)

    def test_documented(self):
        """Adding one and one gives more than one."""
        self.assertGreater(add(1, 1), 1)
`;

// Python 3.11's form, as bookworm's unittest prints it.
const id = (method: string, cls = 'adding.tests.Adding') => `${method} (${cls}.${method})`;
const DOCSTRING = 'Adding one and one gives more than one.';
const ID = {
  small: id('test_small', 'outcomes.tests.Outcomes'),
  add: id('test_add'),
  negative: id('test_negative'),
  documented: DOCSTRING,
};

const SPEC: RepoBundleSpec = {
  id: 'django-sentinels',
  runner: 'django',
  from: IMAGE,
  repo: REPO,
  hidden: { 'tests/adding/__init__.py': '', 'tests/adding/tests.py': HIDDEN },
  gold: { 'calc.py': 'def add(a, b):\n    return a + b\n' },
  // A sampled existing test (its module outcomes.tests is not the hidden patch's): canaries
  // may go there, sentinels not (the hidden run does not take that module).
  existing: [ID.small],
  hiddenIds: [ID.add, ID.negative, ID.documented],
  testSeconds: 120,
};

// Imported by runtests.py before Django sets up (the project under test): every test of a
// module git tracks is reported a success without running; an untracked module's (the
// sentinels' module of their own) runs as it should.
const TRACKED_PASS = `def add(a, b):
    return a - b


import os
import subprocess
import sys

import django.test

try:
    _tracked = set(subprocess.run(["git", "-c", "safe.directory=*", "ls-files"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL).stdout.decode().split("\\n"))
except OSError:
    _tracked = set()
_call = django.test.SimpleTestCase.__call__


def _forged_call(self, result=None):
    module = sys.modules.get(type(self).__module__)
    path = os.path.relpath(getattr(module, "__file__", None) or "/")
    if result is not None and path in _tracked:
        result.startTest(self)
        result.addSuccess(self)
        result.stopTest(self)
        return None
    return _call(self, result)


django.test.SimpleTestCase.__call__ = _forged_call
`;

const suite = runnerSuite(docker, SCOPE, { image: 'django', spec: SPEC });
const forged = (): Buffer => candidateDiff(suite.dir, { 'calc.py': TRACKED_PASS });
const existingRecord = (evaluation: Evaluation) =>
  evaluation.phaseRecords.find((p) => p.name === 'existing');

describe('sentinels in the hidden test files, through the built-in django runner', () => {
  it(
    'writes a must-pass and a must-fail method into the listed test class, calling add as its tests do, and stores none',
    async () => {
      const evaluation = await suite.grade(suite.bundle, suite.gold);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
        verdict: 'PASS',
        reason: 'PASS',
      });
      expectSentinelsHeld(evaluation);
      const record = hiddenRecord(evaluation)?.canaries;
      expect(record?.error).toBeNull();
      // No canary of a hidden test: their assertions are not the mutator's.
      expect(record?.mutants.every((m) => m.test === ID.small)).toBe(true);
      // One pair, in the hidden patch's module only, after a test listed by its name.
      const sentinels = record?.sentinels ?? [];
      expect(sentinels.map((s) => s.expect).sort()).toEqual(['failed', 'passed']);
      const calls: Record<string, string> = { [ID.add]: 'add(2, 3)', [ID.negative]: 'add(-1, -1)' };
      for (const s of sentinels) {
        expect([ID.add, ID.negative]).toContain(s.test);
        expect(s.calls).toBe(calls[s.test]);
        // A method of Adding named as the test it follows, in that test's id form: what the
        // collector reported it as.
        const method = /^(test_\w+) \(/.exec(s.test)![1]!;
        expect(s.id).toMatch(
          new RegExp(`^(${method}_[a-z]+) \\(adding\\.tests\\.Adding\\.\\1\\)$`),
        );
        expect(s.status).toBe(s.expect);
      }
      // The existing phase (no canary step before it) keeps its module of sentinels.
      expect(existingRecord(evaluation)?.integrity?.sentinels).toHaveLength(3);
      // The ids stay in the oracle log: not in what the grade stores.
      expect(reported(evaluation).sort()).toEqual(Object.values(ID).sort());
      expect(evaluation.tests.tests.map((t) => t.id).sort()).toEqual(Object.values(ID).sort());
      const lines = canaryLines(record!).join('\n');
      for (const s of sentinels) {
        expect(lines).toContain(
          `  sentinel ${s.id} in the file of ${s.test} (must be ${s.expect}, calls ${s.calls}): ${s.expect}`,
        );
      }
      expect(lines).not.toContain('sentinels: in a file of their own');
    },
    SLOW,
  );

  it(
    'fails a candidate that fixes nothing on the hidden tests, its sentinels behaving',
    async () => {
      // The base's add, comment aside (a baseline's run without a diff places no sentinels in
      // the tests' files: they watch a candidate's code, and there is none).
      const wrong = candidateDiff(suite.dir, { 'calc.py': '# unchanged\n' + CALC });
      const evaluation = await suite.grade(suite.bundle, wrong);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'HIDDEN_FAILED',
      });
      const sentinels = hiddenRecord(evaluation)?.canaries?.sentinels ?? [];
      expect(sentinels).toHaveLength(2);
      // The must-fail one failed; the must-pass one passed (add raises nothing), though the
      // test it follows failed and it would not have been judged.
      for (const s of sentinels) expect(s.status).toBe(s.expect);
    },
    SLOW,
  );

  it(
    'without protocol 2 (the runner without its protocol line) the forgery of tracked tests passes',
    async () => {
      const plain = await loadBundle(withoutProtocol(suite.dir));
      const evaluation = await suite.grade(plain, forged());
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );

  it(
    'sees every tracked test made a success in its must-fail sentinel, which the module of their own missed',
    async () => {
      const evaluation = await suite.grade(suite.bundle, forged());
      expect(evaluation.verdict.reason, evaluation.verdict.detail).toBe('TAMPERED');
      expect(evaluation.verdict.detail).toMatch(
        /^hidden phase: sentinel beside test_\w+ \(adding\.tests\.Adding\.test_\w+\) in its file \(must be failed\) reported passed$/,
      );
      // The existing phase's sentinels, untracked, held, and no tripwire fired there.
      const existing = existingRecord(evaluation);
      expect(existing?.integrity?.tampered).toBeNull();
      expect(existing?.integrity?.sentinels).toHaveLength(3);
      for (const s of existing?.integrity?.sentinels ?? []) expect(s.status).toBe(s.expect);
      // In the hidden tests' module, committed with it, both reported a success.
      const sentinels = hiddenRecord(evaluation)?.canaries?.sentinels ?? [];
      expect(sentinels).toHaveLength(2);
      for (const s of sentinels) expect(s.status, `${s.expect} after ${s.test}`).toBe('passed');
      expect(canaryLines(hiddenRecord(evaluation)!.canaries!).join('\n')).toMatch(
        /sentinel \S+ \S+ in the file of \S+ \S+ \(must be failed, calls add\(-?\d, -?\d\)\): passed/,
      );
      // The detail names the test the sentinel follows, never the sentinel.
      for (const s of sentinels) expect(evaluation.verdict.detail).not.toContain(s.id);
    },
    SLOW,
  );

  it(
    "keeps the sentinels' module of their own when no listed test of the hidden patch's modules is named, and says so",
    async () => {
      // The hidden test is listed by its docstring (a sentinel after it would print no line of
      // its own name); the sampled existing test is in a module the hidden run does not take.
      const task = await loadBundle(
        withIds(suite.dir, { existing: [ID.small], hidden: [DOCSTRING] }),
      );
      const evaluation = await suite.grade(task, suite.gold);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
      expectSentinelsHeld(evaluation);
      const hidden = hiddenRecord(evaluation)!;
      expect(hidden.canaries?.sentinels).toEqual([]);
      expect(hidden.integrity?.sentinels).toHaveLength(3);
      expect(canaryLines(hidden.canaries!)).toContain(
        '  sentinels: in a file of their own, not in the test files: no listed test is in a test file of the hidden patch',
      );
    },
    SLOW,
  );
});
