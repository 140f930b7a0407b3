// The `json` form of `proctor report`, as one object: the summaries of the batches and, with
// a reference batch, each one's comparison with it. Shared by the CLI (`--format json`) and
// the API (`GET /api/batches/:id/report`, `GET /api/report`), so that both give the same.
//
// A batch of grades or solves has a summary in `batches`; a baseline sweep in `baselines`; a
// batch holding both (mixed) in each. A comparison pairs what the two batches both hold:
// grades with grades (`comparisons`), baselines with baselines (`baselineComparisons`); a
// batch with nothing in common with the reference is refused (USAGE).
import { ProctorError } from '../errors.js';
import {
  compareBaselines,
  type BaselineComparison,
  type BaselineSummary,
} from './baseline-summary.js';
import type { Comparison } from './compare.js';
import { compareBatches } from './compare.js';
import type { BatchKind, LoadedBatch } from './load.js';
import type { BatchSummary } from './summary.js';

export interface ReportObject {
  /** Batches of grades or solves (and empty ones). */
  batches: BatchSummary[];
  /** Present only when a reference batch was given and a batch holds grades. */
  comparisons?: Comparison[];
  /** Present only when a batch holds baselines. */
  baselines?: BaselineSummary[];
  /** Present only when a reference batch was given and a batch holds baselines. */
  baselineComparisons?: BaselineComparison[];
}

export const hasGrades = (kind: BatchKind) => kind !== 'baseline';
export const hasBaselines = (kind: BatchKind) => kind !== 'grade';

const kindText = (kind: BatchKind) =>
  kind === 'baseline'
    ? 'a baseline sweep'
    : kind === 'grade'
      ? 'a batch of grades'
      : 'a batch of grades and baselines';

/** Refuses a batch that shares no kind of job with the reference, naming both. */
export function checkComparable(loaded: readonly LoadedBatch[], reference: LoadedBatch): void {
  for (const b of loaded) {
    const grades = hasGrades(b.kind) && hasGrades(reference.kind);
    const baselines = hasBaselines(b.kind) && hasBaselines(reference.kind);
    if (!grades && !baselines) {
      throw new ProctorError(
        'USAGE',
        `--compare: batch ${b.batch.id} is ${kindText(b.kind)} and ${reference.batch.id} is ${kindText(reference.kind)}; compare batches of one kind`,
      );
    }
  }
}

/** The report of `loaded`, compared with `reference` when it is not null. */
export function reportObject(
  loaded: readonly LoadedBatch[],
  reference: LoadedBatch | null,
): ReportObject {
  if (reference !== null) checkComparable(loaded, reference);
  const grades = loaded.filter((b) => hasGrades(b.kind));
  const baselines = loaded.filter((b) => hasBaselines(b.kind));
  const object: ReportObject = { batches: grades.map((b) => b.summary) };
  if (reference !== null && grades.length > 0 && hasGrades(reference.kind)) {
    object.comparisons = grades.map((b) =>
      compareBatches(b.batch.id, b.rows, reference.batch.id, reference.rows),
    );
  }
  if (baselines.length > 0) {
    object.baselines = baselines.map((b) => b.baselineSummary);
    if (reference !== null && hasBaselines(reference.kind)) {
      object.baselineComparisons = baselines.map((b) =>
        compareBaselines(b.batch.id, b.baselineRows, reference.batch.id, reference.baselineRows),
      );
    }
  }
  return object;
}
