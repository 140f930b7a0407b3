// The candidate diff, filtered through the task's allow and deny globs before the oracle
// applies it (product.md, "The oracle", step 3). Whole files are kept or dropped, never single
// hunks, and a kept file's section is copied byte for byte, so what `git apply` sees is
// exactly what the candidate wrote for that file.
//
// Policy. A file is kept only if every path it touches (old and new: a rename out of `src/`
// into `tests/` is dropped whole; the source of a copy counts too)
// - is not a hidden test path, nor a directory above or below one (a candidate must not
//   pre-create or alter the hidden tests, SWE-bench #538): reason `hidden_test_path`;
// - matches no `deny` glob: reason `denied`;
// - matches at least one `allow` glob (an empty `allow` keeps nothing): reason `not_allowed`.
// The first failing check, in that order, names the reason.
//
// Globs are picomatch patterns with `dot: true`, matched against the whole repository-relative
// path (no `a/`/`b/` prefix), case-sensitively, `/`-separated:
// - `**` matches any number of path segments, dotfiles included: `tests/**` matches
//   `tests/test_x.py`, `tests/unit/.conftest.py` and `tests` itself;
// - `*` stays within one segment: `*.py` matches `setup.py` but not `src/setup.py`; use
//   `**/*.py` for any depth (it also matches top-level files);
// - braces, extglobs and a leading `!` (negation) work as in picomatch.
//
// Structure versus policy: a patch that is malformed, or names a path that is absolute, has a
// `..`/`.`/empty component, a NUL, a `.git` component, or is not UTF-8, is rejected whole
// (PATCH_INVALID, naming the line): no real `git diff` writes such a thing, so it is an attack
// or a corruption, and grading "the rest" of it would grade something the candidate did not
// write. A well-formed file outside the policy is only dropped, and logged (describeDropped).
import { createHash } from 'node:crypto';
import picomatch from 'picomatch';
import { ProctorError } from '../errors.js';
import { parseDiff, type FileChange } from './diff-parse.js';

export type { ChangeKind, FileChange } from './diff-parse.js';

export interface DiffRules {
  /** Globs a path must match (at least one) to be kept. No default: `[]` keeps nothing. */
  allow: string[];
  /** Globs no path may match. */
  deny: string[];
  /** Repository-relative paths the hidden test patch touches (see pathsTouchedBy). */
  hiddenPaths: string[];
}

export type DropReason = 'denied' | 'not_allowed' | 'hidden_test_path';

export type DroppedChange = FileChange & {
  reason: DropReason;
  /** The path that failed the policy (for a rename, the old or the new one). */
  path: string;
  /** The deny glob that matched, or the hidden path collided with; null for not_allowed. */
  rule: string | null;
};

export interface FilteredDiff {
  /** The kept files' sections, concatenated in input order, each byte-identical to the input. */
  patch: Buffer;
  kept: FileChange[];
  dropped: DroppedChange[];
  /** Hex SHA-256 of `patch`. */
  sha256: string;
}

interface Glob {
  glob: string;
  test: (path: string) => boolean;
}

/** Keeps the files of `patch` that the rules allow; throws PATCH_INVALID if it is malformed. */
export function filterDiff(patch: Buffer, rules: DiffRules): FilteredDiff {
  const allow = compile(rules.allow, 'allow');
  const deny = compile(rules.deny, 'deny');
  const kept: FileChange[] = [];
  const dropped: DroppedChange[] = [];
  const parts: Buffer[] = [];
  for (const section of parseDiff(patch)) {
    const verdict = judge(section.change, allow, deny, rules.hiddenPaths);
    if (verdict === null) {
      kept.push(section.change);
      parts.push(patch.subarray(section.start, section.end));
    } else {
      dropped.push({ ...section.change, ...verdict });
    }
  }
  const filtered = Buffer.concat(parts);
  return {
    patch: filtered,
    kept,
    dropped,
    sha256: createHash('sha256').update(filtered).digest('hex'),
  };
}

/** The first `deny` glob that drops `path`, as filterDiff matches it; null when none does. */
export function deniedBy(deny: readonly string[], path: string): string | null {
  return compile(deny, 'deny').find((g) => g.test(path))?.glob ?? null;
}

/** Every repository path a patch touches (old and new), sorted and unique. */
export function pathsTouchedBy(patch: Buffer): string[] {
  const paths = new Set<string>();
  for (const { change } of parseDiff(patch)) {
    if (change.oldPath !== null) paths.add(change.oldPath);
    if (change.newPath !== null) paths.add(change.newPath);
  }
  return [...paths].sort();
}

/** One log line per dropped file: `dropped tests/test_x.py (denied by tests/**, 2 hunks)`. */
export function describeDropped(dropped: readonly DroppedChange[]): string[] {
  return dropped.map((d) => {
    const moved = d.oldPath !== null && d.newPath !== null && d.oldPath !== d.newPath;
    const shown = moved
      ? `${quote(d.oldPath ?? '')} -> ${quote(d.newPath ?? '')}`
      : quote(d.newPath ?? d.oldPath ?? '');
    // For a rename or copy, say which of the two paths failed.
    const which = moved ? `${quote(d.path)} ` : '';
    const why =
      d.reason === 'denied'
        ? `${which}denied by ${d.rule ?? '?'}`
        : d.reason === 'hidden_test_path'
          ? `${which}collides with hidden test path ${quote(d.rule ?? '?')}`
          : `${which}matches no allow glob`;
    const size = d.binary ? 'binary' : `${d.hunks} ${d.hunks === 1 ? 'hunk' : 'hunks'}`;
    const what = d.kind === 'modify' ? size : `${d.kind}, ${size}`;
    return `dropped ${shown} (${why}, ${what})`;
  });
}

function compile(globs: readonly string[], name: string): Glob[] {
  return globs.map((glob) => {
    if (typeof glob !== 'string' || glob === '') {
      throw new ProctorError(
        'BUNDLE_INVALID',
        `Expected \`${name}\` globs to be non-empty strings, got ${JSON.stringify(glob)}`,
        { data: { [name]: globs } },
      );
    }
    return { glob, test: picomatch(glob, { dot: true, windows: false }) };
  });
}

function judge(
  change: FileChange,
  allow: readonly Glob[],
  deny: readonly Glob[],
  hiddenPaths: readonly string[],
): Pick<DroppedChange, 'reason' | 'path' | 'rule'> | null {
  const paths = [change.oldPath, change.newPath].filter((p): p is string => p !== null);
  for (const path of paths) {
    const hidden = hiddenPaths.find((h) => collides(path, h));
    if (hidden !== undefined) return { reason: 'hidden_test_path', path, rule: hidden };
  }
  for (const path of paths) {
    const denied = deny.find((g) => g.test(path));
    if (denied !== undefined) return { reason: 'denied', path, rule: denied.glob };
  }
  for (const path of paths) {
    if (!allow.some((g) => g.test(path))) return { reason: 'not_allowed', path, rule: null };
  }
  return null;
}

// The same path, or one is a directory holding the other: a file `tests/unit` would block
// the hidden `tests/unit/test_x.py` from being materialised, and vice versa.
function collides(path: string, hidden: string): boolean {
  return path === hidden || hidden.startsWith(`${path}/`) || path.startsWith(`${hidden}/`);
}

/** A path for a log line: as is, or JSON-quoted if it could break the line or be misread. */
function quote(path: string): string {
  // eslint-disable-next-line no-control-regex
  return /[\x00-\x1f\x7f"\\]|^\s|\s$| -> |[(),]/.test(path) ? JSON.stringify(path) : path;
}
