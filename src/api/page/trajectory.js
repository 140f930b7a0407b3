// @ts-check
// An agent solve's trajectory (the model proxy's record of every exchange): its totals and stop,
// then one row per step, each opening onto what the model answered (its messages and tool
// calls) or why the step was refused. Read from /api/jobs/:id/trajectory/steps a page of steps
// at a time, and bounded like the oracle log: loading more past MAX_SHOWN_STEPS drops the
// oldest. Everything in a trajectory is the agent's or the model's text, shown as text only.
import { api, ApiError, query, segment } from './client.js';
import { button, byId, el, figureRows } from './dom.js';
import { formatBytes, msText } from './format.js';
import { state } from './state.js';

/** Steps per request (the API allows 1..200). */
const STEP_PAGE = 100;
/** The step list keeps at most this many rows; loading more drops the oldest. */
const MAX_SHOWN_STEPS = 1000;
/** Columns of a step row, which a step's detail row spans. */
const COLUMNS = 9;

const NONE = 'No trajectory for this job (only agent solves have one).';

/** Forgets the trajectory shown: a new job is opening. */
export function resetTrajectory() {
  state.trajectoryId = null;
  state.trajectoryOffset = null;
  byId('trajectory-note').textContent = '';
  byId('trajectory-note').classList.remove('error');
  byId('trajectory-open').hidden = true;
  byId('trajectory').hidden = true;
  byId('trajectory-totals').tBodies[0].replaceChildren();
  byId('trajectory-steps').tBodies[0].replaceChildren();
  byId('trajectory-more').hidden = true;
}

/**
 * Called with each refresh of the job: offers the job's trajectory (its artifact, or null
 * when it has none), once per artifact, leaving one already open alone.
 * @param {any | null} artifact
 */
export function offerTrajectory(artifact) {
  const id = artifact ? artifact.id : null;
  if (id === state.trajectoryId && byId('trajectory-note').textContent !== '') return;
  resetTrajectory();
  state.trajectoryId = id;
  if (!artifact) {
    byId('trajectory-note').textContent = NONE;
    return;
  }
  byId('trajectory-note').textContent = 'trajectory.json, ' + formatBytes(artifact.size);
  byId('trajectory-open').hidden = false;
}

/**
 * Shows the trajectory from its first step, or appends its next steps; false when the view
 * moved on meanwhile.
 * @param {number} view
 * @param {boolean} fromStart
 */
export async function loadTrajectory(view, fromStart) {
  const offset = fromStart ? 0 : state.trajectoryOffset;
  if (offset === null || state.jobId === null) return true;
  const note = byId('trajectory-note');
  const open = byId('trajectory-open');
  const more = byId('trajectory-more');
  open.disabled = true;
  more.disabled = true;
  try {
    const answer = await api(
      '/api/jobs/' +
        segment(state.jobId) +
        '/trajectory/steps' +
        query({ offset, limit: STEP_PAGE }),
    );
    if (view !== state.view) return false;
    open.hidden = true;
    byId('trajectory').hidden = false;
    byId('trajectory-totals').tBodies[0].replaceChildren(...figureRows(totalsRows(answer)));
    const tbody = byId('trajectory-steps').tBodies[0];
    if (fromStart) tbody.replaceChildren();
    answer.steps.forEach((/** @type {any} */ step, /** @type {number} */ i) =>
      tbody.append(stepRow(step, answer.offset + i)),
    );
    // Each step is its row and, once opened, its detail row: drop whole steps, oldest first.
    let dropped = false;
    while (tbody.querySelectorAll('tr.step').length > MAX_SHOWN_STEPS) {
      const first = tbody.querySelector('tr.step');
      const detail = first.nextElementSibling;
      if (detail && detail.classList.contains('step-detail')) detail.remove();
      first.remove();
      dropped = true;
    }
    state.trajectoryOffset = answer.nextOffset;
    note.classList.remove('error');
    note.textContent = shownText(answer, tbody, dropped);
    more.hidden = answer.nextOffset === null;
    return true;
  } catch (error) {
    if (view !== state.view) return false;
    if (error instanceof ApiError && error.status === 404 && error.code === 'ARTIFACT_NOT_FOUND') {
      resetTrajectory();
      note.textContent = NONE;
      return true;
    }
    // Too large to parse here, or not a trajectory: say why; it stays downloadable above.
    if (error instanceof ApiError) {
      note.textContent = error.code + ': ' + error.message;
      note.classList.add('error');
      return true;
    }
    throw error;
  } finally {
    open.disabled = false;
    more.disabled = false;
  }
}

/**
 * `Steps 1–100 of 340 shown; 240 not loaded`, and what the proxy did not keep.
 * @param {any} answer
 * @param {HTMLElement} tbody
 * @param {boolean} dropped
 */
function shownText(answer, tbody, dropped) {
  const rows = tbody.querySelectorAll('tr.step');
  if (rows.length === 0) {
    return 'No steps recorded' + (answer.droppedSteps > 0 ? keptText(answer) : '') + '.';
  }
  const first = Number(/** @type {HTMLElement} */ (rows[0]).dataset.position) + 1;
  const last = first + rows.length - 1;
  const left = answer.stepCount - last;
  return (
    `Steps ${first}–${last} of ${answer.stepCount} shown` +
    (left > 0 ? `; ${left} more not loaded` : '') +
    (dropped || first > 1 ? ' (earlier steps dropped)' : '') +
    keptText(answer) +
    '.'
  );
}

/** @param {any} answer */
function keptText(answer) {
  return answer.droppedSteps > 0
    ? `; ${answer.droppedSteps} more step(s) were not kept by the proxy`
    : '';
}

/**
 * @param {{ inputTokens: number, cachedInputTokens: number, outputTokens: number } | null} usage
 */
function tokensText(usage) {
  if (usage === null) return 'unknown';
  const cached = usage.cachedInputTokens > 0 ? ` (${usage.cachedInputTokens} cached)` : '';
  return `${usage.inputTokens} in${cached}, ${usage.outputTokens} out`;
}

/** @param {number | null} usd */
const costText = (usd) => (usd === null ? 'unknown' : '$' + usd.toFixed(4));

/**
 * @param {any} answer
 * @returns {Array<[string, string, string]>}
 */
function totalsRows(answer) {
  const { totals, stop } = answer;
  /** @type {Array<[string, string, string]>} */
  const rows = [
    ['turns', 'Turns', `${totals.turns} (${totals.requests} request(s))`],
    ['tokens', 'Tokens', tokensText(totals.usage)],
    ['cost', 'Cost', costText(totals.costUsd)],
    ['stop', 'Stop', stop ? `${stop.reason} (${stop.limit}): ${stop.detail}` : 'none'],
  ];
  return rows;
}

/**
 * A step's row; its first cell opens the detail row, built on first opening.
 * @param {any} step
 * @param {number} position where the step is in the trajectory's list, from 0
 */
function stepRow(step, position) {
  const row = el('tr', null, 'step outcome-' + step.outcome);
  row.dataset.step = String(step.index);
  row.dataset.position = String(position);
  /** @type {HTMLElement | null} */
  let detail = null;
  const toggle = button(
    '▸ ' + step.index,
    () => {
      if (detail === null) {
        detail = detailRow(step);
        row.after(detail);
      } else {
        detail.hidden = !detail.hidden;
      }
      const opened = !detail.hidden;
      toggle.textContent = (opened ? '▾ ' : '▸ ') + step.index;
      toggle.setAttribute('aria-expanded', String(opened));
    },
    'link',
  );
  toggle.setAttribute('aria-expanded', 'false');
  const index = el('td', null, 'index');
  index.append(toggle);
  const usage = step.usage;
  row.append(
    index,
    el('td', step.protocol ?? '–', 'protocol'),
    el('td', step.model ?? '–', 'model'),
    el('td', step.outcome, 'outcome'),
    el('td', step.status, 'num status'),
    el('td', usage ? usage.inputTokens : '?', 'num tokens-in'),
    el('td', usage ? usage.outputTokens : '?', 'num tokens-out'),
    el('td', step.costUsd === null ? '?' : costText(step.costUsd), 'num cost'),
    el('td', msText(step.durationMs), 'num duration'),
  );
  return row;
}

/**
 * What the model answered at this step, its tool calls, and the step's error.
 * @param {any} step
 */
function detailRow(step) {
  const row = el('tr', null, 'step-detail');
  row.dataset.step = String(step.index);
  const cell = /** @type {HTMLTableCellElement} */ (el('td'));
  cell.colSpan = COLUMNS;
  const facts = [];
  if (step.requestedModel !== null && step.requestedModel !== step.model) {
    facts.push('asked for ' + step.requestedModel);
  }
  if (step.finishReason !== null) facts.push('finish: ' + step.finishReason);
  if (step.stream) facts.push('streamed');
  if (step.firstByteMs !== null) facts.push('first byte after ' + msText(step.firstByteMs));
  if (step.usage && step.usage.cachedInputTokens > 0) {
    facts.push(step.usage.cachedInputTokens + ' input tokens cached');
  }
  if (step.droppedMessages > 0) facts.push(step.droppedMessages + ' message(s) not kept');
  if (facts.length > 0) cell.append(el('p', facts.join(' · '), 'note'));
  if (step.error !== null) cell.append(el('p', 'Error: ' + step.error, 'step-error error'));
  for (const message of step.output) cell.append(messageBlock(message));
  if (step.output.length === 0 && step.error === null) {
    cell.append(el('p', 'No answer recorded.', 'note'));
  }
  row.append(cell);
  return row;
}

/** @param {any} message */
function messageBlock(message) {
  const block = el('div', null, 'message role-' + message.role);
  block.append(el('span', message.role, 'role'));
  if (message.content !== '') block.append(el('pre', message.content, 'content'));
  for (const call of message.toolCalls ?? []) {
    const item = el('div', null, 'tool-call');
    item.append(el('span', '→ ', 'note'), el('code', call.name, 'tool-name'));
    item.append(el('pre', call.arguments, 'tool-arguments'));
    block.append(item);
  }
  return block;
}
