// Canaries through the built-in node:test runner and the real oracle (src/oracle/js-canaries.ts,
// js-canary-step.ts): a candidate that leaves every test, sentinel and tripwire honest but makes
// the hidden test's assertion vacuous (node:assert's comparisons made lenient for the one
// assertion after each call into the library, the methods restored before any tripwire looks)
// passed before canaries and now ends TAMPERED, VACUOUS_TEST. The gold patch stays PASS with a
// mutant of each hidden test and of the existing one (in the existing phase: its file is no
// hidden test's), every mutant failing; a test the mutator
// does not understand is named uncovered; spec gaming (the library answering the hidden test's
// inputs alone) is no alarm; no canary id reaches anything a grade stores. The sentinels sit in
// the hidden file (js-sentinels.ts), calling compare() as the hidden tests do: a library that
// makes every test calling it pass spares the file of their own and ends TAMPERED by them.
import { describe, expect, it } from 'vitest';
import { coverageLines } from '../../src/oracle/canary-coverage.js';
import { canaryLines } from '../../src/oracle/canaries.js';
import { type Evaluation } from '../../src/oracle/evaluate.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import {
  expectGoldWithCanaries,
  expectInFileSentinels,
  expectSentinelsHeld,
  expectVacuousTest,
  existingRecord,
  hiddenRecord,
} from '../helpers/grade.js';
import { candidateDiff, type Files, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-node-canary');
const SLOW = 300_000;

// Compares parts as strings ('10' < '9'), and takes an empty version for 0.
const VERSION = (fixed: boolean, extra = '') => `'use strict';
${extra}
function compare(a, b) {
  ${fixed ? "if (a === '' || b === '') throw new TypeError('an empty version');" : ''}
  const x = a.split('.');
  const y = b.split('.');
  for (let i = 0; i < Math.max(x.length, y.length); i += 1) {
    const p = ${fixed ? 'Number(x[i] ?? 0)' : "x[i] ?? '0'"};
    const q = ${fixed ? 'Number(y[i] ?? 0)' : "y[i] ?? '0'"};
    if (p !== q) return p < q ? -1 : 1;
  }
  return 0;
}
module.exports = { compare };
`;

const EXISTING = `'use strict';
const assert = require('node:assert');
const { it } = require('node:test');
const { compare } = require('../src/version.js');

it('equal versions are 0', () => {
  const r = compare('1.0', '1.0');
  assert.strictEqual(r, 0);
});
`;

const HIDDEN = `import assert from 'node:assert';
import { describe, it } from 'node:test';
import { createRequire } from 'node:module';

const { compare } = createRequire(import.meta.url)('../src/version.js');

describe('compare', () => {
  it('orders 1.10 after 1.9', () => {
    const r = compare('1.10', '1.9');
    assert.strictEqual(r, 1);
  });

  it('refuses an empty version', () => {
    assert.throws(() => compare('', '1.0'), TypeError);
  });

  it('compares a version to itself', () => {
    for (const v of ['1', '2.0']) assert.ok(compare(v, v) === 0);
  });
});
`;

const ID = {
  equal: 'tests/version.test.js::equal versions are 0',
  order: 'tests/hidden.test.mjs::compare > orders 1.10 after 1.9',
  empty: 'tests/hidden.test.mjs::compare > refuses an empty version',
  self: 'tests/hidden.test.mjs::compare > compares a version to itself',
};

const FORGERIES: Record<string, Files> = {
  // node:assert's comparisons made lenient for the one assertion after each call into the
  // library, and put back right after it (and at the end of the tick): the tripwires, which
  // look after the file's tests and at exit, see the real methods. compare() stays wrong
  // ('10' < '9'); it refuses an empty version, so that test passes honestly.
  skipNext: {
    'src/version.js': VERSION(
      false,
      `const lib = [require('node:assert'), require('node:assert/strict')];
const names = ['strictEqual', 'deepStrictEqual', 'equal', 'deepEqual'];
const saved = lib.map((a) => names.map((n) => a[n]));
const restore = () => lib.forEach((a, i) => names.forEach((n, j) => { a[n] = saved[i][j]; }));
const lenient = () => lib.forEach((a) => names.forEach((n) => { a[n] = () => restore(); }));
`,
    ).replace(
      'function compare(a, b) {',
      "function compare(a, b) {\n  if (a === '' || b === '') throw new TypeError('empty');\n  lenient();\n  queueMicrotask(restore);",
    ),
  },
  // Every test that calls the library is reported passed: node:test runs each test's function
  // inside the test's own async resource, whose `fail` becomes its `pass` (on that one object;
  // node:test's functions and classes stay as they were). The sentinels of a file of their own
  // call nothing of the library, and so held; compare() stays wrong.
  passCallers: {
    'src/version.js': VERSION(
      false,
      `const { executionAsyncResource } = require('node:async_hooks');
const spare = () => {
  const test = executionAsyncResource();
  if (test && typeof test.fail === 'function' && typeof test.pass === 'function') {
    test.fail = function () { return this.pass(); };
  }
};
`,
    ).replace('function compare(a, b) {', 'function compare(a, b) {\n  spare();'),
  },
};

// Spec gaming: the answer the hidden test asks for, and no other: its canary fails, as it must.
const GAMED: Files = {
  'src/version.js': VERSION(false).replace(
    'function compare(a, b) {',
    "function compare(a, b) {\n  if (a === '1.10' && b === '1.9') return 1;\n  if (a === '' || b === '') throw new TypeError('empty');",
  ),
};

const SPEC: RepoBundleSpec = {
  id: 'node-canary',
  runner: 'node',
  repo: {
    'package.json': '{ "name": "versions", "private": true }\n',
    'src/version.js': VERSION(false),
    'tests/version.test.js': EXISTING,
  },
  hidden: { 'tests/hidden.test.mjs': HIDDEN },
  gold: { 'src/version.js': VERSION(true) },
  existing: [ID.equal],
  hiddenIds: [ID.order, ID.empty, ID.self],
};

const suite = runnerSuite(docker, SCOPE, { image: 'runners', spec: SPEC });

// The same task with its hidden tests made in a loop: no title to find, so no mutant and no
// sentinel in the file; the phase keeps its file of sentinels of its own.
const LOOP = `import assert from 'node:assert';
import { it } from 'node:test';
import { createRequire } from 'node:module';

const { compare } = createRequire(import.meta.url)('../src/version.js');

for (const [a, b, want] of [['1.10', '1.9', 1], ['2.0', '10.0', -1]]) {
  it(\`orders \${a} against \${b}\`, () => {
    assert.strictEqual(compare(a, b), want);
  });
}
`;
const LOOP_IDS = [
  'tests/loop.test.mjs::orders 1.10 against 1.9',
  'tests/loop.test.mjs::orders 2.0 against 10.0',
];
const loop = runnerSuite(docker, SCOPE, {
  image: 'runners',
  spec: {
    ...SPEC,
    id: 'node-canary-loop',
    hidden: { 'tests/loop.test.mjs': LOOP },
    hiddenIds: LOOP_IDS,
  },
});
// The same task where the existing tests' file also asks git whether the tracked tests are as
// committed, and the hidden test patch edits that file without adding a hidden test to it: the
// sampled existing tests' mutants go into it for the existing phase, the work tree's git then
// shows them as committed, and the file is put back before the hidden test patch applies.
const COMMITTED = `${EXISTING}
it('the tests are as committed', () => {
  const git = require('node:child_process').execFileSync;
  const out = git('git', ['diff', '--stat', 'HEAD', '--', 'tests'], { encoding: 'utf8' });
  assert.strictEqual(out, '');
});
`;
const EDITED = {
  ...SPEC,
  id: 'node-canary-edited',
  repo: { ...SPEC.repo, 'tests/version.test.js': COMMITTED },
  hidden: {
    ...SPEC.hidden,
    'tests/version.test.js': `${COMMITTED.replace("compare('1.0', '1.0')", "compare('1.0.0', '1.0')")}// end\n`,
  },
  existing: [ID.equal, 'tests/version.test.js::the tests are as committed'],
};
const edited = runnerSuite(docker, SCOPE, { image: 'runners', spec: EDITED });
const grade = (candidate: Buffer | null): Promise<Evaluation> =>
  suite.grade(suite.bundle, candidate);

describe('canaries through the built-in node:test runner', () => {
  it(
    'passes the gold patch, every canary failing, none in what the grade stores',
    async () => {
      const evaluation = await grade(suite.gold);
      const canaries = expectGoldWithCanaries(
        evaluation,
        [ID.order, ID.empty, ID.equal],
        Object.values(ID),
      );
      for (const m of canaries.mutants) {
        expect(m.status, `${m.id}: ${m.mutation}`).toBe('failed');
        // Named as the file's own tests are: the original's title and a word.
        expect(m.id.startsWith(`${m.test} `)).toBe(true);
        expect(m.id).toMatch(/ [a-z]+$/);
      }
      expect(canaries.mutants.find((m) => m.test === ID.empty)?.mutation).toBe(
        "throws(() => compare('', '1.0')) -> a function that returns",
      );
      expect(canaries.uncovered).toEqual([
        { test: ID.self, why: 'no assertion the mutator understands' },
      ]);
      const lines = canaryLines(canaries);
      expect(lines[0]).toBe('  canaries: 2 mutants; 1 listed test uncovered');
      expect(lines.filter((l) => /^ {2}canary .* of .*: failed$/.test(l))).toHaveLength(2);
      // The sampled existing test's file is no hidden test's: its mutant went into the existing
      // phase, which runs that file anyway, and failed there; the hidden phase ran one file.
      const existing = existingRecord(evaluation)?.canaries;
      expect(existing?.mutants.map((m) => [m.test, m.status])).toEqual([[ID.equal, 'failed']]);
      expect(existing?.sentinels).toEqual([]);
      // The sentinels sit in the hidden file, after hidden tests, calling compare() as they do
      // (never after the sampled existing test, nor the one whose call uses its own locals).
      const sentinels = expectInFileSentinels(
        evaluation,
        [ID.order, ID.empty],
        ["compare('1.10', '1.9')", "compare('', '1.0')"],
      );
      for (const s of sentinels) {
        expect(s.id).toMatch(new RegExp(`^${s.test} [a-z]+$`));
        expect(canaries.mutants.map((m) => m.id)).not.toContain(s.id);
      }
      expect(lines.filter((l) => /^ {2}sentinel .* in the file of /.test(l))).toHaveLength(2);
    },
    SLOW,
  );

  it(
    'puts the existing phase’s mutants where git shows them as committed, then takes them out before the hidden test patch',
    async () => {
      const evaluation = await edited.grade(edited.bundle, edited.gold);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
      // Both existing tests were sampled, and their mutants ran and failed in the existing
      // phase, where the test reading git passed: git showed the mutated file as committed.
      const existing = existingRecord(evaluation)?.canaries;
      expect(existing?.error).toBeNull();
      expect(existing?.mutants.map((m) => m.test).sort()).toEqual(EDITED.existing);
      for (const m of existing?.mutants ?? []) expect(m.status).toBe('failed');
      expect(evaluation.phases?.existing?.report?.tests.get(EDITED.existing[1]!)).toBe('passed');
      // The hidden test patch, which edits that file, applied to the file as it was.
      expect(evaluation.hiddenApply?.exitCode).toBe(0);
      expect(hiddenRecord(evaluation)?.canaries?.mutants.map((m) => m.test)).not.toContain(
        ID.equal,
      );
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
    'fails the skipNext forgery as TAMPERED, VACUOUS_TEST, the tripwires and sentinels missing it',
    async () => {
      const evaluation = await grade(candidateDiff(suite.dir, FORGERIES['skipNext']!));
      // The sampled existing test's mutant, in the existing phase, tells first; the hidden
      // test's, in the hidden phase, tells too.
      expectVacuousTest(
        evaluation,
        /^existing phase: VACUOUS_TEST: .*tests\/version\.test\.js::equal versions are 0 \(strictEqual expected 0 -> \d+\)/,
        Object.values(ID),
      );
      expect(hiddenRecord(evaluation)?.integrity?.tampered).toMatch(
        /^VACUOUS_TEST: .*compare > orders 1\.10 after 1\.9 \(strictEqual expected 1 -> \d+\)/,
      );
      expect(evaluation.phases?.existing?.check?.notPassed).toEqual([]);
    },
    SLOW,
  );

  it(
    'fails a forgery that passes every test calling the library by its in-file must-fail sentinel',
    async () => {
      const evaluation = await grade(candidateDiff(suite.dir, FORGERIES['passCallers']!));
      // The sampled existing test's mutant tells in the existing phase; in the hidden phase,
      // the must-fail sentinel in the hidden file does (where nothing else but the canaries
      // would tell), and every declared test passed.
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TAMPERED' });
      expect(evaluation.verdict.detail).toMatch(
        /^existing phase: VACUOUS_TEST: .*tests\/version\.test\.js::equal versions are 0/,
      );
      expect(hiddenRecord(evaluation)?.integrity?.tampered).toMatch(
        /^sentinel beside .+ in its file \(must be failed\) reported passed/,
      );
      const failing = hiddenRecord(evaluation)?.canaries?.sentinels.find(
        (x) => x.expect === 'failed',
      );
      expect(failing?.status).toBe('passed');
      expect(evaluation.phases?.hidden?.check?.notPassed).toEqual([]);
    },
    SLOW,
  );

  it(
    'keeps the file of their own where no hidden test has a literal title, and says why: those sentinels hold under the same forgery',
    async () => {
      const gold = await loop.grade(loop.bundle, loop.gold);
      expect(gold.verdict, gold.verdict.detail).toMatchObject({ verdict: 'PASS' });
      const canaries = hiddenRecord(gold)?.canaries;
      expect(canaries?.sentinels).toEqual([]);
      // The sampled existing test's file is the existing phase's to mutate; the hidden file has
      // no hidden test to follow.
      expect(canaries?.sentinelsWhy).toBe(
        'tests/loop.test.mjs: no hidden test of the file has a literal title',
      );
      expect(canaryLines(canaries!)).toContain(
        `  sentinels: in a file of their own, not in the test files: ${canaries?.sentinelsWhy}`,
      );
      expectSentinelsHeld(gold);
      // The limit the sentinels in the files lift: the file of their own calls nothing of the
      // library, and held under a forgery aimed at the tests that call it; here only the
      // mutant of the sampled existing test (in the existing phase) tells.
      const forged = await loop.grade(
        loop.bundle,
        candidateDiff(loop.dir, FORGERIES['passCallers']!),
      );
      expect(forged.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TAMPERED' });
      expect(forged.verdict.detail).toMatch(
        /^existing phase: VACUOUS_TEST: .*tests\/version\.test\.js::equal versions are 0/,
      );
      const own = hiddenRecord(forged)?.integrity?.sentinels ?? [];
      expect(own.map((x) => x.expect).sort()).toEqual(['error', 'failed', 'passed']);
      for (const x of own) expect(x.status).toBe(x.expect);
    },
    SLOW,
  );

  it(
    'gives no alarm for spec gaming: the canary of the gamed test fails, the grade is PASS',
    async () => {
      const evaluation = await grade(candidateDiff(suite.dir, GAMED));
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
      for (const m of hiddenRecord(evaluation)?.canaries?.mutants ?? []) {
        expect(m.status).toBe('failed');
      }
    },
    SLOW,
  );

  it(
    "measures the task's canary coverage for validate, in a probe of the task's image",
    async () => {
      const coverage = await suite.coverage();
      expect(coverage).toEqual({
        covered: 2,
        total: 3,
        mutants: 2,
        uncovered: [{ test: ID.self, why: 'no assertion the mutator understands' }],
      });
      expect(coverageLines(coverage)[0]).toMatch(
        /^ {2}canaries: 2 of \d hidden tests covered \(2 mutants\)$/,
      );
    },
    SLOW,
  );
});
