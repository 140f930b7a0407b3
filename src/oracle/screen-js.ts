// The screen's reader of JavaScript and TypeScript: each hunk as the new file has it, parsed
// (see parseHunk), and from the tree the other
// spellings of each added line (screen-code.ts):
// - names bound by `require(…)`, `import … from`, `import(…)`, a destructuring of either, or a
//   plain reference (`const p = process`) are spelled as what they name: a module as
//   `require("spec")`, so `t.run` after `const t = require('node:test')` reads
//   `require("node:test").run`;
// - strings built from literal pieces are folded: `+` of literals, template literals of
//   literals, `[…].join(…)`, `String.fromCharCode(N…)`, escapes (`'\x61ssert'`);
// - `o["n"]`, `Reflect.get(o, "n")` read `o.n`; an assignment reads `target =`, and
//   `Object.defineProperty(o, "n", …)`, `Object.assign(o, …)`, `Reflect.set(o, "n", …)` and
//   their kin read `o.n =` (`o.* =` for a name the screen cannot fold); a call reads
//   `callee(first argument)`.
// A name folded from more than one piece in `require`, `import()` or a computed member, or a
// computed member of a guarded object (JS_GUARDED), marks the line `computed`.
// A hunk that parses whole is read by @babel/parser, with TypeScript's and JSX's syntax; a
// fragment by acorn-loose. The raw line is always screened as well; a misparsed fragment can
// lose a spelling, not a hit.
import { parse as parseStrict, type ParserPlugin } from '@babel/parser';
import { parse as parseLoose } from 'acorn-loose';
import {
  addSpelling,
  isIdentifier,
  newReading,
  quoted,
  rootOf,
  type CodeLine,
  type CodeReading,
} from './screen-code.js';

/** Objects honest code does not index by a computed name (`globalThis[name]`). */
const JS_GUARDED: ReadonlySet<string> = new Set([
  'globalThis',
  'global',
  'process',
  'require',
  'Module',
  'Reflect',
]);

/** Deepest expression folded or named; a deeper one is neither (and no stack overflows). */
const MAX_DEPTH = 64;

/** The loose shape of an acorn node: the fields this reader uses. */
interface Node {
  type: string;
  loc?: { start: { line: number } };
  [key: string]: unknown;
}

const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && typeof (value as Node).type === 'string';
const child = (node: Node, key: string): Node | undefined => {
  const value = node[key];
  return isNode(value) ? value : undefined;
};
const children = (node: Node, key: string): Node[] => {
  const value = node[key];
  return Array.isArray(value) ? value.filter(isNode) : [];
};

/** Reads every hunk of a JavaScript or TypeScript file. */
export function readJavaScript(hunks: readonly CodeLine[][], path: string): CodeReading {
  const reading = newReading();
  const trees = hunks.flatMap((hunk) => {
    const tree = parseHunk(hunk, path);
    return tree === undefined ? [] : [{ hunk, tree }];
  });
  const reader = new Reader(reading);
  for (let pass = 0; pass < 2; pass += 1) {
    for (const { tree } of trees) visit(tree, (node) => reader.bind(node));
  }
  for (const { hunk, tree } of trees) {
    visit(tree, (node) => {
      const at = hunk[(node.loc?.start.line ?? 1) - 1];
      if (at?.added) reader.spell(node, at.line);
    });
  }
  return reading;
}

/**
 * A hunk's tree: @babel/parser (TypeScript's and JSX's syntax, ESTree's shape) where the hunk
 * parses whole, else acorn-loose, which parses any fragment but reads TypeScript's annotations
 * as noise (so an alias declared with a type can be lost there).
 */
function parseHunk(hunk: readonly CodeLine[], path: string): Node | undefined {
  const text = hunk.map((l) => l.text).join('\n');
  const plugins: ParserPlugin[] = ['estree'];
  if (/\.[cm]?tsx?$/.test(path)) plugins.push('typescript');
  if (/x$/.test(path)) plugins.push('jsx');
  try {
    return parseStrict(text, {
      sourceType: 'module',
      plugins,
      errorRecovery: true,
      attachComment: false,
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
      allowImportExportEverywhere: true,
      allowUndeclaredExports: true,
      allowSuperOutsideMethod: true,
      allowNewTargetOutsideFunction: true,
      createImportExpressions: true,
    }).program as unknown as Node;
  } catch {
    // a fragment: read it loosely
  }
  try {
    return parseLoose(text, {
      ecmaVersion: 'latest',
      sourceType: 'module',
      locations: true,
      allowHashBang: true,
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
      allowImportExportEverywhere: true,
    }) as unknown as Node;
  } catch {
    return undefined; // acorn-loose recovers from any syntax; an internal error loses spellings only
  }
}

/** Every node of the tree, depth first, without recursion (a deep tree is no stack overflow). */
function visit(root: Node, each: (node: Node) => void): void {
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    each(node);
    for (const key of Object.keys(node)) {
      if (key === 'loc') continue;
      const value = node[key];
      if (Array.isArray(value)) {
        for (let k = value.length - 1; k >= 0; k -= 1) {
          const item: unknown = value[k];
          if (isNode(item)) stack.push(item);
        }
      } else if (isNode(value)) {
        stack.push(value);
      }
    }
  }
}

/** An expression under `await`, or a TypeScript cast (`x as T`, `<T>x`, `x!`). */
function unwrap(node: Node): Node {
  if (node.type === 'AwaitExpression') return child(node, 'argument') ?? node;
  if (/^TS(?:As|Satisfies|NonNull)Expression$|^TSTypeAssertion$/.test(node.type)) {
    return child(node, 'expression') ?? node;
  }
  return node;
}

interface Folded {
  value: string;
  pieces: number;
}

/** A module specifier as the name the reader gives the module. */
const moduleName = (spec: string) => `require(${quoted(spec)})`;

// The writes through a function: [callee, index of the object, index of the name or -1].
const WRITERS: ReadonlyArray<[string, number, number]> = [
  ['Object.defineProperty', 0, 1],
  ['Object.defineProperties', 0, -1],
  ['Object.assign', 0, -1],
  ['Object.setPrototypeOf', 0, -1],
  ['Reflect.set', 0, 1],
  ['Reflect.defineProperty', 0, 1],
  ['Reflect.setPrototypeOf', 0, -1],
];

class Reader {
  private readonly aliases = new Map<string, string>();

  constructor(private readonly reading: CodeReading) {}

  /** Records the names a declaration, an import or an assignment binds. */
  bind(node: Node): void {
    if (node.type === 'ImportDeclaration') {
      const source = child(node, 'source');
      const spec = source === undefined ? undefined : this.fold(source)?.value;
      if (spec === undefined) return;
      for (const specifier of children(node, 'specifiers')) {
        const local = child(specifier, 'local')?.name;
        if (typeof local !== 'string') continue;
        const imported = child(specifier, 'imported');
        const name = imported === undefined ? undefined : this.key(imported);
        if (specifier.type === 'ImportSpecifier' && name !== undefined && name !== 'default') {
          this.set(local, `${moduleName(spec)}.${name}`);
        } else {
          this.set(local, moduleName(spec));
        }
      }
      return;
    }
    let target: Node | undefined;
    let value: Node | undefined;
    if (node.type === 'VariableDeclarator') {
      target = child(node, 'id');
      value = child(node, 'init');
    } else if (node.type === 'AssignmentExpression' && node.operator === '=') {
      target = child(node, 'left');
      value = child(node, 'right');
    }
    if (target === undefined || value === undefined) return;
    const name = this.name(unwrap(value));
    if (name === undefined) return;
    const guarded = JS_GUARDED.has(rootOf(name)) || name.startsWith('require(');
    if (target.type === 'Identifier' && typeof target.name === 'string') {
      if (guarded && target.name !== name) this.set(target.name, name);
    } else if (target.type === 'ObjectPattern' && guarded) {
      for (const property of children(target, 'properties')) {
        const key = child(property, 'key');
        const local = child(property, 'value');
        const keyName = key === undefined ? undefined : this.key(key, property.computed === true);
        if (
          keyName !== undefined &&
          local?.type === 'Identifier' &&
          typeof local.name === 'string'
        ) {
          this.set(local.name, `${name}.${keyName}`);
        }
      }
    }
  }

  private set(local: string, target: string): void {
    if (local !== target) this.aliases.set(local, target);
  }

  /** Adds the spellings of one node that starts on the added line `line`. */
  spell(node: Node, line: number): void {
    const spelling = this.spelling(node, line);
    if (spelling !== undefined) addSpelling(this.reading, line, spelling);
  }

  private spelling(node: Node, line: number): string | undefined {
    switch (node.type) {
      case 'MemberExpression':
      case 'ImportExpression':
        return this.name(node, line);
      case 'ImportDeclaration': {
        const source = child(node, 'source');
        const spec = source === undefined ? undefined : this.fold(source)?.value;
        return spec === undefined ? undefined : moduleName(spec);
      }
      case 'AssignmentExpression': {
        const left = child(node, 'left');
        const name = left === undefined ? undefined : this.name(left, line);
        return name === undefined ? undefined : `${name} ${String(node.operator)}`;
      }
      case 'UnaryExpression': {
        const argument = child(node, 'argument');
        const name = argument === undefined ? undefined : this.name(argument, line);
        return node.operator === 'delete' && name !== undefined ? `delete ${name}` : undefined;
      }
      case 'CallExpression':
        return this.callSpelling(node, line);
      case 'VariableDeclarator': {
        // `const { exit } = process` reads `process.exit`.
        const id = child(node, 'id');
        const init = child(node, 'init');
        const base = init === undefined ? undefined : this.name(unwrap(init), line);
        if (id?.type !== 'ObjectPattern' || base === undefined) return undefined;
        const keys = children(id, 'properties').flatMap((p) => {
          const key = child(p, 'key');
          const name = key === undefined ? undefined : this.key(key, p.computed === true);
          return name === undefined ? [] : [`${base}.${name}`];
        });
        return keys.length === 0 ? undefined : keys.join('; ');
      }
      default:
        return undefined;
    }
  }

  private callSpelling(node: Node, line: number): string | undefined {
    const callee = child(node, 'callee');
    const callName = callee === undefined ? undefined : this.name(callee, line);
    if (callName === undefined) return undefined;
    const list = children(node, 'arguments');
    const writer = WRITERS.find(([name]) => name === callName);
    if (writer !== undefined) {
      const [, objectAt, nameAt] = writer;
      const object = list[objectAt];
      const target = object === undefined ? undefined : this.name(object, line);
      const property = nameAt < 0 ? undefined : list[nameAt];
      const folded = property === undefined ? undefined : this.fold(property);
      if (folded !== undefined && folded.pieces > 1) this.reading.computed.add(line);
      const key = folded !== undefined && isIdentifier(folded.value) ? folded.value : '*';
      return target === undefined ? undefined : `${target}.${key} =`;
    }
    if (callName === 'Reflect.get' && list.length >= 2) {
      const [object, property] = list;
      const target = object === undefined ? undefined : this.name(object, line);
      const folded = property === undefined ? undefined : this.fold(property);
      if (folded !== undefined && folded.pieces > 1) this.reading.computed.add(line);
      return target === undefined || folded === undefined ? undefined : `${target}.${folded.value}`;
    }
    const first = list[0];
    const folded = first === undefined ? undefined : this.fold(first);
    if (callName === 'require' && folded !== undefined && folded.pieces > 1) {
      this.reading.computed.add(line);
    }
    const argument =
      folded !== undefined
        ? quoted(folded.value)
        : first === undefined
          ? ''
          : (this.name(first) ?? '');
    return `${callName}(${argument})`;
  }

  /**
   * The dotted name of an expression with aliases resolved, or undefined when it is no name:
   * `process.exit`, `require("node:assert").ok`, `globalThis.expect`. With `line`, marks a
   * computed name on that line.
   */
  name(node: Node, line?: number, depth = 0): string | undefined {
    if (depth > MAX_DEPTH) return undefined;
    switch (node.type) {
      case 'Identifier':
        return typeof node.name === 'string'
          ? (this.aliases.get(node.name) ?? node.name)
          : undefined;
      case 'ThisExpression':
        return 'this';
      case 'ChainExpression':
      case 'ParenthesizedExpression':
      case 'TSNonNullExpression':
      case 'TSAsExpression':
      case 'TSSatisfiesExpression':
      case 'TSTypeAssertion':
      case 'TSInstantiationExpression': {
        const inner = child(node, 'expression');
        return inner === undefined ? undefined : this.name(inner, line, depth + 1);
      }
      case 'MemberExpression': {
        const object = child(node, 'object');
        const property = child(node, 'property');
        const base = object === undefined ? undefined : this.name(object, line, depth + 1);
        if (base === undefined || property === undefined) return undefined;
        if (node.computed !== true) {
          return property.type === 'Identifier' || property.type === 'PrivateIdentifier'
            ? `${base}.${String(property.name)}`
            : undefined;
        }
        const folded = this.fold(property);
        if (folded === undefined) {
          if (
            line !== undefined &&
            JS_GUARDED.has(rootOf(base)) &&
            !base.startsWith('process.env')
          ) {
            this.reading.computed.add(line);
          }
          return undefined;
        }
        if (line !== undefined && folded.pieces > 1) this.reading.computed.add(line);
        return isIdentifier(folded.value) ? `${base}.${folded.value}` : undefined;
      }
      case 'ImportExpression':
      case 'CallExpression': {
        const callee = child(node, 'callee');
        const isRequire = callee?.type === 'Identifier' && callee.name === 'require';
        if (node.type === 'CallExpression' && !isRequire) return undefined;
        const source =
          node.type === 'ImportExpression' ? child(node, 'source') : children(node, 'arguments')[0];
        const folded = source === undefined ? undefined : this.fold(source);
        if (folded === undefined) return undefined;
        if (line !== undefined && folded.pieces > 1) this.reading.computed.add(line);
        return moduleName(folded.value);
      }
      default:
        return undefined;
    }
  }

  /** A property key: an identifier's name or a folded literal. */
  private key(node: Node, computed = false): string | undefined {
    if (node.type === 'Identifier' && !computed && typeof node.name === 'string') return node.name;
    return this.fold(node)?.value;
  }

  /** The constant string an expression builds from literals, and how many pieces it took. */
  fold(node: Node, depth = 0): Folded | undefined {
    // A deeper expression is not folded: no stack overflows on a long chain of `+`.
    if (depth > MAX_DEPTH) return undefined;
    switch (node.type) {
      case 'Literal': {
        if (typeof node.value !== 'string') return undefined;
        const raw = typeof node.raw === 'string' ? node.raw.slice(1, -1) : node.value;
        return { value: node.value, pieces: raw === node.value ? 1 : 2 };
      }
      case 'TemplateLiteral': {
        const quasis = children(node, 'quasis');
        const expressions = children(node, 'expressions');
        let value = '';
        let pieces = quasis.length;
        for (let k = 0; k < quasis.length; k += 1) {
          const cooked = (quasis[k]?.value as { cooked?: unknown } | undefined)?.cooked;
          if (typeof cooked !== 'string') return undefined;
          value += cooked;
          const expression = expressions[k];
          if (expression !== undefined) {
            const inner = this.fold(expression, depth + 1);
            if (inner === undefined) return undefined;
            value += inner.value;
            pieces += inner.pieces;
          }
        }
        return { value, pieces };
      }
      case 'BinaryExpression': {
        if (node.operator !== '+') return undefined;
        const left = child(node, 'left');
        const right = child(node, 'right');
        const a = left === undefined ? undefined : this.fold(left, depth + 1);
        const b = right === undefined ? undefined : this.fold(right, depth + 1);
        return a === undefined || b === undefined
          ? undefined
          : { value: a.value + b.value, pieces: a.pieces + b.pieces };
      }
      case 'ParenthesizedExpression': {
        const inner = child(node, 'expression');
        return inner === undefined ? undefined : this.fold(inner, depth + 1);
      }
      case 'CallExpression':
        return this.foldCall(node, depth);
      default:
        return undefined;
    }
  }

  private foldCall(node: Node, depth: number): Folded | undefined {
    const callee = child(node, 'callee');
    const list = children(node, 'arguments');
    if (callee?.type !== 'MemberExpression' || callee.computed === true) return undefined;
    const method = child(callee, 'property')?.name;
    const object = child(callee, 'object');
    if (object === undefined) return undefined;
    if (method === 'fromCharCode' && this.name(object) === 'String') {
      const codes = list.map((a) => (a.type === 'Literal' ? a.value : undefined));
      if (!codes.every((c): c is number => typeof c === 'number' && c >= 0 && c <= 0xffff)) {
        return undefined;
      }
      return { value: String.fromCharCode(...codes), pieces: codes.length + 1 };
    }
    if (method === 'join' && object.type === 'ArrayExpression') {
      const parts = children(object, 'elements').map((e) => this.fold(e, depth + 1));
      if (!parts.every((p): p is Folded => p !== undefined)) return undefined;
      const separator =
        list[0] === undefined ? { value: ',', pieces: 0 } : this.fold(list[0], depth + 1);
      if (separator === undefined) return undefined;
      return {
        value: parts.map((p) => p.value).join(separator.value),
        pieces: parts.reduce((n, p) => n + p.pieces, separator.pieces),
      };
    }
    return undefined;
  }
}
