// The sentinels Proctor writes into the JavaScript runners' hidden test files
// (src/oracle/js-sentinels.ts, placed by js-canary-step.ts): where they go, how they are named
// in each dialect, the call they make (and when they make none), and what they do when run: the
// must-pass one passes and the must-fail one fails whatever the call returns or throws, with
// the test library's assertions neutered.
import { describe, expect, it } from 'vitest';
import {
  JS_CANARY_WORDS,
  canaryJsFile,
  checkInserts,
  definedIds,
  withInserts,
  type Random,
} from '../../src/oracle/js-canaries.js';
import {
  mutateJsFiles,
  planJsCanaries,
  jsWriteOutcome,
  type JsCanaryPlan,
} from '../../src/oracle/js-canary-step.js';
import { moduleBindings, sentinelJsFile } from '../../src/oracle/js-sentinels.js';
import { parseTestFile } from '../../src/oracle/js-canaries.js';

// Always the first choice: the must-pass sentinel first, the first test, the word `again`.
const first: Random = () => 0;

const MOCHA = `'use strict';
const assert = require('assert');
const { div } = require('../lib/calc');

describe('div', function () {
  it('rounds down', function () {
    const r = div(-7, 2);
    assert.strictEqual(r, -4);
  });

  it('refuses zero', function () {
    assert.throws(() => div(1, 0), RangeError);
  });
});
`;

describe('the sentinels in a JavaScript test file', () => {
  it('places a must-pass and a must-fail test right after a hidden one, in its block, in its style', () => {
    const out = sentinelJsFile('mocha', 'test/div.js', MOCHA, new Set(['div refuses zero']), first);
    expect(out.why).toBeNull();
    expect(out.sentinels).toEqual([
      {
        test: 'div refuses zero',
        id: 'div refuses zero again',
        expect: 'passed',
        calls: 'div(1, 0)',
      },
      {
        test: 'div refuses zero',
        id: 'div refuses zero alt',
        expect: 'failed',
        calls: 'div(1, 0)',
      },
    ]);
    const after = out.text!.slice(out.text!.indexOf("it('refuses zero',"));
    expect(after).toBe(`it('refuses zero', function () {
    assert.throws(() => div(1, 0), RangeError);
  });

  it('refuses zero alt', function () {
    let value;
    try {
      value = div(1, 0);
    } catch (error) {
      value = error;
    }
    if (value === value || value !== value) throw new Error('unexpected value');
  });

  it('refuses zero again', function () {
    let value;
    try {
      value = div(1, 0);
    } catch (error) {
      value = error;
    }
    if (value !== value && value === value) throw new Error('unexpected value');
  });
});
`);
  });

  it('names them in each dialect as the mutants are, and keeps `test` and arrow functions', () => {
    const text = `import { describe, expect, test } from 'vitest';
import { slug } from '../src/slug';

describe('slug', () => {
  describe('accents', () => {
    test('drops them', () => {
      expect(slug('Éa')).toBe('ea');
    });
  });
});
`;
    const ids = {
      node: 'a.test.ts::slug > accents > drops them',
      mocha: 'slug accents drops them',
      jest: 'drops them',
      vitest: 'a.test.ts > slug > accents > drops them',
    } as const;
    for (const [dialect, id] of Object.entries(ids) as Array<[keyof typeof ids, string]>) {
      const out = sentinelJsFile(dialect, 'a.test.ts', text, new Set([id]), first);
      expect(out.sentinels.map((s) => [s.test, s.id, s.expect])).toEqual([
        [id, `${id} again`, 'passed'],
        [id, `${id} alt`, 'failed'],
      ]);
      expect(out.text).toContain(`    test('drops them again', () => {
      let value: unknown;
      try {
        value = slug('Éa');`);
    }
  });

  it('gives them titles no test of the file has, nor any of `taken`, and adds theirs to it', () => {
    const text = `it('a', () => {});\nit('a again', () => {});\n`;
    const taken = new Set(['a alt']);
    const out = sentinelJsFile('jest', 'x.test.js', text, new Set(['a']), first, taken);
    expect(out.sentinels.map((s) => s.id)).toEqual(['a basic', 'a case']);
    expect([...taken]).toEqual(['a alt', 'a basic', 'a case']);
    // Every title taken: none is placed, and why.
    const full = new Set(JS_CANARY_WORDS.map((w) => `a ${w}`));
    expect(sentinelJsFile('jest', 'x.test.js', text, new Set(['a']), first, full)).toEqual({
      text: null,
      sentinels: [],
      why: 'no free title for a sentinel',
    });
  });

  it("keeps the test's modifier, so that it runs when the test does", () => {
    const text = "describe('d', () => {\n  it.only('t', () => {});\n  it('u', () => {});\n});\n";
    const out = sentinelJsFile('mocha', 'o.js', text, new Set(['d t']), first);
    expect(out.text).toContain("  it.only('t again', () => {\n    if (");
    expect(out.text).toContain("  it.only('t alt', () => {\n    if (");
  });

  it('follows hidden tests only, and says so when the file defines none', () => {
    const out = sentinelJsFile('mocha', 'test/div.js', MOCHA, new Set(['div rounds down']), first);
    expect(out.sentinels.every((s) => s.test === 'div rounds down')).toBe(true);
    expect(sentinelJsFile('mocha', 'test/div.js', MOCHA, new Set(['calc adds']), first)).toEqual({
      text: null,
      sentinels: [],
      why: 'no hidden test of the file has a literal title',
    });
  });
});

/** The call the sentinels after the one test `t` of a file make ('' for none). */
function callOf(head: string, body: string, file = 'c.test.js'): string {
  const text = `${head}\nit('t', async function () {\n${body}\n});\n`;
  const out = sentinelJsFile('jest', file, text, new Set(['t']), first);
  expect(out.sentinels).toHaveLength(2);
  return out.sentinels[0]!.calls;
}

describe('the call a sentinel makes', () => {
  const REQUIRE = "const { f, g } = require('../src/lib');\nconst assert = require('assert');";

  it('prefers a call the test asserts on to one it makes for its effect', () => {
    expect(callOf(REQUIRE, 'g(1);\nassert.strictEqual(f(2), 3);')).toBe('f(2)');
    expect(callOf(REQUIRE, 'g(1);\nexpect(f(2)).toBe(3);')).toBe('f(2)');
    expect(callOf(REQUIRE, 'g(1);\nassert.ok(f(2) > 1);')).toBe('f(2)');
    expect(callOf(REQUIRE, 'g(1);\nconst r = f(2);')).toBe('g(1)');
  });

  it('calls only what the file imports from a module that is no test library', () => {
    const head = `import { add } from './add.js';
import * as lib from '../lib/index.js';
import { strictEqual } from 'node:assert';
import { expect as want } from 'chai';
import type { T } from './types';
const { createRequire } = require('node:module');
const { sub } = createRequire(import.meta.url)('../src/sub.js');
const mod = await import('../src/mod.js');
const local = (x) => x;
function helper() {}`;
    const { imported, bound } = moduleBindings(parseTestFile('m.test.ts', head));
    expect([...imported].sort()).toEqual(['add', 'lib', 'mod', 'sub']);
    expect(bound.has('local') && bound.has('helper') && bound.has('strictEqual')).toBe(true);
    expect(
      callOf(head, 'strictEqual(helper(1), local(2));\nstrictEqual(lib.x.y(3), 3);', 'm.test.ts'),
    ).toBe('lib.x.y(3)');
    expect(callOf(head, 'want(sub(1, 2)).to.equal(-1);', 'm.test.ts')).toBe('sub(1, 2)');
  });

  it('takes literals and module-level names as arguments, never a local of the test or `this`', () => {
    const head = `${REQUIRE}\nconst BASE = { n: 1 };\nlet count = 2;`;
    expect(
      callOf(head, "assert.deepStrictEqual(f([1, -2, 'x', `y`, null], { a: BASE.n, count }), 1);"),
    ).toBe("f([1, -2, 'x', `y`, null], { a: BASE.n, count })");
    // A local, a parameter of a nested function, `this`, a computed value: no call.
    expect(callOf(head, 'const x = 1;\nassert.strictEqual(f(x), 1);')).toBe('');
    expect(callOf(head, "for (const v of ['1']) assert.ok(f(v));")).toBe('');
    expect(callOf(head, 'assert.strictEqual(f(this.n), 1);')).toBe('');
    expect(callOf(head, 'assert.strictEqual(f(1 + 2), 3);')).toBe('');
    expect(callOf(head, 'assert.strictEqual(f(() => 1), 3);')).toBe('');
    // A name the test binds over the module's is the test's: `f` here is not the import.
    expect(callOf(head, 'const f = (n) => n;\nassert.strictEqual(f(1), 1);')).toBe('');
  });

  it('awaits a call the test awaits, in an async sentinel', () => {
    const text = `const { load } = require('../src/load');
it('loads', async () => {
  expect(await load('a')).toEqual({ a: 1 });
});
it('fails', async () => {
  await expect(load('b')).rejects.toThrow('missing');
});
`;
    for (const id of ['loads', 'fails']) {
      const out = sentinelJsFile('jest', 'l.test.js', text, new Set([id]), first);
      expect(out.sentinels[0]!.calls).toBe(id === 'loads' ? "load('a')" : "load('b')");
      expect(out.text).toContain(
        `it('${id} again', async () => {\n  let value;\n  try {\n    value = await load(`,
      );
    }
    const sync = "const { f } = require('./f');\nit('t', () => {\n  expect(f(1)).toBe(1);\n});\n";
    expect(sentinelJsFile('jest', 's.test.js', sync, new Set(['t']), first).text).toContain(
      "it('t again', () => {\n  let value;\n  try {\n    value = f(1);",
    );
  });

  it('compares two numbers, in the file all the same, where no call can be made', () => {
    const text = "it('t', () => {\n  const x = make();\n  expect(x.run()).toBe(1);\n});\n";
    const out = sentinelJsFile('jest', 'n.test.js', text, new Set(['t']), first);
    expect(out.sentinels.map((s) => [s.expect, s.calls])).toEqual([
      ['passed', ''],
      ['failed', ''],
    ]);
    expect(out.text).toContain("it('t again', () => {\n  if (2 + 1 !== 3) throw new Error");
    expect(out.text).toContain("it('t alt', () => {\n  if (2 + 1 === 3) throw new Error");
  });

  it('makes a call written over several lines as written, a template literal in it unchanged', () => {
    const text =
      "const { f } = require('./f');\r\nit('t', () => {\r\n  expect(\r\n    f(`a\r\nb`, 1),\r\n  ).toBe(1);\r\n});\r\n";
    const out = sentinelJsFile('jest', 'm.test.js', text, new Set(['t']), first);
    expect(out.sentinels[0]!.calls).toBe('f(`a\r\nb`, 1)');
    expect(out.text).toContain(
      "it('t again', () => {\r\n  let value;\r\n  try {\r\n    value = f(`a\r\nb`, 1);\r\n",
    );
    expect(out.text!.replace(/\r\n/g, '')).not.toContain('\n');
  });

  it("keeps its own names off every name of the file's", () => {
    const text = `const { value, error } = require('./v');
it('t', () => {
  expect(value(error)).toBe(1);
});
`;
    const out = sentinelJsFile('jest', 'v.test.js', text, new Set(['t']), first);
    expect(out.text).toContain('let result;');
    expect(out.text).toContain('} catch (err) {');
    expect(out.sentinels[0]!.calls).toBe('value(error)');
  });
});

/**
 * The tests a sentinel-bearing file defines, run: the file's text as a function of `require`,
 * `describe`, `it` and `expect`, with the code under test `lib` and every assertion of the
 * test library neutered (a forgery's best); each test's outcome by title.
 */
async function runFile(text: string, lib: Record<string, unknown>) {
  const tests = new Map<string, () => unknown>();
  const neutered: object = new Proxy(() => undefined, {
    get: () => neutered,
    apply: () => neutered,
  });
  const body = text.replace(/^'use strict';/, '');
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const file = new Function('require', 'describe', 'it', 'expect', body) as (
    ...args: unknown[]
  ) => void;
  file(
    (name: string) => (name === 'assert' ? neutered : lib),
    (_title: string, fn: () => void) => fn(),
    (title: string, fn: () => unknown) => tests.set(title, fn),
    neutered,
  );
  const outcomes: Record<string, 'passed' | 'failed'> = {};
  for (const [title, fn] of tests) {
    try {
      await fn();
      outcomes[title] = 'passed';
    } catch {
      outcomes[title] = 'failed';
    }
  }
  return outcomes;
}

describe('the sentinels, run', () => {
  const answers: Record<string, () => unknown> = {
    'a number': () => 3,
    NaN: () => NaN,
    undefined: () => undefined,
    'a thrown error': () => {
      throw new RangeError('no');
    },
    'a thrown NaN': () => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- a candidate's code may
      throw NaN;
    },
    'a proxy whose every trap throws': () =>
      new Proxy(
        {},
        {
          get() {
            throw new Error('get');
          },
          getPrototypeOf() {
            throw new Error('proto');
          },
        },
      ),
    'an object whose valueOf and toString throw': () => ({
      valueOf() {
        throw new Error('v');
      },
      toString() {
        throw new Error('s');
      },
    }),
    'a rejected promise, awaited': () => Promise.reject(new Error('async')),
  };

  it.each(Object.keys(answers))(
    'pass the must-pass and fail the must-fail one whatever the call gives: %s',
    async (answer) => {
      for (const awaited of [false, true]) {
        const text = `const assert = require('assert');
const { div } = require('../lib/calc');
describe('div', () => {
  it('rounds down', async () => {
    assert.strictEqual(${awaited ? 'await ' : ''}div(-7, 2), -4);
  });
});
`;
        if (!awaited && answer.endsWith('awaited')) continue;
        const out = sentinelJsFile('mocha', 'd.js', text, new Set(['div rounds down']), first);
        expect(out.sentinels[0]!.calls).toBe('div(-7, 2)');
        const outcomes = await runFile(out.text!, { div: answers[answer]! });
        // The real test passes when the call returns, its assertion neutered: only the
        // sentinels tell.
        expect(outcomes).toMatchObject({
          'rounds down again': 'passed',
          'rounds down alt': 'failed',
        });
        if (answer === 'a number' || answer === 'NaN')
          expect(outcomes['rounds down']).toBe('passed');
      }
    },
  );

  it('pass and fail as they must when they make no call', async () => {
    const text = "describe('d', () => {\n  it('t', () => {\n    expect(1).toBe(2);\n  });\n});\n";
    const out = sentinelJsFile('mocha', 'd.js', text, new Set(['d t']), first);
    expect(await runFile(out.text!, {})).toEqual({
      t: 'passed',
      't again': 'passed',
      't alt': 'failed',
    });
  });
});

describe('the sentinels in the canary step', () => {
  const FILES = {
    'test/div.js': MOCHA,
    'test/calc.js':
      "const assert = require('assert');\nconst { add } = require('../lib/calc');\ndescribe('calc', function () {\n  it('adds', function () {\n    assert.strictEqual(add(1, 2), 3);\n  });\n});\n",
  };
  const read = (files: Record<string, string>) => ({
    exitCode: 0,
    timedOut: false,
    stderr: '',
    stdout: Object.values(files)
      .map((t) => `ok ${Buffer.byteLength(t)}\n${Buffer.from(t).toString('base64')}\n`)
      .join(''),
  });
  const plan = (hiddenBytes?: number): JsCanaryPlan =>
    planJsCanaries(
      'mocha',
      Buffer.from('div rounds down\ndiv refuses zero\ncalc adds\n'),
      Buffer.from(
        Object.keys(FILES)
          .map((f) => `diff --git a/${f} b/${f}\n`)
          .join(''),
      ),
      hiddenBytes,
    );

  it('writes them after hidden tests only, never after a sampled existing one', () => {
    const hidden = plan('div rounds down\ndiv refuses zero\n'.length);
    expect(hidden.hidden).toEqual(['div rounds down', 'div refuses zero']);
    for (let round = 0; round < 5; round += 1) {
      const { record, writes } = mutateJsFiles(hidden, read(FILES));
      // They count once their files are written.
      expect(record).toMatchObject({ sentinels: [], sentinelsWhy: 'the files were not written' });
      const sentinels = writes.flatMap((w) => w.sentinels);
      expect(sentinels.map((s) => s.expect).sort()).toEqual(['failed', 'passed']);
      expect(writes.find((w) => w.file === 'test/calc.js')?.sentinels ?? []).toEqual([]);
      for (const s of sentinels) expect(['div rounds down', 'div refuses zero']).toContain(s.test);
      const outcome = jsWriteOutcome(record, writes, {
        exitCode: 0,
        timedOut: false,
        stdout: 'ok\n'.repeat(writes.length),
        stderr: '',
      });
      expect(outcome.sentinels).toEqual(sentinels);
      expect(outcome.sentinelsWhy).toBeNull();
    }
  });

  it('keeps the file of their own when no hidden test is in a file it reads, and says why', () => {
    const { record, writes } = mutateJsFiles(plan(0), read(FILES));
    expect(writes.flatMap((w) => w.sentinels)).toEqual([]);
    expect(record.sentinelsWhy).toBe('no hidden test is listed');
    const cut = plan('div rounds'.length);
    expect(cut.hidden).toEqual([]);
    const other = planJsCanaries(
      'mocha',
      Buffer.from('calc adds\n'),
      Buffer.from('diff --git a/test/calc.js b/test/calc.js\n'),
    );
    const none = mutateJsFiles(other, read({ 'test/calc.js': FILES['test/calc.js'] }));
    expect(none.writes.flatMap((w) => w.sentinels)).toHaveLength(2);
    const unread = mutateJsFiles(plan(), { exitCode: 1, timedOut: false, stdout: '', stderr: 'x' });
    expect(unread.record.sentinelsWhy).toBe('the canary step failed');
    const notTests = planJsCanaries('mocha', Buffer.from('a b\n'), Buffer.alloc(0));
    expect(notTests.record.sentinelsWhy).toBe('no listed test is in a file the mutator reads');
  });

  it('gives a mocha sentinel a full title no test of another read file has, nor a listed id', () => {
    // `div rounds down again` and `… alt` are another file's tests; `… basic` is listed.
    const other =
      "describe('div', function () {\n  it('rounds down again', function () {});\n  it('rounds down alt', function () {});\n});\n";
    const mocha = planJsCanaries(
      'mocha',
      Buffer.from('div rounds down\ndiv rounds down basic\n'),
      Buffer.from('diff --git a/test/div.js b/test/div.js\ndiff --git a/test/x.js b/test/x.js\n'),
    );
    const files = { 'test/div.js': MOCHA, 'test/x.js': other };
    const { writes } = mutateJsFiles(mocha, read(files), first);
    // (The mutant, whose word is drawn anew each try, finds none with this draw: `again` only.)
    const ids = writes.flatMap((w) => [...w.mutants, ...w.sentinels].map((c) => c.id));
    expect(writes.flatMap((w) => w.sentinels)).toHaveLength(2);
    for (const taken of ['div rounds down again', 'div rounds down alt', 'div rounds down basic']) {
      expect(ids).not.toContain(taken);
    }
  });

  it('writes what placing the mutants, then the sentinels in the mutated file, would write', () => {
    // The step places both in the file as read, in one go; the same draws give the same bytes
    // as the mutants' file made first and the sentinels placed in it.
    const draws = [0, 1, 2, 3, 1, 0, 2, 1, 3, 0, 1, 2];
    const seeded = (): Random => {
      let at = 0;
      return (n) => draws[at++ % draws.length]! % n;
    };
    const hidden = plan('div rounds down\ndiv refuses zero\n'.length);
    const { writes } = mutateJsFiles(hidden, read(FILES), seeded());
    const random = seeded();
    // mocha's ids name no file: every title of the files read is taken.
    const taken = new Set(hidden.listed);
    for (const [file, text] of Object.entries(FILES)) {
      for (const id of definedIds('mocha', file, text)) taken.add(id);
    }
    const wanted = new Set(hidden.listed);
    const expected = new Map<string, string>();
    for (const [file, text] of Object.entries(FILES)) {
      expected.set(file, canaryJsFile('mocha', file, text, wanted, random, taken).text ?? text);
    }
    // One file takes the pair (JS_SENTINEL_MAX_FILES): the first drawn that has a hidden test.
    const files = Object.keys(FILES);
    const left = [...files];
    let placed: ReturnType<typeof sentinelJsFile> | null = null;
    while (placed === null && left.length > 0) {
      const file = left.splice(random(left.length), 1)[0]!;
      const hiddenIds = new Set(hidden.hidden);
      const tried = sentinelJsFile('mocha', file, expected.get(file)!, hiddenIds, random, taken);
      if (tried.text === null) continue;
      expected.set(file, tried.text);
      placed = tried;
    }
    expect(placed?.sentinels).toHaveLength(2);
    expect(writes.map((w) => [w.file, w.bytes.toString('utf8')])).toEqual(
      files.map((f) => [f, expected.get(f)]),
    );
    expect(writes.flatMap((w) => w.sentinels).map((s) => s.id)).toEqual(
      placed?.sentinels.map((s) => s.id),
    );
  });

  it('checks each insert alone, and the whole file where an insert does not parse alone', () => {
    const text =
      "class Box {\n  #size = 2;\n  static check(t) {\n    t('reads', () => {\n      new Box().#size;\n    });\n  }\n}\n";
    const at = text.indexOf('    });\n') + '    });'.length;
    // A private name parses in its class only: the whole new text is parsed, and holds.
    const inside = [
      { at, text: "\n    t('reads again', () => {\n      new Box().#size;\n    });" },
    ];
    expect(() => checkInserts('p.test.js', text, inside, withInserts(text, inside))).not.toThrow();
    const broken = [{ at, text: '\n    t(#size);' }];
    expect(() => checkInserts('p.test.js', text, broken, withInserts(text, broken))).toThrow();
    // An insert that parses alone is not parsed again within the file (a module's, here).
    const esm = "import { t } from 'x';\nt('a', () => {});\n";
    const alone = [{ at: esm.length, text: "t('b', () => { import.meta.url; });\n" }];
    expect(() => checkInserts('m.test.js', esm, alone, withInserts(esm, alone))).not.toThrow();
    const script = "const { t } = require('x');\nt('a', () => {});\n";
    const meta = [{ at: script.length, text: "t('b', () => { import.meta.url; });\n" }];
    expect(() => checkInserts('s.test.js', script, meta, withInserts(script, meta))).toThrow();
  });

  it("keeps a vitest id's project prefix on its sentinels", () => {
    const text =
      "import { expect, test } from 'vitest';\nimport { add } from '../src/add';\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n";
    const vitest = planJsCanaries(
      'vitest',
      Buffer.from('|unit| t/a.test.ts > adds\n'),
      Buffer.alloc(0),
    );
    const { writes } = mutateJsFiles(vitest, read({ 't/a.test.ts': text }), first);
    expect(writes[0]!.sentinels.map((s) => [s.test, s.id])).toEqual([
      ['|unit| t/a.test.ts > adds', '|unit| t/a.test.ts > adds alt'],
      ['|unit| t/a.test.ts > adds', '|unit| t/a.test.ts > adds basic'],
    ]);
  });
});
