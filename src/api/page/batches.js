// @ts-check
// The batch list: each batch's progress (counts by status, finished/total, rate, ETA), a
// link to its jobs and a Results button.
import { pages } from './client.js';
import { button, byId, el, render } from './dom.js';
import { formatDuration, formatTime } from './format.js';
import { openJobs } from './jobs.js';
import { openResults } from './results.js';
import { state } from './state.js';

const BATCH_PAGE = 50;
export const MAX_BATCH_PAGES = 10;
export const STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled'];

export async function loadBatches() {
  const { items, nextCursor } = await pages(
    '/api/batches',
    { limit: BATCH_PAGE },
    state.batchPages,
  );
  state.batchList = items.map((b) => ({ id: b.id, label: b.label }));
  render(byId('batches').tBodies[0], [state.batch, state.results, items], () =>
    items.map(batchRow),
  );
  byId('batches-empty').hidden = items.length > 0;
  byId('batches-more').hidden = !nextCursor || state.batchPages >= MAX_BATCH_PAGES;
}

/** @param {any} batch */
function batchRow(batch) {
  const row = el('tr');
  row.dataset.batchId = batch.id;
  if (batch.id === state.batch || batch.id === state.results) row.classList.add('selected');
  const label = el('td');
  label.append(button(batch.label || batch.id, () => openJobs(batch.id, batch.label), 'link'));
  label.title = batch.id;
  row.append(label, el('td', batch.finished + '/' + batch.total, 'finished'));
  for (const status of STATUSES) {
    const n = batch.counts ? batch.counts[status] : 0;
    row.append(el('td', n, 'num count-' + status + (n > 0 ? '' : ' zero')));
  }
  const rate = typeof batch.ratePerMinute === 'number' ? batch.ratePerMinute.toFixed(1) : '–';
  row.append(el('td', rate, 'num rate'), el('td', formatDuration(batch.etaSeconds), 'num eta'));
  row.append(el('td', formatTime(batch.createdAt), 'time'));
  const actions = el('td', null, 'actions');
  actions.append(button('Results', () => openResults(batch.id), 'open-results'));
  row.append(actions);
  return row;
}
