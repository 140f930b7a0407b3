// A traditional unified diff (`diff -u`, or what many models write by hand: `--- a/x`,
// `+++ b/x` and hunks, with no `diff --git` line) rewritten as the git diff that changes the
// same files in the same way. SWE-bench applies such a prediction (`git apply` reads
// traditional patches, and its fallback is `patch -p1`); Proctor reads every candidate through
// one strict git-diff parser, so it rewrites the traditional form first, and from then on the
// allow/deny filter, the screen and `git apply` in the container all see the rewritten diff:
// what is checked is exactly what is applied.
//
// The rewrite is as strict as the parser it feeds. A section is `--- OLD`, `+++ NEW` and at
// least one hunk, walked by its line counts (so a removed line `-- x` is never read as a
// header); names are read as `git apply -p1` reads them (the first component stripped, a tab
// and what follows it — a timestamp — ignored, C-quoting undone); `--- /dev/null` is a new
// file (mode 100644, as git gives it), `+++ /dev/null` a deletion, and so is an epoch date on
// that side (GNU `diff -N`). Refused, naming the line:
// OLD and NEW naming different files (a traditional diff cannot rename, and `git apply` would
// pick one of the two names by a rule of its own), a hunk outside any section, a section
// without hunks, and any `diff --git` line (a patch is one form or the other). Text before
// the first section and between sections (a message, `diff -ruN` or `Index:` lines) is
// dropped, as `git apply` skips it.
import { ProctorError } from '../errors.js';
import { Lines, parseHunk, type Fail } from './diff-parse.js';
import { filePath, isDevNull, show, showPath } from './diff-paths.js';

/** True when `patch` holds no `diff --git` line but does hold a traditional section. */
export function isTraditionalDiff(patch: Buffer): boolean {
  return isTraditional(patch.toString('latin1'));
}

function isTraditional(text: string): boolean {
  return !/^diff --git /m.test(text) && /^--- [^\n]*\n\+\+\+ [^\n]*\n@@ -/m.test(text);
}

/**
 * The git diff equivalent to a traditional `patch`; `patch` itself when it is not traditional
 * (a git diff, a blank patch, or text with no section, which the git-diff parser then refuses).
 */
export function asGitDiff(patch: Buffer): Buffer {
  const text = patch.toString('latin1');
  if (!isTraditional(text)) return patch;
  const lines = new Lines(text);
  const out: string[] = [];
  while (!lines.done) {
    const line = lines.peek();
    if (line.startsWith('--- ') && lines.peekAt(1).startsWith('+++ ')) {
      out.push(rewriteSection(lines));
      continue;
    }
    if (line.startsWith('@@ -')) {
      throw invalid(`line ${lines.lineNo}: a hunk outside any \`--- \`/\`+++ \` section`);
    }
    // A changed or context line past a hunk's counts: the hunk is longer than its header says.
    // git apply would skip it unapplied; a candidate's change is never silently dropped here.
    if (out.length > 0 && /^[-+ \\]/.test(line)) {
      throw invalid(
        `line ${lines.lineNo}: unexpected ${show(line)} after the end of a file's changes (a hunk longer than its header says, or stray text)`,
      );
    }
    lines.next(); // a message, `diff -ruN …`, `Index: …`, `====`: git apply skips them too
  }
  return Buffer.from(out.join(''), 'latin1');
}

function rewriteSection(lines: Lines): string {
  const lineNo = lines.lineNo;
  const minus = header(lines.next(), '--- ', lineNo);
  const plus = header(lines.next(), '+++ ', lineNo + 1);
  const fail: Fail = (why) => invalid(`line ${lineNo}: ${why}`);
  const first = lines.peek(); // the first hunk's header ('' at the end)
  const added = isDevNull(minus) || (isEpoch(minus) && /^@@ -0,0 /.test(first));
  const deleted = isDevNull(plus) || (isEpoch(plus) && / \+0,0 @@/.test(first));
  if (added && deleted) throw fail('both `--- ` and `+++ ` are /dev/null');
  const oldPath = isDevNull(minus) ? null : filePath(minus, fail);
  const newPath = isDevNull(plus) ? null : filePath(plus, fail);
  if (oldPath !== null && newPath !== null && oldPath !== newPath) {
    throw fail(
      `\`--- \` and \`+++ \` name different files (${showPath(oldPath)}, ${showPath(newPath)}): a traditional diff cannot rename one`,
    );
  }
  const path = newPath ?? oldPath ?? '';
  if (/["\\]/.test(path)) throw fail(`a path git would have to quote: ${showPath(path)}`);
  // git diff ends a name that holds a space with a tab on its ---/+++ lines.
  const end = path.includes(' ') ? '\t\n' : '\n';
  const start = lines.pos;
  if (lines.done || !lines.peek().startsWith('@@ -')) {
    throw invalid(
      `line ${lines.lineNo}: expected a hunk after \`+++ \`, got ${show(lines.peek())}`,
    );
  }
  while (!lines.done && lines.peek().startsWith('@@ -')) parseHunk(lines);
  const hunks = lines.text.slice(start, lines.pos);
  const head = [`diff --git a/${path} b/${path}\n`];
  if (added) head.push('new file mode 100644\n');
  if (deleted) head.push('deleted file mode 100644\n');
  head.push(added ? '--- /dev/null\n' : `--- a/${path}${end}`);
  head.push(deleted ? '+++ /dev/null\n' : `+++ b/${path}${end}`);
  return head.join('') + hunks;
}

// GNU `diff -N` writes an absent file as an empty one dated the epoch (in its local time zone:
// `1969-12-31 16:00:00.000000000 -0800` is one too); git apply reads that as a creation or a
// deletion (apply.c, has_epoch_timestamp), and so does this rewrite.
const STAMP = /\t(1970-01-01|1969-12-31) (\d\d):(\d\d):00(?:\.0+)? ([-+])(\d\d):?(\d\d)$/;

function isEpoch(value: string): boolean {
  const m = STAMP.exec(value);
  if (m === null) return false;
  const [, day, hour, minute, sign, zoneHours, zoneMinutes] = m;
  const offset = (sign === '-' ? -1 : 1) * (Number(zoneHours) * 60 + Number(zoneMinutes));
  const local = Number(hour) * 60 + Number(minute) + (day === '1969-12-31' ? 0 : 24 * 60);
  return local - offset === 24 * 60;
}

function header(line: string, prefix: string, lineNo: number): string {
  if (!line.endsWith('\n')) throw invalid(`line ${lineNo}: truncated header ${show(line)}`);
  return line.slice(prefix.length, -1);
}

function invalid(message: string): ProctorError {
  return new ProctorError('PATCH_INVALID', message);
}
