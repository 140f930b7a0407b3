// Sentinels in the hidden test files of the JavaScript runners (node, mocha, karma, jest, vitest): the
// JavaScript side of what src/runners/core/canary.py does for the Python runners. Beside the
// mutants (js-canaries.ts), two tests are written into a hidden test file, each right after a
// hidden test of it, in its describe() block, with its call style and a title made as a
// mutant's is (the test's title and a word): one must pass, one must fail. Where the test calls
// what the file imports with arguments a sentinel can give too (literals, module-level names),
// both make that call, so that a forgery aimed at the tests that call the code, at the files
// git tracks or at the hidden files cannot spare them. Neither relies on anything a forgery
// can replace: the result (or the thrown error) is compared with itself by `===` and `!==`,
// operators no library can change, and the must-fail one fails with a plain `throw`, which a
// neutered `expect` or `assert` cannot stop. Pure: js-canary-step.ts writes the files.
import { randomInt } from 'node:crypto';
import { isBuiltin } from 'node:module';
import {
  child,
  children,
  findTests,
  isNode,
  JS_CANARY_WORDS,
  parseTestFile,
  placement,
  span,
  withCheckedInserts,
  withParsedPrograms,
  testId,
  type FoundTest,
  type JsDialect,
  type Node,
  type Random,
} from './js-canaries.js';

/** A sentinel placed in a test file: its id as the dialect names it, the test it follows. */
export interface JsSentinel {
  /** The listed id (without a vitest project's prefix) of the test it sits after. */
  test: string;
  id: string;
  expect: 'passed' | 'failed';
  /** The call of the code under test it makes, as the test wrote it; '' for none. */
  calls: string;
}

/** Up to this many hidden test files get a pair of sentinels in a phase. */
export const JS_SENTINEL_MAX_FILES = 3;

/** The names a sentinel keeps the result in, and the thrown error: the first the file uses
 * nowhere. */
const VALUE_NAMES = ['value', 'result', 'actual', 'outcome', 'got', 'answer', 'returned'];
const ERROR_NAMES = ['error', 'err', 'problem', 'failure', 'thrown'];

/** Modules whose bindings are the tests' tools, not the code under test (node's own modules
 * are neither). */
const TEST_LIBRARY =
  /^(?:node:)?(?:assert|test)(?:\/strict)?$|^(?:chai|mocha|vitest|expect|sinon|jest|@jest\/globals|power-assert|should|tap|uvu|ava)(?:\/.*)?$|^(?:@vitest|@testing-library|chai-|jest-)/;

/** A call's callee or an assertion's root that makes the call around it an assertion. */
const ASSERTION_NAMES = new Set([
  'expect',
  'assert',
  'chai',
  'ok',
  'equal',
  'equals',
  'strictEqual',
  'deepStrictEqual',
  'deepEqual',
  'notEqual',
  'notStrictEqual',
  'notDeepStrictEqual',
  'notDeepEqual',
  'throws',
  'doesNotThrow',
  'rejects',
  'doesNotReject',
  'match',
  'doesNotMatch',
  'eq',
  'eql',
  'toBe',
  'toEqual',
  'toStrictEqual',
]);
/** The call is asynchronous where the test reads its value through these. */
const ASYNC_READ = new Set(['resolves', 'rejects', 'then', 'catch', 'finally', 'eventually']);
const ASYNC_ASSERT = new Set(['rejects', 'doesNotReject']);
/** Keys of babel's nodes that hold no code. */
const SKIP_KEYS = new Set(['loc', 'extra', 'leadingComments', 'trailingComments', 'innerComments']);

/** Every node under `node` (itself first), with the chain of nodes above it. */
function walk(node: Node, visit: (node: Node, above: readonly Node[]) => void): void {
  const above: Node[] = [];
  const go = (n: Node) => {
    visit(n, above);
    above.push(n);
    for (const [key, value] of Object.entries(n)) {
      if (SKIP_KEYS.has(key)) continue;
      if (Array.isArray(value)) {
        for (const item of value) if (isNode(item)) go(item);
      } else if (isNode(value)) go(value);
    }
    above.pop();
  };
  go(node);
}

const FUNCTION = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ObjectMethod',
  'ClassMethod',
  'ClassPrivateMethod',
]);

/** The names a binding pattern binds (`{ a, b: [c], ...d }`). */
function patternNames(pattern: Node | null): string[] {
  if (pattern === null) return [];
  switch (pattern.type) {
    case 'Identifier':
      return [pattern.name as string];
    case 'ObjectPattern':
      return children(pattern, 'properties').flatMap((p) =>
        p.type === 'RestElement'
          ? patternNames(child(p, 'argument'))
          : patternNames(child(p, 'value')),
      );
    case 'ArrayPattern':
      return children(pattern, 'elements').flatMap((e) => patternNames(e));
    case 'AssignmentPattern':
      return patternNames(child(pattern, 'left'));
    case 'RestElement':
      return patternNames(child(pattern, 'argument'));
    default:
      return [];
  }
}

const underTest = (source: string) => !TEST_LIBRARY.test(source) && !isBuiltin(source);

/** The module a `require('m')`, `createRequire(…)('m')`, `await import('m')` (or a member of
 * one) loads; null for any other value. */
function requiredModule(init: Node | null): string | null {
  let node = init;
  while (node !== null) {
    if (node.type === 'AwaitExpression' || node.type === 'TSAsExpression') {
      node = child(node, node.type === 'AwaitExpression' ? 'argument' : 'expression');
    } else if (node.type === 'MemberExpression') node = child(node, 'object');
    else if (node.type === 'CallExpression') {
      const callee = child(node, 'callee');
      const first = children(node, 'arguments')[0];
      const source = first?.type === 'StringLiteral' ? (first.value as string) : null;
      const loader =
        callee?.type === 'Import' ||
        (callee?.type === 'Identifier' && callee.name === 'require') ||
        (callee?.type === 'CallExpression' &&
          child(callee, 'callee')?.type === 'Identifier' &&
          child(callee, 'callee')!.name === 'createRequire');
      return loader ? source : null;
    } else return null;
  }
  return null;
}

/** The names a file binds at its top (`bound`), and those of them it imports or requires from
 * a module that is not a test library (`imported`: what a sentinel may call). */
export function moduleBindings(program: Node): { bound: Set<string>; imported: Set<string> } {
  const bound = new Set<string>();
  const imported = new Set<string>();
  for (let statement of children(program, 'body')) {
    if (statement.type === 'ExportNamedDeclaration') {
      const declaration = child(statement, 'declaration');
      if (declaration === null) continue;
      statement = declaration;
    }
    if (statement.type === 'ImportDeclaration') {
      if (statement.importKind === 'type') continue;
      const source = child(statement, 'source')?.value as string;
      for (const specifier of children(statement, 'specifiers')) {
        if (specifier.importKind === 'type') continue;
        const name = child(specifier, 'local')?.name as string;
        bound.add(name);
        if (underTest(source)) imported.add(name);
      }
    } else if (statement.type === 'VariableDeclaration') {
      for (const declarator of children(statement, 'declarations')) {
        const names = patternNames(child(declarator, 'id'));
        const source = requiredModule(child(declarator, 'init'));
        for (const name of names) {
          bound.add(name);
          if (source !== null && underTest(source)) imported.add(name);
        }
      }
    } else if (statement.type === 'FunctionDeclaration' || statement.type === 'ClassDeclaration') {
      const id = child(statement, 'id');
      if (id?.type === 'Identifier') bound.add(id.name as string);
    }
  }
  return { bound, imported };
}

/** The names a test binds anywhere in its function (parameters, declarations, catch clauses,
 * nested functions'): none of them may appear in a sentinel's call. */
function localNames(fn: Node): Set<string> {
  const names = new Set<string>();
  walk(fn, (node) => {
    if (FUNCTION.has(node.type)) {
      for (const param of children(node, 'params'))
        patternNames(param).forEach((n) => names.add(n));
      if (node.type !== 'ArrowFunctionExpression') {
        patternNames(child(node, 'id')).forEach((n) => names.add(n));
      }
    } else if (node.type === 'VariableDeclarator') {
      patternNames(child(node, 'id')).forEach((n) => names.add(n));
    } else if (node.type === 'CatchClause') {
      patternNames(child(node, 'param')).forEach((n) => names.add(n));
    } else if (node.type === 'ClassDeclaration' || node.type === 'ClassExpression') {
      patternNames(child(node, 'id')).forEach((n) => names.add(n));
    }
  });
  return names;
}

/** The identifier a member chain (`a.b.c`, non-computed) starts with, else null. */
function chainRoot(node: Node | null): Node | null {
  let at = node;
  while (at?.type === 'MemberExpression') {
    if (at.computed) return null;
    at = child(at, 'object');
  }
  return at?.type === 'Identifier' ? at : null;
}

/** The name a call's callee ends with, through `expect(x).to.equal` down to `expect`. */
function calleeNames(callee: Node | null): string[] {
  const names: string[] = [];
  let at = callee;
  while (at !== null) {
    if (at.type === 'Identifier') {
      names.push(at.name as string);
      break;
    }
    if (at.type === 'MemberExpression') {
      const property = child(at, 'property');
      if (property?.type === 'Identifier') names.push(property.name as string);
      at = child(at, 'object');
    } else if (at.type === 'CallExpression') at = child(at, 'callee');
    else break;
  }
  return names;
}

const isAssertion = (call: Node) =>
  calleeNames(child(call, 'callee')).some((n) => ASSERTION_NAMES.has(n) || /^assert/.test(n));

/** An argument a sentinel can pass as the test does: literals, and names bound at the file's
 * top that the test does not bind itself, in arrays, objects and member chains. */
function plainArgument(
  node: Node,
  module: ReadonlySet<string>,
  locals: ReadonlySet<string>,
): boolean {
  switch (node.type) {
    case 'StringLiteral':
    case 'NumericLiteral':
    case 'BooleanLiteral':
    case 'NullLiteral':
    case 'BigIntLiteral':
    case 'RegExpLiteral':
      return true;
    case 'TemplateLiteral':
      return children(node, 'expressions').length === 0;
    case 'Identifier': {
      const name = node.name as string;
      return (
        !locals.has(name) && (module.has(name) || ['undefined', 'NaN', 'Infinity'].includes(name))
      );
    }
    case 'UnaryExpression':
      return (
        ['-', '+', '!'].includes(node.operator as string) &&
        plainArgument(child(node, 'argument')!, module, locals)
      );
    case 'ArrayExpression':
      return children(node, 'elements').every((e) => plainArgument(e, module, locals));
    case 'ObjectExpression':
      return children(node, 'properties').every(
        (p) =>
          p.type === 'ObjectProperty' &&
          !p.computed &&
          plainArgument(child(p, 'value')!, module, locals),
      );
    case 'MemberExpression': {
      const root = chainRoot(node);
      return root !== null && plainArgument(root, module, locals);
    }
    case 'TSAsExpression':
    case 'TSSatisfiesExpression':
    case 'TSNonNullExpression':
      return plainArgument(child(node, 'expression')!, module, locals);
    default:
      return false;
  }
}

export interface SentinelCall {
  /** The call's text, as the test wrote it. */
  text: string;
  /** Whether the test awaits it (or reads it as a promise): the sentinel awaits it. */
  awaited: boolean;
  /** Whether the test asserts on it. */
  asserted: boolean;
}

/**
 * A call of the code under test a test makes that a sentinel can make too: its callee is a
 * name (or a member of one) the file imports or requires from a module that is no test
 * library, its arguments literals and names bound at the file's top, none that the test binds
 * itself, and no `this`. A call the test asserts on comes first: one made for its effect could,
 * made again, change what the tests after it see. Null when there is none.
 */
export function sentinelCall(text: string, program: Node, fn: Node): SentinelCall | null {
  const { bound, imported } = moduleBindings(program);
  const locals = localNames(fn);
  let later: SentinelCall | null = null;
  let first: SentinelCall | null = null;
  walk(fn, (node, above) => {
    if (first !== null || node.type !== 'CallExpression') return;
    const callee = child(node, 'callee');
    const root = chainRoot(callee);
    if (root === null) return;
    const name = root.name as string;
    if (!imported.has(name) || locals.has(name)) return;
    if (!children(node, 'arguments').every((a) => plainArgument(a, bound, locals))) return;
    const parent = above[above.length - 1];
    const outer = above[above.length - 2];
    const awaited =
      parent?.type === 'AwaitExpression' ||
      (parent === fn && fn.type === 'ArrowFunctionExpression') ||
      parent?.type === 'ReturnStatement' ||
      (parent?.type === 'MemberExpression' &&
        ASYNC_READ.has(child(parent, 'property')?.name as string)) ||
      (parent?.type === 'CallExpression' &&
        (calleeNames(child(parent, 'callee')).some((n) => ASYNC_ASSERT.has(n)) ||
          (outer?.type === 'MemberExpression' &&
            ASYNC_READ.has(child(outer, 'property')?.name as string))));
    // Asserted: inside a call of an assertion, up to the test's own function.
    const asserted = above
      .slice(above.indexOf(fn) + 1)
      .some((a) => a.type === 'CallExpression' && isAssertion(a));
    const made = { text: text.slice(...span(node)), awaited, asserted };
    if (asserted) first = made;
    else later ??= made;
  });
  return first ?? later;
}

/** Every identifier's name in a program (a sentinel's own names must be none of them). */
function usedNames(program: Node): Set<string> {
  const names = new Set<string>();
  walk(program, (node) => {
    if (node.type === 'Identifier' || node.type === 'JSXIdentifier') names.add(node.name as string);
  });
  return names;
}

/** The text of a sentinel test, its first line unindented, the rest at `indent`, its lines
 * ended by `eol`; the call's text as the test wrote it (reindented, a template literal's
 * value would change). */
export function sentinelText(options: {
  /** `it`, `test.only`, `specify`: the call that defines the test it follows. */
  define: string;
  /** Its title's text, quotes and all. */
  title: string;
  /** Written as the test it follows is: `function () {` or `() => {`. */
  arrow: boolean;
  typescript: boolean;
  indent: string;
  unit: string;
  call: SentinelCall | null;
  expect: 'passed' | 'failed';
  names: { value: string; error: string };
  number: number;
  eol: string;
}): string {
  const { indent, unit, call, names, number } = options;
  const inner = indent + unit;
  const async = call?.awaited ? 'async ' : '';
  const head = options.arrow ? `${async}() => {` : `${async}function () {`;
  const lines = [`${options.define}(${options.title}, ${head}`];
  if (call === null) {
    lines.push(
      options.expect === 'passed'
        ? `${inner}if (${number} + 1 !== ${number + 1}) throw new Error('${number} + 1 is not ${number + 1}');`
        : `${inner}if (${number} + 1 === ${number + 1}) throw new Error('${number} + 1 is ${number + 1}');`,
    );
  } else {
    const { value, error } = names;
    const made = `${call.awaited ? 'await ' : ''}${call.text}`;
    lines.push(
      `${inner}let ${value}${options.typescript ? ': unknown' : ''};`,
      `${inner}try {`,
      `${inner}${unit}${value} = ${made};`,
      `${inner}} catch (${error}) {`,
      `${inner}${unit}${value} = ${error};`,
      `${inner}}`,
      // Never true (a NaN is not itself, and is itself not not itself), and always true.
      options.expect === 'passed'
        ? `${inner}if (${value} !== ${value} && ${value} === ${value}) throw new Error('unexpected ${value}');`
        : `${inner}if (${value} === ${value} || ${value} !== ${value}) throw new Error('unexpected ${value}');`,
    );
  }
  lines.push(`${indent}});`);
  return lines.join(options.eol);
}

/** `it`, `test.only`, `specify`: what a test's statement calls to define it, as written (a
 * modifier kept: a sentinel beside an `it.only` must run as it does). */
function defineText(text: string, found: FoundTest): string | null {
  let call = child(found.statement, 'expression');
  if (call?.type === 'AwaitExpression') call = child(call, 'argument');
  const callee = call === null ? null : child(call, 'callee');
  return callee === null ? null : text.slice(...span(callee));
}

/**
 * A must-pass and a must-fail sentinel in one test file's `text`, each right after one of the
 * tests whose ids (`dialect`'s, without a vitest project's prefix) are in `hidden`, and
 * preferably after one that makes a call a sentinel can make. Their titles are the test's and
 * a word, no id of the file's nor of `taken` (where they go). Returns where they go in `text`
 * (none, with why, when the pair cannot be placed; unchecked: withInserts, checkInserts) and
 * the sentinels.
 */
export function sentinelJsInserts(
  dialect: JsDialect,
  file: string,
  text: string,
  hidden: ReadonlySet<string>,
  random: Random = (n) => randomInt(n),
  taken: Set<string> = new Set(),
): {
  inserts: Array<{ at: number; text: string }>;
  sentinels: JsSentinel[];
  why: string | null;
} {
  const program = parseTestFile(file, text);
  const tests = findTests(program);
  const usable = tests.filter(
    (t) => hidden.has(testId(dialect, file, t.path)) && defineText(text, t) !== null,
  );
  if (usable.length === 0) {
    return { inserts: [], sentinels: [], why: 'no hidden test of the file has a literal title' };
  }
  const titles = new Set(tests.map((t) => testId(dialect, file, t.path)));
  const used = usedNames(program);
  const value = VALUE_NAMES.find((n) => !used.has(n));
  const error = ERROR_NAMES.find((n) => !used.has(n));
  // A call's sentinel throws the global Error: not in a file that binds a name of its own.
  const callable = value && error && !moduleBindings(program).bound.has('Error');
  const called = usable.flatMap((t) => {
    const call = callable ? sentinelCall(text, program, t.fn) : null;
    return call === null ? [] : [{ found: t, call }];
  });
  const typescript = /\.[cm]?tsx?$/.test(file);
  const inserts: Array<{ at: number; text: string }> = [];
  const sentinels: JsSentinel[] = [];
  const order: Array<'passed' | 'failed'> =
    random(2) === 0 ? ['passed', 'failed'] : ['failed', 'passed'];
  for (const expect of order) {
    const pick =
      called.length > 0
        ? called[random(called.length)]!
        : { found: usable[random(usable.length)]!, call: null };
    const { found, call } = pick;
    const last = found.path[found.path.length - 1]!;
    // Each word once, from one drawn at random: a free title is found when there is one.
    const from = random(JS_CANARY_WORDS.length);
    let path: string[] | null = null;
    for (let tries = 0; tries < JS_CANARY_WORDS.length && path === null; tries += 1) {
      const word = JS_CANARY_WORDS[(from + tries) % JS_CANARY_WORDS.length]!;
      const made = [...found.path.slice(0, -1), `${last} ${word}`];
      const id = testId(dialect, file, made);
      if (!titles.has(id) && !taken.has(id)) path = made;
    }
    if (path === null) return { inserts: [], sentinels: [], why: 'no free title for a sentinel' };
    const id = testId(dialect, file, path);
    titles.add(id);
    const [start, end] = span(found.statement);
    const titleRaw = text.slice(...span(found.title));
    const word = path[path.length - 1]!.slice(last.length);
    const { indent, eol, blank } = placement(text, start);
    const body = child(found.fn, 'body');
    const firstLine = body?.type === 'BlockStatement' ? children(body, 'body')[0] : undefined;
    const bodyIndent =
      firstLine === undefined
        ? ''
        : /^[ \t]*/.exec(text.slice(text.lastIndexOf('\n', (firstLine.start ?? 0) - 1) + 1))![0];
    const unit = bodyIndent.length > indent.length ? bodyIndent.slice(indent.length) : '  ';
    const made = sentinelText({
      define: defineText(text, found)!,
      title: titleRaw.slice(0, -1) + word + titleRaw.slice(-1),
      arrow: found.fn.type === 'ArrowFunctionExpression',
      typescript,
      indent,
      unit,
      call,
      expect,
      names: { value: value ?? 'value', error: error ?? 'error' },
      number: 2 + random(96),
      eol,
    });
    inserts.push({ at: end, text: `${eol}${blank ? eol : ''}${indent}${made}` });
    sentinels.push({
      test: testId(dialect, file, found.path),
      id,
      expect,
      calls: call?.text ?? '',
    });
  }
  for (const s of sentinels) taken.add(s.id);
  return { inserts, sentinels, why: null };
}

/**
 * The pair of sentinels of one test file (sentinelJsInserts): the new text (null, with why,
 * when the pair cannot be placed), checked to parse as the original did.
 */
export function sentinelJsFile(...args: Parameters<typeof sentinelJsInserts>): {
  text: string | null;
  sentinels: JsSentinel[];
  why: string | null;
} {
  return withParsedPrograms(() => {
    const { inserts, sentinels, why } = sentinelJsInserts(...args);
    if (inserts.length === 0) return { text: null, sentinels, why };
    const [, file, text] = args;
    return { text: withCheckedInserts(file, text, inserts), sentinels, why: null };
  });
}
