// The screen's reader of Python: a tokenizer (names, strings, numbers, operators; comments
// dropped) over each hunk as the new file has it, and from its tokens the other spellings of
// each added line (screen-code.ts):
// - names bound by `import a as b`, `from a import b as c`, `b = a.x` (a plain reference) and
//   `b = __import__("a")` are spelled as what they name: `m.insert(…)` after
//   `from sys import meta_path as m` reads `sys.meta_path.insert(…)`, and the import itself
//   reads `import sys.meta_path`;
// - strings built from literal pieces are folded: adjacent literals, `+` of literals,
//   `"".join([…])` of literals, f-strings of literals, `chr(N)` and escapes (`"\x70ytest"`);
// - `getattr(o, "n")`, `setattr(o, "n", v)`, `delattr`, `hasattr` with a name that folds read
//   `o.n`, `o.n = v`, `del o.n`, and so do `vars(o)["n"]` and `o.__dict__["n"]`;
//   `__import__("m")` and `importlib.import_module("m")` read `m`.
// A name folded from more than one piece, or a computed name on a guarded module
// (`getattr(sys, name)`, PY_GUARDED), marks the line `computed`.
//
// A hunk is a fragment: it can start inside a string or a bracket. Tokens are then read as
// well as they can be, and the raw line is always screened as well, so a misread fragment
// can lose a spelling, never a hit of the line itself. Every loop advances by at least one
// character or token: linear in the hunk's size.
import {
  addSpelling,
  isIdentifier,
  MAX_SPELLING_CHARS,
  newReading,
  quoted,
  rootOf,
  type CodeLine,
  type CodeReading,
} from './screen-code.js';

/**
 * Modules whose attributes honest code does not reach by a computed name: `getattr(sys, x)`
 * with a name the screen cannot fold marks the line. Also the roots a plain reference may be
 * an alias of (`s = sys`).
 */
const PY_GUARDED: ReadonlySet<string> = new Set([
  'sys',
  'os',
  'builtins',
  '__builtins__',
  'gc',
  'inspect',
  'importlib',
  'atexit',
  'signal',
  'ctypes',
  'pytest',
  '_pytest',
  'unittest',
  'pluggy',
  'doctest',
]);

type Kind = 'name' | 'string' | 'number' | 'op' | 'end';

interface Tok {
  kind: Kind;
  text: string;
  /** A string's value when it is constant (escapes decoded); undefined for an f-string with code. */
  value?: string;
  /** Pieces the constant value was written in (an f-string's literal fields count). */
  pieces?: number;
  /** The new file's line the token starts on. */
  line: number;
  added: boolean;
  /** Whitespace before the token. */
  space: boolean;
}

const OPS = [
  '**=',
  '//=',
  '>>=',
  '<<=',
  '...',
  '->',
  ':=',
  '==',
  '!=',
  '<=',
  '>=',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '@=',
  '**',
  '//',
  '<<',
  '>>',
];
const NAME_START = /[\p{L}\p{Nl}_]/u;
const NAME_PART = /[\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]/u;
const STRING_PREFIX = /^(?:[rRbBuUfF]{1,2})$/;

/** Reads every hunk of a Python file: the spellings and computed names of its added lines. */
export function readPython(hunks: readonly CodeLine[][]): CodeReading {
  const reading = newReading();
  const statements = hunks.flatMap((hunk) => splitStatements(tokenize(hunk)));
  const aliases = new Map<string, string>();
  // Twice: an alias can be bound from another (`s = sys` then `m = s.modules`).
  for (let pass = 0; pass < 2; pass += 1) {
    for (const statement of statements) collectAliases(statement, aliases);
  }
  const renderer = new Renderer(aliases, reading);
  for (const statement of statements) {
    if (!statement.some((t) => t.added)) continue;
    for (const [line, text] of renderer.statement(statement)) addSpelling(reading, line, text);
  }
  return reading;
}

// --- tokens ------------------------------------------------------------------------------

function tokenize(hunk: readonly CodeLine[]): Tok[] {
  const text = hunk.map((l) => l.text).join('\n');
  const starts: number[] = [];
  let offset = 0;
  for (const l of hunk) {
    starts.push(offset);
    offset += l.text.length + 1;
  }
  let row = 0;
  const at = (index: number): CodeLine => {
    while (row + 1 < starts.length && (starts[row + 1] ?? Infinity) <= index) row += 1;
    return hunk[row] ?? { line: 0, text: '', added: false };
  };
  const toks: Tok[] = [];
  let depth = 0;
  let space = false;
  let i = 0;
  const push = (kind: Kind, start: number, end: number, extra: Partial<Tok> = {}) => {
    const where = at(start);
    toks.push({
      kind,
      text: text.slice(start, end),
      line: where.line,
      added: where.added,
      space,
      ...extra,
    });
    space = false;
  };
  while (i < text.length) {
    const c = text[i] ?? '';
    if (c === '\n') {
      if (depth === 0 && toks.length > 0 && toks.at(-1)?.kind !== 'end') push('end', i, i + 1);
      i += 1;
      space = true;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f') {
      i += 1;
      space = true;
      continue;
    }
    if (c === '\\' && text[i + 1] === '\n') {
      i += 2;
      space = true;
      continue;
    }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i += 1;
      continue;
    }
    if (c === '"' || c === "'") {
      i = readString(text, i, '', push);
      continue;
    }
    if (NAME_START.test(c)) {
      let j = i + 1;
      while (j < text.length && NAME_PART.test(text[j] ?? '')) j += 1;
      const word = text.slice(i, j);
      const next = text[j];
      if ((next === '"' || next === "'") && STRING_PREFIX.test(word)) {
        i = readString(text, j, word.toLowerCase(), push, i);
        continue;
      }
      // Python reads identifiers in NFKC: `ｓｙｓ` is `sys`.
      push('name', i, j, { text: word.normalize('NFKC') });
      i = j;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) {
      let j = i + 1;
      while (j < text.length && /[\w.]/.test(text[j] ?? '')) j += 1;
      push('number', i, j);
      i = j;
      continue;
    }
    const op = OPS.find((o) => text.startsWith(o, i)) ?? c;
    if ('([{'.includes(op)) depth += 1;
    if (')]}'.includes(op)) depth = Math.max(0, depth - 1);
    push('op', i, i + op.length);
    i += op.length;
  }
  return toks;
}

/** Reads the string whose quote is at `quote`; returns the index after it. */
function readString(
  text: string,
  quote: number,
  prefix: string,
  push: (kind: Kind, start: number, end: number, extra?: Partial<Tok>) => void,
  start = quote,
): number {
  const q = text[quote] ?? '"';
  const triple = text.startsWith(q.repeat(3), quote);
  const open = triple ? 3 : 1;
  let j = quote + open;
  let end = -1;
  while (j < text.length) {
    const c = text[j];
    if (c === '\\') {
      j += 2;
      continue;
    }
    if (!triple && c === '\n') break;
    if (triple ? text.startsWith(q.repeat(3), j) : c === q) {
      end = j;
      break;
    }
    j += 1;
  }
  const bodyEnd = end < 0 ? Math.min(j, text.length) : end;
  const after = end < 0 ? bodyEnd : end + open;
  const body = text.slice(quote + open, bodyEnd);
  const raw = prefix.includes('r');
  let value: string | undefined = raw ? body : unescape(body);
  let pieces = value === body ? 1 : 2;
  if (prefix.includes('f')) {
    const fields = fstringValue(value);
    value = fields?.value;
    pieces = fields?.pieces ?? 1;
  }
  push('string', start, after, { value, pieces });
  return after;
}

/** An f-string's value when each field is a quoted literal (`f"{'py'}test"`). */
function fstringValue(body: string): { value: string; pieces: number } | undefined {
  let value = '';
  let pieces = 1;
  let i = 0;
  while (i < body.length) {
    const c = body[i] ?? '';
    if ((c === '{' || c === '}') && body[i + 1] === c) {
      value += c;
      i += 2;
      continue;
    }
    if (c === '{') {
      const close = body.indexOf('}', i);
      if (close < 0) return undefined;
      const field = /^\s*(['"])([^'"\\]*)\1\s*$/.exec(body.slice(i + 1, close));
      if (!field) return undefined;
      value += field[2] ?? '';
      pieces += 1;
      i = close + 1;
      continue;
    }
    value += c;
    i += 1;
  }
  return { value, pieces };
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '\n': '',
};

function unescape(body: string): string {
  if (!body.includes('\\')) return body;
  return body.replace(
    /\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|[\s\S])/g,
    (all, code: string) => {
      if (/^[xuU]/.test(code)) return String.fromCodePoint(parseInt(code.slice(1), 16));
      if (/^[0-7]+$/.test(code)) return String.fromCodePoint(parseInt(code, 8));
      return ESCAPES[code] ?? all;
    },
  );
}

/** Logical statements: split at line ends outside brackets and at `;`. */
function splitStatements(toks: Tok[]): Tok[][] {
  const statements: Tok[][] = [];
  let current: Tok[] = [];
  for (const tok of toks) {
    if (tok.kind === 'end' || (tok.kind === 'op' && tok.text === ';')) {
      if (current.length > 0) statements.push(current);
      current = [];
    } else {
      current.push(tok);
    }
  }
  if (current.length > 0) statements.push(current);
  return statements;
}

// --- folding --------------------------------------------------------------------------------

interface Folded {
  value: string;
  pieces: number;
  /** The index after the constant. */
  next: number;
}

const isOp = (tok: Tok | undefined, text: string) => tok?.kind === 'op' && tok.text === text;
const isName = (tok: Tok | undefined, text?: string) =>
  tok?.kind === 'name' && (text === undefined || tok.text === text);

/** One literal piece at `i`: a string, or `chr(N)`. */
function piece(toks: Tok[], i: number, to: number): Folded | undefined {
  const tok = toks[i];
  if (tok?.kind === 'string' && tok.value !== undefined) {
    return { value: tok.value, pieces: tok.pieces ?? 1, next: i + 1 };
  }
  if (isName(tok, 'chr') && isOp(toks[i + 1], '(') && isOp(toks[i + 3], ')') && i + 3 < to) {
    const n = toks[i + 2];
    const code = n?.kind === 'number' ? Number(n.text) : NaN;
    if (Number.isInteger(code) && code >= 0 && code <= 0x10ffff) {
      return { value: String.fromCodePoint(code), pieces: 2, next: i + 4 };
    }
  }
  return undefined;
}

/** Deepest nesting of brackets folded; deeper, a constant is not folded (and no stack overflows). */
const MAX_FOLD_DEPTH = 32;

/** A piece, or a parenthesized constant. */
function operand(toks: Tok[], i: number, to: number, depth: number): Folded | undefined {
  const single = piece(toks, i, to);
  if (single !== undefined || !isOp(toks[i], '(') || depth >= MAX_FOLD_DEPTH) return single;
  const close = matching(toks, i, to);
  const inner = close < 0 ? undefined : fold(toks, i + 1, close, depth + 1);
  return inner !== undefined && inner.next === close ? { ...inner, next: close + 1 } : undefined;
}

/** The constant string starting at `i` (pieces joined by adjacency, `+` and `.join`). */
function fold(toks: Tok[], i: number, to: number, depth = 0): Folded | undefined {
  const first = operand(toks, i, to, depth);
  if (first === undefined) return undefined;
  let { value, pieces, next } = first;
  for (;;) {
    const adjacent = next < to ? piece(toks, next, to) : undefined;
    if (adjacent !== undefined) {
      value += adjacent.value;
      pieces += adjacent.pieces;
      next = adjacent.next;
      continue;
    }
    const more =
      isOp(toks[next], '+') && next + 1 < to ? operand(toks, next + 1, to, depth) : undefined;
    if (more !== undefined) {
      value += more.value;
      pieces += more.pieces;
      next = more.next;
      continue;
    }
    break;
  }
  // SEP.join([a, b, …]) of literals.
  if (isOp(toks[next], '.') && isName(toks[next + 1], 'join') && isOp(toks[next + 2], '(')) {
    const close = matching(toks, next + 2, to);
    const open = next + 3;
    if (close > open && (isOp(toks[open], '[') || isOp(toks[open], '('))) {
      const end = matching(toks, open, close);
      if (end === close - 1) {
        const parts: string[] = [];
        let k = open + 1;
        let ok = true;
        while (k < end) {
          const part = depth < MAX_FOLD_DEPTH ? fold(toks, k, end, depth + 1) : undefined;
          if (part === undefined) {
            ok = false;
            break;
          }
          parts.push(part.value);
          pieces += part.pieces;
          k = part.next;
          if (isOp(toks[k], ',')) k += 1;
          else if (k !== end) {
            ok = false;
            break;
          }
        }
        if (ok) return { value: parts.join(value), pieces: pieces + 1, next: close + 1 };
      }
    }
  }
  return { value, pieces, next };
}

/** A range that is one constant string, and nothing else. */
function foldRange(toks: Tok[], from: number, to: number): Folded | undefined {
  const folded = fold(toks, from, to);
  return folded !== undefined && folded.next === to ? folded : undefined;
}

/** The index of the bracket closing the one at `open`, or -1 before `to`. */
function matching(toks: Tok[], open: number, to: number): number {
  let depth = 0;
  for (let k = open; k < Math.min(to, toks.length); k += 1) {
    const tok = toks[k];
    if (tok?.kind !== 'op') continue;
    if ('([{'.includes(tok.text)) depth += 1;
    else if (')]}'.includes(tok.text)) {
      depth -= 1;
      if (depth === 0) return k;
    }
  }
  return -1;
}

/** The top-level comma-separated arguments of the call whose `(` is at `open`. */
function args(toks: Tok[], open: number, close: number): Array<[number, number]> {
  const list: Array<[number, number]> = [];
  let start = open + 1;
  let depth = 0;
  for (let k = open + 1; k < close; k += 1) {
    const tok = toks[k];
    if (tok?.kind !== 'op') continue;
    if ('([{'.includes(tok.text)) depth += 1;
    else if (')]}'.includes(tok.text)) depth -= 1;
    else if (tok.text === ',' && depth === 0) {
      list.push([start, k]);
      start = k + 1;
    }
  }
  if (start < close) list.push([start, close]);
  return list;
}

// --- aliases --------------------------------------------------------------------------------

/** A dotted name `a.b.c` starting at `i`: its parts and the index after it. */
function dotted(toks: Tok[], i: number, to: number): { parts: string[]; next: number } {
  const parts: string[] = [];
  let k = i;
  while (k < to && isName(toks[k])) {
    parts.push(toks[k]?.text ?? '');
    if (isOp(toks[k + 1], '.') && isName(toks[k + 2]) && k + 2 < to) k += 2;
    else {
      k += 1;
      break;
    }
  }
  return { parts, next: k };
}

function collectAliases(statement: Tok[], aliases: Map<string, string>): void {
  const to = statement.length;
  const head = statement[0];
  if (isName(head, 'import')) {
    for (const [from, end] of splitCommas(statement, 1, to)) {
      const { parts, next } = dotted(statement, from, end);
      if (parts.length === 0) continue;
      if (isName(statement[next], 'as') && isName(statement[next + 1])) {
        bind(aliases, statement[next + 1]?.text ?? '', parts.join('.'));
      }
    }
    return;
  }
  if (isName(head, 'from')) {
    const { parts, next } = dotted(statement, 1, to);
    if (parts.length === 0 || !isName(statement[next], 'import')) return; // relative: unknown
    for (const [from, end] of splitCommas(statement, next + 1, to)) {
      const k = isOp(statement[from], '(') ? from + 1 : from;
      const name = statement[k];
      if (!isName(name)) continue;
      const as = isName(statement[k + 1], 'as') ? statement[k + 2] : undefined;
      const local = (isName(as) ? as?.text : name?.text) ?? '';
      if (k < end) bind(aliases, local, `${parts.join('.')}.${name?.text ?? ''}`);
    }
    return;
  }
  // NAME = reference
  if (isName(head) && isOp(statement[1], '=') && statement.length > 2 && statement.length < 64) {
    const renderer = new Renderer(aliases, newReading());
    const text = renderer.expression(statement, 2, to);
    if (/^[\w.]{1,300}$/.test(text) && text !== head?.text && PY_GUARDED.has(rootOf(text))) {
      bind(aliases, head?.text ?? '', text);
    }
  }
}

function bind(aliases: Map<string, string>, local: string, target: string): void {
  if (local !== '' && local !== target) aliases.set(local, target);
}

function splitCommas(toks: Tok[], from: number, to: number): Array<[number, number]> {
  const list: Array<[number, number]> = [];
  let start = from;
  for (let k = from; k < to; k += 1) {
    if (isOp(toks[k], ',')) {
      list.push([start, k]);
      start = k + 1;
    }
  }
  if (start < to) list.push([start, to]);
  return list;
}

// --- spellings ------------------------------------------------------------------------------

const NAME_CALLS = new Set(['getattr', 'setattr', 'delattr', 'hasattr']);
const IMPORT_CALLS = new Set([
  '__import__',
  'builtins.__import__',
  'importlib.import_module',
  'importlib.__import__',
]);

class Renderer {
  constructor(
    private readonly aliases: Map<string, string>,
    private readonly reading: CodeReading,
  ) {}

  /** The spellings of a statement's lines: line → text. */
  statement(toks: Tok[]): Map<number, string> {
    const lines = new Map<number, Builder>();
    const put = (line: number, text: string, space: boolean) => {
      let builder = lines.get(line);
      if (builder === undefined) lines.set(line, (builder = new Builder()));
      builder.add(text, space);
    };
    const head = toks[0];
    if (isName(head, 'from') || isName(head, 'import')) {
      const imported = this.imports(toks);
      if (imported.length > 0 && head !== undefined) put(head.line, imported.join('; '), false);
    } else {
      this.walk(toks, 0, toks.length, (tok, text) => put(tok.line, text, tok.space));
    }
    return new Map([...lines].map(([line, builder]) => [line, builder.text()]));
  }

  /** A range as one line of text. */
  expression(toks: Tok[], from: number, to: number): string {
    const builder = new Builder();
    this.walk(toks, from, to, (tok, piece) => builder.add(piece, tok.space));
    return builder.text();
  }

  private imports(toks: Tok[]): string[] {
    const to = toks.length;
    if (isName(toks[0], 'import')) {
      return splitCommas(toks, 1, to).flatMap(([from, end]) => {
        const { parts } = dotted(toks, from, end);
        return parts.length > 0 ? [`import ${parts.join('.')}`] : [];
      });
    }
    const { parts, next } = dotted(toks, 1, to);
    if (parts.length === 0 || !isName(toks[next], 'import')) return [];
    return splitCommas(toks, next + 1, to).flatMap(([from]) => {
      const k = isOp(toks[from], '(') ? from + 1 : from;
      const name = toks[k];
      return isName(name) ? [`import ${parts.join('.')}.${name?.text ?? ''}`] : [];
    });
  }

  private walk(toks: Tok[], from: number, to: number, emit: (tok: Tok, text: string) => void) {
    let i = from;
    while (i < to) {
      const tok = toks[i];
      if (tok === undefined) break;
      const previous = toks[i - 1];
      if (tok.kind === 'string' || isName(tok, 'chr')) {
        const folded = fold(toks, i, to);
        if (folded !== undefined && (folded.pieces > 1 || folded.next > i + 1)) {
          emit(tok, quoted(folded.value));
          i = folded.next;
          continue;
        }
        if (tok.kind === 'string') {
          emit(tok, oneLine(tok));
          i += 1;
          continue;
        }
      }
      if (tok.kind === 'name' && !isOp(previous, '.')) {
        const next = this.call(toks, i, to, emit);
        if (next > i) {
          i = next;
          continue;
        }
        const { parts, next: after } = dotted(toks, i, to);
        const head = parts[0] ?? tok.text;
        // A name being bound (`m = …`, `def m`, a keyword argument) is not the alias.
        const binding =
          parts.length === 1 &&
          (isOp(toks[after], '=') ||
            isName(previous, 'def') ||
            isName(previous, 'class') ||
            isName(previous, 'as'));
        const alias = binding ? undefined : this.aliases.get(head);
        const name = [alias ?? head, ...parts.slice(1)].join('.');
        // `o.__dict__["n"]` reads `o.n`.
        const item = name.endsWith('.__dict__')
          ? this.item(toks, after, to, name.slice(0, -9), tok)
          : undefined;
        if (item !== undefined) {
          emit(tok, item.text);
          i = item.next;
          continue;
        }
        emit(tok, name);
        i = after;
        continue;
      }
      emit(tok, tok.text);
      i += 1;
    }
  }

  /** `[name]` at `open` on the namespace of `target`: `target.name`, when the name folds. */
  private item(toks: Tok[], open: number, to: number, target: string, tok: Tok) {
    if (!isOp(toks[open], '[')) return undefined;
    const close = matching(toks, open, to);
    if (close < 0) return undefined;
    const folded = foldRange(toks, open + 1, close);
    if (folded === undefined || !isIdentifier(folded.value)) {
      if (PY_GUARDED.has(rootOf(target))) this.reading.computed.add(tok.line);
      return undefined;
    }
    if (folded.pieces > 1) this.reading.computed.add(tok.line);
    return { text: `${target}.${folded.value}`, next: close + 1 };
  }

  /** A getattr-like or import call at `i`: emits its reading and returns the index after it. */
  private call(toks: Tok[], i: number, to: number, emit: (tok: Tok, text: string) => void) {
    const tok = toks[i];
    if (tok === undefined) return i;
    const { parts, next: open } = dotted(toks, i, to);
    if (!isOp(toks[open], '(')) return i;
    const close = matching(toks, open, to);
    if (close < 0) return i;
    const head = parts[0] ?? '';
    const callee = [this.aliases.get(head) ?? head, ...parts.slice(1)].join('.');
    const list = args(toks, open, close);
    // `vars(o)["n"]` reads `o.n`.
    if (callee === 'vars' && list.length === 1) {
      const [object = [0, 0]] = list;
      const item = this.item(toks, close + 1, to, this.expression(toks, object[0], object[1]), tok);
      if (item === undefined) return i;
      emit(tok, item.text);
      return item.next;
    }
    if (NAME_CALLS.has(callee) && list.length >= 2) {
      const [object = [0, 0], name = [0, 0], value] = list;
      const target = this.expression(toks, object[0], object[1]);
      const folded = foldRange(toks, name[0], name[1]);
      if (folded === undefined || !isIdentifier(folded.value)) {
        if (PY_GUARDED.has(rootOf(target))) this.reading.computed.add(tok.line);
        return i;
      }
      if (folded.pieces > 1) this.reading.computed.add(tok.line);
      const attribute = `${target}.${folded.value}`;
      if (callee === 'setattr' && value !== undefined) {
        emit(tok, `${attribute} = ${this.expression(toks, value[0], value[1])}`);
      } else if (callee === 'delattr') {
        emit(tok, `del ${attribute}`);
      } else {
        emit(tok, attribute);
      }
      return close + 1;
    }
    if (IMPORT_CALLS.has(callee) && list.length >= 1) {
      const [name = [0, 0]] = list;
      const folded = foldRange(toks, name[0], name[1]);
      // A module named by a variable is ordinary (django's `__import__(module_path, …)`); one
      // built from literal pieces is not.
      if (folded === undefined) return i;
      if (folded.pieces > 1) this.reading.computed.add(tok.line);
      emit(tok, folded.value);
      return close + 1;
    }
    return i;
  }
}

/** A string token on one line: a multi-line one is read by its raw lines instead. */
function oneLine(tok: Tok): string {
  return tok.text.includes('\n') ? '""' : tok.text;
}

/**
 * A spelling being written: pieces joined with no space around dots and before brackets, one
 * between words, and otherwise where the source had one. Pieces are kept in a list, and the
 * last character apart, so that a long line is written in linear time.
 */
class Builder {
  private readonly parts: string[] = [];
  private last = '';
  private length = 0;

  add(piece: string, space: boolean): void {
    if (piece === '' || this.length > MAX_SPELLING_CHARS) return;
    const first = piece[0] ?? '';
    if (this.parts.length > 0) {
      const word = /\w/.test(this.last) && /\w/.test(first);
      const tight = this.last === '.' || first === '.' || '([,)]:'.includes(first);
      if (word || (space && !tight)) this.parts.push(' ');
    }
    this.parts.push(piece);
    this.last = piece.at(-1) ?? '';
    this.length += piece.length + 1;
  }

  text(): string {
    return this.parts.join('');
  }
}
