// The Python tokenizer of the screen's Python reader (screen-python.ts): names (in NFKC, as
// Python reads them), strings (prefixes, triple quotes, escapes decoded, f-strings whose
// fields are literals given their value), numbers and operators, comments dropped, over one
// hunk as the new file has it; and the functions that walk its tokens. A hunk can start inside
// a string or a bracket: tokens are then read as well as they can be. Every loop advances by
// at least one character or token.
import type { CodeLine } from './screen-code.js';

export type Kind = 'name' | 'string' | 'number' | 'op' | 'end';

export interface Tok {
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

export function tokenize(hunk: readonly CodeLine[]): Tok[] {
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
export function splitStatements(toks: Tok[]): Tok[][] {
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

/** Whether a token is the operator `text`. */
export const isOp = (tok: Tok | undefined, text: string) => tok?.kind === 'op' && tok.text === text;
/** Whether a token is a name (the name `text`, when given). */
export const isName = (tok: Tok | undefined, text?: string) =>
  tok?.kind === 'name' && (text === undefined || tok.text === text);

// Each token list's bracket pairs, found once: a walk that asks for the bracket closing each
// call of `f(f(f(…)))` then costs linear time, not quadratic.
const PAIRS = new WeakMap<Tok[], Int32Array>();

function pairs(toks: Tok[]): Int32Array {
  let table = PAIRS.get(toks);
  if (table === undefined) {
    const found = new Int32Array(toks.length).fill(-1);
    const stack: number[] = [];
    toks.forEach((tok, k) => {
      if (tok.kind !== 'op') return;
      if ('([{'.includes(tok.text)) stack.push(k);
      else if (')]}'.includes(tok.text)) {
        const open = stack.pop();
        if (open !== undefined) found[open] = k;
      }
    });
    PAIRS.set(toks, found);
    table = found;
  }
  return table;
}

/** The index of the bracket closing the one at `open`, or -1 before `to`. */
export function matching(toks: Tok[], open: number, to: number): number {
  const close = pairs(toks)[open] ?? -1;
  return close > open && close < to ? close : -1;
}

/** The top-level comma-separated arguments of the call whose `(` is at `open`. */
export function args(toks: Tok[], open: number, close: number): Array<[number, number]> {
  const table = pairs(toks);
  const list: Array<[number, number]> = [];
  let start = open + 1;
  for (let k = open + 1; k < close; k += 1) {
    const tok = toks[k];
    if (tok?.kind !== 'op') continue;
    if ('([{'.includes(tok.text)) {
      const end = table[k] ?? -1;
      if (end > k && end < close) k = end; // skip the nested brackets whole
    } else if (tok.text === ',') {
      list.push([start, k]);
      start = k + 1;
    }
  }
  if (start < close) list.push([start, close]);
  return list;
}

/** A dotted name `a.b.c` starting at `i`: its parts and the index after it. */
export function dotted(toks: Tok[], i: number, to: number): { parts: string[]; next: number } {
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

export function splitCommas(toks: Tok[], from: number, to: number): Array<[number, number]> {
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
