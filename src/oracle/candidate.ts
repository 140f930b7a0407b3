// Step 1 of an evaluation, on the host before any container exists: the candidate's size, its
// form (a traditional unified diff is rewritten as the equivalent git diff), its files through
// allow/deny and the hidden-test paths (every dropped file logged), its file
// count, no symlinks or submodules unless the task allows symlinks, and the screen of what
// is kept (screen.ts): its hits are recorded as `suspicious`, and fail the grade with
// TAMPER_SUSPECTED when the task says `[grading] tamper = "fail"`.
import { createHash } from 'node:crypto';
import { describeError } from '../errors.js';
import type { Bundle } from './bundle.js';
import { describeDropped, filterDiff, pathsTouchedBy } from './diff-filter.js';
import { asGitDiff } from './diff-traditional.js';
import { screenDiff, type ScreenResult } from './screen.js';
import { failVerdict, type Verdict } from './verdict.js';

export interface CandidateRecord {
  /** SHA-256 of the diff as submitted, and of what was applied after filtering. */
  sha256: string;
  bytes: number;
  filteredSha256: string | null;
  filteredBytes: number;
  kept: string[];
  /** One line per dropped file, with its path and why (describeDropped). */
  dropped: string[];
  /** The screen of the filtered diff; null when the diff was refused before filtering. */
  suspicious: ScreenResult | null;
  /**
   * The diff was a traditional unified diff (no `diff --git` line), read as the git diff of
   * the same changes (diff-traditional.ts); the filtered diff is that rewrite's.
   */
  traditional: boolean;
}

export interface PreparedCandidate {
  verdict?: Verdict;
  record: CandidateRecord;
  patch: Buffer;
}

/** Step 1: everything decided on the host before a container exists. */
export function prepareCandidate(
  bundle: Bundle,
  diff: Buffer,
  hiddenPatch: Buffer,
): PreparedCandidate {
  const sha256 = createHash('sha256').update(diff).digest('hex');
  const record: CandidateRecord = {
    sha256,
    bytes: diff.length,
    filteredSha256: null,
    filteredBytes: 0,
    kept: [],
    dropped: [],
    suspicious: null,
    traditional: false,
  };
  const { patchBytes, candidateFiles } = bundle.limits;
  if (diff.length > patchBytes) {
    return {
      record,
      patch: Buffer.alloc(0),
      verdict: failVerdict(
        'PATCH_TOO_LARGE',
        `the diff is ${diff.length} bytes; the task allows ${patchBytes} (patch_bytes)`,
      ),
    };
  }
  let filtered;
  try {
    const git = asGitDiff(diff);
    record.traditional = git !== diff;
    filtered = filterDiff(git, {
      allow: bundle.grading.allow,
      deny: bundle.grading.deny,
      hiddenPaths: pathsTouchedBy(hiddenPatch),
    });
  } catch (error) {
    return {
      record,
      patch: Buffer.alloc(0),
      verdict: failVerdict('APPLY_FAILED', `the diff cannot be read: ${describeError(error)}`),
    };
  }
  record.filteredSha256 = filtered.sha256;
  record.filteredBytes = filtered.patch.length;
  record.kept = filtered.kept.map((c) => c.newPath ?? c.oldPath ?? '');
  record.dropped = describeDropped(filtered.dropped);
  // The filtered diff is what would run: a dropped conftest.py is no threat, so no hit.
  const screen = screenDiff(filtered.patch);
  record.suspicious = screen;
  const reject = (detail: string) => ({
    record,
    patch: filtered.patch,
    verdict: failVerdict('PATCH_REJECTED', detail),
  });
  if (filtered.kept.length > candidateFiles) {
    return reject(
      `the diff changes ${filtered.kept.length} files; the task allows ${candidateFiles} (candidate_files)`,
    );
  }
  for (const change of filtered.kept) {
    const path = change.newPath ?? change.oldPath ?? '';
    if (change.newMode === '160000') return reject(`${path}: submodules are not allowed`);
    if (change.newMode === '120000' && !bundle.grading.allowSymlinks) {
      return reject(`${path}: symlinks are not allowed (grading.allow_symlinks is false)`);
    }
  }
  if (screen.count > 0 && bundle.grading.tamper === 'fail') {
    return {
      record,
      patch: filtered.patch,
      verdict: failVerdict('TAMPER_SUSPECTED', describeScreen(screen)),
    };
  }
  return { record, patch: filtered.patch };
}

/** The verdict's detail: how many hits, and the first few as `rule file:line`. */
export function describeScreen(screen: ScreenResult): string {
  const shown = screen.hits
    .slice(0, 3)
    .map((h) => `${h.rule} ${h.file}${h.line === null ? '' : `:${h.line}`}`);
  const more = screen.count - shown.length;
  const count = `${screen.count} screen ${screen.count === 1 ? 'hit' : 'hits'}`;
  return `${count} in the candidate (tamper = "fail"): ${shown.join(', ')}${more > 0 ? `, … and ${more} more` : ''}`;
}
