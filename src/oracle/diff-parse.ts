// Splits a git-style diff (`git diff --binary --full-index`, optionally with renames and
// copies, or the output of `git format-patch`) into per-file sections, byte-exact, and works
// out which repository paths each section touches *as `git apply` (default -p1) would*.
//
// The parser is deliberately stricter than `git apply`: anything git would read differently
// from us, or that a real `git diff` never produces, is a PATCH_INVALID rejection of the whole
// patch rather than a guess, because the allow/deny policy is only as good as the paths it is
// checked against. In particular:
// - hunks are walked by their line counts, as git does, so a `diff --git` or `--- ` line can
//   never hide inside a hunk and a hunk can never run past its header's counts;
// - text after a section is allowed only when git would ignore it too: blank lines, or a mail
//   signature (`-- `) and what follows it up to the next `diff --git` (a multi-commit
//   `git format-patch`); text before the first section (a commit message) is dropped. Either
//   is rejected if it holds a traditional `--- `/`+++ `/`@@ -` patch, which git would apply;
// - the extended headers name the paths (`rename from`/`to`, `copy from`/`to`, `---`/`+++`),
//   the `diff --git a/X b/Y` line only when they do not, and the two must agree;
// - paths are C-unquoted (octal escapes are raw bytes), must be valid UTF-8, relative, free of
//   NUL, empty, `.` and `..` components and of any `.git` component (any case).
// All offsets are byte offsets: the text is read as latin1, one character per byte, so
// non-UTF-8 content passes through untouched.
import { ProctorError } from '../errors.js';
import {
  checkPath,
  checkSame,
  decodePath,
  defaultName,
  diffGitLineNames,
  filePath,
  hasControl,
  headerPath,
  isDevNull,
  show,
  asText,
} from './diff-paths.js';

export type ChangeKind = 'modify' | 'add' | 'delete' | 'rename' | 'copy' | 'mode';

export interface FileChange {
  /** Repository-relative path before the change; null for an added file. */
  oldPath: string | null;
  /** Repository-relative path after the change; null for a deleted file. */
  newPath: string | null;
  kind: ChangeKind;
  /** A `GIT binary patch` or `Binary files … differ` section. */
  binary: boolean;
  /** Text hunks (`@@ -a,b +c,d @@`); 0 for binary, mode-only, empty and pure renames. */
  hunks: number;
  /**
   * The file's mode after the change (`100644`, `100755`, `120000` for a symlink, `160000`
   * for a submodule), from `new file mode`, `new mode` or the `index` line; null for a
   * deletion or when the diff does not say.
   */
  newMode: string | null;
}

export interface DiffSection {
  change: FileChange;
  /** Byte range of the section in the input: its `diff --git` line through its last line. */
  start: number;
  end: number;
}

const DIFF_GIT = 'diff --git ';

// Extended header lines git understands, mapped to one canonical key each (git accepts
// `rename old`/`rename new` as old spellings of `rename from`/`rename to`).
const HEADERS: ReadonlyArray<readonly [prefix: string, key: HeaderKey]> = [
  ['old mode ', 'oldMode'],
  ['new mode ', 'newMode'],
  ['deleted file mode ', 'deletedFileMode'],
  ['new file mode ', 'newFileMode'],
  ['copy from ', 'copyFrom'],
  ['copy to ', 'copyTo'],
  ['rename from ', 'renameFrom'],
  ['rename to ', 'renameTo'],
  ['rename old ', 'renameFrom'],
  ['rename new ', 'renameTo'],
  ['similarity index ', 'similarity'],
  ['dissimilarity index ', 'dissimilarity'],
  ['index ', 'index'],
  ['--- ', 'minus'],
  ['+++ ', 'plus'],
];

type HeaderKey =
  | 'oldMode'
  | 'newMode'
  | 'deletedFileMode'
  | 'newFileMode'
  | 'copyFrom'
  | 'copyTo'
  | 'renameFrom'
  | 'renameTo'
  | 'similarity'
  | 'dissimilarity'
  | 'index'
  | 'minus'
  | 'plus';

const HUNK_HEADER = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/;
const HUNK_COUNTS = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;
const BINARY_HUNK = /^(?:literal|delta) \d+\n$/;
const BASE85 = /^[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]+$/;
const MODE = /^[0-7]{6}$/;

/** Reads the input one line at a time; a line keeps its `\n` (the last one may lack it). */
export class Lines {
  pos = 0;
  /** 1-based number of the line at `pos`. */
  lineNo = 1;

  constructor(readonly text: string) {}

  get done(): boolean {
    return this.pos >= this.text.length;
  }

  peek(): string {
    const nl = this.text.indexOf('\n', this.pos);
    return this.text.slice(this.pos, nl === -1 ? this.text.length : nl + 1);
  }

  /** The line `ahead` lines after the current one ('' past the end). */
  peekAt(ahead: number): string {
    let pos = this.pos;
    for (let i = 0; i < ahead && pos < this.text.length; i += 1) {
      const nl = this.text.indexOf('\n', pos);
      pos = nl === -1 ? this.text.length : nl + 1;
    }
    const nl = this.text.indexOf('\n', pos);
    return this.text.slice(pos, nl === -1 ? this.text.length : nl + 1);
  }

  next(): string {
    const line = this.peek();
    this.pos += line.length;
    this.lineNo += 1;
    return line;
  }
}

function invalid(message: string, data: Record<string, unknown> = {}): ProctorError {
  return new ProctorError('PATCH_INVALID', message, { data });
}

export type Fail = (why: string, path?: string) => ProctorError;

/** Parses every `diff --git` section of `patch`; an empty or blank patch has none. */
export function parseDiff(patch: Buffer): DiffSection[] {
  const lines = new Lines(patch.toString('latin1'));
  const preamble = skipToSection(lines);
  if (lines.done) {
    if (/^[\s]*$/.test(lines.text)) return [];
    throw invalid('the patch has no `diff --git` line: not a git diff');
  }
  rejectTraditionalPatch(preamble);
  const sections: DiffSection[] = [];
  while (!lines.done) {
    sections.push(parseSection(lines));
    const tailStart = lines.lineNo;
    const tail = skipToSection(lines);
    checkTail(tail, tailStart);
  }
  return sections;
}

/** Consumes lines up to the next `diff --git ` line (or the end), returning them. */
function skipToSection(lines: Lines): Array<{ line: string; lineNo: number }> {
  const skipped: Array<{ line: string; lineNo: number }> = [];
  while (!lines.done && !lines.peek().startsWith(DIFF_GIT)) {
    const lineNo = lines.lineNo;
    skipped.push({ line: lines.next(), lineNo });
  }
  return skipped;
}

// git apply reads `--- ` + `+++ ` + `@@ -` anywhere outside a section as a traditional patch
// and applies it; we never pass such text on, so we refuse it rather than silently drop it.
function rejectTraditionalPatch(text: Array<{ line: string; lineNo: number }>): void {
  for (let i = 0; i + 2 < text.length; i += 1) {
    const [a, b, c] = [text[i], text[i + 1], text[i + 2]];
    if (a?.line.startsWith('--- ') && b?.line.startsWith('+++ ') && c?.line.startsWith('@@ -')) {
      throw invalid(
        `line ${a.lineNo}: a non-git (traditional) diff outside any \`diff --git\` section`,
        {
          line: a.lineNo,
        },
      );
    }
  }
}

function checkTail(tail: Array<{ line: string; lineNo: number }>, firstLineNo: number): void {
  const firstText = tail.findIndex((t) => t.line.trim() !== '');
  if (firstText === -1) return;
  const first = tail[firstText];
  if (first !== undefined && (first.line === '-- \n' || first.line === '--\n')) {
    rejectTraditionalPatch(tail);
    return;
  }
  const lineNo = first?.lineNo ?? firstLineNo;
  throw invalid(
    `line ${lineNo}: unexpected ${show(first?.line ?? '')} after the end of a file's changes (a hunk shorter than its header says, or stray text)`,
    { line: lineNo },
  );
}

function parseSection(lines: Lines): DiffSection {
  const start = lines.pos;
  const startLine = lines.lineNo;
  const first = lines.next();
  if (!first.endsWith('\n')) throw invalid(`line ${startLine}: truncated \`diff --git\` line`);
  const names = first.slice(DIFF_GIT.length, -1);
  // git quotes every control character in a name, so one here is a hand-made line that git
  // might cut short where we would not.
  if (hasControl(names)) {
    throw invalid(`line ${startLine}: control character in ${show(first)}`, { line: startLine });
  }

  const headers: Partial<Record<HeaderKey, string>> = {};
  while (!lines.done) {
    const line = lines.peek();
    const match = HEADERS.find(([prefix]) => line.startsWith(prefix));
    if (match === undefined) break;
    const [prefix, key] = match;
    if (!line.endsWith('\n')) throw invalid(`line ${lines.lineNo}: truncated header ${show(line)}`);
    if (headers[key] !== undefined) {
      throw invalid(`line ${lines.lineNo}: repeated header ${show(line)}`, { line: lines.lineNo });
    }
    // `---`/`+++` close the header in every diff git writes; keeping them last means the
    // order-dependent way git resolves names (see resolveNames) cannot differ from ours.
    if (headers.minus !== undefined && key !== 'plus') {
      throw invalid(`line ${lines.lineNo}: expected \`+++ \` after \`--- \`, got ${show(line)}`);
    }
    headers[key] = line.slice(prefix.length, -1);
    lines.next();
    if (key === 'plus') break;
  }
  if (headers.minus !== undefined && headers.plus === undefined) {
    throw invalid(`line ${lines.lineNo}: \`--- \` without \`+++ \``, { line: lines.lineNo });
  }

  let hunks = 0;
  let binary = false;
  const body = lines.done ? '' : lines.peek();
  if (headers.plus !== undefined) {
    if (!body.startsWith('@@ -')) {
      throw invalid(`line ${lines.lineNo}: expected a hunk after \`+++ \`, got ${show(body)}`);
    }
    while (!lines.done && lines.peek().startsWith('@@ -')) {
      parseHunk(lines);
      hunks += 1;
    }
  } else if (body.startsWith('@@ -')) {
    throw invalid(`line ${lines.lineNo}: a hunk without \`--- \`/\`+++ \` lines`);
  } else if (body === 'GIT binary patch\n') {
    lines.next();
    if (!parseBinaryHunk(lines)) {
      throw invalid(`line ${lines.lineNo}: unrecognized binary patch ${show(lines.peek())}`);
    }
    parseBinaryHunk(lines); // the reverse hunk is optional
    binary = true;
  } else if (/^(?:Binary files |Files ).* differ\n$/.test(body)) {
    lines.next();
    binary = true;
  }

  const change = resolveChange(headers, names, { hunks, binary }, startLine);
  return { change, start, end: lines.pos };
}

/** Consumes one text hunk, walked by its header's line counts as git does. */
export function parseHunk(lines: Lines): void {
  const lineNo = lines.lineNo;
  const header = lines.next();
  const counts = HUNK_COUNTS.exec(header);
  if (counts === null || !HUNK_HEADER.test(header) || !header.endsWith('\n')) {
    throw invalid(`line ${lineNo}: malformed hunk header ${show(header)}`, { line: lineNo });
  }
  let oldLines = counts[1] === undefined ? 1 : Number(counts[1]);
  let newLines = counts[2] === undefined ? 1 : Number(counts[2]);
  let changed = false;
  while (oldLines > 0 || newLines > 0) {
    if (lines.done) throw invalid(`line ${lineNo}: hunk truncated`, { line: lineNo });
    const at = lines.lineNo;
    const line = lines.next();
    if (!line.endsWith('\n')) throw invalid(`line ${at}: hunk truncated`, { line: at });
    switch (line[0]) {
      case ' ':
      case '\n': // an empty context line, as some tools write it; git accepts it too
        oldLines -= 1;
        newLines -= 1;
        break;
      case '-':
        oldLines -= 1;
        changed = true;
        break;
      case '+':
        newLines -= 1;
        changed = true;
        break;
      case '\\':
        if (line.length < 12 || line[1] !== ' ') {
          throw invalid(`line ${at}: corrupt hunk line ${show(line)}`, { line: at });
        }
        break;
      default:
        throw invalid(`line ${at}: corrupt hunk line ${show(line)}`, { line: at });
    }
  }
  if (oldLines !== 0 || newLines !== 0 || !changed) {
    throw invalid(`line ${lineNo}: hunk does not match its header ${show(header)}`, {
      line: lineNo,
    });
  }
  // "\ No newline at end of file" after the last counted line.
  if (!lines.done && lines.peek().startsWith('\\ ')) {
    if (!lines.peek().endsWith('\n')) throw invalid(`line ${lines.lineNo}: hunk truncated`);
    lines.next();
  }
}

/** One `literal N`/`delta N` hunk of a binary patch and its base85 lines; false if absent. */
function parseBinaryHunk(lines: Lines): boolean {
  if (lines.done || !BINARY_HUNK.test(lines.peek())) return false;
  lines.next();
  for (;;) {
    const at = lines.lineNo;
    if (lines.done) throw invalid(`line ${at}: binary patch truncated`, { line: at });
    const line = lines.next();
    if (line === '\n') return true;
    // A length character, then 5 base85 characters per 4 bytes, then the newline.
    const length = line.length;
    const code = line.charCodeAt(0);
    const bytes =
      code >= 65 && code <= 90 ? code - 64 : code >= 97 && code <= 122 ? code - 96 + 26 : 0;
    const max = ((length - 2) / 5) * 4;
    if (
      !line.endsWith('\n') ||
      length < 7 ||
      (length - 2) % 5 !== 0 ||
      bytes === 0 ||
      bytes > max ||
      bytes <= max - 4 ||
      !BASE85.test(line.slice(1, -1))
    ) {
      throw invalid(`line ${at}: corrupt binary patch line ${show(line)}`, { line: at });
    }
  }
}

/**
 * Works out the section's paths the way git apply does (apply.c, parse_git_diff_header with
 * `---`/`+++` last), rejecting every combination git diff never writes.
 */
function resolveChange(
  h: Partial<Record<HeaderKey, string>>,
  names: string,
  body: { hunks: number; binary: boolean },
  lineNo: number,
): FileChange {
  const fail: Fail = (why, path) =>
    invalid(`line ${lineNo}: ${why} in the section ${show(DIFF_GIT + names)}`, {
      line: lineNo,
      ...(path === undefined ? {} : { path: asText(path) }),
    });

  const isNew = h.newFileMode !== undefined;
  const isDelete = h.deletedFileMode !== undefined;
  const isRename = h.renameFrom !== undefined || h.renameTo !== undefined;
  const isCopy = h.copyFrom !== undefined || h.copyTo !== undefined;
  if ([isNew, isDelete, isRename, isCopy].filter(Boolean).length > 1) {
    throw fail('inconsistent new/deleted/rename/copy headers');
  }
  if (isRename && (h.renameFrom === undefined || h.renameTo === undefined)) {
    throw fail('`rename from` and `rename to` must come together');
  }
  if (isCopy && (h.copyFrom === undefined || h.copyTo === undefined)) {
    throw fail('`copy from` and `copy to` must come together');
  }
  if ((h.oldMode === undefined) !== (h.newMode === undefined)) {
    throw fail('`old mode` and `new mode` must come together');
  }
  if ((isNew || isDelete) && h.oldMode !== undefined)
    throw fail('a mode change on a new/deleted file');
  for (const mode of [h.oldMode, h.newMode, h.newFileMode, h.deletedFileMode]) {
    if (mode !== undefined && !MODE.test(mode)) throw fail(`bad mode ${show(mode)}`);
  }

  const def = defaultName(names);
  let oldRaw: string | null = null;
  let newRaw: string | null = null;
  if (h.renameFrom !== undefined && h.renameTo !== undefined) {
    oldRaw = headerPath(h.renameFrom, fail);
    newRaw = headerPath(h.renameTo, fail);
  } else if (h.copyFrom !== undefined && h.copyTo !== undefined) {
    oldRaw = headerPath(h.copyFrom, fail);
    newRaw = headerPath(h.copyTo, fail);
  } else if (isDelete) {
    oldRaw = def;
  } else if (isNew) {
    newRaw = def;
  }
  if (h.minus !== undefined) {
    if (isNew !== isDevNull(h.minus)) throw fail('`--- /dev/null` must go with `new file mode`');
    if (!isNew) oldRaw = checkSame(oldRaw, filePath(h.minus, fail), '--- ', fail);
  }
  if (h.plus !== undefined) {
    if (isDelete !== isDevNull(h.plus)) {
      throw fail('`+++ /dev/null` must go with `deleted file mode`');
    }
    if (!isDelete) newRaw = checkSame(newRaw, filePath(h.plus, fail), '+++ ', fail);
  }
  if (oldRaw === null && newRaw === null && !isNew && !isDelete) {
    oldRaw = def;
    newRaw = def;
  }
  if ((newRaw === null && !isDelete) || (oldRaw === null && !isNew)) {
    throw fail('no file name (the `diff --git` names differ or cannot be parsed)');
  }
  if (!isRename && !isCopy && oldRaw !== null && newRaw !== null && oldRaw !== newRaw) {
    throw fail('old and new paths differ without rename or copy headers');
  }
  const a = oldRaw ?? newRaw ?? '';
  const b = newRaw ?? oldRaw ?? '';
  if (!diffGitLineNames(names, a, b))
    throw fail('the `diff --git` line disagrees with the headers');

  const kind: ChangeKind = isRename
    ? 'rename'
    : isCopy
      ? 'copy'
      : isNew
        ? 'add'
        : isDelete
          ? 'delete'
          : h.oldMode !== undefined && body.hunks === 0 && !body.binary
            ? 'mode'
            : 'modify';
  if (kind === 'modify' && body.hunks === 0 && !body.binary) throw fail('no change recorded');
  return {
    oldPath: oldRaw === null ? null : decodePath(checkPath(oldRaw, fail), fail),
    newPath: newRaw === null ? null : decodePath(checkPath(newRaw, fail), fail),
    kind,
    binary: body.binary,
    hunks: body.hunks,
    newMode: isDelete ? null : (h.newFileMode ?? h.newMode ?? indexMode(h.index) ?? null),
  };
}

/** The mode at the end of an `index <old>..<new> <mode>` line, if it has one. */
function indexMode(index: string | undefined): string | undefined {
  const mode = index?.trim().split(/\s+/)[1];
  return mode !== undefined && MODE.test(mode) ? mode : undefined;
}

export { unquoteC } from './diff-paths.js';
