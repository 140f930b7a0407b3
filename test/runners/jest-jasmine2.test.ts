// The built-in jest runner on a project whose configuration names jest-jasmine2 as its test
// runner, as immutable-js's does (its tests use jasmine's globals), in real grades through the
// oracle, on jest 29 with jest-jasmine2 from npm (test/fixtures/images/jest-jasmine2): the
// project's tests run under its own runner and report right, the watch of expect is armed
// around jest-jasmine2 and catches a forgery; a runner of the project's own is run as it is,
// the watch standing aside and the oracle log saying so.
import { describe, expect, it } from 'vitest';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { expectBaselineThenGold, expectNotPassed, hiddenRecord } from '../helpers/grade.js';
import { candidateDiff, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-jest-jasmine2');
const SLOW = 300_000;

const CALC = `exports.add = (a, b) => a + b;

// div divides a by b.
exports.div = (a, b) => a / b;
`;

const GOLD_CALC = `exports.add = (a, b) => a + b;

// div divides a by b, rounding down; b = 0 is an error.
exports.div = (a, b) => {
  if (b === 0) throw new RangeError('division by zero');
  return Math.floor(a / b);
};
`;

// jasmine's globals: jasmine.createSpy, spyOn, pending (none of them is jest-circus's).
const CALC_TEST = `const calc = require('../src/calc');

describe('calc', () => {
  it('adds', () => {
    const spy = jasmine.createSpy('spy');
    spy(calc.add(1, 2));
    expect(spy).toHaveBeenCalledWith(3);
  });
  it('adds through a spy', () => {
    spyOn(calc, 'add').and.callThrough();
    expect(calc.add(2, 2)).toBe(4);
    expect(calc.add).toHaveBeenCalled();
  });
  it('waits for a network', () => {
    pending('no network here');
  });
});
`;

const DIV_TEST = `const calc = require('../src/calc');

describe('div', () => {
  it('divides exactly', () => {
    expect(calc.div(6, 3)).toBe(2);
  });
  it('floors', () => {
    spyOn(calc, 'div').and.callThrough();
    expect(calc.div(-7, 2)).toBe(-4);
    expect(calc.div).toHaveBeenCalledWith(-7, 2);
  });
  it('refuses zero', () => {
    expect(() => calc.div(1, 0)).toThrowError(RangeError);
  });
});
`;

const CONFIG = (runner: string) => `module.exports = {
  testEnvironment: 'node',
  testRunner: '${runner}', // jasmine-check uses jasmine and not jest-circus
};
`;

const ID = {
  add: 'adds',
  spy: 'adds through a spy',
  exact: 'divides exactly',
  floor: 'floors',
  zero: 'refuses zero',
};

const spec = (runner: string, extra: Record<string, string> = {}): RepoBundleSpec => ({
  id: 'jest-jasmine2',
  runner: 'jest',
  from: 'proctor-test-jest-jasmine2:latest',
  repo: {
    'package.json': '{\n  "name": "calc",\n  "private": true\n}\n',
    '.gitignore': 'node_modules\n',
    'jest.config.js': CONFIG(runner),
    'src/calc.js': CALC,
    '__tests__/calc.test.js': CALC_TEST,
    ...extra,
  },
  hidden: { '__tests__/div.test.js': DIV_TEST },
  gold: { 'src/calc.js': GOLD_CALC },
  existing: [ID.add, ID.spy],
  hiddenIds: [ID.exact, ID.floor, ID.zero],
  testSeconds: 120,
});

const BASELINE = {
  existing: { [ID.add]: 'passed', [ID.spy]: 'passed' },
  hidden: { [ID.exact]: 'passed', [ID.floor]: 'failed', [ID.zero]: 'failed' },
};

const NOT_ARMED = /proctor: jest's expect watch is not armed/;

const jasmine2 = runnerSuite(docker, SCOPE, {
  image: 'jest-jasmine2',
  spec: spec('jest-jasmine2'),
});

// A test runner of the project's own: jest-jasmine2 under another name.
const own = runnerSuite(docker, SCOPE, {
  image: 'jest-jasmine2',
  spec: spec('<rootDir>/tools/runner.js', {
    'tools/runner.js': "module.exports = require('jest-jasmine2');\n",
  }),
});

describe('the jest runner on a project that names jest-jasmine2', () => {
  it(
    "runs the tests under jest-jasmine2, with jasmine's globals: a baseline fails the hidden tests, the gold patch passes",
    async () => {
      const { base, fixed } = await expectBaselineThenGold(
        jasmine2.grade,
        jasmine2.bundle,
        jasmine2.gold,
        BASELINE,
      );
      for (const evaluation of [base, fixed]) {
        for (const record of evaluation.phaseRecords) {
          expect(record.integrity?.tampered ?? null).toBeNull();
          expect(record.run.stderr).not.toMatch(NOT_ARMED);
        }
      }
    },
    SLOW,
  );

  it(
    "catches a candidate that makes expect's toBe lenient: the watch is armed around jest-jasmine2",
    async () => {
      // toBe passes whatever it compares, from the moment the library loads in a test file.
      const source = `${CALC}\nif (typeof expect === 'function') {\n  expect.extend({ toBe: () => ({ pass: true, message: () => '' }) });\n}\n`;
      const evaluation = await jasmine2.grade(
        jasmine2.bundle,
        candidateDiff(jasmine2.dir, { 'src/calc.js': source }),
      );
      expectNotPassed(evaluation, /^TAMPERED: .*tripwire: .*expect's toBe matcher was replaced/);
    },
    SLOW,
  );
});

describe('the jest runner on a project with a test runner of its own', () => {
  it(
    'runs it as it is, the watch standing aside and the oracle log saying why',
    async () => {
      const { fixed } = await expectBaselineThenGold(own.grade, own.bundle, own.gold, BASELINE);
      const hidden = hiddenRecord(fixed);
      expect(hidden?.run.stderr).toMatch(
        /proctor: jest's expect watch is not armed: the jest configuration names its own testRunner, "<rootDir>\/tools\/runner\.js"; the project's own test runner runs/,
      );
    },
    SLOW,
  );
});
