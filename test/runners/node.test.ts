// The built-in node:test runner in real grades and baselines, through the oracle (evaluate) on
// Debian's nodejs: IDs that are name paths through nested describe() blocks and subtests, in
// CommonJS and ES module test files, hidden tests in a file the hidden patch adds and in one it
// does not touch, skip and todo reported as skipped, a failing hook or a file that cannot be
// loaded as error, and missing IDs and files absent from the report.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBundle, type Bundle } from '../../src/oracle/bundle.js';
import { evaluate, type Evaluation } from '../../src/oracle/evaluate.js';
import { declaredOutcomes } from '../../src/oracle/verdict.js';
import { requireDocker, resolveImage } from '../../src/sandbox/index.js';
import { dockerScope, fixtureImage, testDocker } from '../helpers/docker.js';
import { makeRepoBundle, withIds, type RepoBundleSpec } from '../helpers/repo-bundles.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-node');
const SLOW = 300_000;

const VERSION_JS = (fixed: boolean) => `'use strict';
// Compares dotted versions.
function compare(a, b) {
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

const VERSION_TEST = `'use strict';
const assert = require('node:assert');
const { before, describe, it, test } = require('node:test');
const { compare } = require('../src/version.js');

describe('compare', () => {
  describe('numeric parts', () => {
    it('orders 1.10 after 1.9', () => assert.strictEqual(compare('1.10', '1.9'), 1));
  });
  it('equal versions are 0', () => assert.strictEqual(compare('1.0', '1.0'), 0));
  it.skip('prereleases', () => {});
  it.todo('build metadata');
});

describe('needs a server', () => {
  before(() => {
    throw new Error('no server here');
  });
  it('answers', () => {});
});

test('sorting', async (t) => {
  await t.test('by major', () => assert.strictEqual(compare('2.0', '1.0'), 1));
});
`;

const HIDDEN_TEST = `import assert from 'node:assert';
import { describe, it } from 'node:test';
import { createRequire } from 'node:module';

const { compare } = createRequire(import.meta.url)('../src/version.js');

describe('compare (multi-digit)', () => {
  describe('minor > patch', () => {
    it('1.2.10 is after 1.2.9', () => assert.strictEqual(compare('1.2.10', '1.2.9'), 1));
  });
});
`;

const ID = {
  nested: 'tests/version.test.js::compare > numeric parts > orders 1.10 after 1.9',
  equal: 'tests/version.test.js::compare > equal versions are 0',
  subtest: 'tests/version.test.js::sorting > by major',
  parent: 'tests/version.test.js::sorting',
  skip: 'tests/version.test.js::compare > prereleases',
  todo: 'tests/version.test.js::compare > build metadata',
  hook: 'tests/version.test.js::needs a server > answers',
  added: 'tests/hidden.test.mjs::compare (multi-digit) > minor > patch > 1.2.10 is after 1.2.9',
  gone: 'tests/version.test.js::compare > gone',
  noFile: 'tests/nowhere.test.js::x',
  broken: 'tests/broken.test.js::anything',
};

const SPEC: RepoBundleSpec = {
  id: 'node-versions',
  runner: 'node',
  repo: {
    'package.json': '{ "name": "versions", "private": true }\n',
    'src/version.js': VERSION_JS(false),
    'tests/version.test.js': VERSION_TEST,
    'tests/broken.test.js': "require('no-such-package');\n",
  },
  hidden: { 'tests/hidden.test.mjs': HIDDEN_TEST },
  gold: { 'src/version.js': VERSION_JS(true) },
  existing: [ID.equal, ID.subtest, ID.parent],
  // One hidden test in the file the patch adds, one in a file it does not touch.
  hiddenIds: [ID.added, ID.nested],
};

let dir: string;
let bundle: Bundle;
let imageId: string;
let gold: Buffer;

beforeAll(async () => {
  await requireDocker(docker);
  await fixtureImage('runners');
  dir = await makeRepoBundle(SPEC);
  bundle = await loadBundle(dir);
  imageId = (await resolveImage(docker, bundle.environment)).localId;
  gold = readFileSync(bundle.paths.goldPatch ?? '');
}, SLOW);

async function grade(task: Bundle, candidate: Buffer | null): Promise<Evaluation> {
  const evaluation = await evaluate(docker, {
    bundle: task,
    imageId,
    candidate,
    owner: SCOPE.owner(),
    sandbox: { uid: 1000, gid: 1000 },
  });
  expect(evaluation.cleanupError).toBeUndefined();
  return evaluation;
}

function outcomes(evaluation: Evaluation, phase: 'existing' | 'hidden') {
  const check = evaluation.phases?.[phase]?.check;
  if (!check) throw new Error(`no ${phase} check: ${JSON.stringify(evaluation.verdict)}`);
  return { outcomes: Object.fromEntries(declaredOutcomes(check)), undeclared: check.undeclared };
}

describe('the built-in node runner', () => {
  it(
    'keys tests by their name path; a baseline fails the hidden tests',
    async () => {
      const evaluation = await grade(bundle, null);
      expect(outcomes(evaluation, 'existing')).toEqual({
        outcomes: { [ID.equal]: 'passed', [ID.subtest]: 'passed', [ID.parent]: 'passed' },
        undeclared: [],
      });
      expect(outcomes(evaluation, 'hidden')).toEqual({
        outcomes: { [ID.added]: 'failed', [ID.nested]: 'failed' },
        undeclared: [],
      });
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
    },
    SLOW,
  );

  it(
    'passes the gold patch, in a CommonJS and an ES module test file',
    async () => {
      const evaluation = await grade(bundle, gold);
      expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expect(outcomes(evaluation, 'hidden').outcomes).toEqual({
        [ID.added]: 'passed',
        [ID.nested]: 'passed',
      });
    },
    SLOW,
  );

  it(
    'reports skip and todo as skipped, a failing hook or file as error, and leaves out IDs it cannot find',
    async () => {
      const existing = [ID.skip, ID.todo, ID.hook, ID.gone, ID.noFile, ID.broken, ID.equal];
      const evaluation = await grade(await loadBundle(withIds(dir, { existing })), gold);
      expect(outcomes(evaluation, 'existing')).toEqual({
        outcomes: {
          [ID.skip]: 'skipped',
          [ID.todo]: 'skipped',
          [ID.hook]: 'error',
          [ID.gone]: 'missing',
          [ID.noFile]: 'missing',
          [ID.broken]: 'error',
          [ID.equal]: 'passed',
        },
        undeclared: [],
      });
    },
    SLOW,
  );

  it(
    'reports every test of a file listed without ::',
    async () => {
      const task = await loadBundle(withIds(dir, { existing: ['tests/version.test.js'] }));
      const check = (await grade(task, gold)).phases?.existing.check;
      expect(check?.missing).toEqual(['tests/version.test.js']);
      expect(check?.undeclared).toEqual([
        ID.nested,
        ID.equal,
        ID.skip,
        ID.todo,
        ID.hook,
        ID.subtest,
        ID.parent,
      ]);
    },
    SLOW,
  );
});
