// @ts-check
// The status page: batches and their progress, a batch's jobs, one job's artifacts, oracle log
// and trajectory, a batch's results and a comparison of two batches, all read from the local JSON API.
// Plain ES modules, no build step, served under `default-src 'self'`: this module wires the
// controls and runs the refresh loop; each view lives in a module of its own.
import { byId, errorText, setMessage, setStatus } from './dom.js';
import { loadBatches, MAX_BATCH_PAGES } from './batches.js';
import { loadCompare, startCompare } from './compare.js';
import { loadJob, loadLog } from './job.js';
import { cancelBatch, loadJobs, openJobs } from './jobs.js';
import { loadResults, startResults } from './results.js';
import { loadTrajectory } from './trajectory.js';
import { hooks, state } from './state.js';

const REFRESH_MS = 2000;

let busy = false;
let again = false;

/**
 * Reloads everything shown, one reload at a time: a call made meanwhile (a click) runs
 * once more right after, so that it sees the new selection without waiting for the timer.
 */
async function refresh() {
  if (busy) {
    again = true;
    return;
  }
  busy = true;
  try {
    do {
      again = false;
      try {
        // The batch list first: the results chart and Compare read the batches it lists.
        await loadBatches();
        await Promise.all([loadJobs(), loadJob(), loadResults(), loadCompare()]);
        setStatus('Updated ' + new Date().toLocaleTimeString());
      } catch (error) {
        setStatus(errorText(error), true);
      }
    } while (again);
  } finally {
    busy = false;
  }
}

async function loop() {
  await refresh();
  setTimeout(() => void loop(), REFRESH_MS);
}

function start() {
  hooks.refresh = () => void refresh();
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
    if (state.batchPages < MAX_BATCH_PAGES) state.batchPages++;
    void refresh();
  });
  byId('cancel-batch').addEventListener('click', () => void cancelBatch());
  byId('log-more').addEventListener('click', () => {
    loadLog(state.view, false).catch((error) => setMessage(errorText(error), true));
  });
  for (const [id, fromStart] of /** @type {const} */ ([
    ['trajectory-open', true],
    ['trajectory-more', false],
  ])) {
    byId(id).addEventListener('click', () => {
      loadTrajectory(state.view, fromStart).catch((error) => setMessage(errorText(error), true));
    });
  }
  startResults();
  startCompare();
  void loop();
}

start();
