// ROWS as Hugging Face publishes SWE-bench: a snappy parquet file read as it is, its string
// columns and JSON-encoded ID lists giving the same rows as the JSON lines of the same data,
// list<string> ID lists too; a file that is not parquet, or lacks a column, is one line.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parquetMetadata } from 'hyparquet';
import { readFileSync } from 'node:fs';
import { readRows } from '../../src/import/rows.js';
import { ProctorError } from '../../src/errors.js';
import { writeRowsParquet } from '../helpers/parquet.js';
import { tempDir } from '../helpers/temp.js';

const base = {
  repo: 'acme/calc',
  base_commit: 'a'.repeat(40),
  patch: 'diff --git a/calc.py b/calc.py\n',
  test_patch: 'diff --git a/tests/test_calc.py b/tests/test_calc.py\n',
  problem_statement: 'div(1, 0) raises; it should return None.',
  hints_text: '',
  created_at: '2024-02-01T00:00:00Z',
  version: '1.0',
  environment_setup_commit: 'b'.repeat(40),
};
const rows = [
  {
    ...base,
    instance_id: 'acme__calc-1',
    FAIL_TO_PASS: JSON.stringify(['tests/test_calc.py::test_zero']),
    PASS_TO_PASS: JSON.stringify([
      'tests/test_calc.py::test_div',
      'tests/test_calc.py::test_x[a b]',
    ]),
  },
  {
    ...base,
    instance_id: 'acme__calc-2',
    FAIL_TO_PASS: JSON.stringify(['tests/test_calc.py::test_one']),
    PASS_TO_PASS: JSON.stringify([]),
  },
];

async function usage(path: string): Promise<string> {
  const error = await readRows(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProctorError);
  expect((error as ProctorError).code).toBe('USAGE');
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  return message;
}

describe('parquet ROWS', () => {
  it("reads Hugging Face's layout (snappy, JSON-encoded ID lists) as the same rows as JSON lines", async () => {
    const dir = tempDir('proctor-parquet-');
    const parquet = join(dir, 'test-00000-of-00001.parquet');
    writeRowsParquet(parquet, rows);
    const codecs = parquetMetadata(new Uint8Array(readFileSync(parquet)).buffer).row_groups.flatMap(
      (g) => g.columns.map((c) => c.meta_data?.codec),
    );
    expect(new Set(codecs)).toEqual(new Set(['SNAPPY']));
    const jsonl = join(dir, 'rows.jsonl');
    writeFileSync(jsonl, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const fromParquet = await readRows(parquet);
    expect(fromParquet).toEqual(await readRows(jsonl));
    expect(fromParquet[0]).toMatchObject({
      ok: true,
      value: {
        instanceId: 'acme__calc-1',
        passToPass: ['tests/test_calc.py::test_div', 'tests/test_calc.py::test_x[a b]'],
        version: '1.0',
        environmentSetupCommit: 'b'.repeat(40),
      },
    });
  });

  it('reads list<string> ID lists, lower-case ones, and a file whose name does not say parquet', async () => {
    const dir = tempDir('proctor-parquet-');
    const path = join(dir, 'rows.bin');
    const lower = rows.map(({ FAIL_TO_PASS, PASS_TO_PASS, ...rest }) => ({
      ...rest,
      fail_to_pass: FAIL_TO_PASS,
      pass_to_pass: PASS_TO_PASS,
    }));
    writeRowsParquet(path, lower, { listColumns: ['fail_to_pass', 'pass_to_pass'] });
    const read = await readRows(path);
    expect(read.map((r) => (r.ok ? [r.value.failToPass, r.value.passToPass] : r.reasons))).toEqual([
      [
        ['tests/test_calc.py::test_zero'],
        ['tests/test_calc.py::test_div', 'tests/test_calc.py::test_x[a b]'],
      ],
      [['tests/test_calc.py::test_one'], []],
    ]);
  });

  it('lists a malformed row with its reasons and keeps the others', async () => {
    const path = join(tempDir('proctor-parquet-'), 'rows.parquet');
    writeRowsParquet(path, [{ ...rows[0]!, base_commit: 'nope' }, rows[1]!]);
    const read = await readRows(path);
    expect(read[0]).toEqual({
      row: 1,
      ok: false,
      instanceId: 'acme__calc-1',
      reasons: ['base_commit must be 40 lowercase hex digits'],
    });
    expect(read[1]?.ok).toBe(true);
  });

  it('refuses a .parquet file that is not parquet, and a damaged one, in one line', async () => {
    const dir = tempDir('proctor-parquet-');
    const json = join(dir, 'rows.parquet');
    writeFileSync(json, rows.map((r) => JSON.stringify(r)).join('\n'));
    expect(await usage(json)).toBe(`${json}: not a parquet file (no PAR1 at its start and end)`);
    const damaged = join(dir, 'damaged.parquet');
    writeFileSync(
      damaged,
      Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(64, 7), Buffer.from('PAR1')]),
    );
    expect(await usage(damaged)).toMatch(/damaged\.parquet: not a readable parquet file: /);
  });

  it('refuses a parquet file without a column every row needs, naming it and the columns it has', async () => {
    const path = join(tempDir('proctor-parquet-'), 'rows.parquet');
    writeRowsParquet(
      path,
      rows.map(({ FAIL_TO_PASS: _, ...rest }) => rest),
    );
    expect(await usage(path)).toBe(
      `${path}: no column FAIL_TO_PASS (its columns: repo, base_commit, patch, test_patch, problem_statement, hints_text, created_at, version, environment_setup_commit, instance_id, PASS_TO_PASS)`,
    );
  });
});
