// @ts-check
// A baseline sweep in the results and comparison views, from the `baselines` and
// `baselineComparisons` of GET /api/batches/:id/report and GET /api/report (`proctor report
// --format json`): the counts by validity and by reason, runs, the tests most often flaky, the
// slowest tasks, the images and their time, and a line per task; of two sweeps, the tasks
// that changed validity or reason, and why. In the words of `proctor report`'s table.
import { el } from './dom.js';
import { msText } from './format.js';

/**
 * @param {any} s a baseline summary
 * @returns {Array<[string, string, string]>}
 */
export function baselineFigures(s) {
  /** @type {Array<[string, string, string]>} */
  const rows = [
    ['tasks', 'Tasks', String(s.tasks)],
    ['valid', 'Valid', String(s.validity.valid)],
    ['quarantined', 'Quarantined', String(s.validity.quarantined)],
    ['error', 'Error', String(s.validity.error)],
  ];
  if (s.pending > 0) rows.push(['pending', 'Pending', String(s.pending)]);
  if (s.cancelled > 0) rows.push(['cancelled', 'Cancelled', String(s.cancelled)]);
  rows.push(
    [
      'reasons',
      'Reasons',
      s.reasons.map((/** @type {any} */ r) => `${r.reason} ${r.tasks}`).join(', ') || '-',
    ],
    [
      'runs',
      'Runs',
      s.runs === null ? '-' : `${s.runs} per task; gold patch graded for ${s.goldGraded} tasks`,
    ],
    [
      'flaky',
      'Flaky tests',
      s.flakyTasks === 0
        ? 'none'
        : `in ${s.flakyTasks} tasks; most often: ` +
          s.flakyTests.map((/** @type {any} */ f) => `${f.test} (${f.tasks.length})`).join(', '),
    ],
    [
      'slowest',
      'Slowest',
      s.slowest.map((/** @type {any} */ t) => `${t.task} ${msText(t.jobMs)}`).join(', ') || '-',
    ],
    [
      'images',
      'Images',
      s.images.length === 0 ? '-' : `${s.images.length}, ${msText(s.imageMs)} getting them`,
    ],
    ['wall', 'Wall time', msText(s.wallMs)],
    ['jobTime', 'Job time p50 / p95', `${msText(s.jobMsP50)} / ${msText(s.jobMsP95)}`],
  );
  return rows;
}

/** @param {any} t a task of a baseline summary */
export function baselineTaskRow(t) {
  const row = el('tr');
  row.dataset.task = t.task;
  const shown = t.validity ?? t.status;
  const validity = el('td', shown, 'validity-' + shown);
  const detail = el('td', t.detail ?? '', 'detail');
  detail.title = t.detail ?? '';
  row.append(
    el('td', t.task),
    el('td', t.job, 'num'),
    validity,
    el('td', t.reason ?? '-'),
    el('td', t.flakyTests.length === 0 ? '-' : t.flakyTests.join(', ')),
    el('td', msText(t.jobMs), 'num'),
    detail,
  );
  return row;
}

/**
 * @param {any} c a baseline comparison
 * @returns {Array<[string, string, string]>}
 */
export function baselineCompareFigures(c) {
  return [
    ['paired', 'Tasks decided in both', String(c.paired)],
    ['unpaired', 'Not paired', String(c.unpaired)],
    ['bothValid', 'Both valid', String(c.bothValid)],
    ['bothQuarantined', 'Both quarantined', String(c.bothQuarantined)],
    ['validToQuarantined', 'Valid → quarantined', String(c.validToQuarantined)],
    ['quarantinedToValid', 'Quarantined → valid', String(c.quarantinedToValid)],
  ];
}

/** @param {{ validity: string, reason: string | null }} s */
const stateText = (s) =>
  s.validity + (s.reason !== null && s.reason !== 'PASS' ? ' ' + s.reason : '');

/** @param {any} t a changed task of a baseline comparison */
export function changedItem(t) {
  const item = el('li', `${t.task}: ${stateText(t.from)} → ${stateText(t.to)}`);
  item.dataset.task = t.task;
  item.dataset.to = t.to.validity;
  if (t.to.detail) item.append(el('span', ': ' + t.to.detail, 'note'));
  return item;
}
