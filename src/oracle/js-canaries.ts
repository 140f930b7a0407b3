// Canaries for the JavaScript and TypeScript runners (node, mocha, karma, jest, vitest): the mutator.
// The Python runners carry theirs (src/runners/core/canary.py) and run it in the container; a JS
// image may have no python3, and the candidate controls every parser in the checkout, so this one
// runs here, in Proctor's own process, with @babel/parser (TypeScript and JSX too). It takes a
// test file's text and the tests to copy, and gives the text with each mutant placed right after
// its original: the original's statement, character for character, with two spans replaced (the
// test's title, a word added, and one expectation changed). Pure: the trusted step that reads the
// files from the container and writes them back is js-canary-step.ts.
import { parse, type ParserPlugin } from '@babel/parser';
import { randomInt } from 'node:crypto';

/** The words a mutant's title takes (`orders versions` -> `orders versions again`). */
export const JS_CANARY_WORDS = [
  'again',
  'alt',
  'basic',
  'case',
  'check',
  'edge',
  'extra',
  'more',
  'other',
  'simple',
  'variant',
  'values',
  'second',
  'repeat',
  'mixed',
  'plain',
  'small',
  'large',
  'default',
  'explicit',
  'twice',
  'single',
  'nested',
  'inline',
  'direct',
  'reverse',
  'strict',
] as const;

/** Assertion functions whose second argument (else first) is an expected value. */
const EQUAL = new Set(['strictEqual', 'deepStrictEqual', 'equal', 'deepEqual', 'equals']);
/** An expectation chain's last call whose argument is an expected value. */
const EXPECT_EQUAL = new Set(['equal', 'equals', 'eq', 'eql', 'toBe', 'toEqual', 'toStrictEqual']);
/** An expectation chain's last call that expects the function under `expect` to throw. */
const EXPECT_THROW = new Set(['throw', 'throws', 'Throw', 'toThrow', 'toThrowError']);
/** Words in an expectation chain that make it something else than a plain expectation. */
const EXPECT_SKIP = new Set(['not', 'resolves', 'rejects', 'eventually', 'soft', 'poll']);
const SUITE = new Set(['describe', 'suite', 'context']);
const TEST = new Set(['it', 'test', 'specify']);
const MODIFIERS = new Set(['only', 'skip', 'todo', 'concurrent', 'sequential']);

/** A random integer in [0, n): the default is crypto's; tests pass a seeded one. */
export type Random = (n: number) => number;
const cryptoRandom: Random = (n) => randomInt(n);

// A narrow view of babel's nodes: what the mutator reads, nothing else.
export interface Node {
  type: string;
  start?: number | null;
  end?: number | null;
  [key: string]: unknown;
}
export const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';
export const child = (node: Node, key: string): Node | null => {
  const value = node[key];
  return isNode(value) ? value : null;
};
export const children = (node: Node, key: string): Node[] => {
  const value = node[key];
  return Array.isArray(value) ? value.filter(isNode) : [];
};
export const span = (node: Node): [number, number] => [node.start ?? 0, node.end ?? 0];

/**
 * Where text placed right after a statement starting at `start` goes: the statement's own
 * indentation, the file's line ending, and whether a blank line comes before the statement
 * (the placed text then gets one too).
 */
export function placement(
  text: string,
  start: number,
): { indent: string; eol: string; blank: boolean } {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  return {
    indent: /^[ \t]*/.exec(text.slice(lineStart, start))![0],
    eol: text.includes('\r\n') ? '\r\n' : '\n',
    blank: /\n[ \t]*\r?\n[ \t]*$/.test(text.slice(0, start)),
  };
}

/** `text` with every insert made (each at its offset in the original text). */
export function withInserts(
  text: string,
  inserts: ReadonlyArray<{ at: number; text: string }>,
): string {
  let out = text;
  for (const insert of [...inserts].sort((a, b) => b.at - a.at)) {
    out = out.slice(0, insert.at) + insert.text + out.slice(insert.at);
  }
  return out;
}

/** How a runner names a test: `jest-json` is the jest runner under RUNNER_JEST_IDS=json. */
export type JsDialect = 'node' | 'mocha' | 'karma' | 'jest' | 'jest-json' | 'vitest';

/** The file kinds the mutator reads, by extension. */
export const JS_TEST_FILE = /\.(?:[cm]?[jt]s|[jt]sx)$/;

function plugins(file: string): ParserPlugin[] {
  if (/\.tsx$/.test(file)) return ['typescript', 'jsx'];
  if (/\.[cm]?ts$/.test(file)) return ['typescript'];
  return ['jsx'];
}

/** The programs parsed inside withParsedPrograms, by file and text (see there). */
let programs: Map<string, Node> | null = null;

/**
 * Runs `work` with each test file's text parsed once: a canary step reads a file's program for
 * its ids, for its mutants and for its sentinels, all placed in the text as read (checked with
 * checkInserts: the inserts alone). One parse of axios' 64 KB file a grade, where five were
 * made (15-60 ms each). The programs are only read, never changed, and are dropped when `work`
 * returns.
 */
export function withParsedPrograms<T>(work: () => T): T {
  const outer = programs;
  programs = outer ?? new Map();
  try {
    return work();
  } finally {
    programs = outer;
  }
}

/** A test file's program (babel's File node's). Throws when it does not parse. */
export function parseTestFile(file: string, text: string): Node {
  const key = programs === null ? null : `${file}\0${text}`;
  const kept = key === null ? undefined : programs?.get(key);
  if (kept !== undefined) return kept;
  const program = parseProgram(file, text);
  if (key !== null) programs?.set(key, program);
  return program;
}

function parseProgram(
  file: string,
  text: string,
  sourceType: 'unambiguous' | 'module' | 'script' = 'unambiguous',
): Node {
  const parsed = parse(text, {
    sourceType,
    allowReturnOutsideFunction: true,
    allowAwaitOutsideFunction: true,
    allowImportExportEverywhere: true,
    errorRecovery: false,
    plugins: plugins(file),
  });
  return parsed.program as unknown as Node;
}

/**
 * Checks that `text` with `inserts` made (whole statements, each placed right after a statement
 * of the program `text` parses to) parses as `text` did; throws when it does not. Each insert
 * is parsed alone, as a program of the original's kind (a module or a script): a few hundred
 * bytes where the whole file is tens of kilobytes (axios' test file took 45-60 ms a parse).
 * An insert that does not parse alone (a `new.target` or a class's private name, valid only
 * where it sits) sends the check to the whole new text, parsed as the same kind.
 */
export function checkInserts(
  file: string,
  text: string,
  inserts: ReadonlyArray<{ at: number; text: string }>,
  out: string,
): void {
  const kind = parseTestFile(file, text).sourceType;
  const sourceType = kind === 'module' || kind === 'script' ? kind : 'unambiguous';
  try {
    for (const insert of inserts) parseProgram(file, insert.text, sourceType);
  } catch {
    // As the original's kind: a CommonJS file is no module for the insert's sake.
    parseProgram(file, out, sourceType);
  }
}

/** `text` with `inserts` made (withInserts), checked to parse as `text` did (checkInserts). */
export function withCheckedInserts(
  file: string,
  text: string,
  inserts: ReadonlyArray<{ at: number; text: string }>,
): string {
  const out = withInserts(text, inserts);
  checkInserts(file, text, inserts, out);
  return out;
}

/** A title written as a literal (a string, or a template without substitutions), else null. */
function titleOf(node: Node | null): string | null {
  if (node === null) return null;
  if (node.type === 'StringLiteral') return node.value as string;
  if (node.type === 'TemplateLiteral' && children(node, 'expressions').length === 0) {
    const quasi = children(node, 'quasis')[0];
    const cooked = (quasi?.value as { cooked?: string | null } | undefined)?.cooked;
    return typeof cooked === 'string' ? cooked : null;
  }
  return null;
}

/** `describe`, `it.only`, `test.skip` … : the kind of a call's callee, or null. */
function callKind(call: Node): 'suite' | 'test' | null {
  let callee = child(call, 'callee');
  if (callee?.type === 'MemberExpression' && !call.computed) {
    const property = child(callee, 'property');
    if (property?.type === 'Identifier' && MODIFIERS.has(property.name as string)) {
      callee = child(callee, 'object');
    }
  }
  if (callee?.type !== 'Identifier') return null;
  const name = callee.name as string;
  return SUITE.has(name) ? 'suite' : TEST.has(name) ? 'test' : null;
}

/** The function a describe()/it() call runs: its last argument, when it is a function. */
function callback(call: Node): Node | null {
  const args = children(call, 'arguments');
  const last = args[args.length - 1];
  return last && (last.type === 'ArrowFunctionExpression' || last.type === 'FunctionExpression')
    ? last
    : null;
}

export interface FoundTest {
  /** The titles of its describe() blocks and its own. */
  path: string[];
  /** The statement `it(…);` (what a mutant copies). */
  statement: Node;
  title: Node;
  fn: Node;
}

/** Every test a file defines with literal titles, as statements of its top level or of its
 * describe() blocks' functions (a test made in a loop or a helper has no title to match). */
export function findTests(program: Node): FoundTest[] {
  const found: FoundTest[] = [];
  const visit = (statements: Node[], path: string[]) => {
    for (const statement of statements) {
      if (statement.type !== 'ExpressionStatement') continue;
      let call = child(statement, 'expression');
      if (call?.type === 'AwaitExpression') call = child(call, 'argument');
      if (call?.type !== 'CallExpression') continue;
      const kind = callKind(call);
      if (kind === null) continue;
      const titleNode = children(call, 'arguments')[0] ?? null;
      const title = titleOf(titleNode);
      const fn = callback(call);
      if (title === null || titleNode === null || fn === null) continue;
      if (kind === 'suite') {
        const body = child(fn, 'body');
        if (body?.type === 'BlockStatement') visit(children(body, 'body'), [...path, title]);
      } else {
        found.push({ path: [...path, title], statement, title: titleNode, fn });
      }
    }
  };
  visit(children(program, 'body'), []);
  return found;
}

/** An id's test as the dialect names it: node `FILE::a > b > c`, mocha the full title (the
 * titles joined by spaces, without `#`), karma the titles joined by ` > ` (the test's place in
 * the tree, as the karma runner reports it), jest the test's own title (SWE-bench's
 * parse_log_jest), jest-json `a > b > c` (its parse_log_jest_json), vitest `FILE > a > b > c`
 * (without the `|PROJECT| ` an id may carry in front); without the white space SWE-bench's
 * parsers strip with a line, as the runners report them. */
export function testId(dialect: JsDialect, file: string, path: readonly string[]): string {
  switch (dialect) {
    case 'node':
      return `${file}::${path.join(' > ')}`;
    case 'mocha':
      return path.join(' ').replace(/#/g, '').trimEnd();
    case 'karma':
      return path.join(' > ');
    case 'jest':
      return (path[path.length - 1] ?? '').trim();
    case 'jest-json':
      return (path.join(' > ').split('\n')[0] ?? '').trimEnd();
    case 'vitest':
      return [file, ...path].join(' > ').trimEnd();
  }
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** The new text of an expected value no honest result can equal if the old one does; null
 * for a value the mutator does not change. */
function changedLiteral(text: string, node: Node, random: Random): string | null {
  const raw = text.slice(...span(node));
  switch (node.type) {
    case 'NumericLiteral': {
      const value = node.value as number;
      const next = value + 1 + random(9);
      return Number.isFinite(next) && next !== value ? String(next) : null;
    }
    case 'BigIntLiteral':
      return `${(BigInt(node.value as string) + BigInt(1 + random(9))).toString()}n`;
    case 'StringLiteral':
    case 'TemplateLiteral': {
      if (node.type === 'TemplateLiteral' && children(node, 'expressions').length > 0) return null;
      const letter = 'abcdefghkmnpqrstuvwxyz'[random(22)]!;
      return raw.slice(0, -1) + letter + raw.slice(-1);
    }
    case 'BooleanLiteral':
      return String(!(node.value as boolean));
    case 'ArrayExpression':
    case 'ObjectExpression': {
      // One more element (`null`) or property (`word: null`), written after the last one.
      const items = children(node, node.type === 'ArrayExpression' ? 'elements' : 'properties');
      const added =
        node.type === 'ArrayExpression'
          ? 'null'
          : `${JS_CANARY_WORDS[random(JS_CANARY_WORDS.length)]!}: null`;
      const last = items[items.length - 1];
      if (last === undefined) return raw.startsWith('[') ? `[${added}]` : `{ ${added} }`;
      const at = (last.end ?? 0) - (node.start ?? 0);
      return `${raw.slice(0, at)}, ${added}${raw.slice(at)}`;
    }
    case 'UnaryExpression': {
      const argument = child(node, 'argument');
      if (node.operator !== '-' || argument?.type !== 'NumericLiteral') return null;
      const inner = changedLiteral(text, argument, random);
      return inner === null ? null : `-${inner}`;
    }
    default:
      return null;
  }
}

/** An expected value's edit: the first of `candidates` the mutator can change. */
function valueEdit(
  text: string,
  candidates: Array<Node | undefined>,
  random: Random,
  what: string,
): { edit: Edit; description: string } | null {
  for (const node of candidates) {
    if (node === undefined) continue;
    const changed = changedLiteral(text, node, random);
    if (changed === null) continue;
    const [start, end] = span(node);
    return {
      edit: { start, end, text: changed },
      description: `${what} expected ${change(text.slice(start, end), changed)}`,
    };
  }
  return null;
}

const excerpt = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}...` : s).replace(/\s+/g, ' ');

/**
 * `before -> after` for the log: each whole when both are short, else both cut to the same
 * window around where they first differ, so that the change shows (a long object literal
 * changed near its end would otherwise read the same on both sides).
 */
export function change(before: string, after: string): string {
  const [a, b] = [before, after].map((s) => s.replace(/\s+/g, ' ')) as [string, string];
  if (a.length <= 80 && b.length <= 80) return `${a} -> ${b}`;
  let same = 0;
  while (same < a.length && same < b.length && a[same] === b[same]) same += 1;
  const from = Math.max(0, same - 30);
  const cut = (s: string) =>
    `${from > 0 ? '...' : ''}${s.slice(from, from + 77)}${from + 77 < s.length ? '...' : ''}`;
  return `${cut(a)} -> ${cut(b)}`;
}

/** The names of a member chain from `expect(x)` to its last call: null when it does not start
 * with a call of `expect` (or `chai.expect`, `expect.soft` is skipped). */
function expectChain(callee: Node): { words: string[]; expectCall: Node } | null {
  const words: string[] = [];
  let node: Node | null = callee;
  while (node?.type === 'MemberExpression') {
    const property = child(node, 'property');
    if (node.computed || property?.type !== 'Identifier') return null;
    words.unshift(property.name as string);
    node = child(node, 'object');
    if (node?.type === 'CallExpression') {
      const inner = child(node, 'callee');
      const named =
        inner?.type === 'Identifier'
          ? (inner.name as string)
          : inner?.type === 'MemberExpression' && child(inner, 'property')?.type === 'Identifier'
            ? (child(inner, 'property')!.name as string)
            : null;
      return named === 'expect' ? { words, expectCall: node } : null;
    }
  }
  return null;
}

interface Mutation {
  edit: Edit;
  description: string;
}

/** The name a callee ends in: `f` of `f(…)`, `x` of `a.b.x(…)` (not computed); else null. */
function calleeName(callee: Node): string | null {
  if (callee.type === 'Identifier') return callee.name as string;
  if (callee.type !== 'MemberExpression' || callee.computed) return null;
  const property = child(callee, 'property');
  return property?.type === 'Identifier' ? (property.name as string) : null;
}

/** Every mutation the mutator understands in one call of a test's body. */
function callMutations(text: string, call: Node, random: Random): Mutation[] {
  const callee = child(call, 'callee');
  const args = children(call, 'arguments');
  if (callee === null) return [];
  const chain = callee.type === 'MemberExpression' ? expectChain(callee) : null;
  if (chain !== null) {
    const last = chain.words[chain.words.length - 1]!;
    if (chain.words.some((w) => EXPECT_SKIP.has(w))) return [];
    const subject = children(chain.expectCall, 'arguments')[0];
    if (EXPECT_EQUAL.has(last)) {
      const made = valueEdit(
        text,
        [args[0], subject],
        random,
        `expect(…).${chain.words.join('.')}`,
      );
      return made ? [made] : [];
    }
    if (EXPECT_THROW.has(last) && subject !== undefined) {
      const [start, end] = span(subject);
      return [
        {
          edit: { start, end, text: '() => {}' },
          description: `expect(${excerpt(text.slice(start, end))}).${chain.words.join('.')} -> a function that returns`,
        },
      ];
    }
    return [];
  }
  // assert.strictEqual(a, b), strictEqual(a, b) (imported), chai's assert.equal(a, b)
  const object = callee.type === 'MemberExpression' ? child(callee, 'object') : null;
  const named =
    object === null || object.type === 'Identifier' || object.type === 'MemberExpression';
  const name = named ? calleeName(callee) : null;
  if (name === null) return [];
  if (EQUAL.has(name) && args.length >= 2) {
    const made = valueEdit(text, [args[1], args[0]], random, name);
    return made ? [made] : [];
  }
  if (name === 'throws' && args.length >= 1 && args[0]!.type !== 'SpreadElement') {
    const [start, end] = span(args[0]!);
    return [
      {
        edit: { start, end, text: '() => {}' },
        description: `throws(${excerpt(text.slice(start, end))}) -> a function that returns`,
      },
    ];
  }
  return [];
}

/** The call a statement of a test's body makes at its top (`f(…)`, `await f(…)`), if any. */
function statementCall(statement: Node): Node | null {
  let expression = statement.type === 'ExpressionStatement' ? child(statement, 'expression') : null;
  if (expression?.type === 'AwaitExpression') expression = child(expression, 'argument');
  return expression?.type === 'CallExpression' ? expression : null;
}

/** The statements a compound statement runs (a block's, a branch's, a loop's, a try's). */
function innerStatements(statement: Node): Node[] | null {
  switch (statement.type) {
    case 'BlockStatement':
      return children(statement, 'body');
    case 'IfStatement':
    case 'ForStatement':
    case 'ForOfStatement':
    case 'ForInStatement':
    case 'WhileStatement':
    case 'DoWhileStatement':
    case 'TryStatement':
      return ['consequent', 'alternate', 'body', 'block', 'finalizer', 'handler']
        .map((key) => child(statement, key))
        .flatMap((part) =>
          part === null ? [] : part.type === 'CatchClause' ? [child(part, 'body')!] : [part],
        );
    default:
      return null;
  }
}

/** A statement that leaves no state behind it but the test's own names: an empty one, an
 * assertion call (`expect(…).…(…)`, `assert(…)`, `assert.x(…)`, `strictEqual(…)`,
 * `throws(…)`) or property (`expect(x).to.be.true`), a declaration of local names
 * (`const r = f()`), or a block, branch, loop or try of such statements. Not a call made for its effect (`spy.mockRestore()`,
 * `jest.useRealTimers()`), nor an assignment: a test's body declares its own names, so `x = 0`
 * is most often the reset of one its file shares between tests. */
function isCheck(statement: Node): boolean {
  if (statement.type === 'EmptyStatement' || statement.type === 'VariableDeclaration') return true;
  const inner = innerStatements(statement);
  if (inner !== null) return inner.every(isCheck);
  // chai's property assertions: `expect(x).to.be.true;`
  const expression =
    statement.type === 'ExpressionStatement' ? child(statement, 'expression') : null;
  if (expression?.type === 'MemberExpression' && expectChain(expression) !== null) return true;
  const call = statementCall(statement);
  const callee = call === null ? null : child(call, 'callee');
  if (callee === null) return false;
  if (callee.type === 'MemberExpression' && expectChain(callee) !== null) return true;
  const name = calleeName(callee);
  if (name === null) return false;
  // Any method of `assert` (`assert.ok`, `assert.match`), and the assertions it changes.
  const object = callee.type === 'MemberExpression' ? child(callee, 'object') : null;
  if (object?.type === 'Identifier' && object.name === 'assert') return true;
  return name === 'assert' || name === 'throws' || EQUAL.has(name);
}

/** The mutations of a test function: in the statements that run whenever it does (its body's,
 * not inside a branch, a loop, a try or a nested function, where an assertion may honestly
 * never run). `safe`: those after which the test runs nothing but checks; `skipped` the others.
 * A mutant fails at its changed assertion and skips the rest of its test, so a canary made of
 * one followed by code that puts state back (a mock restored, a global reset) would leave that
 * state to the tests after it and fail tests that are not its own: canaries take `safe` alone.
 * `all`: both, in the order of the test's statements. */
export function testMutations(
  text: string,
  fn: Node,
  random: Random = cryptoRandom,
): { safe: Mutation[]; skipped: Mutation[]; all: Mutation[] } {
  const safe: Mutation[] = [];
  const skipped: Mutation[] = [];
  const all: Mutation[] = [];
  const body = child(fn, 'body');
  if (body === null) return { safe, skipped, all };
  if (body.type !== 'BlockStatement') {
    // An expression body (`() => expect(x).toBe(1)`): nothing runs after it.
    const call = statementCall({ type: 'ExpressionStatement', expression: body });
    if (call !== null) safe.push(...callMutations(text, call, random));
    return { safe, skipped, all: safe };
  }
  const statements = children(body, 'body');
  const checksAfter = statements.map(() => true);
  for (let i = statements.length - 1, rest = true; i >= 0; i--) {
    checksAfter[i] = rest;
    rest &&= isCheck(statements[i]!);
  }
  statements.forEach((statement, i) => {
    const call = statementCall(statement);
    if (call === null) return;
    const made = callMutations(text, call, random);
    (checksAfter[i] ? safe : skipped).push(...made);
    all.push(...made);
  });
  return { safe, skipped, all };
}

export interface JsMutant {
  /** The listed id it is a mutant of. */
  test: string;
  /** The mutant's own id, as the dialect names it. */
  id: string;
  mutation: string;
}

/** The ids of the tests a file defines with literal titles (a test's title for jest). */
export function definedIds(dialect: JsDialect, file: string, text: string): string[] {
  return findTests(parseTestFile(file, text)).map((t) => testId(dialect, file, t.path));
}

/**
 * Mutants of the tests of one file whose ids are in `wanted` (ids as `dialect` names them).
 * Returns where they go in `text` (each right after its test's statement; none when nothing
 * was placed), the mutants, and the wanted ids this file defines that got none, with why. A
 * mutant's id is none of the file's ids nor of `taken`, and is added to `taken`: where ids name
 * no file (jest's), the caller passes the titles of every file the phase runs and the listed
 * ids, so that no mutant shares a title with a real test (whose outcome would then be the worst
 * of both).
 */
export function canaryJsInserts(
  dialect: JsDialect,
  file: string,
  text: string,
  wanted: ReadonlySet<string>,
  random: Random = cryptoRandom,
  taken: Set<string> = new Set(),
): {
  /** Where the mutants go in `text`, unchecked (withInserts, checkInserts). */
  inserts: Array<{ at: number; text: string }>;
  mutants: JsMutant[];
  uncovered: Array<{ test: string; why: string }>;
  /** The wanted ids the file defines (covered or not). */
  defined: Set<string>;
} {
  const program = parseTestFile(file, text);
  const tests = findTests(program);
  const titles = new Set(tests.map((t) => testId(dialect, file, t.path)));
  const inserts: Array<{ at: number; text: string }> = [];
  const mutants: JsMutant[] = [];
  const uncovered: Array<{ test: string; why: string }> = [];
  const defined = new Set<string>();
  for (const found of tests) {
    const id = testId(dialect, file, found.path);
    if (!wanted.has(id)) continue;
    defined.add(id);
    const { safe: choices, skipped } = testMutations(text, found.fn, random);
    if (choices.length === 0) {
      uncovered.push({
        test: id,
        why:
          skipped.length === 0
            ? 'no assertion the mutator understands'
            : 'its assertions are followed by code a failing copy would skip',
      });
      continue;
    }
    const choice = choices[random(choices.length)]!;
    let mutantPath: string[] | null = null;
    for (let tries = 0; tries < JS_CANARY_WORDS.length && mutantPath === null; tries += 1) {
      const word = JS_CANARY_WORDS[random(JS_CANARY_WORDS.length)]!;
      const path = [...found.path.slice(0, -1), `${found.path[found.path.length - 1]!} ${word}`];
      const made = testId(dialect, file, path);
      if (!titles.has(made) && !taken.has(made)) mutantPath = path;
    }
    if (mutantPath === null) {
      uncovered.push({ test: id, why: 'no free title for a mutant' });
      continue;
    }
    const mutantId = testId(dialect, file, mutantPath);
    titles.add(mutantId);
    taken.add(mutantId);
    const [start, end] = span(found.statement);
    const [titleStart, titleEnd] = span(found.title);
    const titleRaw = text.slice(titleStart, titleEnd);
    const word = mutantPath[mutantPath.length - 1]!.slice(
      found.path[found.path.length - 1]!.length,
    );
    const edits = [
      { start: titleStart, end: titleEnd, text: titleRaw.slice(0, -1) + word + titleRaw.slice(-1) },
      choice.edit,
    ].sort((a, b) => b.start - a.start);
    let copy = text.slice(start, end);
    for (const edit of edits) {
      copy = copy.slice(0, edit.start - start) + edit.text + copy.slice(edit.end - start);
    }
    // Indented as the original, after a blank line when the original has one before it.
    const { indent, eol, blank } = placement(text, start);
    inserts.push({ at: end, text: `${eol}${blank ? eol : ''}${indent}${copy}` });
    mutants.push({ test: id, id: mutantId, mutation: choice.description });
  }
  return { inserts, mutants, uncovered, defined };
}

/**
 * Mutants of the tests of one file whose ids are in `wanted` (canaryJsInserts): the new text
 * (null when nothing was placed), checked to parse as the original did.
 */
export function canaryJsFile(
  ...args: Parameters<typeof canaryJsInserts>
): Omit<ReturnType<typeof canaryJsInserts>, 'inserts'> & { text: string | null } {
  return withParsedPrograms(() => {
    const { inserts, ...placed } = canaryJsInserts(...args);
    if (inserts.length === 0) return { text: null, ...placed };
    const [, file, text] = args;
    return { text: withCheckedInserts(file, text, inserts), ...placed };
  });
}
