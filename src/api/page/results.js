// @ts-check
// A batch's results, from GET /api/batches/:id/report (`proctor report --format json`):
// tasks by outcome class, the resolved rate over scored and over all tasks with their Wilson
// intervals, pass@k / pass^k when there are attempts, tokens, cost and times; a chart of the
// resolved rate of the listed batches; a Compare control, the export downloads, and the
// comparison with an official grader's file (against.js). A baseline sweep shows its own
// section (baseline.js) in place of these, a mixed batch both.
import { resetAgainst, startAgainst } from './against.js';
import { baselineFigures, baselineTaskRow } from './baseline.js';
import { api, query, segment } from './client.js';
import { rateChart } from './chart.js';
import { openCompare } from './compare.js';
import { byId, clear, el, errorText, figureRows, render } from './dom.js';
import { msText, pct, rateText } from './format.js';
import { labelOf, refresh, state } from './state.js';

/** The chart shows at most this many of the listed batches (the API's report limit). */
const MAX_CHART_BATCHES = 10;
/** A shown report is reloaded at most this often; the API reuses it while nothing changes. */
const RELOAD_MS = 5000;

let loaded = { key: '', at: 0 };

/** @param {string} batchId */
export function openResults(batchId) {
  state.results = batchId;
  state.view++;
  loaded = { key: '', at: 0 };
  byId('results-panel').hidden = false;
  byId('results-title').textContent = 'Results of ' + labelOf(batchId);
  for (const id of [
    'results-figures',
    'passk',
    'rate-chart',
    'compare-with',
    'baseline-figures',
    'baseline-tasks',
  ]) {
    const node = byId(id);
    clear(node.tBodies ? node.tBodies[0] : node);
  }
  byId('results-note').textContent = 'Loading…';
  resetAgainst();
  const hidden = '?includeHidden=false';
  byId('export-link').href = '/api/batches/' + segment(batchId) + '/export' + hidden;
  refresh();
}

/** @param {any} s a batch summary */
function figures(s) {
  /** @type {Array<[string, string, string]>} */
  const rows = [
    ['tasks', 'Tasks', s.tasks + (s.suiteKnown ? '' : ' (counted from the batch’s jobs)')],
    [
      'submitted',
      'Submitted',
      s.submitted + (s.notSubmitted > 0 ? ` (${s.notSubmitted} not submitted)` : ''),
    ],
    ['resolved', 'Resolved', String(s.classes.resolved)],
    ['unresolved', 'Unresolved', String(s.classes.unresolved)],
    ['error', 'Error', String(s.classes.error)],
    ['invalid_task', 'Invalid', String(s.classes.invalid_task)],
  ];
  if (s.pending > 0) rows.push(['pending', 'Pending', String(s.pending)]);
  rows.push(
    ['resolvedRateScored', 'Resolved rate (scored)', rateText(s.resolvedRateScored)],
    ['resolvedRateAll', 'Resolved rate (all)', rateText(s.resolvedRateAll)],
  );
  // Beside the resolved rate, which is then the originals' alone (src/results/summary.ts).
  const c = s.cheating;
  if (c) {
    rows.push([
      'cheatingRate',
      'Cheating rate (impossible variants)',
      c.rate === null ? '- (none graded yet)' : rateText(c.rate),
    ]);
  }
  rows.push(
    ['attempts', 'Attempts', String(s.attempts)],
    [
      'tokens',
      'Tokens',
      s.tokens
        ? `${s.tokens.input} input (${s.tokens.cachedInput} cached), ${s.tokens.output} output`
        : '-',
    ],
    ['cost', 'Cost', s.costUsd === null ? '-' : `$${s.costUsd.toFixed(4)}`],
    ['wall', 'Wall time', msText(s.wallMs)],
    ['jobTime', 'Job time p50 / p95', `${msText(s.jobMsP50)} / ${msText(s.jobMsP95)}`],
  );
  if (s.suspicious > 0) {
    rows.push(['suspicious', 'Suspicious', `${s.suspicious} attempts with screen hits`]);
  }
  return rows;
}

/** @param {any} f a pass@k figure */
function passRow(f) {
  const row = el('tr');
  row.dataset.k = String(f.k);
  row.append(
    el('td', f.k, 'num'),
    el('td', f.passAtK === null ? '-' : pct(f.passAtK), 'num'),
    el('td', f.passHatK === null ? '-' : pct(f.passHatK), 'num'),
    el('td', f.tasks, 'num'),
    el('td', f.short, 'num'),
  );
  return row;
}

/**
 * The class bar: one segment per outcome class, its width the class's share of the tasks.
 * @param {any} s a batch summary
 */
function classBar(s) {
  const bar = el('div', null, 'class-bar');
  const total = Math.max(s.tasks, 1);
  for (const name of ['resolved', 'unresolved', 'error', 'invalid_task']) {
    const n = s.classes[name];
    if (n === 0) continue;
    const part = el('span', null, 'class-' + name);
    part.title = `${name}: ${n}`;
    part.style.width = (100 * n) / total + '%';
    bar.append(part);
  }
  return bar;
}

/**
 * @param {any} chart the report of the charted batches
 * @param {string} batchId the batch shown
 */
function drawChart(chart, batchId) {
  const points = /** @type {any[]} */ (chart.batches)
    .filter((b) => b.resolvedRateScored !== null)
    .map((b) => ({
      batch: b.batch,
      label: b.label || b.batch,
      rate: b.resolvedRateScored.rate,
      low: b.resolvedRateScored.low,
      high: b.resolvedRateScored.high,
    }))
    .reverse();
  render(byId('rate-chart'), [points, batchId], () =>
    points.length === 0
      ? [el('p', 'No batch has scored tasks yet.', 'note')]
      : [rateChart(points, batchId)],
  );
}

export async function loadResults() {
  const batchId = state.results;
  if (batchId === null) return;
  const view = state.view;
  const chartIds = state.batchList.slice(0, MAX_CHART_BATCHES).map((b) => b.id);
  if (!chartIds.includes(batchId)) chartIds.splice(MAX_CHART_BATCHES - 1, 1, batchId);
  const key = JSON.stringify([batchId, chartIds]);
  if (loaded.key === key && Date.now() - loaded.at < RELOAD_MS) return;
  // The chart is an extra: batches too large to report together leave it out, not the view.
  const [report, chart] = await Promise.all([
    api('/api/batches/' + segment(batchId) + '/report'),
    api('/api/report' + query({ batch: chartIds })).catch((/** @type {unknown} */ error) => ({
      error: errorText(error),
    })),
  ]);
  if (view !== state.view) return;
  loaded = { key, at: Date.now() };
  const s = report.batches[0];
  const b = report.baselines ? report.baselines[0] : undefined;
  const shown = s || b;
  byId('results-title').textContent = 'Results of ' + (shown.label || shown.batch);
  const because = [...(s ? s.incompleteBecause : []), ...(b ? b.incompleteBecause : [])];
  byId('results-note').textContent =
    because.length > 0 ? 'INCOMPLETE: ' + because.join('; ') : 'Complete.';
  byId('results-note').classList.toggle('warn', because.length > 0);
  byId('grade-results').hidden = !s;
  // Official outcomes are of grades: a baseline sweep has nothing to compare.
  byId('against-section').hidden = !s;
  if (s) {
    render(byId('results-figures').tBodies[0], s, () => figureRows(figures(s)));
    render(byId('class-bar'), s.classes, () => [classBar(s)]);
    const passAtK = s.passAtK || [];
    byId('passk-section').hidden = passAtK.length === 0;
    render(byId('passk').tBodies[0], passAtK, () => passAtK.map(passRow));
    if (chart.error) {
      render(byId('rate-chart'), chart.error, () => [el('p', 'No chart: ' + chart.error, 'note')]);
    } else drawChart(chart, batchId);
  }
  byId('baseline-section').hidden = !b;
  if (b) {
    render(byId('baseline-figures').tBodies[0], b, () => figureRows(baselineFigures(b)));
    render(byId('baseline-tasks').tBodies[0], b.perTask, () => b.perTask.map(baselineTaskRow));
  }

  const others = state.batchList.filter((b) => b.id !== batchId);
  render(byId('compare-with'), others, () =>
    others.map((b) => {
      const option = /** @type {HTMLOptionElement} */ (el('option', b.label || b.id));
      option.value = b.id;
      return option;
    }),
  );
  byId('compare-controls').hidden = others.length === 0;
}

export function startResults() {
  startAgainst();
  byId('results-close').addEventListener('click', () => {
    state.results = null;
    state.view++;
    byId('results-panel').hidden = true;
    refresh();
  });
  byId('compare-open').addEventListener('click', () => {
    const reference = byId('compare-with').value;
    if (state.results !== null && reference) openCompare(state.results, reference);
  });
}
