// Constant folding for the screen's Python reader (screen-python.ts): the string a range of
// tokens builds from literal pieces (adjacent literals, `+`, `SEP.join([…])`, `chr(N)`,
// f-strings of literals, escapes), and how many pieces it took: a name written in one piece
// is ordinary, one built from several is hiding. Brackets nest at most MAX_FOLD_DEPTH deep.
import { isName, isOp, matching, type Tok } from './screen-python-tokens.js';

export interface Folded {
  value: string;
  pieces: number;
  /** The index after the constant. */
  next: number;
}

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
export function fold(toks: Tok[], i: number, to: number, depth = 0): Folded | undefined {
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
export function foldRange(toks: Tok[], from: number, to: number): Folded | undefined {
  const folded = fold(toks, from, to);
  return folded !== undefined && folded.next === to ? folded : undefined;
}
