// The built-in vitest runner in real grades, through the oracle (evaluate), on Debian's Node.js
// with vitest 2.1 from npm (test/fixtures/images/vitest): passing, failing, skipped and todo
// tests, test.each titles and nested describe blocks (ids are `file > describe > name`, as
// SWE-bench's parse_log_vitest records them from the verbose reporter), a candidate whose code
// does not parse (every listed test an error, vitest's lines as the cause), under Proctor's
// rules and SWE-bench's; and forgeries that must not pass.
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
const SCOPE = dockerScope(docker, 'runners-vitest');
const SLOW = 300_000;

const CALC = `export const add = (a, b) => a + b;

// div divides a by b.
export const div = (a, b) => a / b;
`;

const GOLD_CALC = `export const add = (a, b) => a + b;

// div divides a by b, rounding down; b = 0 is an error.
export const div = (a, b) => {
  if (b === 0) throw new RangeError('division by zero');
  return Math.floor(a / b);
};
`;

const CALC_TEST = `import { describe, expect, test } from 'vitest';
import { add } from '../src/calc.js';

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
  test.skip('needs a network', () => {});
  test.todo('multiplies');
  test('is always wrong', () => {
    expect(add(1, 1)).toBe(3);
  });
  test('adds zero ', () => {
    expect(add(2, 0)).toBe(2);
  });
});
`;

// The hidden tests: a new file.
const DIV_TEST = `import { describe, expect, test } from 'vitest';
import { div } from '../src/calc.js';

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

const CALC_FILE = '__tests__/calc.test.js';
const DIV_FILE = '__tests__/div.test.js';
const ID = {
  add: `${CALC_FILE} > calc > adds`,
  signsA: `${CALC_FILE} > calc > signs > adds 1 and -1 to 0`,
  signsB: `${CALC_FILE} > calc > signs > adds -2 and -3 to -5`,
  skip: `${CALC_FILE} > calc > needs a network`,
  todo: `${CALC_FILE} > calc > multiplies`,
  wrong: `${CALC_FILE} > calc > is always wrong`,
  exact: `${DIV_FILE} > div > divides exactly`,
  floorNeg: `${DIV_FILE} > div > rounding > floors -7 / 2 to -4`,
  floorPos: `${DIV_FILE} > div > rounding > floors 7 / 2 to 3`,
  zero: `${DIV_FILE} > div > refuses zero`,
  nowhere: `${CALC_FILE} > calc > is found nowhere`,
  // The title ends in a space, which SWE-bench's parse_log_vitest strips with its line (as
  // vuejs/core 11589's `… as the first argument ` is listed).
  trailing: `${CALC_FILE} > calc > adds zero`,
};

const SPEC: RepoBundleSpec = {
  id: 'vitest-calc',
  runner: 'vitest',
  from: 'proctor-test-vitest:latest',
  repo: {
    'package.json': '{\n  "name": "calc",\n  "private": true,\n  "type": "module"\n}\n',
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

const suite = runnerSuite(docker, SCOPE, { image: 'vitest', spec: SPEC });
const { grade } = suite;

describe('the built-in vitest runner', () => {
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
    "makes every listed test an error when the candidate's code does not parse, with vitest's lines as the cause",
    async () => {
      const broken = candidateDiff(suite.dir, {
        'src/calc.js': 'export const add = (a, b) => a +;\n',
      });
      const evaluation = await grade(suite.bundle, broken);
      expectAllErrors(evaluation, SPEC);
      expect(evaluation.verdict.detail).toMatch(/RollupError: Expression expected|SyntaxError/);
    },
    SLOW,
  );
});

describe("the vitest runner's processes", () => {
  it(
    "runs the tests in a fork, never in vitest's own process (the reporter's), one fork for a few files as a fork each for more",
    async () => {
      // A fork of vitest's pool is titled `node (vitest N)`; vitest's own process is not, and
      // a thread would be in it. Code that refuses to load anywhere else still passes.
      const check =
        "import { readFileSync } from 'node:fs';\n" +
        "if (!/^node \\(vitest \\d+\\)/.test(readFileSync('/proc/self/cmdline', 'utf8'))) throw new Error('not in a fork');\n";
      const candidate = candidateDiff(suite.dir, { 'src/calc.js': check + GOLD_CALC });
      const evaluation = await grade(suite.bundle, candidate);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );
});

describe("the vitest runner under derive's discovery", () => {
  it(
    'runs every test of the test files under its paths and reports each, by hand in the image',
    async () => {
      expect(
        await discoverInImage(suite.imageId, suite.bundle.paths.runner, ['__tests__/calc.test.js']),
      ).toEqual({
        [ID.add]: 'passed',
        [ID.signsA]: 'passed',
        [ID.signsB]: 'passed',
        [ID.skip]: 'skipped',
        [ID.todo]: 'skipped',
        [ID.wrong]: 'failed',
        [ID.trailing]: 'passed',
      });
    },
    SLOW,
  );
});

describe('the vitest runner under SWE-bench rules', () => {
  it(
    'records what parse_log_vitest would: PASSED, FAILED, and ABSENT for a skip (vitest 2.1 does not print it)',
    async () => {
      const task = await swebenchTask(suite.dir);
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

describe('forgeries against the vitest runner', () => {
  it(
    'code that makes every expectation pass does not pass: TAMPERED (the sentinels in the hidden files, which throw, hold)',
    async () => {
      const source = `${CALC}\nimport { chai } from 'vitest';\nchai.Assertion.prototype.assert = function () {};\n`;
      for (const task of [suite.bundle, await swebenchTask(suite.dir)]) {
        const evaluation = await grade(task, candidateDiff(suite.dir, { 'src/calc.js': source }));
        expectNotPassed(
          evaluation,
          /^TAMPERED: .*(?:sentinel|tripwire: chai\.Assertion\.prototype\.assert was replaced)/,
        );
        // They fail by a plain throw, which no lenient assertion stops.
        const inFile = evaluation.phaseRecords.flatMap((r) => r.canaries?.sentinels ?? []);
        expect(inFile.length).toBeGreaterThan(0);
        for (const s of inFile) expect(s.status, s.id).toBe(s.expect);
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
    "a vitest configuration of the candidate's is not used: HEAD's (none) is",
    async () => {
      // A configuration whose reporter would not matter, but whose setup file makes every
      // expectation pass in every test file.
      const evaluation = await grade(
        suite.bundle,
        candidateDiff(suite.dir, {
          'vitest.config.js': "export default { test: { setupFiles: ['./src/setup.js'] } };\n",
          'src/setup.js':
            "import { chai } from 'vitest';\nchai.Assertion.prototype.assert = function () {};\n",
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
