// @ts-check
// A batch compared with a reference batch, from GET /api/report?batch=B&compare=A: the four
// cells (both pass, both fail, pass→fail, fail→pass), the exact McNemar p, the difference in
// resolved rate with its interval, and a grid of the paired tasks coloured by flip. Two
// baseline sweeps: their counts and the tasks that changed validity or reason (baseline.js).
import { baselineCompareFigures, changedItem } from './baseline.js';
import { ApiError, api, query } from './client.js';
import { byId, clear, el, figureRows, render } from './dom.js';
import { differenceText } from './format.js';
import { labelOf, refresh, state } from './state.js';

/** The grid draws at most this many tasks; the counts above it cover them all. */
const MAX_GRID_TASKS = 5000;
const RELOAD_MS = 5000;
const FLIP_NAMES = {
  pass_to_fail: 'pass→fail',
  fail_to_pass: 'fail→pass',
  both_pass: 'both pass',
  both_fail: 'both fail',
};

let loaded = { key: '', at: 0 };

/**
 * @param {string} batch
 * @param {string} reference
 */
export function openCompare(batch, reference) {
  state.compare = { batch, reference };
  state.view++;
  loaded = { key: '', at: 0 };
  byId('compare-panel').hidden = false;
  byId('compare-title').textContent = labelOf(batch) + ' compared with ' + labelOf(reference);
  clear(byId('compare-figures').tBodies[0]);
  clear(byId('flip-grid'));
  clear(byId('baseline-compare-figures').tBodies[0]);
  clear(byId('baseline-changed'));
  byId('compare-note').textContent = 'Loading…';
  refresh();
}

/**
 * @param {any} c a comparison
 * @returns {Array<[string, string, string]>}
 */
function figures(c) {
  return [
    ['paired', 'Tasks scored in both', String(c.paired)],
    ['unpaired', 'Not paired', String(c.unpaired)],
    ['bothPass', 'Both pass', String(c.bothPass)],
    ['bothFail', 'Both fail', String(c.bothFail)],
    ['passToFail', 'Pass → fail', String(c.passToFail)],
    ['failToPass', 'Fail → pass', String(c.failToPass)],
    ['mcnemarP', 'Exact McNemar p', c.mcnemarP.toPrecision(4)],
    ['difference', 'Difference in resolved rate (95 %)', differenceText(c.difference)],
  ];
}

/** @param {{ task: string, flip: keyof typeof FLIP_NAMES }} t */
function cell(t) {
  const node = el('span', t.task, 'flip flip-' + t.flip);
  node.title = t.task + ': ' + FLIP_NAMES[t.flip];
  node.dataset.task = t.task;
  node.dataset.flip = t.flip;
  node.setAttribute('role', 'listitem');
  return node;
}

export async function loadCompare() {
  const shown = state.compare;
  if (shown === null) return;
  const view = state.view;
  const key = JSON.stringify(shown);
  if (loaded.key === key && Date.now() - loaded.at < RELOAD_MS) return;
  let report;
  try {
    report = await api('/api/report' + query({ batch: shown.batch, compare: shown.reference }));
  } catch (error) {
    // A refusal (a sweep of baselines against a batch of grades: nothing to pair) is said
    // here, where it was asked for, and not asked again until the next reload.
    if (view !== state.view || !(error instanceof ApiError) || error.status !== 400) throw error;
    loaded = { key, at: Date.now() };
    byId('grade-compare').hidden = false;
    byId('baseline-compare').hidden = true;
    clear(byId('compare-figures').tBodies[0]);
    clear(byId('flip-grid'));
    byId('compare-note').textContent = 'Cannot compare: ' + error.message;
    byId('compare-note').classList.add('error');
    return;
  }
  if (view !== state.view) return;
  loaded = { key, at: Date.now() };
  byId('compare-note').classList.remove('error');
  const c = report.comparisons ? report.comparisons[0] : undefined;
  const bc = report.baselineComparisons ? report.baselineComparisons[0] : undefined;
  const s = report.batches[0] || report.baselines[0];
  byId('compare-title').textContent =
    (s.label || s.batch) + ' compared with ' + labelOf(shown.reference);
  byId('grade-compare').hidden = !c;
  if (c) {
    render(byId('compare-figures').tBodies[0], c, () => figureRows(figures(c)));
    const tasks = c.tasks.slice(0, MAX_GRID_TASKS);
    byId('compare-note').textContent =
      c.tasks.length > tasks.length
        ? `The grid shows the first ${tasks.length} of ${c.tasks.length} paired tasks.`
        : c.paired === 0
          ? 'No task is scored in both batches.'
          : `${c.paired} paired tasks, by task id.`;
    render(byId('flip-grid'), tasks, () => tasks.map(cell));
  }
  byId('baseline-compare').hidden = !bc;
  if (bc) {
    render(byId('baseline-compare-figures').tBodies[0], bc, () =>
      figureRows(baselineCompareFigures(bc)),
    );
    byId('baseline-compare-note').textContent =
      bc.changed.length === 0
        ? 'No task changed validity or reason.'
        : `${bc.changed.length} tasks changed validity or reason: from the reference, to now.`;
    render(byId('baseline-changed'), bc.changed, () => bc.changed.map(changedItem));
  }
}

export function startCompare() {
  byId('compare-close').addEventListener('click', () => {
    state.compare = null;
    state.view++;
    byId('compare-panel').hidden = true;
    refresh();
  });
}
