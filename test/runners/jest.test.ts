// The built-in jest runner in real grades, through the oracle (evaluate), on Debian's Node.js
// with jest 29 from npm (test/fixtures/images/jest): passing, failing, skipped and todo tests,
// test.each titles and nested describe blocks (ids are titles, as SWE-bench's parse_log_jest
// records them), a candidate whose code does not parse (every listed test an error, jest's
// lines as the cause), under Proctor's rules and SWE-bench's; and forgeries that must not pass.
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/bundle.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { discoverInImage } from '../helpers/discover.js';
import {
  expectAllErrors,
  expectBaselineThenGold,
  expectNotPassed,
  outcomes,
  swebenchOf,
  swebenchTask,
} from '../helpers/grade.js';
import { candidateDiff, withIds, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-jest');
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

const CALC_TEST = `const { add } = require('../src/calc');

describe('calc', () => {
  test('adds', () => {
    expect(add(1, 2)).toBe(3);
  });
  describe('signs', () => {
    test.each([
      [1, -1, 0],
      [-2, -3, -5],
    ])('adds %i and %i to %i', (a, b, sum) => {
      expect(add(a, b)).toBe(sum);
    });
  });
  test('adds zero ', () => {
    expect(add(2, 0)).toBe(2);
  });
  test.skip('needs a network', () => {});
  test.todo('multiplies');
  test('is always wrong', () => {
    expect(add(1, 1)).toBe(3);
  });
});
`;

// The hidden tests: a new file.
const DIV_TEST = `const { div } = require('../src/calc');

describe('div', () => {
  test('divides exactly', () => {
    expect(div(6, 3)).toBe(2);
  });
  describe('rounding', () => {
    test.each([
      [-7, 2, -4],
      [7, 2, 3],
    ])('floors %i / %i to %i', (a, b, q) => {
      expect(div(a, b)).toBe(q);
    });
  });
  test('refuses zero', () => {
    expect(() => div(1, 0)).toThrow(RangeError);
  });
});
`;

const ID = {
  add: 'adds',
  signsA: 'adds 1 and -1 to 0',
  signsB: 'adds -2 and -3 to -5',
  skip: 'needs a network',
  skipLine: 'skipped needs a network',
  todo: 'multiplies',
  wrong: 'is always wrong',
  exact: 'divides exactly',
  floorNeg: 'floors -7 / 2 to -4',
  floorPos: 'floors 7 / 2 to 3',
  zero: 'refuses zero',
  nowhere: 'is found nowhere',
  // The title ends in a space, which SWE-bench's parse_log_jest strips with its line.
  trailing: 'adds zero',
};

const SPEC: RepoBundleSpec = {
  id: 'jest-calc',
  runner: 'jest',
  from: 'proctor-test-jest:latest',
  repo: {
    'package.json':
      '{\n  "name": "calc",\n  "private": true,\n  "jest": { "testEnvironment": "node" }\n}\n',
    '.gitignore': 'node_modules\n',
    'src/calc.js': CALC,
    '__tests__/calc.test.js': CALC_TEST,
  },
  hidden: { '__tests__/div.test.js': DIV_TEST },
  gold: { 'src/calc.js': GOLD_CALC },
  existing: [ID.add, ID.signsA, ID.signsB],
  hiddenIds: [ID.exact, ID.floorNeg, ID.floorPos, ID.zero],
  testSeconds: 120,
};

const suite = runnerSuite(docker, SCOPE, { image: 'jest', spec: SPEC });
const { grade } = suite;

describe('the built-in jest runner', () => {
  it(
    'fails a baseline on the hidden tests and passes the gold patch, test.each titles and nested describe blocks included',
    async () => {
      await expectBaselineThenGold(grade, suite.bundle, suite.gold, {
        existing: {
          [ID.add]: 'passed',
          [ID.signsA]: 'passed',
          [ID.signsB]: 'passed',
        },
        hidden: {
          [ID.exact]: 'passed',
          [ID.floorNeg]: 'failed',
          [ID.floorPos]: 'failed',
          [ID.zero]: 'failed',
        },
      });
    },
    SLOW,
  );

  it(
    'reports a skip and a todo as skipped, a failure as failed, and a title found nowhere not at all',
    async () => {
      const task = await loadBundle(
        withIds(suite.dir, { existing: [ID.skip, ID.todo, ID.wrong, ID.nowhere] }),
      );
      const evaluation = await grade(task, suite.gold);
      expect(outcomes(evaluation, 'existing')).toEqual({
        [ID.skip]: 'skipped',
        [ID.todo]: 'skipped',
        [ID.wrong]: 'failed',
        [ID.nowhere]: 'missing',
      });
    },
    SLOW,
  );

  it(
    "makes every listed test an error when the candidate's code does not parse, with jest's lines as the cause",
    async () => {
      const broken = candidateDiff(suite.dir, { 'src/calc.js': 'exports.add = (a, b) => a +;\n' });
      const evaluation = await grade(suite.bundle, broken);
      expectAllErrors(evaluation, SPEC);
      expect(evaluation.verdict.detail).toMatch(/SyntaxError|Test suite failed to run/);
    },
    SLOW,
  );
});

describe("the jest runner's processes", () => {
  it(
    "runs the tests in a worker, never in jest's own process (the reporter's), one worker for a few files as two for more",
    async () => {
      // A worker is jest-worker's processChild.js; jest's own process runs the files in band.
      // Code that refuses to load anywhere else still passes.
      const check =
        "if (!require('fs').readFileSync('/proc/self/cmdline', 'utf8').includes('processChild')) throw new Error('run in band');\n";
      const candidate = candidateDiff(suite.dir, { 'src/calc.js': check + GOLD_CALC });
      const evaluation = await grade(suite.bundle, candidate);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );
});

describe("the jest runner under derive's discovery", () => {
  it(
    'runs every test of the test files under its paths and reports each, by hand in the image',
    async () => {
      expect(
        await discoverInImage(suite.imageId, suite.bundle.paths.runner, ['__tests__']),
      ).toEqual({
        [ID.add]: 'passed',
        [ID.signsA]: 'passed',
        [ID.signsB]: 'passed',
        [ID.trailing]: 'passed',
        [ID.skip]: 'skipped',
        [ID.todo]: 'skipped',
        [ID.wrong]: 'failed',
      });
    },
    SLOW,
  );
});

describe('the jest runner under SWE-bench rules', () => {
  it(
    'records what parse_log_jest would: PASSED, FAILED, SKIPPED for `skipped TITLE`, ABSENT for a skipped bare title',
    async () => {
      const task = await swebenchTask(suite.dir, { existing: [...SPEC.existing, ID.skipLine] });
      const base = await grade(task, null);
      expect(base.verdict, base.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'HIDDEN_FAILED',
      });
      expect(swebenchOf(base)).toMatchObject({
        [ID.exact]: ['passed', 'PASSED'],
        [ID.floorNeg]: ['failed', 'FAILED'],
        [ID.zero]: ['failed', 'FAILED'],
        [ID.signsA]: ['passed', 'PASSED'],
        [ID.skipLine]: ['skipped', 'SKIPPED'],
      });
      const fixed = await grade(task, suite.gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
      expect(fixed.verdict.detail).toContain("resolved by SWE-bench's rules");
      const skipped = await grade(
        await swebenchTask(suite.dir, { existing: [ID.skip] }),
        suite.gold,
      );
      expect(swebenchOf(skipped)[ID.skip]).toEqual(['skipped', 'ABSENT']);
      // A title that ends in a space runs, and is reported, under the id without it.
      const trailing = await grade(
        await swebenchTask(suite.dir, { existing: [ID.trailing] }),
        suite.gold,
      );
      expect(swebenchOf(trailing)[ID.trailing]).toEqual(['passed', 'PASSED']);
    },
    SLOW,
  );
});

describe('forgeries against the jest runner', () => {
  it(
    'code that makes every expectation pass does not pass: the tripwire on expect names it (a sentinel of a file of their own that must fail passes too; those in the hidden files hold)',
    async () => {
      const source = `${CALC}\nglobal.expect = () => new Proxy({}, { get: () => () => undefined });\n`;
      for (const task of [suite.bundle, await swebenchTask(suite.dir)]) {
        const evaluation = await grade(task, candidateDiff(suite.dir, { 'src/calc.js': source }));
        expectNotPassed(evaluation, /tripwire: .*expect was replaced/);
        // A file of their own fails through jest's expect, which the forgery reached; the
        // sentinels in the hidden test files fail by a plain throw, which it cannot stop.
        const own = evaluation.phaseRecords.flatMap((r) => r.integrity?.sentinels ?? []);
        const inFile = evaluation.phaseRecords.flatMap((r) => r.canaries?.sentinels ?? []);
        expect(inFile.length).toBeGreaterThan(0);
        for (const s of inFile) expect(s.status, s.id).toBe(s.expect);
        if (task === suite.bundle) expect(own.some((s) => s.status !== s.expect)).toBe(true);
      }
    },
    SLOW,
  );

  it(
    'code that ends its process with exit code 0 when it is loaded does not pass',
    async () => {
      const source = `${CALC}\nprocess.exit(0);\n`;
      const evaluation = await grade(
        suite.bundle,
        candidateDiff(suite.dir, { 'src/calc.js': source }),
      );
      expect(evaluation.verdict.verdict, evaluation.verdict.detail).toBe('FAIL');
      expect(outcomes(evaluation, 'hidden')[ID.floorNeg]).toBe('error');
    },
    SLOW,
  );

  it(
    "a jest configuration of the candidate's is not used: HEAD's is",
    async () => {
      // A custom test runner that reports every test as passed, named in package.json.
      const fake = `module.exports = async (globalConfig, config, environment, runtime, testPath) => ({
  testFilePath: testPath, numFailingTests: 0, numPassingTests: 1, numPendingTests: 0, numTodoTests: 0,
  perfStats: {}, snapshot: { added: 0, fileDeleted: false, matched: 0, unchecked: 0, uncheckedKeys: [], unmatched: 0, updated: 0 },
  leaks: false, openHandles: [], skipped: false,
  testResults: ${JSON.stringify(SPEC.hiddenIds)}.map((title) => ({ ancestorTitles: [], title, fullName: title, status: 'passed', failureMessages: [], numPassingAsserts: 1 })),
});
`;
      const evaluation = await grade(
        suite.bundle,
        candidateDiff(suite.dir, {
          'package.json':
            '{\n  "name": "calc",\n  "private": true,\n  "jest": { "testEnvironment": "node", "testRunner": "<rootDir>/src/runner.js" }\n}\n',
          'src/runner.js': fake,
        }),
      );
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'HIDDEN_FAILED',
      });
    },
    SLOW,
  );
});
