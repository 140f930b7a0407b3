// Regenerates the committed SWE-bench subsets in datasets/swebench/ from a published parquet
// file: the rows of the named repositories (or instance ids), each exactly as the parquet file
// holds it (every column, in the file's order, read by the same reader `proctor import
// swebench` uses), plus a `dataset` field naming where it came from, one JSON object a line,
// in the file's order.
//
// Run as `tsx scripts/swebench-rows.ts PARQUET --dataset NAME --repo OWNER/NAME… [--only ID…]
// --out FILE.jsonl`; datasets/swebench/README.md has the three commands that made the files.
// A repository or id that no row has, a row that already names another dataset, or a file that
// is not SWE-bench's parquet, is one line and exit 2; nothing is written then.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ProctorError } from '../src/errors.js';
import { readParquet } from '../src/import/rows.js';

export interface Selection {
  /** Written into every row as its `dataset` field, e.g. `SWE-bench/SWE-bench_Lite`. */
  dataset: string;
  /** `owner/name`: every row of these repositories. */
  repos: string[];
  /** Instance ids: these rows too (or alone, with no `repos`). */
  only?: string[];
}

/** The selected rows of a parquet file as JSON lines, and how many rows each repository gave. */
export async function extractRows(
  path: string,
  selection: Selection,
): Promise<{ text: string; counts: Map<string, number> }> {
  const repos = new Set(selection.repos);
  const only = new Set(selection.only ?? []);
  if (repos.size === 0 && only.size === 0) {
    throw new ProctorError('USAGE', 'name at least one --repo OWNER/NAME or --only INSTANCE_ID');
  }
  if (selection.dataset.trim() === '') throw new ProctorError('USAGE', '--dataset is empty');
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch {
    throw new ProctorError('USAGE', `${path}: cannot be read`);
  }
  const records = await readParquet(path, bytes);
  const chosen = records.filter(
    (r) => repos.has(String(r['repo'])) || only.has(String(r['instance_id'])),
  );
  const missingRepos = [...repos].filter((repo) => !chosen.some((r) => r['repo'] === repo));
  const missingIds = [...only].filter((id) => !chosen.some((r) => r['instance_id'] === id));
  if (missingRepos.length > 0 || missingIds.length > 0) {
    const named = [
      ...missingRepos.map((r) => `repository ${r}`),
      ...missingIds.map((i) => `instance ${i}`),
    ];
    throw new ProctorError('USAGE', `${path}: no row of ${named.join(', ')}`);
  }
  const counts = new Map<string, number>();
  const lines = chosen.map((record) => {
    const own = record['dataset'];
    if (own !== undefined && own !== null && own !== selection.dataset) {
      throw new ProctorError(
        'USAGE',
        `${path}: row ${String(record['instance_id'])} names dataset ${JSON.stringify(own)}, not ${selection.dataset}`,
      );
    }
    const repo = String(record['repo']);
    counts.set(repo, (counts.get(repo) ?? 0) + 1);
    return JSON.stringify({ ...record, dataset: selection.dataset });
  });
  return { text: lines.map((l) => `${l}\n`).join(''), counts };
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      dataset: { type: 'string' },
      repo: { type: 'string', multiple: true, default: [] },
      only: { type: 'string', multiple: true, default: [] },
      out: { type: 'string' },
    },
  });
  const [parquet, ...extra] = positionals;
  if (parquet === undefined || extra.length > 0 || !values.out || values.dataset === undefined) {
    throw new ProctorError(
      'USAGE',
      'usage: swebench-rows PARQUET --dataset NAME --repo OWNER/NAME… [--only ID…] --out FILE.jsonl',
    );
  }
  const { text, counts } = await extractRows(parquet, {
    dataset: values.dataset,
    repos: values.repo,
    only: values.only,
  });
  // Written whole or not at all: a half-written subset would pass for the published rows.
  await writeFile(`${values.out}.part`, text);
  await rename(`${values.out}.part`, values.out);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  console.log(
    `${values.out}: ${total} rows (${[...counts].map(([repo, n]) => `${repo} ${n}`).join(', ')})`,
  );
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`swebench-rows: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(2);
    },
  );
}
