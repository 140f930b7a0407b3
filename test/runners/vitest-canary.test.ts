// Canaries through the built-in vitest runner and the real oracle (src/oracle/js-canaries.ts,
// js-canary-step.ts): mutants of the listed tests in the files their ids name, run in the same
// vitest process, in a workspace whose one project is named (the hidden ids carry its
// `|unit| ` prefix, and so do their mutants; the existing test's id goes without). The gold
// patch stays PASS, every mutant failing; a baseline stays HIDDEN_FAILED; a candidate whose
// library returns, for the cases it gets wrong, an object vitest's equality takes as an
// asymmetric matcher that accepts anything (no global changes: the watch of expect sees
// nothing, the sentinels hold) passed before canaries and now ends TAMPERED, VACUOUS_TEST.
// The sentinels sit in the hidden file (js-sentinels.ts), calling div() as the hidden tests
// do: a library that marks the failed tests of git-tracked files passed spares the file of
// their own and ends TAMPERED by them.
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
  existingRecord,
  hiddenRecord,
} from '../helpers/grade.js';
import { candidateDiff, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';
import { trackedHelper } from '../helpers/tracked-forgery.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-vitest-canary');
const SLOW = 300_000;

const CALC = (body: string) => `export const add = (a, b) => a + b;

export const div = (a, b) => {
${body}
};
`;

const EXISTING = `import { describe, expect, test } from 'vitest';
import { add } from '../src/calc.js';

describe('calc', () => {
  test('adds 1 and 2', () => {
    expect(add(1, 2)).toBe(3);
  });
});
`;

const HIDDEN = `import { describe, expect, test } from 'vitest';
import { div } from '../src/calc.js';

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

const ID = {
  add: '__tests__/calc.test.js > calc > adds 1 and 2',
  floor: '|unit| __tests__/div.test.js > div > rounds down',
  zero: '|unit| __tests__/div.test.js > div > refuses zero',
};

const GOLD = CALC(
  "  if (b === 0) throw new RangeError('division by zero');\n  return Math.floor(a / b);",
);

// The library's wrong answers are objects with an asymmetricMatch that accepts anything:
// vitest's equals() asks the received value first, so toEqual passes whatever it is given.
const ASYMMETRIC = CALC(
  "  if (b === 0) throw new RangeError('division by zero');\n  const q = a / b;\n  return Number.isInteger(q) ? q : { asymmetricMatch: () => true };",
);

// Every test of a file git tracks passes: each call of the library from a test of such a file
// adds, to vitest's current test (its worker's state names it), a handler that vitest runs when
// the test finishes and that marks it passed. Nothing the watch of expect sees changes; the
// sentinels of a file of their own, new and untracked, held. div stays wrong.
const PASS_TRACKED = `${trackedHelper('esm')}const spare = () => {
  const test = globalThis.__vitest_worker__ && globalThis.__vitest_worker__.current;
  const file = test && test.type === 'test' && test.file && test.file.filepath;
  if (typeof file !== 'string' || !tracked(file)) return;
  (test.onFinished ||= []).push(() => {
    if (test.result && test.result.state === 'fail') {
      test.result.state = 'pass';
      test.result.errors = undefined;
    }
  });
};
${CALC('  spare();\n  return a / b;')}`;

const SPEC: RepoBundleSpec = {
  id: 'vitest-canary',
  runner: 'vitest',
  from: 'proctor-test-vitest:latest',
  repo: {
    'package.json': '{\n  "name": "calc",\n  "private": true,\n  "type": "module"\n}\n',
    '.gitignore': 'node_modules\n',
    'vitest.workspace.js':
      "export default [{ test: { name: 'unit', include: ['__tests__/**/*.test.js'] } }];\n",
    'src/calc.js': CALC('  return a / b;'),
    '__tests__/calc.test.js': EXISTING,
  },
  hidden: { '__tests__/div.test.js': HIDDEN },
  gold: { 'src/calc.js': GOLD },
  existing: [ID.add],
  hiddenIds: [ID.floor, ID.zero],
  testSeconds: 120,
};

const suite = runnerSuite(docker, SCOPE, { image: 'vitest', spec: SPEC });
const grade = (candidate: Buffer | null): Promise<Evaluation> =>
  suite.grade(suite.bundle, candidate);

describe('canaries through the built-in vitest runner', () => {
  it(
    "passes the gold patch, every canary failing, its project's prefix kept, none in what the grade stores",
    async () => {
      const evaluation = await grade(suite.gold);
      // The existing test's file is named by its id: its mutant runs in the hidden phase too.
      const canaries = expectGoldWithCanaries(
        evaluation,
        [ID.floor, ID.zero, ID.add],
        Object.values(ID),
      );
      for (const m of canaries.mutants) {
        expect(m.status, `${m.id}: ${m.mutation}`).toBe('failed');
        expect(m.id.startsWith(`${m.test} `), m.id).toBe(true);
        expect(m.id).toMatch(/ [a-z]+$/);
      }
      expect(canaries.uncovered).toEqual([]);
      expect(canaryLines(canaries)[0]).toBe('  canaries: 2 mutants; 0 listed tests uncovered');
      // The sampled existing test's file is no hidden test's: its mutant went into the existing
      // phase, which runs that file anyway (the hidden phase then runs no file more).
      expect(existingRecord(evaluation)?.canaries?.mutants.map((m) => m.test)).toEqual([ID.add]);
      // The sentinels sit in the hidden file, after hidden tests, calling div() as they do,
      // their ids carrying the project's prefix.
      for (const s of expectInFileSentinels(
        evaluation,
        [ID.floor, ID.zero],
        ['div(-7, 2)', 'div(1, 0)'],
      )) {
        expect(s.id.startsWith(`${s.test} `), s.id).toBe(true);
      }
    },
    SLOW,
  );

  it(
    'keeps the baseline valid: the hidden tests fail, and its run without a diff has no canaries',
    async () => {
      const evaluation = await grade(null);
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      // A mutant catches a candidate's code; with no diff there is none to catch.
      expect(hiddenRecord(evaluation)?.canaries).toBeUndefined();
    },
    SLOW,
  );

  it(
    'fails the asymmetric-matcher forgery as TAMPERED, VACUOUS_TEST, the watch of expect and the sentinels missing it',
    async () => {
      const evaluation = await grade(candidateDiff(suite.dir, { 'src/calc.js': ASYMMETRIC }));
      expectVacuousTest(
        evaluation,
        /^hidden phase: VACUOUS_TEST: .*div > rounds down \(expect\(…\)\.toEqual expected -4 -> -\d+\)/,
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
      expect(coverage).toEqual({ covered: 2, total: 2, mutants: 2, uncovered: [] });
      expect(coverageLines(coverage)[0]).toBe(
        '  canaries: 2 of 2 hidden tests covered (2 mutants)',
      );
    },
    SLOW,
  );
});
