// The built-in node:test runner in real grades and baselines, through the oracle (evaluate) on
// Debian's nodejs: IDs that are name paths through nested describe() blocks and subtests, in
// CommonJS and ES module test files, hidden tests in a file the hidden patch adds and in one it
// does not touch, skip and todo reported as skipped, a failing hook or a file that cannot be
// loaded as error, and missing IDs and files absent from the report. Then the runner's
// protocol 2 against candidates that forge: the gold patch stays PASS, and each
// forgery ends FAIL, one caught by the tripwires alone, one (node:assert that never fails) by
// the sentinels and the tripwires both.
import { describe, expect, it } from 'vitest';
import { loadBundle, type Bundle } from '../../src/oracle/bundle.js';
import { type Evaluation } from '../../src/oracle/evaluate.js';
import type { TestStatus } from '../../src/oracle/report.js';
import { declaredOutcomes, type PhaseName } from '../../src/oracle/verdict.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { gradeIn } from '../helpers/grade.js';
import {
  patchFrom,
  withIds,
  withoutProtocol,
  type RepoBundleSpec,
} from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

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

const suite = runnerSuite(docker, SCOPE, { image: 'runners', spec: SPEC });

/** `task` graded against `candidate`, each phase's report seen by `onReport` when given. */
const grade = (
  task: Bundle,
  candidate: Buffer | null,
  onReport?: (phase: PhaseName, tests: ReadonlyMap<string, TestStatus>) => void,
): Promise<Evaluation> => gradeIn(docker, SCOPE, suite.imageId, task, candidate, onReport);

function outcomes(evaluation: Evaluation, phase: 'existing' | 'hidden') {
  const check = evaluation.phases?.[phase]?.check;
  if (!check) throw new Error(`no ${phase} check: ${JSON.stringify(evaluation.verdict)}`);
  return { outcomes: Object.fromEntries(declaredOutcomes(check)), undeclared: check.undeclared };
}

describe('the built-in node runner', () => {
  it(
    'keys tests by their name path; a baseline fails the hidden tests',
    async () => {
      const evaluation = await grade(suite.bundle, null);
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
      const evaluation = await grade(suite.bundle, suite.gold);
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
      const evaluation = await grade(
        await loadBundle(withIds(suite.dir, { existing })),
        suite.gold,
      );
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
      const task = await loadBundle(withIds(suite.dir, { existing: ['tests/version.test.js'] }));
      const check = (await grade(task, suite.gold)).phases?.existing.check;
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

// Forgeries: code a candidate adds to src/version.js (left unfixed), which every test file
// requires. Each would make a protocol-1 grade PASS or says what it tries.

// Rewrites every failing test event of node's child-v8 stream (a v8 header, the frame's size,
// the serialized event) as a passing one.
const REWRITE_EVENTS = (which: string) => `
const v8 = require('node:v8');
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = function (chunk, ...rest) {
  if (Buffer.isBuffer(chunk) && chunk.length > 6) {
    try {
      const item = v8.deserialize(chunk.subarray(6));
      if (item && item.type === 'test:fail' && ${which}) {
        item.type = 'test:pass';
        delete item.data.details.error;
        const body = v8.serialize(item);
        const head = Buffer.alloc(6);
        chunk.copy(head, 0, 0, 2);
        head.writeUInt32BE(body.length, 2);
        chunk = Buffer.concat([head, body]);
      }
    } catch {}
  }
  return write(chunk, ...rest);
};
`;

const FORGERY = {
  /** Every failing event becomes a pass. */
  allEvents: REWRITE_EVENTS('true'),
  /** Only the task's tests (their names have spaces; the sentinels' do not): a tripwire's. */
  taskEvents: REWRITE_EVENTS("item.data.name.includes(' ')"),
  /** No assertion of node:assert fails: a tripwire watches its methods. */
  assertions: `
const assert = require('node:assert');
for (const name of ['strictEqual', 'deepStrictEqual', 'equal', 'deepEqual', 'ok', 'throws']) {
  assert[name] = () => {};
}
`,
  exitAtImport: `
process.exit(0);
`,
  /** A passing report wherever a process's arguments name one, then the runner is killed. */
  writeReport: `
const fs = require('node:fs');
const ids = [];
for (const list of ['existing.txt', 'hidden.txt']) {
  try {
    ids.push(...fs.readFileSync('/proctor/assets/' + list, 'utf8').split('\\n').filter(Boolean));
  } catch {}
}
const report = JSON.stringify({ schema: 1, tests: ids.map((id) => ({ id, status: 'passed' })) });
const pids = fs.readdirSync('/proc').filter((p) => /^[0-9]+$/.test(p) && Number(p) !== process.pid);
const targets = new Set();
const runners = [];
for (const pid of pids) {
  let args;
  try {
    args = fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').split('\\0');
  } catch {
    continue;
  }
  if (args.some((a) => a.includes('proctor') || a === '--test')) runners.push(Number(pid));
  for (const arg of args) {
    const value = arg.replace(/^--[a-z-]+=/, '');
    if (value.startsWith('/') && value.includes('report')) targets.add(value);
    if (value.endsWith('/channel')) targets.add(value.slice(0, -'channel'.length) + 'report');
  }
}
for (const target of targets) {
  try {
    fs.writeFileSync(target, report);
  } catch {}
}
for (const pid of runners) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {}
}
process.exit(0);
`,
};

const forged = (code: string) => patchFrom(SPEC, { 'src/version.js': VERSION_JS(false) + code });

/** The sentinels' names of an evaluation's phases, from the oracle's phase records. */
function sentinelsOf(evaluation: Evaluation) {
  return evaluation.phaseRecords.flatMap((record) => record.integrity?.sentinels ?? []);
}

function phaseRecord(evaluation: Evaluation, name: PhaseName) {
  const record = evaluation.phaseRecords.find((r) => r.name === name);
  if (!record?.integrity)
    throw new Error(`no ${name} phase with integrity: ${JSON.stringify(evaluation.verdict)}`);
  return record.integrity;
}

describe('the built-in node runner, protocol 2', () => {
  it(
    'keeps the gold patch PASS, run after run, with every sentinel as it must be and none in the reports',
    async () => {
      for (let run = 0; run < 3; run += 1) {
        const seen: string[] = [];
        const evaluation = await grade(suite.bundle, suite.gold, (_phase, tests) =>
          seen.push(...tests.keys()),
        );
        expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
        // The existing phase's three in a file of their own; the hidden phase's, a pair in
        // each hidden test file, after a hidden test.
        const sentinels = sentinelsOf(evaluation);
        expect(sentinels).toHaveLength(3);
        for (const s of sentinels) expect(s.status).toBe(s.expect);
        const inFile = evaluation.phaseRecords.flatMap((r) => r.canaries?.sentinels ?? []);
        const kinds = inFile.map((s) => s.expect);
        expect(kinds.filter((k) => k === 'passed').length).toBeGreaterThan(0);
        expect(kinds.filter((k) => k === 'failed')).toHaveLength(kinds.length / 2);
        for (const s of inFile) expect(s.status).toBe(s.expect);
        for (const name of ['existing', 'hidden'] as const) {
          const integrity = phaseRecord(evaluation, name);
          expect(integrity.tampered).toBeNull();
        }
        const names = sentinels.map((s) => s.name);
        const checks = [evaluation.phases?.existing.check, evaluation.phases?.hidden?.check];
        const listed = checks.flatMap((c) => [...(c?.passed ?? []), ...(c?.undeclared ?? [])]);
        for (const id of [...seen, ...listed]) {
          for (const name of names) expect(id).not.toContain(name);
          expect(inFile.map((s) => s.id)).not.toContain(id);
        }
        expect(seen.length).toBeGreaterThan(0);
      }
    },
    SLOW,
  );

  it(
    'raises no alarm for code that hooks the exit as signal-exit does (process.emit, process.reallyExit)',
    async () => {
      const hooks = `
const emit = process.emit;
const reallyExit = process.reallyExit;
process.emit = function (event, ...args) {
  return emit.call(this, event, ...args);
};
process.reallyExit = function (code) {
  return reallyExit.call(this, code);
};
`;
      const candidate = patchFrom(SPEC, { 'src/version.js': VERSION_JS(true) + hooks });
      const evaluation = await grade(suite.bundle, candidate);
      expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
    },
    SLOW,
  );

  it(
    'finds a candidate that rewrites every failing event of its file as passing: TAMPERED, by the sentinels and a tripwire',
    async () => {
      const evaluation = await grade(suite.bundle, forged(FORGERY.allEvents));
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TAMPERED' });
      expect(evaluation.verdict.detail).toContain('process.stdout.write was replaced');
      // The sentinel that must fail and the one that must err were rewritten too.
      const existing = phaseRecord(evaluation, 'existing');
      expect(
        existing.sentinels
          .filter((s) => s.status !== s.expect)
          .map((s) => s.expect)
          .sort(),
      ).toEqual(['error', 'failed']);
    },
    SLOW,
  );

  it(
    'without protocol 2 (the runner without its protocol line) the same forgery passes: what the layers stop',
    async () => {
      const copy = withoutProtocol(suite.dir);
      const evaluation = await grade(await loadBundle(copy), forged(FORGERY.allEvents));
      expect(evaluation.verdict).toMatchObject({ verdict: 'PASS' });
      expect(evaluation.phaseRecords.every((r) => r.integrity === undefined)).toBe(true);
    },
    SLOW,
  );

  it(
    'finds a forgery of node:assert (it never fails) by the sentinels and a tripwire: TAMPERED, naming the tripwire',
    async () => {
      const evaluation = await grade(suite.bundle, forged(FORGERY.assertions));
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TAMPERED' });
      expect(evaluation.verdict.detail).toMatch(/tripwire: .*node:assert\.\w+ was replaced/);
      // The sentinel that must fail passed as well.
      const wrong = sentinelsOf(evaluation).filter((s) => s.status !== s.expect);
      expect(wrong.map((s) => [s.expect, s.status])).toContainEqual(['failed', 'passed']);
    },
    SLOW,
  );

  it(
    "finds a forgery only the tripwires can see (it rewrites the task's tests alone): TAMPERED, naming what changed",
    async () => {
      const evaluation = await grade(suite.bundle, forged(FORGERY.taskEvents));
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TAMPERED' });
      expect(evaluation.verdict.detail).toMatch(
        /tripwire: tests\/version\.test\.js: process\.stdout\.write was replaced/,
      );
      for (const s of sentinelsOf(evaluation)) expect(s.status).toBe(s.expect);
    },
    SLOW,
  );

  it(
    'fails a candidate that exits at import',
    async () => {
      const evaluation = await grade(suite.bundle, forged(FORGERY.exitAtImport));
      // No listed file's process got as far as the sentinels' copies in the existing phase:
      // their own file ran then, in a process of its own, so this is no TAMPERED.
      // The hidden phase's sentinels are in the hidden file, so none runs at the end of each
      // file's process there: its tests go unreported rather than `error`, a FAIL all the same.
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TESTS_MISSING' });
      expect(evaluation.phases?.hidden?.check?.passed).toEqual([]);
      expect(outcomes(evaluation, 'existing').outcomes).toEqual({
        [ID.equal]: 'error',
        [ID.subtest]: 'error',
        [ID.parent]: 'error',
      });
    },
    SLOW,
  );

  it(
    'fails a candidate that writes a passing report where the processes it can see name one, and kills the runner',
    async () => {
      const evaluation = await grade(suite.bundle, forged(FORGERY.writeReport));
      // SIGKILL on the runner reads as OOM (an exec killed with 137 in a running container);
      // either way the collector's report, not the forged one, is what the phase read.
      expect(evaluation.verdict.verdict).toBe('FAIL');
      expect(['OOM', 'REPORT_INVALID']).toContain(evaluation.verdict.reason);
      expect(evaluation.phases?.existing.reportError).toContain(
        'the test process ended before the end of its session',
      );
      expect(evaluation.phases?.existing.check).toBeNull();
    },
    SLOW,
  );
});
