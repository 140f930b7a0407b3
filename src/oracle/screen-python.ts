// The screen's reader of Python: each hunk as the new file has it, tokenized
// (screen-python-tokens.ts), and from its tokens the other spellings of each added line
// (screen-code.ts):
// - names bound by `import a as b`, `from a import b as c`, `b = a.x` (a plain reference) and
//   `b = __import__("a")` are spelled as what they name: `m.insert(…)` after
//   `from sys import meta_path as m` reads `sys.meta_path.insert(…)`, and the import itself
//   reads `import sys.meta_path`;
// - strings built from literal pieces are folded (screen-python-fold.ts): adjacent literals,
//   `+` of literals, `"".join([…])` of literals, f-strings of literals, `chr(N)` and escapes
//   (`"\x70ytest"`);
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
import { fold, foldRange } from './screen-python-fold.js';
import {
  args,
  dotted,
  isName,
  isOp,
  matching,
  splitCommas,
  splitStatements,
  tokenize,
  type Tok,
} from './screen-python-tokens.js';

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

/** Reads every hunk of a Python file: the spellings and computed names of its added lines. */
export function readPython(hunks: readonly CodeLine[][]): CodeReading {
  const reading = newReading();
  const statements = hunks.flatMap((hunk) => splitStatements(tokenize(hunk)));
  const aliases = new Map<string, string>();
  // Twice: an alias can be bound from another (`s = sys` then `m = s.modules`).
  for (let pass = 0; pass < 2; pass += 1) {
    for (const statement of statements) collectAliases(statement, aliases);
  }
  // A name the file also binds to something else (`from unittest import mock`, then
  // `mock = MagicMock()` in a test) is not read as the alias, unless it names the
  // interpreter's machinery, which honest code does not shadow.
  for (const statement of statements) {
    for (const name of rebound(statement, aliases)) {
      if (!KEPT_ROOTS.has(rootOf(aliases.get(name) ?? ''))) aliases.delete(name);
    }
  }
  const renderer = new Renderer(aliases, reading);
  for (const statement of statements) {
    if (!statement.some((t) => t.added)) continue;
    for (const [line, text] of renderer.statement(statement)) addSpelling(reading, line, text);
  }
  return reading;
}

// --- aliases --------------------------------------------------------------------------------

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

/** Modules whose aliases hold even where the name is bound again. */
const KEPT_ROOTS: ReadonlySet<string> = new Set([
  'sys',
  'builtins',
  '__builtins__',
  'gc',
  'inspect',
  'importlib',
  '_pytest',
  'pluggy',
  'ctypes',
]);

/**
 * The aliased names a statement binds to something else than an alias: assignment targets,
 * `for` targets, `as` targets of `with`/`except`, and a `def`'s or `class`'s name and
 * parameters.
 */
function rebound(statement: Tok[], aliases: Map<string, string>): string[] {
  const head = statement[0];
  if (isName(head, 'import') || isName(head, 'from')) return [];
  const names: string[] = [];
  const equals = statement.findIndex((t) => isOp(t, '='));
  const aliasing =
    equals === 1 &&
    isName(head) &&
    aliases.get(head?.text ?? '') !== undefined &&
    statement.length < 64;
  statement.forEach((tok, k) => {
    if (!isName(tok) || !aliases.has(tok.text)) return;
    const previous = statement[k - 1];
    const next = statement[k + 1];
    const target =
      (k < equals && !aliasing && !isOp(previous, '.') && !isOp(next, '.') && !isOp(next, '[')) ||
      isName(previous, 'for') ||
      isName(previous, 'as') ||
      isName(previous, 'def') ||
      isName(previous, 'class') ||
      (isName(head, 'def') && (isOp(previous, '(') || isOp(previous, ',')) && !isOp(next, '.'));
    if (target) names.push(tok.text);
  });
  return names;
}

function bind(aliases: Map<string, string>, local: string, target: string): void {
  if (local !== '' && local !== target) aliases.set(local, target);
}

// --- spellings ------------------------------------------------------------------------------

const NAME_CALLS = new Set(['getattr', 'setattr', 'delattr', 'hasattr']);
const IMPORT_CALLS = new Set([
  '__import__',
  'builtins.__import__',
  'importlib.import_module',
  'importlib.__import__',
]);

/** Deepest nesting of calls the renderer reads through (`getattr(getattr(…), …)`). */
const MAX_RENDER_DEPTH = 32;

class Renderer {
  private depth = 0;

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
    if (this.depth >= MAX_RENDER_DEPTH) {
      // `getattr(getattr(…))` nested this deep is read as written (and no stack overflows).
      for (let k = from; k < to; k += 1) {
        const tok = toks[k];
        if (tok !== undefined) builder.add(tok.text, tok.space);
      }
      return builder.text();
    }
    this.depth += 1;
    try {
      this.walk(toks, from, to, (tok, piece) => builder.add(piece, tok.space));
    } finally {
      this.depth -= 1;
    }
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
