// The status page: batches and their progress, a batch's jobs, and one job's artifacts and
// oracle log, all read from the local JSON API. Plain DOM code, no build step. It runs under
// `default-src 'self'`, and every value from the API is inserted as text (textContent, never
// innerHTML) and every path segment built with encodeURIComponent: a task's detail string is
// data, never markup.

const REFRESH_MS = 2000;
/** Jobs per request (the API allows 1..200). */
const JOB_PAGE = 100;
/** Load more stops here; filter by status to see further. */
const MAX_JOB_PAGES = 10;
const BATCH_PAGE = 50;
const MAX_BATCH_PAGES = 10;
/** The log view keeps at most this many characters; loading more drops the oldest. */
const MAX_LOG_CHARS = 512 * 1024;
/** How long the batch Cancel button waits for its confirming second click. */
const ARM_MS = 4000;

const STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled'];
const ACTIVE = ['queued', 'running'];

const byId = (id) => document.getElementById(id);

const state = {
  batchPages: 1,
  /** undefined: no job list; null: all jobs; otherwise the batch id shown. */
  batch: undefined,
  jobPages: 1,
  /** The job whose detail panel is open, or null. */
  jobId: null,
  /** The log artifact shown, so that a refresh reloads the log only when it changes. */
  logId: null,
  /** Where the next log slice starts; null at the end or when there is no log. */
  logOffset: null,
  /** Bumped whenever the selection changes, so late answers for an old view are dropped. */
  view: 0,
  busy: false,
  again: false,
};

// ---------------------------------------------------------------------------------------
// The API

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Fetches JSON; a non-2xx answer becomes an ApiError with the API's code and message. */
async function api(path, init = {}) {
  const response = await fetch(path, {
    ...init,
    headers: { Accept: 'application/json', ...init.headers },
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const error = body && body.error ? body.error : {};
    throw new ApiError(
      response.status,
      error.code || 'HTTP_' + response.status,
      error.message || response.statusText || 'request failed',
    );
  }
  return body;
}

/** Every mutation is a POST of an empty JSON object. */
function post(path) {
  return api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
}

function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text ? '?' + text : '';
}

/**
 * Follows cursors for up to `pageCount` pages; returns the items and the cursor after them.
 * A refresh re-reads every page loaded so far (a bounded number), so that no row further
 * down keeps a stale status.
 */
async function pages(path, params, pageCount) {
  const items = [];
  let cursor = null;
  for (let i = 0; i < pageCount; i++) {
    const page = await api(path + query({ ...params, cursor }));
    items.push(...page.items);
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return { items, nextCursor: cursor };
}

// ---------------------------------------------------------------------------------------
// Small DOM helpers

/** An element with text content and optional class names; never parses markup. */
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

/** What each container shows, so that a refresh that changes nothing leaves it alone. */
const shown = new Map();

/**
 * Replaces a container's children only when `data` differs from what they show: rebuilding
 * them every two seconds would swap a button or link out from under a click in progress.
 */
function render(container, data, build) {
  const key = JSON.stringify(data);
  if (shown.get(container) === key) return;
  shown.set(container, key);
  container.replaceChildren(...build());
}

function button(text, onClick, className) {
  const node = el('button', text, className);
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/** The refresh line: when the page last heard from the API, or why it could not. */
function setStatus(text, isError = false) {
  const status = byId('status');
  status.textContent = text;
  status.classList.toggle('error', isError);
}

/** The answer to the user's last action (a cancel); stays until the next one. */
function setMessage(text, isError = false) {
  const message = byId('message');
  message.textContent = text;
  message.classList.toggle('error', isError);
}

function errorText(error) {
  if (error instanceof ApiError) return error.code + ': ' + error.message;
  return error instanceof Error ? error.message : String(error);
}

function formatTime(ms) {
  return typeof ms === 'number' ? new Date(ms).toLocaleString() : '–';
}

function formatDuration(seconds) {
  if (seconds === null || seconds === undefined) return '?';
  if (seconds < 60) return Math.round(seconds) + 's';
  if (seconds < 3600) {
    return Math.floor(seconds / 60) + 'm' + String(Math.round(seconds % 60)).padStart(2, '0') + 's';
  }
  const minutes = String(Math.floor((seconds % 3600) / 60)).padStart(2, '0');
  return Math.floor(seconds / 3600) + 'h' + minutes + 'm';
}

function formatBytes(n) {
  if (n < 1024) return n + ' B';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KiB';
  return (n / (1024 * 1024)).toFixed(1) + ' MiB';
}

/** Summarises a cancel answer's outcomes, whether keyed by job (id → outcome) or counted. */
function summarizeOutcomes(outcomes) {
  const counts = new Map();
  for (const [key, value] of Object.entries(outcomes || {})) {
    const [name, n] = typeof value === 'number' ? [key, value] : [String(value), 1];
    if (n > 0) counts.set(name, (counts.get(name) || 0) + n);
  }
  const parts = [...counts].map(([name, n]) => name + ' ' + n);
  return parts.length > 0 ? parts.join(', ') : 'nothing to cancel';
}

// ---------------------------------------------------------------------------------------
// Batches

async function loadBatches() {
  const { items, nextCursor } = await pages(
    '/api/batches',
    { limit: BATCH_PAGE },
    state.batchPages,
  );
  render(byId('batches').tBodies[0], [state.batch, items], () => items.map(batchRow));
  byId('batches-empty').hidden = items.length > 0;
  byId('batches-more').hidden = !nextCursor || state.batchPages >= MAX_BATCH_PAGES;
}

function batchRow(batch) {
  const row = el('tr');
  row.dataset.batchId = batch.id;
  if (batch.id === state.batch) row.classList.add('selected');
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
  return row;
}

// ---------------------------------------------------------------------------------------
// Jobs

function openJobs(batchId, label) {
  state.batch = batchId;
  state.jobPages = 1;
  state.view++;
  byId('jobs-title').textContent = batchId === null ? 'All jobs' : 'Jobs of ' + (label || batchId);
  byId('jobs-panel').hidden = false;
  disarm();
  byId('cancel-batch').hidden = batchId === null;
  const tbody = byId('jobs').tBodies[0];
  tbody.replaceChildren();
  shown.delete(tbody);
  void refresh();
}

/**
 * What a job's result says, as text: a grade's or baseline's verdict, a baseline's or validate
 * job's validity, the image identity, and a validate job's problems.
 */
function verdictOf(job) {
  const result = job.result && typeof job.result === 'object' ? job.result : {};
  const str = (v) => (typeof v === 'string' ? v : '');
  const image = result.image && typeof result.image === 'object' ? result.image : {};
  return {
    verdict: str(result.verdict),
    validity: str(result.validity),
    reason: str(result.reason),
    detail: str(result.detail),
    image:
      image.portable === true
        ? str(image.reference)
        : str(image.imageId) && 'local_build ' + str(image.imageId),
    problems: Array.isArray(result.problems) ? result.problems.map(str).join('\n') : '',
  };
}

/** `FAIL · quarantined`, `PASS`, or a validate job's `valid` alone. */
function verdictText(v) {
  return [v.verdict, v.validity].filter(Boolean).join(' · ');
}

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
  const detailText = v.detail || (job.lastError ? job.lastError : '');
  const detail = el('td', detailText, 'detail' + (v.detail ? '' : ' error'));
  detail.title = detailText;
  row.append(verdict, el('td', v.reason, 'reason'), detail);

  const actions = el('td', null, 'actions');
  if (ACTIVE.includes(job.status)) {
    const cancel = button('Cancel', () => cancelJob(job.id, cancel), 'danger');
    if (job.cancelRequested) cancel.disabled = true;
    actions.append(cancel);
  }
  row.append(actions);
  return row;
}

async function loadJobs() {
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

async function cancelJob(id, control) {
  control.disabled = true;
  try {
    const answer = await post('/api/jobs/' + encodeURIComponent(id) + '/cancel');
    setMessage('Job #' + id + ': ' + answer.outcome);
  } catch (error) {
    control.disabled = false;
    setMessage('Cancel of job #' + id + ' failed: ' + errorText(error), true);
  }
  await refresh();
}

// The batch Cancel asks for a second click instead of a dialog: one stray click must not
// cancel a whole suite.
let armTimer = null;

function disarm() {
  clearTimeout(armTimer);
  armTimer = null;
  const control = byId('cancel-batch');
  control.classList.remove('armed');
  control.textContent = 'Cancel batch';
}

async function cancelBatch() {
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
    const answer = await post('/api/batches/' + encodeURIComponent(batchId) + '/cancel');
    setMessage('Batch cancel: ' + summarizeOutcomes(answer.outcomes));
  } catch (error) {
    setMessage('Cancel of the batch failed: ' + errorText(error), true);
  } finally {
    control.disabled = false;
  }
  await refresh();
}

// ---------------------------------------------------------------------------------------
// One job: fields, artifacts, log

function openJob(id) {
  state.jobId = id;
  state.logId = null;
  state.view++;
  byId('job-panel').hidden = false;
  byId('job-title').textContent = 'Job #' + id;
  for (const container of [byId('job-fields'), byId('artifacts')]) {
    container.replaceChildren();
    shown.delete(container);
  }
  byId('log').textContent = '';
  byId('log-note').textContent = 'Loading…';
  byId('log-more').hidden = true;
  void refresh();
}

async function loadJob() {
  if (state.jobId === null) return;
  const view = state.view;
  const { job, artifacts } = await api('/api/jobs/' + encodeURIComponent(state.jobId));
  if (view !== state.view) return;

  byId('job-title').textContent = 'Job #' + job.id + ' · ' + job.kind;
  const v = verdictOf(job);
  const fields = [
    ['Status', job.status + (job.cancelRequested ? ' (cancel requested)' : '')],
    ['Attempt', job.attempt + ' of ' + job.maxAttempts],
    ['Batch', job.batchId],
    ['Parent', job.parentId === null ? null : '#' + job.parentId],
    ['Created', formatTime(job.createdAt)],
    ['Started', job.startedAt === null ? null : formatTime(job.startedAt)],
    ['Finished', job.finishedAt === null ? null : formatTime(job.finishedAt)],
    ['Verdict', verdictText(v)],
    ['Reason', v.reason],
    ['Detail', v.detail],
    ['Image', v.image],
    ['Problems', v.problems],
    [
      'Last error',
      job.lastError && job.errorCode ? `${job.errorCode}: ${job.lastError}` : job.lastError,
    ],
  ].filter(([, value]) => value !== null && value !== undefined && value !== '');
  render(byId('job-fields'), fields, () =>
    fields.flatMap(([name, value]) => [el('dt', name), el('dd', value)]),
  );
  render(byId('artifacts'), artifacts, () =>
    artifacts.length === 0 ? [el('li', 'none', 'note')] : artifacts.map(artifactItem),
  );

  // The oracle log is registered when a job ends: load it once it is there, from the start.
  const log = logArtifact(job, artifacts);
  if (!log) {
    state.logId = null;
    showNoLog();
  } else if (log.id !== state.logId && (await loadLog(view, true))) {
    state.logId = log.id;
  }
}

function artifactItem(artifact) {
  const link = el('a', artifact.name);
  link.href = '/api/artifacts/' + encodeURIComponent(artifact.id);
  link.download = artifact.name;
  const item = el('li');
  item.append(
    link,
    el('span', ' ' + artifact.mediaType + ', ' + formatBytes(artifact.size), 'note'),
  );
  return item;
}

/** The job's oracle log: the artifact its result names, else one called oracle.log. */
function logArtifact(job, artifacts) {
  const named = job.result && typeof job.result === 'object' ? job.result.log : undefined;
  return (
    artifacts.find((a) => a.id === named) || artifacts.find((a) => a.name === 'oracle.log') || null
  );
}

function showNoLog() {
  byId('log').textContent = '';
  byId('log-note').textContent = 'No log for this job.';
  byId('log-more').hidden = true;
  state.logOffset = null;
}

/** Shows the log from its start, or appends its next slice; false when the view moved on. */
async function loadLog(view, fromStart) {
  const pre = byId('log');
  const note = byId('log-note');
  const more = byId('log-more');
  const offset = fromStart ? 0 : state.logOffset;
  if (offset === null) return true;
  more.disabled = true;
  try {
    const slice = await api(
      '/api/jobs/' + encodeURIComponent(state.jobId) + '/log' + query({ offset }),
    );
    if (view !== state.view) return false;
    let text = (fromStart ? '' : pre.textContent) + slice.text;
    if (text.length > MAX_LOG_CHARS) text = text.slice(text.length - MAX_LOG_CHARS);
    pre.textContent = text;
    state.logOffset = slice.nextOffset;
    const shown = slice.nextOffset === null ? slice.size : slice.nextOffset;
    note.textContent =
      formatBytes(shown) +
      ' of ' +
      formatBytes(slice.size) +
      (text.length >= MAX_LOG_CHARS ? ' (older text dropped)' : '');
    more.hidden = slice.nextOffset === null;
    return true;
  } catch (error) {
    if (view !== state.view) return false;
    if (!(error instanceof ApiError && error.status === 404)) throw error;
    showNoLog();
    return true;
  } finally {
    more.disabled = false;
  }
}

// ---------------------------------------------------------------------------------------
// Refresh loop

/**
 * Reloads everything shown, one reload at a time: a call made meanwhile (a click) runs
 * once more right after, so that it sees the new selection without waiting for the timer.
 */
async function refresh() {
  if (state.busy) {
    state.again = true;
    return;
  }
  state.busy = true;
  try {
    do {
      state.again = false;
      try {
        await Promise.all([loadBatches(), loadJobs(), loadJob()]);
        setStatus('Updated ' + new Date().toLocaleTimeString());
      } catch (error) {
        setStatus(errorText(error), true);
      }
    } while (state.again);
  } finally {
    state.busy = false;
  }
}

async function loop() {
  await refresh();
  setTimeout(loop, REFRESH_MS);
}

function start() {
  byId('all-jobs').addEventListener('click', () => openJobs(null, null));
  byId('jobs-close').addEventListener('click', () => {
    state.batch = undefined;
    state.view++;
    byId('jobs-panel').hidden = true;
    void refresh();
  });
  byId('job-close').addEventListener('click', () => {
    state.jobId = null;
    state.view++;
    byId('job-panel').hidden = true;
    void refresh();
  });
  byId('jobs-status').addEventListener('change', () => {
    state.jobPages = 1;
    state.view++;
    void refresh();
  });
  byId('jobs-more').addEventListener('click', () => {
    state.jobPages++;
    void refresh();
  });
  byId('batches-more').addEventListener('click', () => {
    state.batchPages++;
    void refresh();
  });
  byId('cancel-batch').addEventListener('click', () => void cancelBatch());
  byId('log-more').addEventListener('click', () => {
    loadLog(state.view, false).catch((error) => setMessage(errorText(error), true));
  });
  void loop();
}

start();
