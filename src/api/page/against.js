// @ts-check
// A batch against the official grader (`proctor report ID --against FILE`): the user picks the
// official file — SWE-bench's run report, an sb-cli report, a results.json with a resolved
// list, or one or more per-instance report.json files (merged here) — the page reads it in the
// browser and posts its JSON to POST /api/batches/:id/against (the API has no file browser and
// stores nothing). Shown: agreement, Cohen's kappa, the disagreements with the tests that
// differ, the instances not comparable with why, and those the batch's suite lacks. Asked once
// per pick, not refreshed.
import { api, segment } from './client.js';
import { byId, clear, el, errorText, figureRows } from './dom.js';
import { state } from './state.js';

/** The API's limit on the body (MAX_AGAINST_BODY_BYTES): larger files go to the CLI. */
export const MAX_AGAINST_BYTES = 32 * 1024 * 1024;
const pct = (/** @type {number} */ x) => (100 * x).toFixed(1) + '%';

const SHAPES = {
  run_report: 'a SWE-bench run report',
  sb_cli_report: 'an sb-cli report',
  resolved_list: 'a results file with a resolved list',
  instance_reports: 'per-instance report.json',
};

let asked = 0;

/** Clears the comparison (another batch is shown). */
export function resetAgainst() {
  asked++;
  clear(byId('against-figures').tBodies[0]);
  clear(byId('against-disagreements').tBodies[0]);
  clear(byId('against-not-comparable').tBodies[0]);
  clear(byId('against-not-in-suite').tBodies[0]);
  byId('against-results').hidden = true;
  byId('against-file').value = '';
  note('', false);
}

/**
 * @param {string} text
 * @param {boolean} isError
 */
function note(text, isError) {
  const node = byId('against-note');
  node.textContent = text;
  node.classList.toggle('error', isError);
}

/**
 * The JSON to post: one file's as it is; several files must each be a per-instance
 * report.json (`{ "<instance_id>": { "resolved": … } }`), merged into one object.
 * @param {File[]} files
 */
async function bodyOf(files) {
  const bytes = files.reduce((n, f) => n + f.size, 0);
  if (bytes > MAX_AGAINST_BYTES) {
    throw new Error(
      `the files are ${bytes} bytes; the page sends at most ${MAX_AGAINST_BYTES}: use proctor report --against`,
    );
  }
  /** @type {Record<string, unknown>} */
  const merged = {};
  for (const file of files) {
    let value;
    try {
      value = JSON.parse(await file.text());
    } catch {
      throw new Error(`${file.name} is not JSON`);
    }
    if (files.length === 1) return value;
    const entries =
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? Object.entries(value)
        : [];
    const isReport = (/** @type {unknown} */ e) =>
      typeof e === 'object' && e !== null && typeof (/** @type {any} */ (e).resolved) === 'boolean';
    if (entries.length === 0 || !entries.every(([, e]) => isReport(e))) {
      throw new Error(`${file.name}: several files must each be a per-instance report.json`);
    }
    for (const [key, entry] of entries) {
      if (key in merged) throw new Error(`${file.name}: instance ${key} is in two files`);
      merged[key] = entry;
    }
  }
  return merged;
}

/**
 * @param {any} p the comparison
 * @returns {Array<[string, string, string]>}
 */
function figures(p) {
  const a = p.agreement;
  return [
    ['shape', 'Official file', SHAPES[/** @type {keyof typeof SHAPES} */ (p.shape)] || p.shape],
    [
      'agreement',
      'Agreement',
      a.rate === null
        ? '- (no comparable instances)'
        : `${a.agree} of ${a.comparable} (${pct(a.rate)})`,
    ],
    ['kappa', 'Cohen’s kappa', a.kappa === null ? `- (${a.kappaNote})` : a.kappa.toFixed(3)],
    [
      'both',
      'Both resolved / both unresolved',
      `${a.counts.bothResolved} / ${a.counts.bothUnresolved}`,
    ],
    ['here', 'Resolved here only', String(a.counts.resolvedHereOnly)],
    ['there', 'Resolved there only', String(a.counts.resolvedThereOnly)],
    ['notComparable', 'Not comparable', String(p.notComparable.length)],
    ['notInSuite', 'Not in this suite', String(p.notInSuite.length)],
  ];
}

/** @param {any} d a disagreement */
function disagreementRow(d) {
  const row = el('tr');
  row.dataset.instance = d.instance;
  const tests = el('td');
  if (d.tests === null) tests.append(el('span', 'not compared: ' + d.testsNote, 'note'));
  else if (d.tests.length === 0) tests.append(el('span', 'no per-test difference', 'note'));
  else {
    const list = el('ul', null, 'test-diffs');
    for (const t of d.tests) {
      list.append(
        el(
          'li',
          `${t.category} ${t.test}: Proctor ${t.proctor.replace('_', ' ')}, official ${t.official}`,
        ),
      );
    }
    tests.append(list);
  }
  row.append(
    el('td', d.instance),
    el('td', d.proctor + (d.proctor === 'resolved' || !d.reason ? '' : ` (${d.reason})`)),
    el('td', d.official),
    tests,
  );
  return row;
}

/** @param {any} n an instance not comparable */
function notComparableRow(n) {
  const row = el('tr');
  row.dataset.instance = n.instance;
  row.append(el('td', n.instance), el('td', n.why));
  return row;
}

/** @param {any} n an instance the suite lacks */
function notInSuiteRow(n) {
  const row = el('tr');
  row.dataset.instance = n.instance;
  row.append(el('td', n.instance), el('td', n.official));
  return row;
}

/** @param {FileList | null} list */
async function compare(list) {
  const batchId = state.results;
  const files = list ? [...list] : [];
  if (batchId === null || files.length === 0) return;
  const mine = ++asked;
  note('Comparing…', false);
  try {
    const body = await bodyOf(files);
    const p = await api('/api/batches/' + segment(batchId) + '/against', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (mine !== asked || state.results !== batchId) return;
    byId('against-figures').tBodies[0].replaceChildren(...figureRows(figures(p)));
    byId('against-disagreements').tBodies[0].replaceChildren(
      ...p.disagreements.map(disagreementRow),
    );
    byId('against-not-comparable').tBodies[0].replaceChildren(
      ...p.notComparable.map(notComparableRow),
    );
    byId('against-not-in-suite').tBodies[0].replaceChildren(...p.notInSuite.map(notInSuiteRow));
    byId('against-results').hidden = false;
    note(`Compared with ${files.map((f) => f.name).join(', ')}; nothing was stored.`, false);
  } catch (error) {
    if (mine !== asked) return;
    byId('against-results').hidden = true;
    note(errorText(error), true);
  }
}

export function startAgainst() {
  byId('against-file').addEventListener('change', () => void compare(byId('against-file').files));
}
