// What a report held instead of the declared test IDs it lacks. A declared ID that never
// appears in a report is most often written in another format than the runner's (a pytest
// node id `tests/test_x.py::test_y` where the JUnit report says `tests.test_x::test_y`), so
// the baseline names, for each missing ID, the reported ID nearest to it: the author sees the
// format mistake at once. Pure logic, bounded: a report holds up to 100,000 IDs of up to
// 1,000 characters (16 MiB in all), so each ID is compared by its two ends only, a cheap
// prefix-and-suffix score picks a few candidates, and only those get an edit distance.
import { excerpt } from './report.js';

/** Candidates kept by the cheap score for the edit distance. */
const SHORTLIST = 64;
/** Characters of each ID compared, half from each end: the ends say the most about a test. */
const COMPARED_CHARS = 256;

/**
 * An ID with every run of ASCII characters other than letters, digits and `_` made one `.`, in
 * lower case: `tests/test_x.py::Test::test_y[a-b]` and `tests.test_x.Test::test_y[a-b]` differ
 * only in the `py` that pytest's path form keeps. (Non-ASCII characters are kept as they are:
 * a Unicode-aware pattern costs several times more over a large report.)
 */
export function normaliseId(id: string): string {
  return id.replace(/[\0-/:-@[-^`{-\x7f]+/g, '.').toLowerCase();
}

function clip(text: string): string {
  if (text.length <= COMPARED_CHARS) return text;
  const half = COMPARED_CHARS / 2;
  return text.slice(0, half) + text.slice(-half);
}

/** Length of the common prefix plus that of the common suffix, at most the shorter length. */
function affinity(a: string, b: string): number {
  const n = Math.min(a.length, b.length, COMPARED_CHARS);
  let prefix = 0;
  while (prefix < n && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < n && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  return Math.min(prefix + suffix, Math.min(a.length, b.length));
}

/** Levenshtein distance (insert, delete, substitute; each costs 1), two rows. */
export function editDistance(a: string, b: string): number {
  if (a.length < b.length) [a, b] = [b, a];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const substitute = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(substitute, (previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length] ?? 0;
}

interface Shortlisted {
  index: number;
  shared: number;
  distance: number;
}

/**
 * Candidates in order of shared prefix plus suffix (descending), then of index: at most
 * SHORTLIST of them, kept by insertion so that a large report costs one pass, not a sort.
 */
function shortlist(goal: string, forms: readonly string[]): Shortlisted[] {
  const kept: Shortlisted[] = [];
  for (const [index, form] of forms.entries()) {
    const shared = affinity(goal, form);
    if (kept.length === SHORTLIST && shared <= (kept.at(-1)?.shared ?? 0)) continue;
    let at = kept.length;
    while (at > 0 && (kept[at - 1]?.shared ?? 0) < shared) at--;
    kept.splice(at, 0, { index, shared, distance: 0 });
    if (kept.length > SHORTLIST) kept.pop();
  }
  return kept;
}

/**
 * A finder of the candidates nearest to a target, nearest first. Both sides are clipped to
 * their first and last 128 characters and normalised (normaliseId), once per candidate; the
 * SHORTLIST candidates sharing the longest prefix plus suffix with the target are ranked by
 * edit distance, then by that shared length, then by their order in `candidates`. A candidate
 * listed twice is returned once.
 */
export function nearestFinder(
  candidates: readonly string[],
): (target: string, limit?: number) => string[] {
  const forms = candidates.map((id) => normaliseId(clip(id)));
  return (target, limit = 1) => {
    const goal = normaliseId(clip(target));
    const ranked = shortlist(goal, forms);
    for (const c of ranked) c.distance = editDistance(goal, forms[c.index] ?? '');
    ranked.sort((x, y) => x.distance - y.distance || y.shared - x.shared || x.index - y.index);
    const nearest = new Set<string>();
    for (const c of ranked) {
      if (nearest.size >= limit) break;
      nearest.add(candidates[c.index] ?? '');
    }
    return [...nearest];
  };
}

/** The `limit` candidates nearest to `target` (nearestFinder), nearest first. */
export function nearestIds(target: string, candidates: readonly string[], limit = 1): string[] {
  return nearestFinder(candidates)(target, limit);
}

/** Missing IDs named in a detail, each with its nearest reported ID; the rest are counted. */
export const MAX_NAMED_MISSING = 5;

export interface MissingIds {
  /** `hidden` or `existing`. */
  phase: string;
  /** Declared IDs absent from the report, in declared order. */
  missing: readonly string[];
  /** How many distinct IDs the phase declared. */
  declared: number;
  /** Reported IDs that were not declared: where the nearest ones are looked for. */
  reported: readonly string[];
  /** Appended after "the base report", such as ` (run 2)`. */
  where?: string;
}

/**
 * One bounded line for a baseline whose report lacks declared IDs: how many, then the first
 * MAX_NAMED_MISSING of them, each with the nearest reported ID that was not declared:
 * `1 of 2 hidden test IDs not in the base report: tests/t.py::test_y (nearest reported:
 * tests.t::test_y)`. IDs are quoted through excerpt (one line, at most 200 characters).
 */
export function describeMissing(input: MissingIds): string {
  const nearest = nearestFinder(input.reported);
  const named = input.missing.slice(0, MAX_NAMED_MISSING).map((id) => {
    const [near] = nearest(id);
    return near === undefined ? excerpt(id) : `${excerpt(id)} (nearest reported: ${excerpt(near)})`;
  });
  const more = input.missing.length - named.length;
  const tail =
    input.reported.length === 0 ? '; the report held no undeclared test ID to suggest instead' : '';
  return `${input.missing.length} of ${input.declared} ${input.phase} test ID${input.declared === 1 ? '' : 's'} not in the base report${input.where ?? ''}: ${named.join(', ')}${more > 0 ? `, … and ${more} more` : ''}${tail}`;
}
