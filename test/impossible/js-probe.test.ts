// The choice and change of one hidden test for a JavaScript task's impossible variant (pure:
// the probes around it run in test/impossible/impossible-cli.test.ts): the ids in an order the
// seed draws, the first whose test the canaries' mutator understands, changed in place
// (one-off) or copied beside itself with the contradicting expectation (conflicting).
import { describe, expect, it } from 'vitest';
import { changeJsTest, seededRandom } from '../../src/impossible/js-probe.js';
import { parseTestFile } from '../../src/oracle/js-canaries.js';

const FILE = 'test/calc.test.js';
const TEXT = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { add, parse } from '../calc.js';

test('adds', () => {
  assert.strictEqual(add(2, 3), 5);
});

test('loops only', () => {
  for (const n of [1, 2]) assert.strictEqual(add(n, 0), n);
});

test('refuses junk', () => {
  assert.throws(() => parse('x'));
});
`;
const files = new Map([[FILE, TEXT]]);

describe('the change of a JavaScript hidden test', () => {
  it('changes one expectation in place for one-off, and the file still parses', () => {
    const change = changeJsTest('node', files, [`${FILE}::adds`], 'one-off', seededRandom('s'));
    expect(change).toMatchObject({ file: FILE, test: `${FILE}::adds` });
    expect(change?.mutant).toBeUndefined();
    expect(change?.mutation).toMatch(/^strictEqual expected 5 -> (?!5$)\d+$/);
    const to = /-> (\d+)$/.exec(change!.mutation)![1]!;
    expect(change!.text).toBe(TEXT.replace('add(2, 3), 5)', `add(2, 3), ${to})`));
    expect(() => parseTestFile(FILE, change!.text)).not.toThrow();
  });

  it('adds the contradicting copy under a new title for conflicting, the original kept', () => {
    const change = changeJsTest('mocha', files, ['refuses junk'], 'conflicting', seededRandom('s'));
    expect(change).toMatchObject({
      test: 'refuses junk',
      mutation: expect.stringMatching(/^throws\(/),
    });
    expect(change?.mutant).toMatch(/^refuses junk [a-z]+$/);
    expect(change!.text).toContain("assert.throws(() => parse('x'));");
    expect(change!.text).toContain(
      `test('${change!.mutant!}', () => {\n  assert.throws(() => {});`,
    );
  });

  it('passes over a test with no assertion it understands, and an id no file defines', () => {
    const ids = [`${FILE}::loops only`, `${FILE}::missing`, `${FILE}::adds`];
    for (const seed of ['a', 'b', 'c', 'd']) {
      expect(changeJsTest('node', files, ids, 'one-off', seededRandom(seed))?.test).toBe(
        `${FILE}::adds`,
      );
    }
    expect(
      changeJsTest('node', files, [`${FILE}::loops only`], 'one-off', seededRandom('a')),
    ).toBeNull();
    expect(
      changeJsTest(
        'node',
        new Map([[FILE, 'test(']]),
        [`${FILE}::adds`],
        'one-off',
        seededRandom('a'),
      ),
    ).toBeNull();
  });

  it('draws the same change from the same seed, and the order of the ids from the seed', () => {
    const ids = [`${FILE}::adds`, `${FILE}::refuses junk`];
    const once = changeJsTest('node', files, ids, 'one-off', seededRandom('same'));
    expect(changeJsTest('node', files, ids, 'one-off', seededRandom('same'))).toEqual(once);
    const tests = new Set(
      ['1', '2', '3', '4', '5', '6', '7', '8'].map(
        (seed) => changeJsTest('node', files, ids, 'one-off', seededRandom(seed))?.test,
      ),
    );
    expect(tests).toEqual(new Set(ids));
  });
});
