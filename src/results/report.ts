// The `json` form of `proctor report`, as one object: the summaries of the batches and, with
// a reference batch, each one's comparison with it. Shared by the CLI (`--format json`) and
// the API (`GET /api/batches/:id/report`, `GET /api/report`), so that both give the same.
import type { Comparison } from './compare.js';
import { compareBatches } from './compare.js';
import type { LoadedBatch } from './load.js';
import type { BatchSummary } from './summary.js';

export interface ReportObject {
  batches: BatchSummary[];
  /** Present only when a reference batch was given. */
  comparisons?: Comparison[];
}

/** The report of `loaded`, compared with `reference` when it is not null. */
export function reportObject(
  loaded: readonly LoadedBatch[],
  reference: LoadedBatch | null,
): ReportObject {
  return {
    batches: loaded.map((b) => b.summary),
    ...(reference === null
      ? {}
      : {
          comparisons: loaded.map((b) =>
            compareBatches(b.batch.id, b.rows, reference.batch.id, reference.rows),
          ),
        }),
  };
}
