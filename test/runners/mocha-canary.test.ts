// Canaries through the built-in mocha runner and the real oracle (src/oracle/js-canaries.ts,
// js-canary-step.ts): mutants of the hidden tests in the hidden patch's test file, run in the
// same mocha process, and the sentinels in that file. The gold patch stays PASS, every mutant
// failing, the sentinels holding; a candidate that makes node:assert's comparisons lenient for
// the one assertion after each call into the library (the methods back before mocha's
// tripwires look, after each test) passed before canaries, ended VACUOUS_TEST with them, and
// is now named by a tripwire, since the sentinels' call of the library is followed by no
// assertion; one that makes every test of a git-tracked file pass spares the file of sentinels
// of their own and ends TAMPERED by the must-fail sentinel in the hidden file.
import { describe, expect, it } from 'vitest';
import { coverageLines } from '../../src/oracle/canary-coverage.js';
import { canaryLines } from '../../src/oracle/canaries.js';
import { type Evaluation } from '../../src/oracle/evaluate.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import {
  expectGoldWithCanaries,
  expectInFileSentinelCatch,
  expectInFileSentinels,
} from '../helpers/grade.js';
import { candidateDiff, type Files, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';
import { trackedHelper } from '../helpers/tracked-forgery.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-mocha-canary');
const SLOW = 300_000;

const CALC = (body: string, head = '') => `'use strict';
${head}
exports.add = (a, b) => a + b;

exports.div = (a, b) => {
${body}
};
`;

const EXISTING = `'use strict';
const assert = require('assert');
const { add } = require('../lib/calc');

describe('calc', function () {
  it('adds 1 and 2', function () {
    assert.strictEqual(add(1, 2), 3);
  });
});
`;

const HIDDEN = `'use strict';
const assert = require('assert');
const { div } = require('../lib/calc');

describe('div', function () {
  it('rounds down', function () {
    const r = div(-7, 2);
    assert.strictEqual(r, -4);
  });
  it('refuses zero', function () {
    assert.throws(() => div(1, 0), RangeError);
  });
});
`;

const ID = { add: 'calc adds 1 and 2', floor: 'div rounds down', zero: 'div refuses zero' };

const GOLD = CALC(
  "  if (b === 0) throw new RangeError('division by zero');\n  return Math.floor(a / b);",
);

const FORGERIES: Record<string, Files> = {
  // assert's comparisons made lenient by each call of div, for the one assertion that follows
  // it, which puts them back: mocha's tripwires, which look after each test, saw the real ones
  // while every call of div was followed by an assertion. div still does not round; it refuses
  // zero, so that test passes honestly.
  skipNext: {
    'lib/calc.js': CALC(
      "  if (b === 0) throw new RangeError('division by zero');\n  lenient();\n  return a / b;",
      `const lib = [require('assert'), require('assert/strict')];
const names = ['strictEqual', 'deepStrictEqual', 'equal', 'deepEqual'];
const saved = lib.map((a) => names.map((n) => a[n]));
const restore = () => lib.forEach((a, i) => names.forEach((n, j) => { a[n] = saved[i][j]; }));
const lenient = () => lib.forEach((a) => names.forEach((n) => { a[n] = () => restore(); }));`,
    ),
  },
};

// Every test of a file git tracks passes: Function.prototype.call, through which mocha calls a
// test's function with its context, swallows what the function throws (or its promise
// rejects) when the context's test is in a tracked file. Nothing mocha's tripwires watch
// changes; the sentinels of a file of their own, new and untracked, held. div stays wrong.
FORGERIES['passTracked'] = {
  'lib/calc.js': CALC(
    '  return a / b;',
    `${trackedHelper('cjs')}const apply = Reflect.apply;
Function.prototype.call = function (self, ...args) {
  const test = self !== null && typeof self === 'object' && Object.prototype.hasOwnProperty.apply(self, ['test']) ? self.test : null;
  if (!test || test.type !== 'test' || typeof test.file !== 'string' || !tracked(test.file)) return apply(this, self, args);
  try {
    const out = apply(this, self, args);
    return out && typeof out.then === 'function' ? out.then(undefined, () => undefined) : out;
  } catch {
    return undefined;
  }
};`,
  ),
};

const SPEC: RepoBundleSpec = {
  id: 'mocha-canary',
  runner: 'mocha',
  from: 'proctor-test-mocha:latest',
  repo: {
    'package.json': '{ "name": "calc", "version": "1.0.0", "private": true }\n',
    'lib/calc.js': CALC('  return a / b;'),
    'test/calc.spec.js': EXISTING,
  },
  hidden: { 'test/div.spec.js': HIDDEN },
  gold: { 'lib/calc.js': GOLD },
  existing: [ID.add],
  hiddenIds: [ID.floor, ID.zero],
};

const suite = runnerSuite(docker, SCOPE, { image: 'mocha', spec: SPEC });
const grade = (candidate: Buffer | null): Promise<Evaluation> =>
  suite.grade(suite.bundle, candidate);

describe('canaries through the built-in mocha runner', () => {
  it(
    'passes the gold patch, every canary failing, none in what the grade stores',
    async () => {
      const evaluation = await grade(suite.gold);
      const canaries = expectGoldWithCanaries(evaluation, [ID.floor, ID.zero], Object.values(ID));
      for (const m of canaries.mutants) {
        expect(m.status, `${m.id}: ${m.mutation}`).toBe('failed');
        expect(m.id).toMatch(new RegExp(`^${m.test} [a-z]+$`));
      }
      // The existing test's file is not one the hidden phase runs.
      expect(canaries.uncovered).toEqual([
        { test: ID.add, why: "no test of that title in the hidden patch's test files" },
      ]);
      expect(canaryLines(canaries)[0]).toBe('  canaries: 2 mutants; 1 listed test uncovered');
      // The sentinels sit in the hidden file, after hidden tests, calling div() as they do.
      expectInFileSentinels(evaluation, [ID.floor, ID.zero], ['div(-7, 2)', 'div(1, 0)']);
    },
    SLOW,
  );

  it(
    'fails the skipNext forgery as TAMPERED, by a tripwire or a mutant, whichever the order of the tests lets see it first',
    async () => {
      // Its canaries made it VACUOUS_TEST before. Now a sentinel in the file calls div and
      // asserts nothing after it: where that sentinel runs last (its place is drawn for each
      // grade), the methods are still swapped when mocha's tripwires look, and a tripwire names
      // it; elsewhere the next assertion restores them and the mutant that passed does.
      const evaluation = await grade(candidateDiff(suite.dir, FORGERIES['skipNext']!));
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TAMPERED' });
      expect(evaluation.verdict.detail).toMatch(
        /^hidden phase: (?:tripwire: node:assert(?:\/strict)?\.\w+ was replaced|VACUOUS_TEST: a mutant that no honest code can pass passed: div )/,
      );
      expect(evaluation.phases?.hidden?.check?.notPassed).toEqual([]);
    },
    SLOW,
  );

  it(
    'fails a forgery that passes every test of a tracked file by its in-file must-fail sentinel',
    async () => {
      const evaluation = await grade(candidateDiff(suite.dir, FORGERIES['passTracked']!));
      expectInFileSentinelCatch(evaluation);
    },
    SLOW,
  );

  it(
    "measures the task's canary coverage for validate, in a probe of the task's image",
    async () => {
      const coverage = await suite.coverage();
      expect(coverage).toEqual({ covered: 2, total: 2, mutants: 2, uncovered: [] });
      expect(coverageLines(coverage)[0]).toMatch(
        /^ {2}canaries: 2 of \d hidden tests covered \(2 mutants\)$/,
      );
    },
    SLOW,
  );
});
