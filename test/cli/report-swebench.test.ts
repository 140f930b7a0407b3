// `report --format swebench` through the real CLI on a predictions batch of the examples/
// suite: empty predictions are counted as SWE-bench's make_run_report counts them,
// and --out DIR makes the folder it writes.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const EXAMPLES = join(ROOT, 'examples');

/** A batch of two empty predictions (one "", one null): recorded at enqueue, nothing runs. */
async function emptyBatch() {
  const home = tempDir();
  const preds = join(home, 'preds.jsonl');
  writeFileSync(
    preds,
    [
      { instance_id: 'py-duration-parse', model_name_or_path: 'm', model_patch: '' },
      { instance_id: 'node-version-compare', model_name_or_path: 'm', model_patch: null },
    ]
      .map((p) => JSON.stringify(p))
      .join('\n'),
  );
  const graded = await proctor([
    '--home',
    home,
    'grade',
    EXAMPLES,
    '--predictions',
    preds,
    '--json',
  ]);
  expect(graded.code, graded.stderr).toBe(0);
  const batch = (JSON.parse(graded.stdout) as { batch: string }).batch;
  return { home, batch };
}

describe('report --format swebench', () => {
  it('lists empty predictions in empty_patch_ids, not as completed, as SWE-bench does', async () => {
    const { home, batch } = await emptyBatch();
    const result = await proctor(['--home', home, 'report', batch, '--format', 'swebench']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      total_instances: 8,
      submitted_instances: 2,
      completed_instances: 0,
      resolved_instances: 0,
      unresolved_instances: 0,
      empty_patch_instances: 2,
      error_instances: 0,
      completed_ids: [],
      incomplete_ids: [
        'cpp-csv-split',
        'go-text-ellipsis',
        'java-roman-numerals',
        'js-slug-accents',
        'rust-ini-values',
        'sh-country-codes',
      ],
      empty_patch_ids: ['node-version-compare', 'py-duration-parse'],
      submitted_ids: ['node-version-compare', 'py-duration-parse'],
      resolved_ids: [],
      unresolved_ids: [],
      error_ids: [],
      schema_version: 2,
    });
  });

  it('makes the --out folder and its parents, and writes no report.json for an empty patch', async () => {
    const { home, batch } = await emptyBatch();
    const out = join(tempDir(), 'runs', 'first');
    const result = await proctor([
      '--home',
      home,
      'report',
      batch,
      '--format',
      'swebench',
      '--out',
      out,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(`wrote ${join(out, 'summary.json')} and 0 report.json files`);
    // SWE-bench never runs an empty patch, so it writes no report for it: summary.json alone.
    expect(readdirSync(out)).toEqual(['summary.json']);
    expect(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'))).toMatchObject({
      empty_patch_instances: 2,
    });
    // Again into the same folder: it exists now, and is written over.
    const again = await proctor([
      '--home',
      home,
      'report',
      batch,
      '--format',
      'swebench',
      '--out',
      out,
    ]);
    expect(again.code, again.stderr).toBe(0);
  });

  it('refuses --out naming a file in one line, and writes nothing', async () => {
    const { home, batch } = await emptyBatch();
    const file = join(tempDir(), 'summary.json');
    writeFileSync(file, 'keep');
    const result = await proctor([
      '--home',
      home,
      'report',
      batch,
      '--format',
      'swebench',
      '--out',
      file,
    ]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd()).toBe(
      `proctor: --out: ${file} is a file; --format swebench writes a folder`,
    );
    expect(readFileSync(file, 'utf8')).toBe('keep');
    expect(existsSync(`${file}/summary.json`)).toBe(false);
  });
});
