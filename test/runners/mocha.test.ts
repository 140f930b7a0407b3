// The built-in mocha runner in real grades, through the oracle (evaluate), on Debian's Node.js
// and Debian's mocha: passing, failing and pending tests, titles of nested describe() blocks,
// a before() hook that fails (its tests are errors), a candidate with a syntax error and one
// whose import cannot be found (every listed test an error, with the cause), under Proctor's
// rules and SWE-bench's (parse_log_tap's statuses); and forgeries that must not pass.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { derive } from '../../src/derive/derive.js';
import { loadBundle } from '../../src/oracle/bundle.js';
import { createImageCache } from '../../src/workers/images.js';
import { resolveImage } from '../../src/sandbox/index.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { discoverInImage } from '../helpers/discover.js';
import {
  expectAllErrors,
  expectBaselineThenGold,
  gradeIn,
  outcomes,
  swebenchOf,
  swebenchTask,
} from '../helpers/grade.js';
import { leftovers } from '../helpers/home.js';
import { commit, newRepo } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';
import {
  candidateDiff,
  makeRepoBundle,
  withIds,
  type RepoBundleSpec,
} from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-mocha');
const SLOW = 300_000;

const CALC = `'use strict';

exports.add = (a, b) => a + b;

// div divides a by b.
exports.div = (a, b) => a / b;
`;

const GOLD_CALC = `'use strict';

exports.add = (a, b) => a + b;

// div divides a by b, rounding down; b = 0 is an error.
exports.div = (a, b) => {
  if (b === 0) throw new RangeError('division by zero');
  return Math.floor(a / b);
};
`;

const CALC_TEST = `'use strict';
const assert = require('assert');
const { add } = require('../lib/calc');

describe('calc', function () {
  it('adds #1 and 2', function () {
    assert.strictEqual(add(1, 2), 3);
  });
  it('is wrong', function () {
    assert.strictEqual(add(1, 2), 4);
  });
  it('adds zero ', function () {
    assert.strictEqual(add(2, 0), 2);
  });
  it.skip('needs a network', function () {});
  describe('nested', function () {
    describe('deeper', function () {
      it('still adds', function () {
        assert.strictEqual(add(2, 2), 4);
      });
    });
  });
  describe('with a server', function () {
    before(function () {
      throw new Error('no server here');
    });
    it('talks to it', function () {});
  });
});
`;

// The hidden tests: a new file.
const DIV_TEST = `'use strict';
const assert = require('assert');
const { div } = require('../lib/calc');

describe('div', function () {
  it('divides exactly', function () {
    assert.strictEqual(div(6, 3), 2);
  });
  it('rounds down', function () {
    assert.strictEqual(div(-7, 2), -4);
  });
  it('refuses zero', function () {
    assert.throws(() => div(1, 0), RangeError);
  });
});
`;

const ID = {
  add: 'calc adds 1 and 2', // mocha's TAP reporter drops `#`
  wrong: 'calc is wrong',
  pending: 'calc needs a network',
  nested: 'calc nested deeper still adds',
  hooked: 'calc with a server talks to it',
  nowhere: 'calc does not exist',
  exact: 'div divides exactly',
  floor: 'div rounds down',
  zero: 'div refuses zero',
  // The title ends in a space, which parse_log_tap strips with its line.
  trailing: 'calc adds zero',
};

const SPEC: RepoBundleSpec = {
  id: 'mocha-calc',
  runner: 'mocha',
  from: 'proctor-test-mocha:latest',
  repo: {
    'package.json': '{ "name": "calc", "version": "1.0.0", "private": true }\n',
    'lib/calc.js': CALC,
    'test/calc.spec.js': CALC_TEST,
  },
  hidden: { 'test/div.spec.js': DIV_TEST },
  gold: { 'lib/calc.js': GOLD_CALC },
  existing: [ID.add, ID.nested],
  hiddenIds: [ID.exact, ID.floor, ID.zero],
};

const suite = runnerSuite(docker, SCOPE, { image: 'mocha', spec: SPEC });
const { grade } = suite;

describe('the built-in mocha runner', () => {
  it(
    'fails a baseline on the hidden tests and passes the gold patch',
    async () => {
      await expectBaselineThenGold(grade, suite.bundle, suite.gold, {
        existing: { [ID.add]: 'passed', [ID.nested]: 'passed' },
        hidden: {
          [ID.exact]: 'passed',
          [ID.floor]: 'failed',
          [ID.zero]: 'failed',
        },
      });
    },
    SLOW,
  );

  it(
    'reports a failure as failed, a pending test as skipped, the tests of a failing before() hook as errors, and a title found nowhere not at all',
    async () => {
      const task = await loadBundle(
        withIds(suite.dir, { existing: [ID.wrong, ID.pending, ID.hooked, ID.nowhere, ID.nested] }),
      );
      const evaluation = await grade(task, suite.gold);
      expect(outcomes(evaluation, 'existing')).toEqual({
        [ID.wrong]: 'failed',
        [ID.pending]: 'skipped',
        [ID.hooked]: 'error',
        [ID.nowhere]: 'missing',
        [ID.nested]: 'passed',
      });
    },
    SLOW,
  );

  it.each([
    ['a syntax error', 'exports.div = (a, b) => {\n  return a /', /SyntaxError/],
    [
      'an import that cannot be found',
      "require('left-pad-nowhere');\n" + GOLD_CALC,
      /Cannot find module 'left-pad-nowhere'/,
    ],
  ])(
    'makes every listed test an error, with the cause, for a candidate with %s',
    async (_name, source, cause) => {
      const evaluation = await grade(
        suite.bundle,
        candidateDiff(suite.dir, { 'lib/calc.js': source }),
      );
      expectAllErrors(evaluation, SPEC);
      expect(evaluation.verdict.detail, evaluation.verdict.detail).toMatch(cause);
    },
    SLOW,
  );
});

describe('what the mocha runner does not take for tampering', () => {
  it(
    "passes the gold patch with code that requires node's domain module (it replaces EventEmitter's emit) and hooks process.reallyExit as signal-exit does",
    async () => {
      const source = `require('domain');
const reallyExit = process.reallyExit;
process.reallyExit = function (code) { return reallyExit.call(process, code); };
${GOLD_CALC}`;
      const evaluation = await grade(
        suite.bundle,
        candidateDiff(suite.dir, { 'lib/calc.js': source }),
      );
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
        verdict: 'PASS',
        reason: 'PASS',
      });
    },
    SLOW,
  );
});

describe('the mocha runner under SWE-bench rules', () => {
  it(
    'records what parse_log_tap would: PASSED, FAILED, and ABSENT for a pending test and one a hook kept from running',
    async () => {
      const task = await swebenchTask(suite.dir, {
        existing: [...SPEC.existing, ID.pending, ID.hooked, ID.trailing],
      });
      const base = await grade(task, null);
      expect(swebenchOf(base)).toMatchObject({
        // A title that ends in a space runs, and is reported, under the id without it.
        [ID.trailing]: ['passed', 'PASSED'],
        [ID.exact]: ['passed', 'PASSED'],
        [ID.floor]: ['failed', 'FAILED'],
        [ID.add]: ['passed', 'PASSED'],
        [ID.nested]: ['passed', 'PASSED'],
        [ID.pending]: ['skipped', 'ABSENT'],
        [ID.hooked]: ['error', 'ABSENT'],
      });
      const fixed = await grade(await swebenchTask(suite.dir), suite.gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );
});

describe("the mocha runner under derive's discovery", () => {
  it(
    'runs every test of the files under its paths and reports each, by hand in the image',
    async () => {
      expect(
        await discoverInImage(suite.imageId, suite.bundle.paths.runner, ['test'], {
          interpreter: null,
        }),
      ).toEqual({
        [ID.add]: 'passed',
        [ID.wrong]: 'failed',
        [ID.trailing]: 'passed',
        [ID.pending]: 'skipped',
        [ID.nested]: 'passed',
        [ID.hooked]: 'error',
      });
    },
    SLOW,
  );
});

describe('proctor derive --runner mocha', () => {
  it(
    'derives a mocha project: IDs as mocha -R tap prints them, from the four states',
    async () => {
      const repo = newRepo();
      const base = commit(
        repo,
        {
          'lib/calc.js': CALC,
          'test/calc.spec.js': CALC_TEST.replace(
            /\n {2}describe\('with a server'[\s\S]*?\n {2}}\);\n/,
            '\n',
          ),
        },
        'base',
      );
      const fix = commit(
        repo,
        { 'lib/calc.js': GOLD_CALC, 'test/div.spec.js': DIV_TEST },
        'div: round down, refuse zero',
      );
      const env = mkdtempSync(join(tmpdir(), 'proctor-env-'));
      writeFileSync(join(env, 'Dockerfile'), 'FROM proctor-test-mocha:latest\n');
      const home = tempDir('proctor-home-');
      const out = join(tempDir('proctor-out-'), 'mocha');
      try {
        const result = await derive(
          { repo, base, fix, environment: env, out, runner: 'mocha', repeat: 1, workdir: '/repo' },
          {
            docker,
            images: createImageCache(docker, { dir: join(home, 'cache', 'contexts') }),
            home,
            sandbox: { uid: 1000, gid: 1000 },
            note: () => {},
          },
        );
        // `div divides exactly` passes before the fix too: not a hidden test.
        expect(result.bundle.hiddenIds.sort()).toEqual([ID.zero, ID.floor]);
        expect(result.bundle.existingIds).toEqual(expect.arrayContaining([ID.add, ID.nested]));
        expect(result.bundle.existingIds).not.toContain(ID.wrong);
        expect(result.hiddenFiles).toEqual(['test/div.spec.js']);
      } finally {
        expect(await leftovers(home)).toEqual([]);
      }
    },
    SLOW,
  );
});

describe('forgeries against the mocha runner', () => {
  // Each on top of the unfixed code, in lib/calc.js (which the tests require): the hidden
  // tests fail unless the forgery works.
  const FORGERIES: Array<[string, string, RegExp]> = [
    [
      "a Runner whose runTest passes every test (mocha's own, from the require cache)",
      `const Runner = require(require.resolve('mocha', { paths: [process.cwd()] })).Runner;
Runner.prototype.runTest = function (fn) { fn(); };`,
      /tripwire: Runner\.prototype\.runTest was replaced/,
    ],
    [
      "an emit that turns every 'fail' into a 'pass'",
      `const { EventEmitter } = require('events');
const emit = EventEmitter.prototype.emit;
EventEmitter.prototype.emit = function (name, ...args) {
  if (name === 'fail' && args[0] && args[0].type === 'test') { args[0].state = 'passed'; return emit.call(this, 'pass', args[0]); }
  return emit.call(this, name, ...args);
};`,
      /tripwire: EventEmitter\.prototype\.emit was replaced/,
    ],
    [
      "lines written on the reporter's pipe",
      `const fs = require('fs');
for (const id of ['div divides exactly', 'div rounds down', 'div refuses zero'])
  try { fs.writeSync(3, JSON.stringify({ t: 'outcome', node: id, when: 'call', ids: [id], status: 'passed', sb: 'PASSED' }) + '\\n'); } catch {}`,
      /tripwire: a message without the reporter's key/,
    ],
    [
      'node:assert whose strictEqual and throws never fail',
      `const assert = require('assert');
assert.strictEqual = () => {};
assert.throws = () => {};`,
      /tripwire: node:assert\.(strictEqual|throws) was replaced/,
    ],
  ];

  it.each(FORGERIES)(
    '%s is TAMPERED',
    async (_name, forgery, detail) => {
      const source = `${forgery}\n${CALC}`;
      for (const task of [suite.bundle, await swebenchTask(suite.dir)]) {
        const evaluation = await grade(task, candidateDiff(suite.dir, { 'lib/calc.js': source }));
        expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
          verdict: 'FAIL',
          reason: 'TAMPERED',
        });
        expect(evaluation.verdict.detail).toMatch(detail);
      }
    },
    SLOW,
  );

  it(
    'lines that imitate mocha -R tap for the hidden tests do not pass',
    async () => {
      const tap = [ID.exact, ID.floor, ID.zero].map((id, n) => `ok ${n + 1} ${id}`).join('\\n');
      const source = `console.log('${tap}');\n${CALC}`;
      for (const task of [suite.bundle, await swebenchTask(suite.dir)]) {
        const evaluation = await grade(task, candidateDiff(suite.dir, { 'lib/calc.js': source }));
        expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
          verdict: 'FAIL',
          reason: 'HIDDEN_FAILED',
        });
      }
    },
    SLOW,
  );

  it(
    'an exit before the tests run does not pass',
    async () => {
      const source = `process.exit(0);\n${CALC}`;
      const evaluation = await grade(
        suite.bundle,
        candidateDiff(suite.dir, { 'lib/calc.js': source }),
      );
      expect(evaluation.verdict.verdict, evaluation.verdict.detail).not.toBe('PASS');
      expect(outcomes(evaluation, 'hidden')[ID.floor]).toBe('error');
    },
    SLOW,
  );
});

describe('the mocha runner and files another framework runs', () => {
  it(
    "loads only the hidden patch's files that the project's scripts give mocha, not a karma spec beside them",
    async () => {
      // axios' test patches touch test/unit/ (mocha) and test/specs/ (karma, in a browser): a
      // karma spec loaded by mocha dies on `window`, and with it every listed test.
      const KARMA_SPEC = `describe('in a browser', function () {\n  it('has a window', function () {\n    expect(window.document).toBeDefined();\n  });\n});\nwindow.document;\n`;
      const scripts = {
        name: 'calc',
        version: '1.0.0',
        private: true,
        scripts: { 'test:mocha': "mocha 'test/unit/**/*.js' --timeout 30000 --exit" },
      };
      const spec: RepoBundleSpec = {
        ...SPEC,
        id: 'mocha-karma',
        existing: [],
        repo: {
          'package.json': JSON.stringify(scripts) + '\n',
          'lib/calc.js': CALC,
          'test/unit/calc.js': CALC_TEST.replace('../lib', '../../lib'),
        },
        hidden: {
          'test/unit/div.js': DIV_TEST.replace('../lib', '../../lib'),
          'test/specs/div.spec.js': KARMA_SPEC,
        },
      };
      const task = await loadBundle(await makeRepoBundle(spec));
      const image = (await resolveImage(docker, task.environment)).localId;
      const fixed = await gradeIn(
        docker,
        SCOPE,
        image,
        task,
        readFileSync(task.paths.goldPatch ?? ''),
      );
      expect(outcomes(fixed, 'hidden')).toEqual({
        [ID.exact]: 'passed',
        [ID.floor]: 'passed',
        [ID.zero]: 'passed',
      });
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );
});
