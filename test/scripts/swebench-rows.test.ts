// scripts/swebench-rows.ts, which regenerates datasets/swebench/ from SWE-bench's parquet files:
// on a tiny parquet file laid out as SWE-bench publishes it, the chosen repositories' rows come
// out as JSON lines, every column as published plus `dataset`, in the file's order, and read back
// as the same rows `proctor import swebench` reads from the parquet file; a repository or id no
// row has, a file that is not parquet, or missing flags, is one line, exit 2, and no file; the
// committed subsets carry their dataset on every row.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProctorError } from '../../src/errors.js';
import { readRows } from '../../src/import/rows.js';
import { extractRows } from '../../scripts/swebench-rows.js';
import { writeRowsParquet } from '../helpers/parquet.js';
import { ROOT, spawnTs } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const row = (repo: string, n: number) => ({
  repo,
  instance_id: `${repo.replace('/', '__')}-${n}`,
  base_commit: String(n).repeat(40).slice(0, 40),
  patch: 'diff --git a/calc.py b/calc.py\n',
  test_patch: 'diff --git a/tests/test_calc.py b/tests/test_calc.py\n',
  problem_statement: `Problem ${n}: "quoted", ünïcode, and a\nsecond line.`,
  hints_text: '',
  created_at: '2024-02-01T00:00:00Z',
  version: '1.0',
  FAIL_TO_PASS: JSON.stringify([`tests/test_calc.py::test_${n}`]),
  PASS_TO_PASS: JSON.stringify([]),
  environment_setup_commit: 'b'.repeat(40),
});

function fixture(): string {
  const path = join(tempDir('proctor-swebench-rows-'), 'test.parquet');
  writeRowsParquet(path, [
    row('acme/calc', 1),
    row('acme/web', 2),
    row('acme/calc', 3),
    row('other/lib', 4),
  ]);
  return path;
}

async function usage(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProctorError);
  expect((error as ProctorError).code).toBe('USAGE');
  expect((error as Error).message).not.toContain('\n');
  return (error as Error).message;
}

describe('swebench-rows', () => {
  it("keeps the chosen repositories' rows, every column as published plus dataset, in order", async () => {
    const parquet = fixture();
    const { text, counts } = await extractRows(parquet, {
      dataset: 'SWE-bench/SWE-bench_Lite',
      repos: ['acme/calc'],
      only: ['other__lib-4'],
    });
    const lines = text.trimEnd().split('\n');
    expect(text.endsWith('\n')).toBe(true);
    expect(lines.map((l) => (JSON.parse(l) as { instance_id: string }).instance_id)).toEqual([
      'acme__calc-1',
      'acme__calc-3',
      'other__lib-4',
    ]);
    expect(JSON.parse(lines[0]!)).toEqual({
      ...row('acme/calc', 1),
      dataset: 'SWE-bench/SWE-bench_Lite',
    });
    expect([...counts]).toEqual([
      ['acme/calc', 2],
      ['other/lib', 1],
    ]);
    // The subset is read as the same rows as the parquet file it came from.
    const jsonl = join(tempDir('proctor-swebench-rows-'), 'lite.jsonl');
    writeFileSync(jsonl, text);
    const fromJsonl = (await readRows(jsonl)).map((r) => (r.ok ? r.value : r));
    const fromParquet = (await readRows(parquet))
      .filter((r) => r.ok && /calc-|lib-/.test(r.value.instanceId))
      .map((r) => (r.ok ? { ...r.value, dataset: 'SWE-bench/SWE-bench_Lite' } : r));
    expect(fromJsonl).toEqual(fromParquet);
  });

  it('refuses a repository or id that no row has, naming them, and an empty choice', async () => {
    const parquet = fixture();
    expect(
      await usage(
        extractRows(parquet, { dataset: 'd', repos: ['acme/calc', 'acme/nope'], only: ['x-1'] }),
      ),
    ).toBe(`${parquet}: no row of repository acme/nope, instance x-1`);
    expect(await usage(extractRows(parquet, { dataset: 'd', repos: [] }))).toBe(
      'name at least one --repo OWNER/NAME or --only INSTANCE_ID',
    );
    expect(await usage(extractRows(parquet, { dataset: ' ', repos: ['acme/calc'] }))).toBe(
      '--dataset is empty',
    );
  });

  it('refuses a file that is not parquet, and one that is missing', async () => {
    const dir = tempDir('proctor-swebench-rows-');
    const notParquet = join(dir, 'rows.parquet');
    writeFileSync(notParquet, '{"repo": "acme/calc"}\n');
    expect(await usage(extractRows(notParquet, { dataset: 'd', repos: ['acme/calc'] }))).toMatch(
      /rows\.parquet: not a parquet file/,
    );
    expect(
      await usage(extractRows(join(dir, 'absent.parquet'), { dataset: 'd', repos: ['a/b'] })),
    ).toBe(`${join(dir, 'absent.parquet')}: cannot be read`);
  });

  it('writes the file and its counts from the command line; on an error, one line, exit 2, no file', async () => {
    const parquet = fixture();
    const out = join(tempDir('proctor-swebench-rows-'), 'web.jsonl');
    const ok = spawnTs('scripts/swebench-rows.ts', [
      parquet,
      '--dataset',
      'SWE-bench/SWE-bench_Verified',
      '--repo',
      'acme/web',
      '--out',
      out,
    ]);
    expect((await ok.exited).code).toBe(0);
    expect(ok.stdout()).toBe(`${out}: 1 rows (acme/web 1)\n`);
    expect((JSON.parse(readFileSync(out, 'utf8')) as { dataset: string }).dataset).toBe(
      'SWE-bench/SWE-bench_Verified',
    );

    const missing = join(tempDir('proctor-swebench-rows-'), 'none.jsonl');
    const bad = spawnTs('scripts/swebench-rows.ts', [
      parquet,
      '--dataset',
      'd',
      '--repo',
      'acme/nope',
      '--out',
      missing,
    ]);
    expect((await bad.exited).code).toBe(2);
    expect(bad.stderr()).toBe(`swebench-rows: ${parquet}: no row of repository acme/nope\n`);
    expect(existsSync(missing) || existsSync(`${missing}.part`)).toBe(false);

    const noOut = spawnTs('scripts/swebench-rows.ts', [parquet, '--repo', 'acme/web']);
    expect((await noOut.exited).code).toBe(2);
    expect(noOut.stderr()).toMatch(/^swebench-rows: usage: swebench-rows PARQUET .*\n$/);
  });

  it('the committed subsets name their dataset on every row and hold no other repository', () => {
    const subsets: Record<string, [string, string[]]> = {
      'lite.jsonl': ['SWE-bench/SWE-bench_Lite', ['sympy/sympy', 'pallets/flask', 'psf/requests']],
      'verified-django.jsonl': ['SWE-bench/SWE-bench_Verified', ['django/django']],
      'multilingual.jsonl': [
        'SWE-bench/SWE-bench_Multilingual',
        [
          'fmtlib/fmt',
          'jqlang/jq',
          'google/gson',
          'axios/axios',
          'immutable-js/immutable-js',
          'vuejs/core',
          'preactjs/preact',
          'gin-gonic/gin',
          'burntsushi/ripgrep',
          'sharkdp/bat',
          'javaparser/javaparser',
        ],
      ],
    };
    for (const [file, [dataset, repos]] of Object.entries(subsets)) {
      const rows = readFileSync(join(ROOT, 'datasets/swebench', file), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { dataset: string; repo: string });
      expect(new Set(rows.map((r) => r.dataset))).toEqual(new Set([dataset]));
      expect(new Set(rows.map((r) => r.repo))).toEqual(new Set(repos));
    }
  });
});
