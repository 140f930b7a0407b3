// @ts-check
// One job: its fields, its artifacts (download links), its oracle log, a bounded slice at a
// time, and an agent solve's trajectory (trajectory.js).
import { api, ApiError, query, segment } from './client.js';
import { byId, clear, el, render } from './dom.js';
import { formatBytes, formatTime } from './format.js';
import { verdictOf, verdictText } from './verdict.js';
import { refresh, state } from './state.js';
import { offerTrajectory, resetTrajectory } from './trajectory.js';

/** The log view keeps at most this many characters; loading more drops the oldest. */
const MAX_LOG_CHARS = 512 * 1024;

/** @param {number} id */
export function openJob(id) {
  state.jobId = id;
  state.logId = null;
  state.view++;
  byId('job-panel').hidden = false;
  byId('job-title').textContent = 'Job #' + id;
  for (const container of [byId('job-fields'), byId('artifacts')]) clear(container);
  // The job's debug export (`proctor export ID`), without hidden tests.
  byId('job-export').href = '/api/jobs/' + segment(id) + '/export?includeHidden=false';
  byId('log').textContent = '';
  byId('log-note').textContent = 'Loading…';
  byId('log-more').hidden = true;
  resetTrajectory();
  refresh();
}

export async function loadJob() {
  if (state.jobId === null) return;
  const view = state.view;
  const { job, artifacts } = await api('/api/jobs/' + segment(state.jobId));
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
    // Hits of the screen of the candidate: listed in the oracle log below.
    ['Suspicious', suspiciousField(v.suspicious)],
    ['Image', v.image],
    ['Problems', v.problems],
    [
      'Last error',
      job.lastError && job.errorCode ? `${job.errorCode}: ${job.lastError}` : job.lastError,
    ],
  ].filter(([, value]) => value !== null && value !== undefined && value !== '');
  render(byId('job-fields'), fields, () =>
    fields.flatMap(([name, value]) => {
      if (name !== 'Suspicious') return [el('dt', name), el('dd', value)];
      const dd = el('dd');
      if (v.suspicious) dd.append(el('span', 'suspicious', 'badge suspicious'), ' ');
      dd.append(value);
      return [el('dt', name), dd];
    }),
  );
  render(byId('artifacts'), artifacts, () =>
    artifacts.length === 0 ? [el('li', 'none', 'note')] : artifacts.map(artifactItem),
  );

  offerTrajectory(trajectoryArtifact(job, artifacts));

  // The oracle log is registered when a job ends: load it once it is there, from the start.
  const log = logArtifact(job, artifacts);
  if (!log) {
    state.logId = null;
    showNoLog();
  } else if (log.id !== state.logId && (await loadLog(view, true))) {
    state.logId = log.id;
  }
}

/** The Suspicious field: the screen's hit count, or null when it did not screen the job. */
/** @param {number | null} count */
function suspiciousField(count) {
  if (count === null) return null;
  if (count === 0) return 'none (the candidate was screened)';
  return count + (count === 1 ? ' hit' : ' hits') + ' of the screen, listed in the oracle log';
}

/** @param {any} artifact */
function artifactItem(artifact) {
  const link = /** @type {HTMLAnchorElement} */ (el('a', artifact.name));
  link.href = '/api/artifacts/' + segment(artifact.id);
  link.download = artifact.name;
  const item = el('li');
  item.append(
    link,
    el('span', ' ' + artifact.mediaType + ', ' + formatBytes(artifact.size), 'note'),
  );
  return item;
}

/** The job's oracle log: the artifact its result names, else one called oracle.log. */
/**
 * @param {any} job
 * @param {any[]} artifacts
 */
function logArtifact(job, artifacts) {
  const named = job.result && typeof job.result === 'object' ? job.result.log : undefined;
  return (
    artifacts.find((a) => a.id === named) || artifacts.find((a) => a.name === 'oracle.log') || null
  );
}

/** An agent solve's trajectory: the artifact its result names, else one called trajectory.json. */
/**
 * @param {any} job
 * @param {any[]} artifacts
 */
function trajectoryArtifact(job, artifacts) {
  const named = job.result && typeof job.result === 'object' ? job.result.trajectory : undefined;
  return (
    artifacts.find((a) => a.id === named) ||
    artifacts.find((a) => a.name === 'trajectory.json') ||
    null
  );
}

function showNoLog() {
  byId('log').textContent = '';
  byId('log-note').textContent = 'No log for this job.';
  byId('log-more').hidden = true;
  state.logOffset = null;
}

/** Shows the log from its start, or appends its next slice; false when the view moved on. */
/**
 * @param {number} view
 * @param {boolean} fromStart
 */
export async function loadLog(view, fromStart) {
  const pre = byId('log');
  const note = byId('log-note');
  const more = byId('log-more');
  const offset = fromStart ? 0 : state.logOffset;
  if (offset === null) return true;
  more.disabled = true;
  try {
    const slice = await api(
      '/api/jobs/' + segment(String(state.jobId)) + '/log' + query({ offset }),
    );
    if (view !== state.view) return false;
    let text = (fromStart ? '' : pre.textContent) + slice.text;
    if (text.length > MAX_LOG_CHARS) text = text.slice(text.length - MAX_LOG_CHARS);
    pre.textContent = text;
    state.logOffset = slice.nextOffset;
    const upTo = slice.nextOffset === null ? slice.size : slice.nextOffset;
    note.textContent =
      formatBytes(upTo) +
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
