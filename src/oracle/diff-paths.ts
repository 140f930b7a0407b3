// Paths in git diffs: C-style unquoting (octal escapes are raw bytes, decoded as UTF-8),
// the a/ b/ prefixes git apply -p1 strips, /dev/null, and the checks that make a path safe to
// hand to git apply (no absolute paths, no .. or . components, no NUL, nothing under .git).
import type { Fail } from './diff-parse.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A line for an error message: no newline, bounded, control characters escaped. */
export function show(line: string): string {
  const cut = line.replace(/\n$/, '');
  const short = cut.length > 120 ? `${cut.slice(0, 120)}…` : cut;
  return JSON.stringify(short);
}

/** Raw path bytes (latin1) as text, for messages: UTF-8 where valid, U+FFFD elsewhere. */
export function asText(raw: string): string {
  return Buffer.from(raw, 'latin1').toString('utf8');
}

export function showPath(raw: string): string {
  return JSON.stringify(asText(raw));
}

export function checkSame(known: string | null, found: string, header: string, fail: Fail): string {
  if (known !== null && known !== found) throw fail(`inconsistent \`${header}\` file name`);
  return found;
}

// git's is_dev_null: "/dev/null" followed by whitespace (the newline, or a tab and a date).
export function isDevNull(value: string): boolean {
  return value === '/dev/null' || /^\/dev\/null\s/.test(value);
}

/**
 * Unquotes git's C-style quoting (`"a/sp\303\251cial\tname"`) starting at `text[from]`,
 * which must be `"`. Returns the raw bytes (as latin1) and the index after the closing quote.
 */
export function unquoteC(text: string, from = 0): { raw: string; end: number } | null {
  if (text[from] !== '"') return null;
  let raw = '';
  let i = from + 1;
  const escapes: Record<string, string> = {
    a: '\x07',
    b: '\b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
    '\\': '\\',
    '"': '"',
  };
  while (i < text.length) {
    const ch = text[i] ?? '';
    if (ch === '"') return { raw, end: i + 1 };
    if (ch === '\0' || ch === '\n') return null;
    if (ch !== '\\') {
      raw += ch;
      i += 1;
      continue;
    }
    const esc = text[i + 1] ?? '';
    const simple = escapes[esc];
    if (simple !== undefined) {
      raw += simple;
      i += 2;
    } else if (/^[0-3][0-7][0-7]$/.test(text.slice(i + 1, i + 4))) {
      raw += String.fromCharCode(parseInt(text.slice(i + 1, i + 4), 8));
      i += 4;
    } else {
      return null;
    }
  }
  return null;
}

// Unquoted names: git diff quotes every control character, so one here is a hand-made
// patch that git would cut short (at a tab or CR) where we would not; refuse it.
export function unquoted(raw: string, fail: Fail): string {
  if (hasControl(raw)) throw fail(`control character in path ${showPath(raw)}`, raw);
  return raw;
}

export function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** `rename from`/`copy to` values: repository-relative already, the whole rest of the line. */
export function headerPath(value: string, fail: Fail): string {
  if (!value.startsWith('"')) return checkPath(unquoted(value, fail), fail);
  const q = unquoteC(value);
  if (q === null || q.end !== value.length) throw fail(`bad quoted path ${show(value)}`);
  return checkPath(q.raw, fail);
}

/** `---`/`+++` values: a prefixed name, ended by a tab (git adds one when a name has spaces). */
export function filePath(value: string, fail: Fail): string {
  let raw: string;
  if (value.startsWith('"')) {
    const q = unquoteC(value);
    if (q === null || (q.end !== value.length && value[q.end] !== '\t')) {
      throw fail(`bad quoted path ${show(value)}`);
    }
    raw = q.raw;
  } else {
    const tab = value.indexOf('\t');
    raw = unquoted(tab === -1 ? value : value.slice(0, tab), fail);
  }
  const stripped = stripPrefix(raw);
  if (stripped === null) throw fail(`path without an a/ or b/ prefix ${showPath(raw)}`, raw);
  return checkPath(stripped, fail);
}

/** Drops the first path component (`a/`, `b/`, …) as `git apply -p1` does. */
export function stripPrefix(raw: string): string | null {
  const slash = raw.indexOf('/');
  return slash <= 0 ? null : raw.slice(slash + 1);
}

export function checkPath(raw: string, fail: Fail): string {
  if (raw.includes('\0')) throw fail(`NUL in path ${showPath(raw)}`, raw);
  if (raw.startsWith('/')) throw fail(`absolute path ${showPath(raw)}`, raw);
  for (const part of raw.split('/')) {
    if (part === '' || part === '.' || part === '..') {
      throw fail(`path with an empty, \`.\` or \`..\` component ${showPath(raw)}`, raw);
    }
    if (part.toLowerCase() === '.git') throw fail(`path into .git ${showPath(raw)}`, raw);
  }
  return raw;
}

export function decodePath(raw: string, fail: Fail): string {
  try {
    return UTF8.decode(Buffer.from(raw, 'latin1'));
  } catch {
    throw fail(`path is not valid UTF-8 ${showPath(raw)}`, raw);
  }
}

/** One side of the `diff --git` line, unprefixed: quoted (to its end) or raw. */
export function side(text: string): string | null {
  if (!text.startsWith('"')) return stripPrefix(text);
  const q = unquoteC(text);
  return q === null || q.end !== text.length ? null : stripPrefix(q.raw);
}

/**
 * git's "default name" from `diff --git <a/name> <b/name>`, defined only when both sides name
 * the same path; unquoted names may hold spaces, so try each space as the separator.
 */
export function defaultName(names: string): string | null {
  if (names.startsWith('"')) {
    const q = unquoteC(names);
    if (q === null || names[q.end] !== ' ') return null;
    const a = stripPrefix(q.raw);
    return a !== null && a === side(names.slice(q.end + 1)) ? a : null;
  }
  const quote = names.indexOf('"');
  if (quote !== -1) {
    if (names[quote - 1] !== ' ') return null;
    const a = stripPrefix(names.slice(0, quote - 1));
    return a !== null && a === side(names.slice(quote)) ? a : null;
  }
  const slash = names.indexOf('/');
  if (slash <= 0) return null;
  for (let sp = names.indexOf(' ', slash); sp !== -1; sp = names.indexOf(' ', sp + 1)) {
    const name = names.slice(slash + 1, sp);
    const secondSlash = names.indexOf('/', sp + 1);
    if (secondSlash === -1) return null;
    if (names.length - secondSlash - 1 === name.length && names.endsWith(name)) {
      if (secondSlash > sp + 1) return name;
    }
  }
  return null;
}

/** Whether `diff --git <names>` reads as `<prefix>/<a> <prefix>/<b>` (raw bytes). */
export function diffGitLineNames(names: string, a: string, b: string): boolean {
  if (names.startsWith('"')) {
    const q = unquoteC(names);
    return (
      q !== null &&
      stripPrefix(q.raw) === a &&
      names[q.end] === ' ' &&
      side(names.slice(q.end + 1)) === b
    );
  }
  const slash = names.indexOf('/');
  const sep = slash + 1 + a.length;
  return (
    slash > 0 &&
    names.startsWith(a, slash + 1) &&
    names[sep] === ' ' &&
    side(names.slice(sep + 1)) === b
  );
}
