// Step 1 of an evaluation, on the host before any container exists: the candidate's size, its
// files through allow/deny and the hidden-test paths (every dropped file logged), its file
// count, and no symlinks or submodules unless the task allows symlinks.
import { createHash } from 'node:crypto';
import { describeError } from '../errors.js';
import type { Bundle } from './bundle.js';
import { describeDropped, filterDiff, pathsTouchedBy } from './diff-filter.js';
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
    filtered = filterDiff(diff, {
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
  return { record, patch: filtered.patch };
}
