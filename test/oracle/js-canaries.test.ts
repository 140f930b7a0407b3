// The JavaScript mutator (src/oracle/js-canaries.ts) and the pure parts of its step
// (js-canary-step.ts): each mutation it understands, in JavaScript, TypeScript and JSX; the
// tests it leaves uncovered and why; the ids in each runner's dialect; the paths it refuses.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  canaryJsFile,
  change,
  findTests,
  JS_CANARY_WORDS,
  parseTestFile,
  testId,
  withParsedPrograms,
  type JsDialect,
  type Random,
} from '../../src/oracle/js-canaries.js';
import {
  jsCanaryDialect,
  jsCanaryFiles,
  parseRead,
  patchFiles,
  safeTestPath,
  planJsCanaries,
  jsReadStep,
  mutateJsFiles,
  jsWriteStep,
  jsWriteOutcome,
} from '../../src/oracle/js-canary-step.js';
import { tempDir } from '../helpers/temp.js';

// Always the first choice: 1 added to a number, the letter `a`, the word `again`.
const first: Random = () => 0;

/** The mutant of the one test `title` in a file of one test. */
function mutantOf(body: string, file = 'a.test.js', title = 'works') {
  const text = `it('${title}', async () => {\n${body}\n});\n`;
  const out = canaryJsFile('node', file, text, new Set([`${file}::${title}`]), first);
  return out;
}

describe('the programs a canary step parses', () => {
  it("parses a file's text once inside withParsedPrograms, and keeps nothing after it", () => {
    const text = "it('adds', () => { assert.strictEqual(add(1, 2), 3); });\n";
    const outside = parseTestFile('t.js', text);
    expect(parseTestFile('t.js', text)).not.toBe(outside);
    let inside: unknown;
    withParsedPrograms(() => {
      inside = parseTestFile('t.js', text);
      expect(parseTestFile('t.js', `${text}`)).toBe(inside);
      // Another file, or another text: parsed apart.
      expect(parseTestFile('u.js', text)).not.toBe(inside);
      expect(parseTestFile('t.js', `${text}\n`)).not.toBe(inside);
      // A nested call shares the outer programs.
      withParsedPrograms(() => expect(parseTestFile('t.js', text)).toBe(inside));
      expect(parseTestFile('t.js', text)).toBe(inside);
    });
    expect(parseTestFile('t.js', text)).not.toBe(inside);
    // A text that does not parse throws each time, and is never kept.
    withParsedPrograms(() => {
      expect(() => parseTestFile('t.js', 'it(')).toThrow();
      expect(() => parseTestFile('t.js', 'it(')).toThrow();
    });
  });
});

describe('a mutation as the log says it', () => {
  it('shows short values whole and long ones cut around where they first differ', () => {
    expect(change("'a b'", "'xa b'")).toBe("'a b' -> 'xa b'");
    const before = `{mimetype: 'image/jpeg', originalFilename: 'blob', size: Buffer.from(blobContent).byteLength}`;
    const after = before.replace('byteLength', 'xbyteLength');
    const shown = change(before, after);
    const [left, right] = shown.split(' -> ') as [string, string];
    // Both cut to the same window, which holds the change.
    expect(left).not.toBe(right);
    expect(right).toContain('xbyteLength');
    expect(left.startsWith('...')).toBe(true);
    expect(left.length).toBeLessThanOrEqual(86);
    // Whitespace is one space, on both sides.
    expect(change('{\n  a: 1,\n}', '{\n  a: 2,\n}')).toBe('{ a: 1, } -> { a: 2, }');
  });
});

describe('the JavaScript mutator', () => {
  it.each([
    ['assert.strictEqual(f(1), 2);', 'assert.strictEqual(f(1), 3);', 'strictEqual expected 2 -> 3'],
    ['assert.deepStrictEqual(f(), [1, 2]);', 'assert.deepStrictEqual(f(), [1, 2, null]);', null],
    ['assert.equal(f(), "x");', 'assert.equal(f(), "xa");', null],
    ['strictEqual(f(), `t`);', 'strictEqual(f(), `ta`);', null],
    ['assert.deepEqual(f(), {});', 'assert.deepEqual(f(), { again: null });', null],
    ['assert.deepEqual(f(), { a: 1 });', 'assert.deepEqual(f(), { a: 1, again: null });', null],
    ['assert.strictEqual(f(), true);', 'assert.strictEqual(f(), false);', null],
    ['assert.strictEqual(f(), -4);', 'assert.strictEqual(f(), -5);', null],
    ['assert.strictEqual(f(), 7n);', 'assert.strictEqual(f(), 8n);', null],
    ['assert.strictEqual(5, f());', 'assert.strictEqual(6, f());', null],
    ['expect(f()).to.equal(3);', 'expect(f()).to.equal(4);', 'expect(…).to.equal expected 3 -> 4'],
    ['expect(f()).to.deep.equal([]);', 'expect(f()).to.deep.equal([null]);', null],
    ['expect(f()).toBe("s");', 'expect(f()).toBe("sa");', null],
    ['expect(f()).toEqual({ k: [1] });', 'expect(f()).toEqual({ k: [1], again: null });', null],
    ['await expect(f()).toStrictEqual(1);', 'await expect(f()).toStrictEqual(2);', null],
    [
      'assert.throws(() => f(null), TypeError);',
      'assert.throws(() => {}, TypeError);',
      'throws(() => f(null)) -> a function that returns',
    ],
    ['expect(() => f()).to.throw();', 'expect(() => {}).to.throw();', null],
    ['expect(g).toThrow(/bad/);', 'expect(() => {}).toThrow(/bad/);', null],
  ])('mutates %s', (body, mutated, description) => {
    const out = mutantOf(`  ${body}`);
    expect(out.uncovered).toEqual([]);
    expect(out.mutants).toHaveLength(1);
    const mutant = out.mutants[0]!;
    expect(mutant).toMatchObject({ test: 'a.test.js::works', id: 'a.test.js::works again' });
    if (description !== null) expect(mutant.mutation).toBe(description);
    // The original, then its copy: the same text but for the title and the one expectation.
    expect(out.text).toBe(
      `it('works', async () => {\n  ${body}\n});\nit('works again', async () => {\n  ${mutated}\n});\n`,
    );
  });

  it.each([
    ['expect(f()).not.toBe(3);', 'a negated expectation'],
    ['expect(f()).to.not.equal(3);', 'a negated chai expectation'],
    ['await expect(f()).rejects.toThrow();', 'a promise expectation'],
    ['if (x) assert.strictEqual(f(), 1);', 'an assertion in a branch'],
    ['for (const v of [1]) assert.strictEqual(f(v), v);', 'an assertion in a loop'],
    ['assert.strictEqual(f(), g());', 'no literal on either side'],
    ['assert.strictEqual(f(), undefined);', 'undefined'],
    ['assert.ok(f());', 'an assertion it does not change'],
    ['const r = () => assert.strictEqual(f(), 1);', 'an assertion in a nested function'],
  ])('leaves %s uncovered (%s)', (body) => {
    const out = mutantOf(`  ${body}`);
    expect(out.mutants).toEqual([]);
    expect(out.text).toBeNull();
    expect(out.uncovered).toEqual([
      { test: 'a.test.js::works', why: 'no assertion the mutator understands' },
    ]);
  });

  it('changes no assertion the test runs code after: a failing copy would skip that code', () => {
    // The copy fails at its changed assertion; had it been this one, the restore would not run
    // and the tests after it would find the mock still in place.
    const restoring = mutantOf('  const undo = mock();\n  expect(f()).toBe(1);\n  undo();');
    expect(restoring.mutants).toEqual([]);
    expect(restoring.uncovered).toEqual([
      {
        test: 'a.test.js::works',
        why: 'its assertions are followed by code a failing copy would skip',
      },
    ]);
    // Only checks after it: the first assertion is changed, code before it is kept.
    const checks = mutantOf(
      '  const undo = mock();\n  undo();\n  expect(f()).toBe(1);\n  assert.strictEqual(g(), 2);\n  ;',
    );
    expect(checks.mutants.map((m) => m.mutation)).toEqual(['expect(…).toBe expected 1 -> 2']);
    // The last of several, when code follows the others: a reset call, a shared name set
    // again, a property written.
    for (const reset of ['reset();', 'shared = 0;', 'process.env.X = old;']) {
      const last = mutantOf(`  expect(f()).toBe(1);\n  ${reset}\n  expect(g()).toBe(5);`);
      expect(last.mutants.map((m) => m.mutation)).toEqual(['expect(…).toBe expected 5 -> 6']);
    }
    // Local names, branches, loops and tries of checks after it leave nothing behind.
    const locals = mutantOf(
      '  expect(f()).toBe(1);\n  const [a, b] = g();\n  for (const v of [a]) { expect(v).toBe(a); }\n  if (b) assert.ok(b);\n  try { expect(b).toBe(b); } catch (e) { assert(e); }\n  expect(b).to.be.true;',
    );
    expect(locals.mutants.map((m) => m.mutation)).toEqual(['expect(…).toBe expected 1 -> 2']);
  });

  it('reads TypeScript and JSX test files, and the mutant parses as the original did', () => {
    const ts = `import { expect, it } from 'vitest';\ninterface P { n: number }\nit('typed', () => {\n  const p: P = { n: 1 };\n  expect(f(p as P)).toBe(<number>2);\n  expect(f(p)).toEqual(2 satisfies number);\n  expect(f(p)!).toBe(3);\n});\n`;
    const out = canaryJsFile('node', 't.test.ts', ts, new Set(['t.test.ts::typed']), first);
    expect(out.mutants.map((m) => m.mutation)).toEqual(['expect(…).toBe expected 3 -> 4']);
    const tsx = `it('renders', () => {\n  expect(render(<B label="x" />)).toBe('<b>x</b>');\n});\n`;
    const jsx = canaryJsFile('node', 'b.test.tsx', tsx, new Set(['b.test.tsx::renders']), first);
    expect(jsx.text).toContain(
      `it('renders again', () => {\n  expect(render(<B label="x" />)).toBe('<b>x</b>a');`,
    );
    expect(
      canaryJsFile('node', 'b.test.jsx', tsx, new Set(['b.test.jsx::renders']), first).mutants,
    ).toHaveLength(1);
  });

  it('throws on a file that does not parse (the step names it uncovered)', () => {
    expect(() => canaryJsFile('node', 'x.test.js', 'it("a", () => {', new Set(), first)).toThrow();
    // TypeScript's syntax in a .js file is not JavaScript.
    expect(() => parseTestFile('x.test.js', 'const a: number = 1;\n')).toThrow();
  });

  it('finds tests in nested describe blocks, with modifiers, and names them per dialect', () => {
    const text = `describe('outer', function () {\n  context('inner #1', () => {\n    it.only('a', () => {});\n  });\n  test.skip(\`b\`, async () => {});\n  it(name, () => {});\n});\nfor (const c of cases) it(c, () => {});\nspecify('top', () => {});\n`;
    const paths = findTests(parseTestFile('x.spec.js', text)).map((t) => t.path);
    expect(paths).toEqual([['outer', 'inner #1', 'a'], ['outer', 'b'], ['top']]);
    expect(testId('node', 'x.spec.js', paths[0]!)).toBe('x.spec.js::outer > inner #1 > a');
    expect(testId('mocha', 'x.spec.js', paths[0]!)).toBe('outer inner 1 a');
    expect(testId('karma', 'x.spec.js', paths[0]!)).toBe('outer > inner #1 > a');
    expect(testId('jest', 'x.spec.js', paths[0]!)).toBe('a');
    expect(testId('jest-json', 'x.spec.js', paths[0]!)).toBe('outer > inner #1 > a');
    expect(testId('jest-json', 'x.spec.js', ['top'])).toBe('top');
    expect(testId('vitest', 'x.spec.js', paths[0]!)).toBe('x.spec.js > outer > inner #1 > a');
  });

  it('names a title that ends in white space as the runners report it, without it', () => {
    // SWE-bench's parsers strip each line, and the runners report the id so.
    const path = ['outer ', 'adds zero '];
    expect(testId('node', 'x.spec.js', path)).toBe('x.spec.js::outer  > adds zero ');
    expect(testId('mocha', 'x.spec.js', path)).toBe('outer  adds zero');
    // The karma runner reports a test's place in the tree as mocha holds its titles.
    expect(testId('karma', 'x.spec.js', path)).toBe('outer  > adds zero ');
    expect(testId('jest', 'x.spec.js', path)).toBe('adds zero');
    expect(testId('jest-json', 'x.spec.js', path)).toBe('outer  > adds zero');
    expect(testId('jest-json', 'x.spec.js', ['a\nsecond line'])).toBe('a');
    expect(testId('vitest', 'x.spec.js', path)).toBe('x.spec.js > outer  > adds zero');
  });

  it('gives a mutant a title no test of the file has, and keeps the file as it was around it', () => {
    const text = `'use strict';\r\n\r\nit('x', () => {\r\n  assert.strictEqual(f(), 1);\r\n});\r\n\r\nit('x again', () => {});\r\n`;
    let words = 0;
    // The first word drawn is `again`, the next `alt`.
    const pick: Random = (n) => (n === JS_CANARY_WORDS.length ? words++ : 0);
    const out = canaryJsFile('node', 'w.test.js', text, new Set(['w.test.js::x']), pick);
    // `again` is taken: the random pick comes back with another word.
    expect(out.mutants[0]?.id).toBe('w.test.js::x alt');
    expect(out.text!.startsWith(text.slice(0, text.indexOf("\r\n\r\nit('x again'")))).toBe(true);
    expect(out.text).toMatch(
      /\}\);\r\n\r\nit\('x [a-z]+', \(\) => \{\r\n {2}assert\.strictEqual\(f\(\), \d+\);\r\n\}\);\r\n\r\nit\('x again'/,
    );
  });

  it('names the wanted tests a file defines, covered or not, and leaves the others alone', () => {
    const text = `it('a', () => { assert.equal(f(), 1); });\nit('b', () => {});\nit('c', () => { assert.equal(f(), 2); });\n`;
    const out = canaryJsFile(
      'node',
      'f.js',
      text,
      new Set(['f.js::a', 'f.js::b', 'f.js::z']),
      first,
    );
    expect([...out.defined].sort()).toEqual(['f.js::a', 'f.js::b']);
    expect(out.mutants.map((m) => m.test)).toEqual(['f.js::a']);
    expect(out.text).not.toContain("'c again'");
  });
});

describe('the JavaScript canary step', () => {
  it('knows the runners that ask for it by their line', () => {
    const head = (line: string) =>
      Buffer.from(`#!/bin/sh\n# proctor-runner-protocol: 2\n${line}\n`);
    expect(jsCanaryDialect(head('# proctor-canaries: js-node'))).toBe('node');
    expect(jsCanaryDialect(head('# proctor-canaries: js-mocha'))).toBe('mocha');
    expect(jsCanaryDialect(head('# proctor-canaries: js-karma'))).toBe('karma');
    expect(jsCanaryDialect(head('# proctor-canaries: js-jest'))).toBe('jest');
    expect(jsCanaryDialect(head('# proctor-canaries: js-vitest'))).toBe('vitest');
    expect(jsCanaryDialect(head('# proctor-canaries: 1'))).toBeNull();
    expect(jsCanaryDialect(head('# proctor-canaries: js-jasmine'))).toBeNull();
    expect(jsCanaryDialect(head('# proctor-canaries: js-jest-json'))).toBeNull();
  });

  it("names jest's tests by describe blocks and title when the task's env says RUNNER_JEST_IDS=json", () => {
    const head = (line: string) =>
      Buffer.from(`#!/bin/sh\n# proctor-runner-protocol: 2\n${line}\n`);
    const jest = head('# proctor-canaries: js-jest');
    expect(jsCanaryDialect(jest, { RUNNER_JEST_IDS: 'json' })).toBe('jest-json');
    expect(jsCanaryDialect(jest, { RUNNER_JEST_IDS: 'verbose' })).toBe('jest');
    // Any other value makes the runner refuse its list: the default form then.
    expect(jsCanaryDialect(jest, { RUNNER_JEST_IDS: 'JSON' })).toBe('jest');
    expect(jsCanaryDialect(jest, {})).toBe('jest');
    // Only the jest runner reads it.
    expect(jsCanaryDialect(head('# proctor-canaries: js-mocha'), { RUNNER_JEST_IDS: 'json' })).toBe(
      'mocha',
    );
    expect(
      jsCanaryDialect(
        Buffer.concat([Buffer.alloc(4096, 0x20), head('# proctor-canaries: js-node')]),
      ),
    ).toBeNull();
  });

  it('refuses paths that leave the work tree or are no test files', () => {
    for (const bad of [
      '/etc/passwd.js',
      '../x.test.js',
      'a/../../x.js',
      'a//b.js',
      'x.py',
      'a\nb.js',
      '',
    ]) {
      expect(safeTestPath(bad), bad).toBe(false);
    }
    for (const good of ['t.test.js', 'test/a.spec.mjs', 'src/x.test.tsx', 'a.cts']) {
      expect(safeTestPath(good), good).toBe(true);
    }
  });

  it("takes a node id's file, and the hidden patch's test files for mocha", () => {
    const headers = Buffer.from(
      'diff --git a/test/a.spec.js b/test/a.spec.js\n--- a/test/a.spec.js\n+++ b/test/a.spec.js\ndiff --git a/README.md b/README.md\ndiff --git "a/q x.js" "b/q x.js"\n',
    );
    expect(patchFiles(headers)).toEqual(['test/a.spec.js', 'README.md']);
    expect(jsCanaryFiles('mocha', ['s t'], headers)).toEqual({
      files: ['test/a.spec.js'],
      unplaced: [],
    });
    expect(jsCanaryFiles('mocha', ['s t'], Buffer.alloc(0)).unplaced).toEqual([
      { test: 's t', why: 'the hidden patch touches no test file' },
    ]);
    expect(
      jsCanaryFiles('node', ['a.test.js::x', 'a.test.js::y', 'b.test.js', '../c.js::z'], headers),
    ).toEqual({
      files: ['a.test.js'],
      unplaced: [
        { test: 'b.test.js', why: 'the id names a whole file' },
        { test: '../c.js::z', why: 'not a test file the mutator reads' },
      ],
    });
  });

  it("takes the hidden patch's test files for jest, and a vitest id's file, its project's prefix aside", () => {
    const headers = Buffer.from('diff --git a/__tests__/a.test.js b/__tests__/a.test.js\n');
    expect(jsCanaryFiles('jest', ['adds', 'a > b'], headers)).toEqual({
      files: ['__tests__/a.test.js'],
      unplaced: [],
    });
    expect(
      jsCanaryFiles(
        'vitest',
        [
          'src/a.test.ts > calc > adds',
          '|unit| src/a.test.ts > calc > subtracts',
          '|e2e| test/b.spec.ts > opens',
          'src/a.test.ts',
          '|unit| ../c.test.ts > x',
        ],
        headers,
      ),
    ).toEqual({
      files: ['src/a.test.ts', 'test/b.spec.ts'],
      unplaced: [
        { test: 'src/a.test.ts', why: 'the id names a whole file' },
        { test: '|unit| ../c.test.ts > x', why: 'not a test file the mutator reads' },
      ],
    });
  });

  it("reads the read step's output, and refuses a short or malformed one", () => {
    const ok = `ok 3\n${Buffer.from('abc').toString('base64')}\nno\nbig\n`;
    const read = parseRead(ok, ['a.js', 'b.js', 'c.js']);
    expect(read.get('a.js')).toEqual(Buffer.from('abc'));
    expect(read.get('b.js')).toBe('the file is not a regular file in the work tree');
    expect(read.get('c.js')).toMatch(/over 4194304 bytes/);
    expect(() => parseRead('ok 4\nYWJj\n', ['a.js'])).toThrow(/a short read/);
    expect(() => parseRead('what\n', ['a.js'])).toThrow(/an unexpected line "what"/);
    expect(() => parseRead('', ['a.js'])).toThrow(/an unexpected line/);
  });
});

/** A work tree on the host whose files the step's own scripts read and write, with the host's
 * sh (what the step runs in the container). */
function hostTree(files: Record<string, string>) {
  const dir = tempDir();
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const exec = (cmd: string[], _timeout: number, _bytes?: number, options?: { stdin?: Buffer }) => {
    const out = spawnSync(cmd[0]!, cmd.slice(1), {
      input: options?.stdin ?? '',
      maxBuffer: 1 << 26,
    });
    return Promise.resolve({
      exitCode: out.status,
      timedOut: false,
      stdout: out.stdout.toString('utf8'),
      stderr: out.stderr.toString('utf8'),
    });
  };
  return { dir, exec, read: (path: string) => readFileSync(join(dir, path), 'utf8') };
}

type HostExec = ReturnType<typeof hostTree>['exec'];

/** The canary parts as the preparation runs them (evaluate-prepare.ts), with the host's sh: the
 * read step, Proctor's mutation, the write step; the record as the phase keeps it. */
async function placeJsCanaries(
  exec: HostExec,
  dir: string,
  dialect: JsDialect,
  ids: Buffer,
  headers: Buffer,
  random?: Random,
) {
  const plan = planJsCanaries(dialect, ids, headers);
  if (plan.files.length === 0) return plan.record;
  const run = (step: ReturnType<typeof jsReadStep>) =>
    exec(
      ['sh', '-c', step.script, `proctor-${step.name}`, ...step.args],
      step.timeoutMs,
      step.keepBytes,
      {
        stdin: Buffer.isBuffer(step.stdin) ? step.stdin : Buffer.alloc(0),
      },
    );
  const read = await run(jsReadStep(dir, plan));
  const { record, writes } = mutateJsFiles(plan, read, random);
  if (writes.length === 0) return record;
  return jsWriteOutcome(record, writes, await run(jsWriteStep(dir, writes)));
}

const patchOf = (...files: string[]) =>
  Buffer.from(files.map((f) => `diff --git a/${f} b/${f}\n`).join(''));

describe('the JavaScript canary step on jest and vitest test files', () => {
  it("gives a jest mutant a title no test of the hidden patch's files has, nor any listed id", async () => {
    // The first word drawn is `again`, then `alt`, then `basic`: `adds again` is a test of the
    // other file, `adds alt` a listed id.
    let words = 0;
    const pick: Random = (n) => (n === JS_CANARY_WORDS.length ? words++ : 0);
    const tree = hostTree({
      '__tests__/a.test.js': "test('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n",
      '__tests__/b.test.js': "describe('more', () => {\n  test('adds again', () => {});\n});\n",
    });
    const record = await placeJsCanaries(
      tree.exec,
      tree.dir,
      'jest',
      Buffer.from('adds\nadds alt\n'),
      patchOf('__tests__/a.test.js', '__tests__/b.test.js'),
      pick,
    );
    expect(record.error).toBeNull();
    expect(record.mutants).toEqual([
      { id: 'adds basic', test: 'adds', mutation: 'expect(…).toBe expected 3 -> 4' },
    ]);
    expect(record.uncovered).toEqual([
      { test: 'adds alt', why: "no test of that title in the hidden patch's test files" },
    ]);
    expect(tree.read('__tests__/a.test.js')).toContain(
      "test('adds basic', () => {\n  expect(add(1, 2)).toBe(4);\n});",
    );
    expect(tree.read('__tests__/b.test.js')).not.toContain('basic');
  });

  it('gives every jest test of a shared title a mutant of its own', async () => {
    let words = 0;
    const pick: Random = (n) => (n === JS_CANARY_WORDS.length ? words++ : 0);
    const same = "test('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n";
    const tree = hostTree({ 'a.test.js': same, 'b.test.js': same });
    const record = await placeJsCanaries(
      tree.exec,
      tree.dir,
      'jest',
      Buffer.from('adds\n'),
      patchOf('a.test.js', 'b.test.js'),
      pick,
    );
    expect(record.mutants.map((m) => [m.test, m.id])).toEqual([
      ['adds', 'adds again'],
      ['adds', 'adds alt'],
    ]);
  });

  it("gives a jest mutant in parse_log_jest_json's form its describe blocks and a title no test of that block has, nor any listed id", async () => {
    // `adds` in two describe blocks; the first word drawn is `again` (a test of block a), then
    // `alt` (a listed id), then `basic`.
    let words = 0;
    const pick: Random = (n) => (n === JS_CANARY_WORDS.length ? words++ : 0);
    const tree = hostTree({
      '__tests__/a.test.js':
        "describe('a', () => {\n  describe('b', () => {\n    test('adds', () => {\n      expect(add(1, 2)).toBe(3);\n    });\n    test('adds again', () => {});\n  });\n});\ndescribe('c', () => {\n  test('adds', () => {\n    expect(add(2, 2)).toBe(4);\n  });\n});\n",
    });
    const record = await placeJsCanaries(
      tree.exec,
      tree.dir,
      'jest-json',
      Buffer.from('a > b > adds\na > b > adds alt\nc > adds\nadds\n'),
      patchOf('__tests__/a.test.js'),
      pick,
    );
    expect(record.error).toBeNull();
    expect(record.mutants).toEqual([
      {
        id: 'a > b > adds basic',
        test: 'a > b > adds',
        mutation: 'expect(…).toBe expected 3 -> 4',
      },
      { id: 'c > adds case', test: 'c > adds', mutation: 'expect(…).toBe expected 4 -> 5' },
    ]);
    // A bare title names no test in this form.
    expect(record.uncovered).toEqual([
      { test: 'a > b > adds alt', why: "no test of that title in the hidden patch's test files" },
      { test: 'adds', why: "no test of that title in the hidden patch's test files" },
    ]);
    expect(tree.read('__tests__/a.test.js')).toContain(
      "    test('adds basic', () => {\n      expect(add(1, 2)).toBe(4);\n    });",
    );
  });

  it("keeps a vitest id's project prefix on its mutant, and matches an id without one", async () => {
    const tree = hostTree({
      'src/a.test.ts':
        "import { expect, test, describe } from 'vitest';\ndescribe('calc', () => {\n  test('adds', () => {\n    expect(add(1, 2)).toBe(3);\n  });\n  test('subtracts', () => {\n    expect(sub(3, 2)).toEqual(1);\n  });\n});\n",
    });
    const record = await placeJsCanaries(
      tree.exec,
      tree.dir,
      'vitest',
      Buffer.from(
        '|unit| src/a.test.ts > calc > adds\nsrc/a.test.ts > calc > subtracts\nsrc/a.test.ts > calc > divides\n',
      ),
      Buffer.alloc(0),
      first,
    );
    expect(record.error).toBeNull();
    expect(record.mutants.map((m) => [m.test, m.id])).toEqual([
      ['|unit| src/a.test.ts > calc > adds', '|unit| src/a.test.ts > calc > adds again'],
      ['src/a.test.ts > calc > subtracts', 'src/a.test.ts > calc > subtracts again'],
    ]);
    expect(record.uncovered).toEqual([
      { test: 'src/a.test.ts > calc > divides', why: 'no test of that title in its file' },
    ]);
    expect(tree.read('src/a.test.ts')).toContain(
      "test('adds again', () => {\n    expect(add(1, 2)).toBe(4);",
    );
  });
});
