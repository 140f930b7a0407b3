// @ts-check
// A batch's jobs (or every job): status, attempt, verdict, reason and detail per job, with
// Cancel buttons, and the batch Cancel that asks for a second click.
import { pages, post, segment } from './client.js';
import { button, byId, clear, el, errorText, render, setMessage } from './dom.js';
import { pullText, summarizeOutcomes } from './format.js';
import { openJob } from './job.js';
import { refresh, state } from './state.js';
import { suspiciousText, verdictOf } from './verdict.js';

/** Jobs per request (the API allows 1..200). */
const JOB_PAGE = 100;
/** Load more stops here; filter by status to see further. */
export const MAX_JOB_PAGES = 10;
/** How long the batch Cancel button waits for its confirming second click. */
const ARM_MS = 4000;
const STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled'];
const ACTIVE = ['queued', 'running'];

/**
 * @param {string | null} batchId
 * @param {string | null} label
 */
export function openJobs(batchId, label) {
  state.batch = batchId;
  state.jobPages = 1;
  state.view++;
  byId('jobs-title').textContent = batchId === null ? 'All jobs' : 'Jobs of ' + (label || batchId);
  byId('jobs-panel').hidden = false;
  disarm();
  byId('cancel-batch').hidden = batchId === null;
  const tbody = byId('jobs').tBodies[0];
  clear(tbody);
  refresh();
}

/** @param {any} job */
function jobRow(job) {
  const row = el('tr');
  row.dataset.jobId = String(job.id);
  if (job.id === state.jobId) row.classList.add('selected');

  const id = el('td');
  id.append(button('#' + job.id, () => openJob(job.id), 'link'));
  const status = STATUSES.includes(job.status) ? job.status : 'unknown';
  const statusCell = el('td', job.status, 'status status-' + status);
  if (job.cancelRequested && ACTIVE.includes(job.status)) {
    statusCell.append(el('span', ' (cancel requested)', 'note'));
  }
  row.append(id, el('td', job.kind, 'kind'), statusCell);
  row.append(el('td', job.attempt + '/' + job.maxAttempts, 'num attempt'));

  const v = verdictOf(job);
  const verdict = el('td', v.verdict, 'verdict');
  if (v.verdict === 'PASS' || v.verdict === 'FAIL') verdict.classList.add('verdict-' + v.verdict);
  if (v.validity) verdict.append(el('span', (v.verdict ? ' · ' : '') + v.validity, 'validity'));
  const flagged = suspiciousText(v);
  if (flagged) verdict.append(' ', el('span', flagged, 'badge suspicious'));
  // A running job waiting on its image's pull shows how far the pull has come.
  const pulling = job.status === 'running' && job.pull ? pullText(job.pull) : '';
  const detailText = pulling || v.detail || (job.lastError ? job.lastError : '');
  const detail = el('td', detailText, 'detail' + (pulling ? ' pull' : v.detail ? '' : ' error'));
  detail.title = detailText;
  row.append(verdict, el('td', v.reason, 'reason'), detail);

  const actions = el('td', null, 'actions');
  if (ACTIVE.includes(job.status)) {
    const cancel = button('Cancel', () => void cancelJob(job.id, cancel), 'danger');
    if (job.cancelRequested) cancel.disabled = true;
    actions.append(cancel);
  }
  row.append(actions);
  return row;
}

export async function loadJobs() {
  if (state.batch === undefined) return;
  const view = state.view;
  const params = {
    batch: state.batch === null ? undefined : state.batch,
    status: byId('jobs-status').value,
    limit: JOB_PAGE,
  };
  const { items, nextCursor } = await pages('/api/jobs', params, state.jobPages);
  if (view !== state.view) return;
  render(byId('jobs').tBodies[0], [state.jobId, items], () => items.map(jobRow));
  byId('jobs-empty').hidden = items.length > 0;
  byId('jobs-more').hidden = !nextCursor || state.jobPages >= MAX_JOB_PAGES;
}

/**
 * @param {number} id
 * @param {HTMLButtonElement} control
 */
async function cancelJob(id, control) {
  control.disabled = true;
  try {
    const answer = await post('/api/jobs/' + segment(id) + '/cancel');
    setMessage('Job #' + id + ': ' + answer.outcome);
  } catch (error) {
    control.disabled = false;
    setMessage('Cancel of job #' + id + ' failed: ' + errorText(error), true);
  }
  refresh();
}

// The batch Cancel asks for a second click instead of a dialog: one stray click must not
// cancel a whole suite.
/** @type {ReturnType<typeof setTimeout> | null} */
let armTimer = null;

export function disarm() {
  if (armTimer !== null) clearTimeout(armTimer);
  armTimer = null;
  const control = byId('cancel-batch');
  control.classList.remove('armed');
  control.textContent = 'Cancel batch';
}

export async function cancelBatch() {
  const control = byId('cancel-batch');
  const batchId = state.batch;
  if (typeof batchId !== 'string') return;
  if (armTimer === null) {
    control.classList.add('armed');
    control.textContent = 'Confirm: cancel every unfinished job';
    armTimer = setTimeout(disarm, ARM_MS);
    return;
  }
  disarm();
  control.disabled = true;
  try {
    const answer = await post('/api/batches/' + segment(batchId) + '/cancel');
    setMessage('Batch cancel: ' + summarizeOutcomes(answer.outcomes));
  } catch (error) {
    setMessage('Cancel of the batch failed: ' + errorText(error), true);
  } finally {
    control.disabled = false;
  }
  refresh();
}
