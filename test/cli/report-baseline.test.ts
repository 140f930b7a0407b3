// `proctor report` on baseline sweeps, end to end: two real `baseline --gold
// --repeat 2 --wait` sweeps of a copy of the first three examples/ in Docker, the second after
// one bundle's gold patch was broken, then `report` in every format and `--compare` of the
// two; and the one-line refusals of what cannot be reported or compared.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor, type CliResult } from '../helpers/cli.js';
import { copyFirstExamples } from '../helpers/examples.js';
import { leftovers } from '../helpers/home.js';
import { tempDir } from '../helpers/temp.js';

const NOTHING =
  'diff --git a/NOTES.txt b/NOTES.txt\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.txt\n@@ -0,0 +1 @@\n+nothing fixed\n';

const batchOf = (r: CliResult) => /\(batch (b_[0-9a-z]+)/.exec(r.stdout)?.[1] ?? '';

/** RFC 4180 records (quoted fields may hold commas, quotes and newlines) as objects. */
function parseCsv(text: string): Array<Record<string, string>> {
  const records: string[][] = [[]];
  let field = '';
  let quoted = false;
  const end = () => {
    records.at(-1)?.push(field);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted && ch === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === ',') end();
    else if (!quoted && ch === '\n') {
      end();
      records.push([]);
    } else field += ch;
  }
  if (records.at(-1)!.length === 0) records.pop();
  const [header, ...rows] = records;
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

function refused(result: CliResult, what: RegExp) {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stderr.trimEnd()).toMatch(what);
}

describe('proctor report on baseline sweeps', () => {
  it('reports two real sweeps in every format and compares them', async () => {
    const home = tempDir();
    const suite = join(tempDir(), 'suite');
    copyFirstExamples(suite);
    const sweep = async () => {
      const r = await proctor([
        '--home',
        home,
        'baseline',
        suite,
        '--gold',
        '--repeat',
        '2',
        '--wait',
      ]);
      return { ...r, batch: batchOf(r) };
    };
    const first = await sweep();
    expect(first.code, first.stderr).toBe(0);
    // The gold patch of one task now fixes nothing: the next sweep quarantines it.
    writeFileSync(join(suite, 'sh-country-codes', 'solution', 'gold.patch'), NOTHING);
    const second = await sweep();
    expect(second.code).toBe(1);
    expect(await leftovers(home)).toEqual([]);
    const [a, b] = [first.batch, second.batch];

    const table = await proctor(['--home', home, 'report', b]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^baseline batch ${b} `));
    expect(table.stdout).toMatch(/\n {2}tasks {19}3\n {2}valid {19}2\n {2}quarantined {13}1\n/);
    expect(table.stdout).toMatch(/\n {2}reasons {17}PASS 2, GOLD_FAILED 1\n/);
    expect(table.stdout).toMatch(/\n {2}runs {20}2 per task; gold patch graded for 3 tasks\n/);
    expect(table.stdout).toMatch(/\n {2}images {18}3, /);
    expect(table.stdout).toMatch(/\n {2}sh-country-codes +\d+ +quarantined +GOLD_FAILED +- +\S/);
    // Not the grade summary of an empty batch (`tasks 0` and dashes).
    expect(table.stdout).not.toMatch(/resolved rate/);

    const json = JSON.parse(
      (await proctor(['--home', home, 'report', b, '--format', 'json'])).stdout,
    ) as {
      batches: unknown[];
      baselines: Array<Record<string, unknown>>;
    };
    expect(json.batches).toEqual([]);
    expect(json.baselines[0]).toMatchObject({
      batch: b,
      tasks: 3,
      validity: { valid: 2, quarantined: 1, error: 0 },
      reasons: [
        { reason: 'PASS', tasks: 2 },
        { reason: 'GOLD_FAILED', tasks: 1 },
      ],
      runs: 2,
      goldGraded: 3,
      flakyTasks: 0,
      incomplete: false,
    });
    expect((json.baselines[0]?.['slowest'] as unknown[]).length).toBe(3);

    const jsonl = (await proctor(['--home', home, 'report', b, '--format', 'jsonl'])).stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(jsonl.map((r) => [r['kind'], r['task'], r['validity'], r['reason'], r['runs']])).toEqual(
      [
        ['baseline', 'node-version-compare', 'valid', 'PASS', 2],
        ['baseline', 'py-duration-parse', 'valid', 'PASS', 2],
        ['baseline', 'sh-country-codes', 'quarantined', 'GOLD_FAILED', 2],
      ],
    );
    expect(jsonl[0]?.['job_ms']).toBeGreaterThan(0);

    const out = join(tempDir(), 'sweep.csv');
    expect(
      (await proctor(['--home', home, 'report', b, '--format', 'csv', '--out', out])).code,
    ).toBe(0);
    const csv = parseCsv(readFileSync(out, 'utf8'));
    expect(csv.map((r) => [r['task'], r['validity'], r['gold']])).toEqual([
      ['node-version-compare', 'valid', 'PASS'],
      ['py-duration-parse', 'valid', 'PASS'],
      ['sh-country-codes', 'quarantined', 'FAIL'],
    ]);

    const compared = await proctor(['--home', home, 'report', b, '--compare', a]);
    expect(compared.code, compared.stderr).toBe(0);
    expect(compared.stdout).toContain(
      `compare baseline ${b} with ${a} (3 tasks decided in both, 0 not paired)\n  both valid 2, both quarantined 0, valid→quarantined 1, quarantined→valid 0\n  sh-country-codes: valid → quarantined GOLD_FAILED: gold patch does not pass`,
    );
    const comparedJson = JSON.parse(
      (await proctor(['--home', home, 'report', b, '--compare', a, '--format', 'json'])).stdout,
    ) as { baselineComparisons: Array<{ changed: Array<{ task: string }> }> };
    expect(comparedJson.baselineComparisons[0]?.changed.map((c) => c.task)).toEqual([
      'sh-country-codes',
    ]);

    // A batch of grades (empty predictions: recorded at enqueue, nothing runs) against a sweep.
    const preds = join(home, 'preds.jsonl');
    writeFileSync(
      preds,
      `${JSON.stringify({ instance_id: 'py-duration-parse', model_name_or_path: 'm', model_patch: '' })}\n`,
    );
    const graded = await proctor([
      '--home',
      home,
      'grade',
      suite,
      '--predictions',
      preds,
      '--json',
    ]);
    const g = (JSON.parse(graded.stdout) as { batch: string }).batch;
    refused(
      await proctor(['--home', home, 'report', b, '--compare', g]),
      new RegExp(
        `^proctor: --compare: batch ${b} is a baseline sweep and ${g} is a batch of grades; compare batches of one kind$`,
      ),
    );
    refused(
      await proctor(['--home', home, 'report', g, '--compare', b, '--format', 'json']),
      /^proctor: --compare: batch \S+ is a batch of grades and \S+ is a baseline sweep; /,
    );
    refused(
      await proctor(['--home', home, 'report', b, '--format', 'swebench']),
      new RegExp(
        `^proctor: --format swebench: batch ${b} is a baseline sweep; SWE-bench's form is of grades$`,
      ),
    );
    refused(
      await proctor(['--home', home, 'report', b, g, '--format', 'csv']),
      /^proctor: --format csv: the batches hold both grades and baselines, whose columns differ; /,
    );
    // Both kinds in one report: both sections, in order.
    const both = await proctor(['--home', home, 'report', g, b]);
    expect(both.code).toBe(0);
    expect(both.stdout).toMatch(new RegExp(`^batch ${g} \\(m\\)[^]*\\n\\nbaseline batch ${b} `));
  });
});
