// Canaries through the built-in jest runner and the real oracle (src/oracle/js-canaries.ts,
// js-canary-step.ts): mutants of the hidden tests in the hidden patch's test file, run in the
// same jest process under titles of their own. The gold patch stays PASS, every mutant
// failing; a baseline stays HIDDEN_FAILED; a candidate whose library returns, for the cases it
// gets wrong, an object jest's equality takes as an asymmetric matcher that accepts anything
// (no global changes: the watch of expect sees nothing, the sentinels hold) passed before
// canaries and now ends TAMPERED, VACUOUS_TEST. The sentinels sit in both hidden files
// (js-sentinels.ts), calling div() as the hidden tests do: a library that swallows what the
// tests of git-tracked files throw spares the file of their own and ends TAMPERED by them.
import { describe, expect, it } from 'vitest';
import { coverageLines } from '../../src/oracle/canary-coverage.js';
import { canaryLines } from '../../src/oracle/canaries.js';
import { type Evaluation } from '../../src/oracle/evaluate.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import {
  expectGoldWithCanaries,
  expectInFileSentinelCatch,
  expectInFileSentinels,
  expectVacuousTest,
  hiddenRecord,
} from '../helpers/grade.js';
import { candidateDiff, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';
import { trackedHelper } from '../helpers/tracked-forgery.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-jest-canary');
const SLOW = 300_000;

const CALC = (body: string) => `exports.add = (a, b) => a + b;

exports.div = (a, b) => {
${body}
};
`;

const EXISTING = `const { add } = require('../src/calc');

describe('calc', () => {
  test('adds 1 and 2', () => {
    expect(add(1, 2)).toBe(3);
  });
});
`;

// Two files of hidden tests: a title in one (`rounds down`) is near one in the other, and
// `refuses zero` is in both; no mutant may take a title a test has.
const HIDDEN = `const { div } = require('../src/calc');

describe('div', () => {
  test('rounds down', () => {
    const q = div(-7, 2);
    expect(q).toEqual(-4);
  });
  test('refuses zero', () => {
    expect(() => div(1, 0)).toThrow(RangeError);
  });
});
`;

const HIDDEN_MORE = `const { div } = require('../src/calc');

describe('more', () => {
  test('rounds down again', () => {
    expect(div(9, 2)).toEqual(4);
  });
  test('refuses zero', () => {
    expect(() => div(-1, 0)).toThrow('division by zero');
  });
});
`;

const ID = {
  add: 'adds 1 and 2',
  floor: 'rounds down',
  floorMore: 'rounds down again',
  zero: 'refuses zero',
};

const GOLD = CALC(
  "  if (b === 0) throw new RangeError('division by zero');\n  return Math.floor(a / b);",
);

// The library's wrong answers are objects with an asymmetricMatch that accepts anything: jest's
// equals() asks the received value first, so toEqual passes whatever it is given. div refuses
// zero honestly, so those tests pass for real.
const ASYMMETRIC = CALC(
  "  if (b === 0) throw new RangeError('division by zero');\n  const q = a / b;\n  return Number.isInteger(q) ? q : { asymmetricMatch: () => true };",
);

// Every test of a file git tracks passes: Function.prototype.call of the test file's realm,
// through which jest-circus calls a test's function with its context (an object of no
// prototype), swallows what the function throws (or its promise rejects) when expect's state
// names a tracked file. Nothing the watch of expect sees changes; the sentinels of a file of
// their own, new and untracked, held. div stays wrong.
const PASS_TRACKED = `${trackedHelper('cjs')}const apply = Reflect.apply;
Function.prototype.call = function (self, ...args) {
  const state = self !== null && typeof self === 'object' && Object.getPrototypeOf(self) === null && typeof expect === 'function' ? expect.getState() : null;
  if (!state || typeof state.testPath !== 'string' || !tracked(state.testPath)) return apply(this, self, args);
  try {
    const out = apply(this, self, args);
    return out && typeof out.then === 'function' ? out.then(undefined, () => undefined) : out;
  } catch {
    return undefined;
  }
};
${CALC('  return a / b;')}`;

const SPEC: RepoBundleSpec = {
  id: 'jest-canary',
  runner: 'jest',
  from: 'proctor-test-jest:latest',
  repo: {
    'package.json':
      '{\n  "name": "calc",\n  "private": true,\n  "jest": { "testEnvironment": "node" }\n}\n',
    '.gitignore': 'node_modules\n',
    'src/calc.js': CALC('  return a / b;'),
    '__tests__/calc.test.js': EXISTING,
  },
  hidden: { '__tests__/div.test.js': HIDDEN, '__tests__/more.test.js': HIDDEN_MORE },
  gold: { 'src/calc.js': GOLD },
  existing: [ID.add],
  hiddenIds: [ID.floor, ID.floorMore, ID.zero],
  testSeconds: 120,
};

const suite = runnerSuite(docker, SCOPE, { image: 'jest', spec: SPEC });
const grade = (candidate: Buffer | null): Promise<Evaluation> =>
  suite.grade(suite.bundle, candidate);

describe('canaries through the built-in jest runner', () => {
  it(
    'passes the gold patch, every canary failing under a title no test has, none in what the grade stores',
    async () => {
      const evaluation = await grade(suite.gold);
      // `refuses zero` is in both files: a mutant of each.
      const canaries = expectGoldWithCanaries(
        evaluation,
        [ID.floor, ID.floorMore, ID.zero, ID.zero],
        Object.values(ID),
      );
      const titles = new Set(Object.values(ID));
      for (const m of canaries.mutants) {
        expect(m.status, `${m.id}: ${m.mutation}`).toBe('failed');
        expect(m.id).toMatch(new RegExp(`^${m.test} [a-z]+$`));
        expect(titles.has(m.id), m.id).toBe(false);
      }
      expect(new Set(canaries.mutants.map((m) => m.id)).size).toBe(4);
      // The existing test's file is not one the hidden patch touches.
      expect(canaries.uncovered).toEqual([
        { test: ID.add, why: "no test of that title in the hidden patch's test files" },
      ]);
      expect(canaryLines(canaries)[0]).toBe('  canaries: 4 mutants; 1 listed test uncovered');
      // The sentinels sit in the hidden files (a pair in each), after hidden tests, calling
      // div() as they do, under titles no test nor mutant has.
      const sentinels = expectInFileSentinels(
        evaluation,
        [ID.floor, ID.floorMore, ID.zero],
        ['div(-7, 2)', 'div(1, 0)', 'div(9, 2)', 'div(-1, 0)'],
      );
      expect(sentinels).toHaveLength(4);
      expect(new Set(sentinels.map((s) => s.id)).size).toBe(4);
      for (const s of sentinels) {
        expect(titles.has(s.id), s.id).toBe(false);
        expect(canaries.mutants.map((m) => m.id)).not.toContain(s.id);
      }
    },
    SLOW,
  );

  it(
    'keeps the baseline valid: the hidden tests fail, and its run without a diff has no canaries and no sentinels',
    async () => {
      const evaluation = await grade(null);
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      // A mutant or a sentinel catches a candidate's code; with no diff there is none to catch
      // (and a file of sentinels costs a TypeScript suite a compile of its own).
      expect(hiddenRecord(evaluation)?.canaries).toBeUndefined();
      for (const phase of evaluation.phaseRecords) {
        expect(phase.integrity).toMatchObject({ sentinels: [], tampered: null });
        expect(`${phase.run.stdout}${phase.run.stderr}`).not.toContain('proctor-sentinel');
      }
    },
    SLOW,
  );

  it(
    'fails the asymmetric-matcher forgery as TAMPERED, VACUOUS_TEST, the watch of expect and the sentinels missing it',
    async () => {
      const evaluation = await grade(candidateDiff(suite.dir, { 'src/calc.js': ASYMMETRIC }));
      expectVacuousTest(
        evaluation,
        /^hidden phase: VACUOUS_TEST: .*rounds down \(expect\(…\)\.toEqual expected -4 -> -\d+\)/,
        Object.values(ID),
      );
    },
    SLOW,
  );

  it(
    'fails a forgery that passes every test of a tracked file by its in-file must-fail sentinel',
    async () => {
      const evaluation = await grade(candidateDiff(suite.dir, { 'src/calc.js': PASS_TRACKED }));
      expectInFileSentinelCatch(evaluation);
    },
    SLOW,
  );

  it(
    "measures the task's canary coverage for validate, in a probe of the task's image",
    async () => {
      const coverage = await suite.coverage();
      expect(coverage).toEqual({ covered: 3, total: 3, mutants: 4, uncovered: [] });
      expect(coverageLines(coverage)[0]).toBe(
        '  canaries: 3 of 3 hidden tests covered (4 mutants)',
      );
    },
    SLOW,
  );
});
