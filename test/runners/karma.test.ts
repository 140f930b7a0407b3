// The built-in karma runner in real grades, through the oracle (evaluate), on Debian's Node.js
// and Chromium with karma 6, karma-mocha and karma-esbuild from npm (test/fixtures/images/karma):
// passing, failing and pending tests, titles of nested describe() blocks joined by ` > ` (as
// SWE-bench's parse_log_karma records them), a before() hook that fails (its tests are
// errors), a candidate whose bundle does not build and one with a script error (every listed
// test an error, with the cause), under Proctor's rules and SWE-bench's; derive's discovery;
// and forgeries that must not pass, of mocha in the page and of chai (karma-chai).
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { derive } from '../../src/derive/derive.js';
import { createImageCache } from '../../src/workers/images.js';
import { loadBundle, type Bundle } from '../../src/oracle/bundle.js';
import type { Evaluation } from '../../src/oracle/evaluate.js';
import { requireDocker, resolveImage } from '../../src/sandbox/index.js';
import { dockerScope, fixtureImage, testDocker } from '../helpers/docker.js';
import { discoverInImage } from '../helpers/discover.js';
import { gradeIn, outcomes, swebenchOf, swebenchTask } from '../helpers/grade.js';
import { leftovers } from '../helpers/home.js';
import { commit, newRepo } from '../helpers/repos.js';
import { CALC, GOLD_CALC, KARMA_CONF } from '../helpers/karma-calc.js';
import { tempDir } from '../helpers/temp.js';
import {
  candidateDiff,
  makeRepoBundle,
  withIds,
  type RepoBundleSpec,
} from '../helpers/repo-bundles.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-karma');
const SLOW = 300_000;

const CALC_TEST = `import { add } from '../src/calc.js';

const equal = (a, b) => {
  if (a !== b) throw new Error(a + ' !== ' + b);
};

describe('calc', () => {
  it('adds 1 and 2', () => equal(add(1, 2), 3));
  it('is wrong', () => equal(add(1, 2), 4));
  it.skip('needs a network', () => {});
  describe('nested', () => {
    describe('deeper', () => {
      it('still adds', () => equal(add(2, 2), 4));
    });
  });
  describe('with a server', () => {
    before(() => {
      throw new Error('no server here');
    });
    it('talks to it', () => {});
  });
  it('runs in a browser', () => equal(typeof document.createElement('div').appendChild, 'function'));
});
`;

// The hidden tests: a new file.
const DIV_TEST = `import { div } from '../src/calc.js';

const equal = (a, b) => {
  if (a !== b) throw new Error(a + ' !== ' + b);
};

describe('div()', () => {
  it('divides exactly', () => equal(div(6, 3), 2));
  it('rounds down', () => equal(div(-7, 2), -4));
  it('refuses zero', () => {
    let thrown = null;
    try {
      div(1, 0);
    } catch (error) {
      thrown = error;
    }
    equal(thrown instanceof RangeError, true);
  });
});
`;

const ID = {
  add: 'calc > adds 1 and 2',
  wrong: 'calc > is wrong',
  pending: 'calc > needs a network',
  nested: 'calc > nested > deeper > still adds',
  hooked: 'calc > with a server > talks to it',
  browser: 'calc > runs in a browser',
  nowhere: 'calc > does not exist',
  exact: 'div() > divides exactly',
  floor: 'div() > rounds down',
  zero: 'div() > refuses zero',
};

const SPEC: RepoBundleSpec = {
  id: 'karma-calc',
  runner: 'karma',
  from: 'proctor-test-karma:latest',
  testSeconds: 120,
  repo: {
    '.gitignore': 'node_modules\n',
    'package.json': '{ "name": "calc", "version": "1.0.0", "private": true, "type": "module" }\n',
    'karma.conf.cjs': KARMA_CONF,
    'src/calc.js': CALC,
    'test/calc.spec.js': CALC_TEST,
  },
  hidden: { 'test/div.spec.js': DIV_TEST },
  gold: { 'src/calc.js': GOLD_CALC },
  existing: [ID.add, ID.nested, ID.browser],
  hiddenIds: [ID.exact, ID.floor, ID.zero],
};

let dir: string;
let bundle: Bundle;
let imageId: string;
let gold: Buffer;

beforeAll(async () => {
  await requireDocker(docker);
  await fixtureImage('karma');
  dir = await makeRepoBundle(SPEC);
  bundle = await loadBundle(dir);
  imageId = (await resolveImage(docker, bundle.environment)).localId;
  gold = readFileSync(bundle.paths.goldPatch ?? '');
}, SLOW);

const grade = (task: Bundle, candidate: Buffer | null): Promise<Evaluation> =>
  gradeIn(docker, SCOPE, imageId, task, candidate);

describe('the built-in karma runner', () => {
  it(
    'fails a baseline on the hidden tests and passes the gold patch, in headless Chromium',
    async () => {
      const base = await grade(bundle, null);
      expect(outcomes(base, 'existing')).toEqual({
        [ID.add]: 'passed',
        [ID.nested]: 'passed',
        [ID.browser]: 'passed',
      });
      expect(outcomes(base, 'hidden')).toEqual({
        [ID.exact]: 'passed',
        [ID.floor]: 'failed',
        [ID.zero]: 'failed',
      });
      expect(base.verdict, base.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'HIDDEN_FAILED',
      });
      const fixed = await grade(bundle, gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({
        verdict: 'PASS',
        reason: 'PASS',
      });
    },
    SLOW,
  );

  it(
    'reports a failure as failed, a pending test as skipped, the tests of a failing before() hook as errors, and an ID found nowhere not at all',
    async () => {
      const task = await loadBundle(
        withIds(dir, { existing: [ID.wrong, ID.pending, ID.hooked, ID.nowhere, ID.nested] }),
      );
      const evaluation = await grade(task, gold);
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
    [
      'a bundle that does not build (an import that cannot be resolved)',
      "import 'left-pad-nowhere';\n" + GOLD_CALC,
      /Could not resolve "left-pad-nowhere"/,
    ],
    [
      'a script error as the files load',
      "throw new TypeError('broken at load');\n" + GOLD_CALC,
      /broken at load/,
    ],
  ])(
    'makes every listed test an error, with the cause, for a candidate with %s',
    async (_name, source, cause) => {
      const evaluation = await grade(bundle, candidateDiff(dir, { 'src/calc.js': source }));
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL' });
      for (const phase of ['existing', 'hidden'] as const) {
        const seen = outcomes(evaluation, phase);
        for (const id of phase === 'existing' ? SPEC.existing : SPEC.hiddenIds)
          expect(seen[id], id).toBe('error');
      }
      expect(evaluation.verdict.detail, evaluation.verdict.detail).toMatch(cause);
    },
    SLOW,
  );
});

describe('the karma runner under SWE-bench rules', () => {
  it(
    'records what parse_log_karma would: PASSED, FAILED, and ABSENT for a pending test and one a hook kept from running',
    async () => {
      const task = await swebenchTask(dir, {
        existing: [...SPEC.existing, ID.pending, ID.hooked],
      });
      const base = await grade(task, null);
      expect(swebenchOf(base)).toMatchObject({
        [ID.exact]: ['passed', 'PASSED'],
        [ID.floor]: ['failed', 'FAILED'],
        [ID.add]: ['passed', 'PASSED'],
        [ID.nested]: ['passed', 'PASSED'],
        [ID.pending]: ['skipped', 'ABSENT'],
        [ID.hooked]: ['error', 'ABSENT'],
      });
      const fixed = await grade(await swebenchTask(dir), gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );
});

// preact's karma configuration takes its test files from `--grep=FILE` (config.grep), and
// SWE-bench runs the one file of the row: the runner passes the hidden patch's test files
// there, as long as every listed ID is a title they hold. Another test file of the project
// that cannot load here (one of preact's needs what the image lacks) must not break the grade.
const GREP_CONF = `module.exports = function (config) {
  config.set({
    frameworks: ['mocha'],
    files: [{ pattern: config.grep || 'test/**/*.spec.js', watched: false }],
    preprocessors: { 'test/**/*.spec.js': ['esbuild'] },
    esbuild: { target: 'es2020' },
  });
};
`;

// The hidden tests join the existing file, as preact's rows add to theirs.
const GREP_HIDDEN = `${CALC_TEST.replace('import { add }', 'import { add, div }')}
describe('div()', () => {
  it('divides exactly', () => equal(div(6, 3), 2));
  it('rounds down', () => equal(div(-7, 2), -4));
});
`;

const GREP_SPEC: RepoBundleSpec = {
  ...SPEC,
  id: 'karma-grep',
  repo: {
    ...SPEC.repo,
    'karma.conf.cjs': GREP_CONF,
    'test/other.spec.js': `throw new Error('loaded although the hidden patch does not touch it');\n`,
  },
  hidden: { 'test/calc.spec.js': GREP_HIDDEN },
  hiddenIds: [ID.exact, ID.floor],
};

describe("the karma runner and a configuration that picks its files from --grep (preact's)", () => {
  let grepDir: string;
  let grepImage: string;
  beforeAll(async () => {
    grepDir = await makeRepoBundle(GREP_SPEC);
    grepImage = (await resolveImage(docker, (await loadBundle(grepDir)).environment)).localId;
  }, SLOW);

  it(
    "loads only the hidden patch's test files, as SWE-bench's --grep=FILE does",
    async () => {
      const task = await swebenchTask(grepDir);
      const base = await gradeIn(docker, SCOPE, grepImage, task, null);
      expect(swebenchOf(base)).toMatchObject({
        [ID.exact]: ['passed', 'PASSED'],
        [ID.floor]: ['failed', 'FAILED'],
        [ID.add]: ['passed', 'PASSED'],
        [ID.nested]: ['passed', 'PASSED'],
      });
      const fixed = await gradeIn(docker, SCOPE, grepImage, task, gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );

  it(
    "answers to parse_log_karma's IDs too: a suite after a deeper one is filed under the last suite it kept",
    async () => {
      // SWE-bench's parser reads karma-mocha-reporter's indentation: after `calc > nested >
      // deeper`, the top-level `div()` pops one level and is not pushed, so its tests are
      // recorded as `calc > …` (as preact 4152's PASS_TO_PASS lists `Components > Component
      // construction > …` for tests of a sibling suite).
      const parsed = { exact: 'calc > divides exactly', floor: 'calc > rounds down' };
      const task = await swebenchTask(grepDir, { hidden: [parsed.exact, parsed.floor] });
      const base = await gradeIn(docker, SCOPE, grepImage, task, null);
      expect(swebenchOf(base)).toMatchObject({
        [parsed.exact]: ['passed', 'PASSED'],
        [parsed.floor]: ['failed', 'FAILED'],
      });
      const fixed = await gradeIn(docker, SCOPE, grepImage, task, gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );

  it(
    'loads every file of the configuration when a listed ID is not a title of those files',
    async () => {
      const task = await swebenchTask(grepDir, {
        existing: [...SPEC.existing, 'other > elsewhere'],
      });
      const fixed = await gradeIn(docker, SCOPE, grepImage, task, gold);
      expect(fixed.verdict.verdict).toBe('FAIL');
      expect(fixed.verdict.detail).toMatch(/loaded although the hidden patch does not touch it/);
    },
    SLOW,
  );
});

describe('the karma runner on karma 5 (before 6.3: a synchronous parseConfig)', () => {
  it(
    "grades as on karma 6: preact's 2020-21 rows have karma 3 and 5",
    async () => {
      await fixtureImage('karma5');
      const oldDir = await makeRepoBundle({
        ...GREP_SPEC,
        id: 'karma5-grep',
        from: 'proctor-test-karma5:latest',
      });
      const task = await swebenchTask(oldDir);
      const image = (await resolveImage(docker, task.environment)).localId;
      const base = await gradeIn(docker, SCOPE, image, task, null);
      expect(swebenchOf(base)).toMatchObject({
        [ID.exact]: ['passed', 'PASSED'],
        [ID.floor]: ['failed', 'FAILED'],
        [ID.add]: ['passed', 'PASSED'],
        [ID.nested]: ['passed', 'PASSED'],
      });
      const fixed = await gradeIn(docker, SCOPE, image, task, gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );
});

describe("the karma runner under derive's discovery", () => {
  it(
    "runs every test of the configuration's files and reports each, by hand in the image",
    async () => {
      expect(
        // In place: karma-esbuild bundles into the temporary folder, and cannot import from a
        // checkout inside it (a copy in /tmp).
        await discoverInImage(imageId, bundle.paths.runner, ['test'], {
          interpreter: null,
          inPlace: true,
        }),
      ).toEqual({
        [ID.add]: 'passed',
        [ID.wrong]: 'failed',
        [ID.pending]: 'skipped',
        [ID.nested]: 'passed',
        [ID.hooked]: 'error',
        [ID.browser]: 'passed',
      });
    },
    SLOW,
  );
});

describe('proctor derive --runner karma', () => {
  it(
    'derives a karma project: IDs as karma-mocha-reporter nests them, from the four states',
    async () => {
      const repo = newRepo();
      const base = commit(
        repo,
        {
          '.gitignore': 'node_modules\n',
          'package.json': SPEC.repo['package.json'] ?? '',
          'karma.conf.cjs': KARMA_CONF,
          'src/calc.js': CALC,
          'test/calc.spec.js': CALC_TEST.replace(
            /\n {2}describe\('with a server'[\s\S]*?\n {2}}\);\n/,
            '\n',
          ),
        },
        'base',
      );
      const fix = commit(
        repo,
        { 'src/calc.js': GOLD_CALC, 'test/div.spec.js': DIV_TEST },
        'div: round down, refuse zero',
      );
      const env = mkdtempSync(join(tmpdir(), 'proctor-env-'));
      writeFileSync(join(env, 'Dockerfile'), 'FROM proctor-test-karma:latest\n');
      const home = tempDir('proctor-home-');
      const out = join(tempDir('proctor-out-'), 'karma');
      try {
        const result = await derive(
          { repo, base, fix, environment: env, out, runner: 'karma', repeat: 1, workdir: '/repo' },
          {
            docker,
            images: createImageCache(docker, { dir: join(home, 'cache', 'contexts') }),
            home,
            sandbox: { uid: 1000, gid: 1000 },
            note: () => {},
          },
        );
        // `div() > divides exactly` passes before the fix too: not a hidden test.
        expect(result.bundle.hiddenIds.sort()).toEqual([ID.zero, ID.floor]);
        expect(result.bundle.existingIds).toEqual(
          expect.arrayContaining([ID.add, ID.nested, ID.browser]),
        );
        expect(result.bundle.existingIds).not.toContain(ID.wrong);
        expect(result.hiddenFiles).toEqual(['test/div.spec.js']);
      } finally {
        expect(await leftovers(home)).toEqual([]);
      }
    },
    SLOW,
  );
});

// chai in the page (karma-chai, which puts chai 4 there before the runner's script and sets
// the page's assert and expect): the tests assert with it, and a forgery that makes it lenient
// spares the sentinels, which assert with nothing of it: each is a forgery the tripwires
// name (the canaries would fail it too: karma-canary.test.ts).
const CHAI_SPEC: RepoBundleSpec = {
  ...SPEC,
  id: 'karma-chai',
  repo: {
    ...SPEC.repo,
    'karma.conf.cjs': KARMA_CONF.replace("frameworks: ['mocha']", "frameworks: ['mocha', 'chai']"),
    'test/calc.spec.js': `import { add } from '../src/calc.js';

describe('calc', () => {
  it('adds 1 and 2', () => expect(add(1, 2)).to.equal(3));
});
`,
  },
  hidden: {
    'test/div.spec.js': `import { div } from '../src/calc.js';

describe('div()', () => {
  it('divides exactly', () => assert.equal(div(6, 3), 2));
  it('rounds down', () => assert.equal(div(-7, 2), -4));
});
`,
  },
  gold: { 'src/calc.js': GOLD_CALC },
  existing: ['calc > adds 1 and 2'],
  hiddenIds: ['div() > divides exactly', 'div() > rounds down'],
};

describe('chai in the page, under the karma runner', () => {
  let chaiDir: string;
  let chaiBundle: Bundle;
  let chaiImage: string;
  beforeAll(async () => {
    chaiDir = await makeRepoBundle(CHAI_SPEC);
    chaiBundle = await loadBundle(chaiDir);
    chaiImage = (await resolveImage(docker, chaiBundle.environment)).localId;
  }, SLOW);
  const gradeChai = (candidate: Buffer): Promise<Evaluation> =>
    gradeIn(docker, SCOPE, chaiImage, chaiBundle, candidate);

  it(
    'passes the gold patch, the tests asserting with chai',
    async () => {
      const evaluation = await gradeChai(readFileSync(chaiBundle.paths.goldPatch ?? ''));
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );

  it.each([
    [
      "chai's assert.equal made to pass anything",
      'window.chai.assert.equal = function () {};',
      /tripwire: chai\.assert\.equal was replaced/,
    ],
    [
      'Assertion.prototype.assert, which every assertion ends in, made to pass anything',
      'window.chai.Assertion.prototype.assert = function () {};',
      /tripwire: chai\.Assertion\.prototype\.assert was replaced/,
    ],
    [
      "the page's assert replaced by one that passes anything",
      'window.assert = { equal() {} };',
      /tripwire: window\.assert was replaced/,
    ],
  ])(
    '%s is TAMPERED',
    async (_name, forgery, detail) => {
      const evaluation = await gradeChai(
        candidateDiff(chaiDir, { 'src/calc.js': `${forgery}\n${CALC}` }),
      );
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'TAMPERED',
      });
      expect(evaluation.verdict.detail).toMatch(detail);
    },
    SLOW,
  );
});

describe('forgeries against the karma runner', () => {
  // Each on top of the unfixed code, in src/calc.js (which the tests import, so it runs in the
  // browser before them): the hidden tests fail unless the forgery works.
  const FORGERIES: Array<[string, string, RegExp]> = [
    [
      "a Runner whose runTest passes every test (mocha's own, in the page)",
      `window.Mocha.Runner.prototype.runTest = function (fn) { fn(); };`,
      /tripwire: Runner\.prototype\.runTest was replaced/,
    ],
    [
      "an emit that turns every 'fail' into a 'pass'",
      `const proto = Object.getPrototypeOf(window.Mocha.Runner.prototype);
const emit = proto.emit;
proto.emit = function (name, ...args) {
  if (name === 'fail' && args[0] && args[0].type === 'test') { args[0].state = 'passed'; return emit.call(this, 'pass', args[0]); }
  return emit.call(this, name, ...args);
};`,
      /tripwire: EventEmitter\.prototype\.emit was replaced/,
    ],
    [
      "outcomes posted to the runner's middleware without the key",
      `for (const id of ['div() > divides exactly', 'div() > rounds down', 'div() > refuses zero']) {
  const x = new XMLHttpRequest();
  x.open('POST', '/__proctor__/outcome', false);
  x.send('0123 ' + JSON.stringify({ t: 'outcome', node: id, when: 'call', ids: [id], status: 'passed', sb: 'PASSED' }));
}`,
      /tripwire: a message without the browser's key/,
    ],
    [
      'the key asked for a second time',
      `const x = new XMLHttpRequest();
x.open('GET', '/__proctor__/key', false);
x.send(null);`,
      /tripwire: the browser's key was asked for twice/,
    ],
  ];

  it.each(FORGERIES)(
    '%s is TAMPERED',
    async (_name, forgery, detail) => {
      const source = `${forgery}\n${CALC}`;
      for (const task of [bundle, await swebenchTask(dir)]) {
        const evaluation = await grade(task, candidateDiff(dir, { 'src/calc.js': source }));
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
    "results sent through karma's own channel, and lines that imitate karma-mocha-reporter, do not pass",
    async () => {
      const ids = [ID.exact, ID.floor, ID.zero];
      const source = `const karma = window.__karma__;
for (const id of ${JSON.stringify(ids)}) {
  console.log('  ✔ ' + id);
  karma.result({ description: id.split(' > ')[1], suite: [id.split(' > ')[0]], success: true, skipped: false, log: [], time: 1 });
}
${CALC}`;
      for (const task of [bundle, await swebenchTask(dir)]) {
        const evaluation = await grade(task, candidateDiff(dir, { 'src/calc.js': source }));
        expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
          verdict: 'FAIL',
          reason: 'HIDDEN_FAILED',
        });
      }
    },
    SLOW,
  );

  it(
    'a run the page ends early (karma told the run is complete before the tests) does not pass',
    async () => {
      const source = `window.__karma__.complete({});\n${CALC}`;
      const evaluation = await grade(bundle, candidateDiff(dir, { 'src/calc.js': source }));
      expect(evaluation.verdict.verdict, evaluation.verdict.detail).not.toBe('PASS');
    },
    SLOW,
  );
});
