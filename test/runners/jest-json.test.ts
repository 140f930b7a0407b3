// The built-in jest runner with ids in SWE-bench's parse_log_jest_json form ([tests] env
// RUNNER_JEST_IDS = "json"): a test's describe blocks and its title joined by " > ", as
// `jest --json` through jq names it. In real grades through the oracle, on the jest fixture
// image: nested describe blocks, a title two describe blocks share (two ids, each with its own
// status), an id two tests share (the worst status; SWE-bench's last), skipped and todo tests,
// titles with a line break or trailing spaces (keyed by their first line, trimmed), ids that
// name no test; canaries whose ids are in the same form; and a value of the setting the runner
// does not know.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/bundle.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import {
  expectAllErrors,
  expectBaselineThenGold,
  expectGoldWithCanaries,
  outcomes,
  swebenchOf,
  swebenchTask,
} from '../helpers/grade.js';
import { withIds, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-jest-json');
const SLOW = 300_000;

const BAG = (remove: string) => `class Bag {
  constructor() {
    this.items = [];
  }
  get size() {
    return this.items.length;
  }
  add(x) {
    this.items.push(x);
    return this;
  }
  has(x) {
    return this.items.includes(x);
  }
  // remove drops one x.
  remove(x) {
${remove}
  }
}
module.exports = { Bag };
`;

const EXISTING = `const { Bag } = require('../src/bag');

test('is a class', () => {
  expect(typeof Bag).toBe('function');
});

describe('Bag', () => {
  test('starts empty', () => {
    expect(new Bag().size).toBe(0);
  });
  describe('add', () => {
    test('counts', () => {
      expect(new Bag().add(1).size).toBe(1);
    });
  });
  describe('has', () => {
    test('counts', () => {
      expect(new Bag().add(2).has(3)).toBe(true);
    });
  });
  test.skip('persists', () => {});
  test.todo('iterates');
  test('spans\\nlines', () => {
    expect(new Bag().size).toBe(0);
  });
  test('ends in spaces  ', () => {
    expect(new Bag().size).toBe(0);
  });
});

describe('twice', () => {
  test('same', () => {
    expect(1).toBe(2);
  });
});

describe('twice', () => {
  test('same', () => {
    expect(1).toBe(1);
  });
});
`;

// The hidden tests: "removes correctly" in two describe blocks, one failing at the base. No
// mutant of theirs (an expected value changed) can pass at the base either.
const HIDDEN = `const { Bag } = require('../src/bag');

describe('Bag', () => {
  describe('remove', () => {
    test('removes correctly', () => {
      expect(new Bag().add('x').add('y').remove('x').items.join(',')).toBe('y');
    });
    test('keeps the others', () => {
      expect(new Bag().add('x').add('y').remove('x').items).toEqual(['y']);
    });
  });
  describe('clear', () => {
    test('removes correctly', () => {
      expect(new Bag().remove(1).size).toBe(0);
    });
  });
});
`;

const ID = {
  top: 'is a class',
  empty: 'Bag > starts empty',
  addCounts: 'Bag > add > counts',
  hasCounts: 'Bag > has > counts',
  skipped: 'Bag > persists',
  todo: 'Bag > iterates',
  twice: 'twice > same',
  // A title's first line, its trailing whitespace cut, as the parser reads jq's lines.
  spans: 'Bag > spans',
  spaces: 'Bag > ends in spaces',
  bare: 'counts',
  nowhere: 'Bag > is found nowhere',
  removes: 'Bag > remove > removes correctly',
  keeps: 'Bag > remove > keeps the others',
  clears: 'Bag > clear > removes correctly',
};

const SPEC: RepoBundleSpec = {
  id: 'jest-json',
  runner: 'jest',
  from: 'proctor-test-jest:latest',
  repo: {
    'package.json':
      '{\n  "name": "bag",\n  "private": true,\n  "jest": { "testEnvironment": "node" }\n}\n',
    '.gitignore': 'node_modules\n',
    'src/bag.js': BAG('    return this;'),
    '__tests__/bag.test.js': EXISTING,
  },
  hidden: { '__tests__/remove.test.js': HIDDEN },
  gold: {
    'src/bag.js': BAG(
      '    const at = this.items.indexOf(x);\n    if (at >= 0) this.items.splice(at, 1);\n    return this;',
    ),
  },
  existing: [ID.top, ID.empty, ID.addCounts],
  hiddenIds: [ID.removes, ID.keeps, ID.clears],
  testSeconds: 120,
  testsEnv: { RUNNER_JEST_IDS: 'json' },
};

const suite = runnerSuite(docker, SCOPE, { image: 'jest', spec: SPEC });
const { grade } = suite;

describe('the jest runner with parse_log_jest_json ids', () => {
  it(
    'fails a baseline on the hidden tests and passes the gold patch, each joined id with its own status, every canary failing',
    async () => {
      const { fixed } = await expectBaselineThenGold(grade, suite.bundle, suite.gold, {
        existing: { [ID.top]: 'passed', [ID.empty]: 'passed', [ID.addCounts]: 'passed' },
        // `removes correctly` fails in one describe block and passes in the other.
        hidden: { [ID.removes]: 'failed', [ID.keeps]: 'failed', [ID.clears]: 'passed' },
      });
      const ids = [...SPEC.existing, ...SPEC.hiddenIds];
      const canaries = expectGoldWithCanaries(fixed, [ID.removes, ID.keeps, ID.clears], ids);
      // A mutant's id is the joined form with the mutant's own title, which no test has.
      for (const m of canaries.mutants) {
        expect(m.status, `${m.id}: ${m.mutation}`).toBe('failed');
        expect(m.id.startsWith(`${m.test} `), m.id).toBe(true);
        expect(m.id).toMatch(/^Bag > (?:remove|clear) > [a-z ]+ [a-z]+$/);
        expect(ids.includes(m.id), m.id).toBe(false);
      }
      expect(new Set(canaries.mutants.map((m) => m.id)).size).toBe(3);
    },
    SLOW,
  );

  it(
    'reports a shared id with the worst status, skip and todo as skipped, and ids that name no test (a bare title among them) as missing',
    async () => {
      const task = await loadBundle(
        withIds(suite.dir, {
          existing: [
            ID.addCounts,
            ID.hasCounts,
            ID.skipped,
            ID.todo,
            ID.twice,
            ID.spans,
            ID.spaces,
            ID.bare,
            ID.nowhere,
          ],
        }),
      );
      const evaluation = await grade(task, suite.gold);
      expect(outcomes(evaluation, 'existing')).toEqual({
        [ID.addCounts]: 'passed',
        [ID.hasCounts]: 'failed',
        [ID.skipped]: 'skipped',
        [ID.todo]: 'skipped',
        [ID.twice]: 'failed',
        [ID.spans]: 'passed',
        [ID.spaces]: 'passed',
        [ID.bare]: 'missing',
        [ID.nowhere]: 'missing',
      });
      expect(outcomes(evaluation, 'hidden')).toEqual({
        [ID.removes]: 'passed',
        [ID.keeps]: 'passed',
        [ID.clears]: 'passed',
      });
    },
    SLOW,
  );

  it(
    "records what parse_log_jest_json would under SWE-bench's rules: PASSED, FAILED, the last of a shared id, nothing for a skipped or todo test",
    async () => {
      const task = await swebenchTask(suite.dir, {
        existing: [...SPEC.existing, ID.skipped, ID.todo, ID.twice, ID.spans, ID.spaces],
      });
      const base = await grade(task, null);
      // A skipped or todo test is no PASS_TO_PASS test of SWE-bench's: it has no line.
      expect(base.verdict, base.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'EXISTING_FAILED',
      });
      expect(base.verdict.detail).toContain('Bag > persists (ABSENT), Bag > iterates (ABSENT)');
      expect(swebenchOf(base)).toMatchObject({
        [ID.top]: ['passed', 'PASSED'],
        [ID.addCounts]: ['passed', 'PASSED'],
        [ID.skipped]: ['skipped', 'ABSENT'],
        [ID.todo]: ['skipped', 'ABSENT'],
        // The failing one comes first in jest's --json; the parser's dict keeps the last.
        [ID.twice]: ['failed', 'PASSED'],
        [ID.spans]: ['passed', 'PASSED'],
        [ID.spaces]: ['passed', 'PASSED'],
        [ID.removes]: ['failed', 'FAILED'],
        [ID.clears]: ['passed', 'PASSED'],
      });
      const plain = await swebenchTask(suite.dir);
      const unfixed = await grade(plain, null);
      expect(unfixed.verdict, unfixed.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'HIDDEN_FAILED',
      });
      const fixed = await grade(plain, suite.gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
      expect(fixed.verdict.detail).toContain("resolved by SWE-bench's rules");
    },
    SLOW,
  );

  it(
    'makes every listed test an error, with the cause, when RUNNER_JEST_IDS names no form it knows',
    async () => {
      const copy = withIds(suite.dir, {});
      const toml = join(copy, 'task.toml');
      const text = readFileSync(toml, 'utf8');
      expect(text).toContain('RUNNER_JEST_IDS = "json"');
      writeFileSync(toml, text.replace('RUNNER_JEST_IDS = "json"', 'RUNNER_JEST_IDS = "Json"'));
      const evaluation = await grade(await loadBundle(copy), suite.gold);
      expectAllErrors(evaluation, SPEC);
      expect(evaluation.verdict.detail).toContain(
        'RUNNER_JEST_IDS must be `verbose` or `json`, not "Json"',
      );
    },
    SLOW,
  );
});
