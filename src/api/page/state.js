// @ts-check
// What the page shows, shared by its views, and how a view asks for a refresh.

export const state = {
  batchPages: 1,
  /** The batches listed, newest first: `{ id, label }` each (for the chart and Compare). */
  batchList: /** @type {Array<{ id: string, label: string | null }>} */ ([]),
  /** undefined: no job list; null: all jobs; otherwise the batch id shown. */
  batch: /** @type {string | null | undefined} */ (undefined),
  jobPages: 1,
  /** The job whose detail panel is open, or null. */
  jobId: /** @type {number | null} */ (null),
  /** The log artifact shown, so that a refresh reloads the log only when it changes. */
  logId: /** @type {string | null} */ (null),
  /** Where the next log slice starts; null at the end or when there is no log. */
  logOffset: /** @type {number | null} */ (null),
  /** The trajectory artifact offered (its id), or null: the job has none, or none is shown. */
  trajectoryId: /** @type {string | null} */ (null),
  /** Where the next page of trajectory steps starts; null at the end or before it opens. */
  trajectoryOffset: /** @type {number | null} */ (null),
  /** The batch whose results are shown, or null. */
  results: /** @type {string | null} */ (null),
  /** The comparison shown: a batch and its reference, or null. */
  compare: /** @type {{ batch: string, reference: string } | null} */ (null),
  /** Bumped whenever the selection changes, so late answers for an old view are dropped. */
  view: 0,
};

/** Set by app.js: reloads everything shown (at once, or right after a reload in progress). */
export const hooks = { refresh: () => {} };

export function refresh() {
  hooks.refresh();
}

/**
 * A batch's label as listed, else its id.
 * @param {string} batchId
 */
export function labelOf(batchId) {
  const found = state.batchList.find((b) => b.id === batchId);
  return (found && found.label) || batchId;
}
