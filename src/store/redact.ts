// The one redaction pass that everything Proctor persists goes through: job results, events,
// reports, logs and artifacts. It removes what would identify or authorise someone — values
// under sensitive key names, bearer and basic credentials, credentials in URLs, well-known API
// key shapes, the exact secrets the process holds, and the user's home path.
//
// It errs towards removing too much, but not at the cost of Proctor's own messages, which are
// full of words that look like key names (`gold patch does not pass: EXISTING_FAILED`,
// `tests/test_auth.py::TestToken::test_refresh`, `3 passed`); test/store/redact-messages.test.ts
// runs every detail Proctor produces through here and expects it back unchanged. So:
// - A key is sensitive by whole words of its name (split at camelCase, `_`, `-`, `.`), never
//   by a prefix: `passed`, `passes`, `tokens`, `keys`, `bypass`, `author` are not sensitive,
//   and `pass` and `pwd` (a verb, a count, a shell command) only as the last word of a longer
//   name (`db_pass`, `MYSQL_PWD`).
// - In text, where the syntax says the value is one — `KEY=value`, `--flag value`, a quoted
//   key (`"api_key": …`), a quoted value, or a scheme word (`Authorization: Token …`) — the
//   value goes whatever it is (true/false/null aside).
// - A bare `key: value` is also how prose, YAML and headers read, so there the value goes only
//   if it looks like a secret: at least MIN_SECRET_LENGTH characters and neither a number
//   (`12`, `12:5`, `1.5`) nor an ordinary word (letters in one case or capitalised, optionally
//   joined by `_` or `-`: `expected`, `Expected`, `EXISTING_FAILED`). `::` never separates a key
//   from its value (pytest node ids, JUnit `classname::name`).
//
// Text rules run in this order (earlier ones make later matches shorter, never longer):
// PEM private keys, exact secrets, URL credentials, Bearer/Basic values, key shapes,
// `KEY=value` / `key: value` / `--key value` pairs, then the home path.
//
// Runner output is hostile input, so each rule is linear in the text: none rescans a long run
// from each of its positions (test/store/redact-linear.test.ts).

import { isSensitiveKey } from './sensitive-keys.js';

export const REDACTED = '[REDACTED]';

export interface RedactorOptions {
  /** The user's home directory; every occurrence becomes `~`. Ignored when shorter than 2. */
  home?: string;
  /**
   * Exact values to mask wherever they appear (API keys read from the environment). Values
   * shorter than 8 characters are ignored: masking them would mangle ordinary text.
   */
  secrets?: readonly string[];
  /** Nesting below this depth becomes `[Truncated]` in `value()`. Default 32. */
  maxDepth?: number;
}

export interface Redactor {
  /** The text with every rule applied. Idempotent: `text(text(s)) === text(s)`. */
  text(s: string): string;
  /**
   * A deep copy of JSON-like data: values under sensitive keys become `[REDACTED]` (booleans
   * and null are kept), strings and keys pass through `text()`, cycles become `[Circular]`,
   * Dates ISO strings, Errors `{ name, message }`, Buffers and other class instances a short
   * placeholder such as `[Buffer 12 bytes]`. The static type is unchanged for convenience.
   */
  value<T>(v: T): T;
}

export const MIN_SECRET_LENGTH = 8;
const DEFAULT_MAX_DEPTH = 32;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Apart, not as `BEGIN[\s\S]*?END`, which reads to the end from every BEGIN without an END.
const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/g;
const PEM_END = /-----END [A-Z0-9 ]*PRIVATE KEY-----/g;
// `scheme://userinfo@`: the user alone can be a token (`https://ghp_…@github.com`). Matched from
// the start of a run of scheme characters, not retried from each word boundary in it; hasScheme
// checks that a scheme (a letter at a word boundary) starts in the run.
const URL_CREDENTIALS = /(?<![a-z0-9+.-])([a-z0-9+.-]+:\/\/)[^\s/?#@]+@/gi;
// Not the prose around a credential: "a bearer token is required".
const BEARER =
  /\b(bearer)([ \t]+)(?!\[REDACTED\])(?!(?:tokens?|auth\w*|scheme|header)(?![\w\-.~+/=]))[A-Za-z0-9\-._~+/]+=*/gi;
// Only a value that decodes to `user:password`, so prose such as "basic usage" is left alone.
const BASIC = /\b(basic)([ \t]+)([A-Za-z0-9+/]{4,}={0,2})(?![\w+/=])/gi;
const KEY_SHAPES = new RegExp(
  '(?<![A-Za-z0-9_-])(?:' +
    [
      'sk-[A-Za-z0-9_-]{17,}', // OpenAI, Anthropic (sk-ant-…)
      'gh[pousr]_[A-Za-z0-9]{20,}', // GitHub
      'github_pat_[A-Za-z0-9_]{20,}',
      '(?:AKIA|ASIA)[0-9A-Z]{16}', // AWS access key id
      'glpat-[A-Za-z0-9_-]{20,}', // GitLab
      'xox[abprs]-[A-Za-z0-9-]{10,}', // Slack
      'AIza[0-9A-Za-z_-]{35}', // Google
      'hf_[A-Za-z0-9]{30,}', // Hugging Face
      'eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}', // JWT
    ].join('|') +
    ')(?![A-Za-z0-9_-])',
  'g',
);
// `KEY=value` (env, query strings, `--flag=value`), `key: value` (YAML, headers, JSON with
// its quotes) and `--flag value`. The value is a quoted string or a run up to a delimiter; an
// Authorization scheme word before it is kept. `==` compares and `::` scopes: neither assigns.
// After PAIR_HEAD, redactPairs reads VALUE (a quoted string, unrolled so that it cannot
// backtrack) or a run up to VALUE_END, found once for all the pairs nested in it (`a=b=c=…`).
const PAIR_HEAD =
  /(?<![\w.-])(--?)?(["']?)([A-Za-z_][\w.-]{0,99})\2(=(?!=)|:(?!:)[ \t]*|[ \t]+)((?:bearer|basic|token)[ \t]+)?/gi;
const VALUE = /"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\n]*'|\[REDACTED\]/iy;
const VALUE_END = /[\s"',;&)}\]]/g;

// What a bare `key: value` keeps (see the header): a number, or an ordinary word, with the
// punctuation that may end a sentence or a label.
const ORDINARY_VALUE =
  /^(?:[+-]?\d[\d.,:]*|(?:[A-Z]?[a-z]+|[A-Z]+)(?:[_-](?:[A-Z]?[a-z]+|[A-Z]+))*)[.,:;!?]?$/;

/** Whether a bare `key: value`'s value is a secret rather than a word of a message. */
function looksLikeSecret(value: string): boolean {
  return value.length >= MIN_SECRET_LENGTH && !ORDINARY_VALUE.test(value);
}

function looksLikeBasicCredentials(encoded: string): boolean {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  return /^[\x20-\x7e]+:[\x20-\x7e]*$/.test(decoded);
}

/** Whether a run of scheme characters ending in `://` holds a scheme (see URL_CREDENTIALS). */
function hasScheme(run: string, before: string): boolean {
  return /[+.-][a-z]/i.test(run) || (/^[a-z]/i.test(run) && !/\w/.test(before));
}

function redactPem(s: string): string {
  let out = '';
  let last = 0;
  PEM_BEGIN.lastIndex = 0;
  for (let begin = PEM_BEGIN.exec(s); begin !== null; begin = PEM_BEGIN.exec(s)) {
    PEM_END.lastIndex = PEM_BEGIN.lastIndex;
    // No END after this BEGIN is none after any later one either.
    if (PEM_END.exec(s) === null) break;
    out += s.slice(last, begin.index) + REDACTED;
    last = PEM_BEGIN.lastIndex = PEM_END.lastIndex;
  }
  return out + s.slice(last);
}

function redactPairs(s: string): string {
  let out = '';
  let last = 0;
  // No VALUE_END lies in [runFrom, runEnd), so an unquoted value starting there ends at runEnd.
  let [runFrom, runEnd] = [0, -1];
  const valueEnd = (at: number): number => {
    VALUE.lastIndex = at;
    if (VALUE.test(s)) return VALUE.lastIndex;
    if (at < runFrom || at > runEnd) {
      VALUE_END.lastIndex = runFrom = at;
      runEnd = VALUE_END.exec(s)?.index ?? s.length;
    }
    return runEnd > at ? runEnd : -1; // -1: no value starts here
  };
  PAIR_HEAD.lastIndex = 0;
  for (let m = PAIR_HEAD.exec(s); m !== null; m = PAIR_HEAD.exec(s)) {
    const [head, dashes = '', quote = '', key = '', sep = ''] = m;
    let scheme = m[5] ?? '';
    let start = m.index + head.length;
    let end = valueEnd(start);
    if (end < 0 && scheme !== '') {
      // With no value after it, the scheme word is the value.
      start -= scheme.length;
      end = start + scheme.trimEnd().length;
      scheme = '';
    }
    if (end < 0) {
      PAIR_HEAD.lastIndex = m.index + 1;
      continue;
    }
    const value = s.slice(start, end);
    const spaced = sep.trim() === '';
    const structured = value.startsWith('{') || value.startsWith('[');
    const plain = /^(?:true|false|null)$/.test(value);
    // The syntax says this is an assignment, so the value is taken for what it is.
    const assigned =
      sep === '=' || dashes !== '' || quote !== '' || scheme !== '' || /^["'[]/.test(value);
    if (
      !isSensitiveKey(key) ||
      (spaced && dashes === '') ||
      (structured && value !== REDACTED) ||
      plain ||
      (!assigned && !looksLikeSecret(value))
    ) {
      // Resume right after the key, so that `--env=API_KEY=x` still sees `API_KEY=x`.
      PAIR_HEAD.lastIndex = m.index + dashes.length + quote.length + key.length;
      continue;
    }
    let masked = REDACTED;
    if (value.startsWith('"')) masked = `"${REDACTED}"`;
    else if (value.startsWith("'")) masked = `'${REDACTED}'`;
    else if (quote !== '' && sep.startsWith(':') && value !== REDACTED) masked = `"${REDACTED}"`;
    out += s.slice(last, start) + masked;
    last = PAIR_HEAD.lastIndex = end;
  }
  return out + s.slice(last);
}

function secretsPattern(secrets: readonly string[]): RegExp | undefined {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    // As written, URL-encoded and JSON-escaped: the forms it takes in logs and URLs.
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  if (forms.size === 0) return undefined;
  const sorted = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp);
  return new RegExp(sorted.join('|'), 'g');
}

function homePattern(home: string | undefined): RegExp | undefined {
  const trimmed = home?.replace(/[/\\]+$/, '');
  if (trimmed === undefined || trimmed.length < 2) return undefined;
  return new RegExp(`(?<![\\w.-])${escapeRegExp(trimmed)}(?![\\w.-])`, 'g');
}

export function createRedactor(options: RedactorOptions = {}): Redactor {
  const secrets = secretsPattern(options.secrets ?? []);
  const home = homePattern(options.home);
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;

  function text(s: string): string {
    let out = redactPem(s);
    if (secrets) out = out.replace(secrets, REDACTED);
    out = out
      .replace(URL_CREDENTIALS, (all, run: string, at: number, whole: string) =>
        hasScheme(run, whole[at - 1] ?? '') ? `${run}${REDACTED}@` : all,
      )
      .replace(BEARER, `$1$2${REDACTED}`)
      .replace(BASIC, (all, scheme: string, space: string, value: string) =>
        looksLikeBasicCredentials(value) ? `${scheme}${space}${REDACTED}` : all,
      )
      .replace(KEY_SHAPES, REDACTED);
    out = redactPairs(out);
    return home ? out.replace(home, '~') : out;
  }

  function copy(v: unknown, depth: number, ancestors: Set<object>): unknown {
    if (typeof v === 'string') return text(v);
    if (typeof v === 'function') return '[Function]';
    if (typeof v === 'symbol') return '[Symbol]';
    if (v === null || typeof v !== 'object') return v;
    if (ancestors.has(v)) return '[Circular]';
    if (depth >= maxDepth) return '[Truncated]';
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
    if (v instanceof Error) return { name: v.name, message: text(v.message) };
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) {
      const kind = Buffer.isBuffer(v) ? 'Buffer' : v.constructor.name;
      return `[${kind} ${v.byteLength} bytes]`;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) {
      return `[object ${(v as { constructor?: { name?: string } }).constructor?.name ?? 'Object'}]`;
    }
    ancestors.add(v);
    try {
      if (Array.isArray(v)) return v.map((item: unknown) => copy(item, depth + 1, ancestors));
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(v)) {
        const keep = item === null || item === undefined || typeof item === 'boolean';
        out[text(key)] = isSensitiveKey(key) && !keep ? REDACTED : copy(item, depth + 1, ancestors);
      }
      return out;
    } finally {
      ancestors.delete(v);
    }
  }

  return {
    text,
    value: <T>(v: T): T => copy(v, 0, new Set()) as T,
  };
}

/**
 * Whether `bytes` hold one of `secrets` (ignoring those shorter than MIN_SECRET_LENGTH):
 * for content that must be stored byte for byte, such as a candidate diff, and so cannot be
 * masked — it is refused instead.
 */
export function containsSecret(bytes: Buffer, secrets: readonly string[]): boolean {
  return secrets.some((s) => s.length >= MIN_SECRET_LENGTH && bytes.includes(s));
}
