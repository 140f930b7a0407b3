// Canaries through the built-in karma runner and the real oracle (src/oracle/js-canaries.ts,
// js-canary-step.ts), in headless Chromium: mutants of the hidden tests in the hidden patch's
// test file, bundled and run in the same page as the tests, and the sentinels in that file. The
// gold patch stays PASS, every mutant failing, the sentinels holding. Two forgeries the karma
// runner passed before, with its sentinels in a file of their own and its tripwires looking
// after each test: chai's assert.equal made lenient by each call of div for the one assertion
// that follows it (the method back before the tripwires look) now ends TAMPERED, by a mutant
// or, where a sentinel that calls div runs last, by a tripwire; and mocha's call
// of every test of the `div()` block made to swallow what it throws ends TAMPERED by the
// must-fail sentinel in that block.
import { describe, expect, it } from 'vitest';
import { coverageLines } from '../../src/oracle/canary-coverage.js';
import { canaryLines } from '../../src/oracle/canaries.js';
import type { Evaluation } from '../../src/oracle/evaluate.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import {
  expectGoldWithCanaries,
  expectInFileSentinelCatch,
  expectInFileSentinels,
} from '../helpers/grade.js';
import { CALC, GOLD_CALC, KARMA_CONF } from '../helpers/karma-calc.js';
import { candidateDiff, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-karma-canary');
const SLOW = 300_000;

const ID = {
  add: 'calc > adds 1 and 2',
  exact: 'div() > divides exactly',
  floor: 'div() > rounds down',
};

// karma-chai puts chai's assert and expect in the page.
const SPEC: RepoBundleSpec = {
  id: 'karma-canary',
  runner: 'karma',
  from: 'proctor-test-karma:latest',
  testSeconds: 120,
  repo: {
    '.gitignore': 'node_modules\n',
    'package.json': '{ "name": "calc", "version": "1.0.0", "private": true, "type": "module" }\n',
    'karma.conf.cjs': KARMA_CONF.replace("frameworks: ['mocha']", "frameworks: ['mocha', 'chai']"),
    'src/calc.js': CALC,
    'test/calc.spec.js': `import { add } from '../src/calc.js';

describe('calc', () => {
  it('adds 1 and 2', () => expect(add(1, 2)).to.equal(3));
});
`,
  },
  hidden: {
    'test/div.spec.js': `import { div } from '../src/calc.js';

describe('div()', () => {
  it('divides exactly', () => {
    assert.equal(div(6, 3), 2);
  });
  it('rounds down', () => {
    const r = div(-7, 2);
    assert.equal(r, -4);
  });
});
`,
  },
  gold: { 'src/calc.js': GOLD_CALC },
  existing: [ID.add],
  hiddenIds: [ID.exact, ID.floor],
};

// Each on top of the unfixed code, in src/calc.js, which the tests import: div still does not
// round, so `rounds down` fails unless the forgery works.
const FORGERIES = {
  // chai's assert.equal swapped by each call of div whose answer is wrong (a division that does
  // not come out even) for one that passes anything and puts the real one back: the tripwires,
  // which look after each test, see the real one whenever such a call is followed by an
  // assertion. An even division, whose assertion may have read assert.equal before calling
  // div, swaps nothing.
  skipNext: `const chai = window.chai;
const real = chai.assert.equal;
const lenient = () => { chai.assert.equal = function () { chai.assert.equal = real; }; };
export const add = (a, b) => a + b;
export const div = (a, b) => { if (a % b !== 0) lenient(); return a / b; };
`,
  // Every test of the div() block passes: Function.prototype.call, through which mocha calls a
  // test's function with its context, swallows what it throws. Nothing the tripwires watch
  // changes; sentinels in a file of their own, in no such block, held.
  passBlock: `const apply = Reflect.apply;
Function.prototype.call = function (self, ...args) {
  const test = self !== null && typeof self === 'object' && Object.prototype.hasOwnProperty.apply(self, ['test']) ? self.test : null;
  if (!test || test.type !== 'test' || !test.parent || test.parent.title !== 'div()') return apply(this, self, args);
  try {
    const out = apply(this, self, args);
    return out && typeof out.then === 'function' ? out.then(undefined, () => undefined) : out;
  } catch {
    return undefined;
  }
};
${CALC}`,
};

const suite = runnerSuite(docker, SCOPE, { image: 'karma', spec: SPEC });
const grade = (candidate: Buffer | null): Promise<Evaluation> =>
  suite.grade(suite.bundle, candidate);

describe('canaries through the built-in karma runner', () => {
  it(
    'passes the gold patch, every canary failing, none in what the grade stores',
    async () => {
      const evaluation = await grade(suite.gold);
      const canaries = expectGoldWithCanaries(evaluation, [ID.exact, ID.floor], Object.values(ID));
      for (const m of canaries.mutants) {
        expect(m.status, `${m.id}: ${m.mutation}`).toBe('failed');
        // A sibling of the test, its title the test's and a word.
        expect(m.id).toMatch(new RegExp(`^${m.test.replace(/[()]/g, '\\$&')} [a-z]+$`));
      }
      // The existing test's file is not one the hidden phase runs.
      expect(canaries.uncovered).toEqual([
        { test: ID.add, why: "no test of that title in the hidden patch's test files" },
      ]);
      expect(canaryLines(canaries)[0]).toBe('  canaries: 2 mutants; 1 listed test uncovered');
      // The sentinels sit in the hidden file, after hidden tests, calling div() as they do.
      expectInFileSentinels(evaluation, [ID.exact, ID.floor], ['div(6, 3)', 'div(-7, 2)']);
    },
    SLOW,
  );

  it(
    "fails a forgery that makes chai's assert.equal lenient for the assertion after a call of div as TAMPERED, by a mutant or a tripwire",
    async () => {
      const evaluation = await grade(
        candidateDiff(suite.dir, { 'src/calc.js': FORGERIES.skipNext }),
      );
      // Its place is drawn for each grade: where the sentinel that calls div(-7, 2) and asserts
      // nothing after it runs last, the method is still swapped when the tripwires look.
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'TAMPERED',
      });
      expect(evaluation.verdict.detail).toMatch(
        /^hidden phase: (?:tripwire: chai\.assert\.equal was replaced|VACUOUS_TEST: a mutant that no honest code can pass passed: div\(\) > rounds down )/,
      );
      expect(evaluation.phases?.hidden?.check?.notPassed).toEqual([]);
    },
    SLOW,
  );

  it(
    'fails a forgery that passes every test of the hidden block by its in-file must-fail sentinel',
    async () => {
      const evaluation = await grade(
        candidateDiff(suite.dir, { 'src/calc.js': FORGERIES.passBlock }),
      );
      expectInFileSentinelCatch(evaluation);
    },
    SLOW,
  );

  it(
    "measures the task's canary coverage for validate, in a probe of the task's image",
    async () => {
      const coverage = await suite.coverage();
      expect(coverage).toEqual({ covered: 2, total: 2, mutants: 2, uncovered: [] });
      expect(coverageLines(coverage)[0]).toBe(
        '  canaries: 2 of 2 hidden tests covered (2 mutants)',
      );
    },
    SLOW,
  );
});
