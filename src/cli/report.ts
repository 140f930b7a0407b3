// `proctor report BATCH… [--compare BATCH] [--format table|json|jsonl|csv|swebench] [--out
// FILE|DIR]`: the results of batches (see src/results/); `report BATCH --against FILE` compares
// one batch with an official grader's outcome (against.ts). Bad input — an unknown batch or
// format, --out into a folder that does not exist (swebench: --out naming a file) — is one line
// and exit 2, before anything is written.
import { mkdir, open, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { ProctorError } from '../errors.js';
import {
  BASELINE_COLUMNS,
  baselineComparisonLines,
  baselineLines,
  checkComparable,
  comparisonLines,
  csvCell,
  flatBaselineRow,
  hasBaselines,
  hasGrades,
  flatRow,
  jsonlChunks,
  instanceKey,
  instanceReport,
  instanceRows,
  isEmptyPatch,
  loadBatch,
  readTestStatuses,
  reportObject,
  ROW_COLUMNS,
  storedTestsStatus,
  suiteInstanceKeys,
  summaryLines,
  swebenchSummary,
  type LoadedBatch,
  type ReportRow,
} from '../results/index.js';
import { MAX_TEST_STATUS_JOBS, type JobStore } from '../queue/store.js';
import type { CommandContext } from './context.js';

export const REPORT_FORMATS = ['table', 'json', 'jsonl', 'csv', 'swebench'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface ReportOptions {
  compare?: string;
  against?: string;
  format?: string;
  out?: string;
}

function formatOf(value: string | undefined): ReportFormat {
  const format = value ?? 'table';
  if (!(REPORT_FORMATS as readonly string[]).includes(format)) {
    throw new ProctorError(
      'USAGE',
      `--format: expected one of ${REPORT_FORMATS.join(', ')}, got ${JSON.stringify(format)}`,
    );
  }
  return format as ReportFormat;
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

/**
 * Where --out goes: a file whose folder exists; for swebench, a folder (SWE-bench's run
 * writes one): an existing folder, or one made with its parents, as SWE-bench makes its log
 * folders. An existing file is refused there rather than replaced by a folder.
 */
async function outTarget(out: string, format: ReportFormat) {
  const path = resolve(out);
  const info = await stat(path).catch(() => null);
  if (format === 'swebench') {
    if (info !== null && !info.isDirectory()) {
      throw new ProctorError('USAGE', `--out: ${out} is a file; --format swebench writes a folder`);
    }
    return { kind: 'dir' as const, path };
  }
  if (info?.isDirectory()) {
    throw new ProctorError('USAGE', `--out: ${out} is a folder; give a file name`);
  }
  if (!(await isDirectory(dirname(path)))) {
    throw new ProctorError('USAGE', `--out: no folder ${dirname(path)} to write ${out} into`);
  }
  return { kind: 'file' as const, path };
}

/** The csv of the batches' grade rows, or of their baseline rows: the columns differ. */
function csvText(loaded: readonly LoadedBatch[]): string {
  const baselines = loaded.every((b) => b.kind === 'baseline');
  if (!baselines && loaded.some((b) => hasBaselines(b.kind))) {
    throw new ProctorError(
      'USAGE',
      '--format csv: the batches hold both grades and baselines, whose columns differ; report them apart, or use jsonl',
    );
  }
  if (baselines) {
    const records = loaded.flatMap((b) =>
      b.baselineRows.map((row) => {
        const flat = flatBaselineRow(row);
        // A test ID may hold spaces: one per line within the cell.
        const tests = row.flakyTests.join('\n');
        return BASELINE_COLUMNS.map((c) => (c === 'flaky_tests' ? tests : csvCell(flat[c])));
      }),
    );
    return stringify(records, {
      header: true,
      columns: [...BASELINE_COLUMNS],
      quoted_match: /^\s|\s$/,
    });
  }
  const records = loaded.flatMap((b) =>
    b.rows.map((row) => {
      const flat = flatRow(row);
      return ROW_COLUMNS.map((column) => csvCell(flat[column]));
    }),
  );
  return stringify(records, { header: true, columns: [...ROW_COLUMNS], quoted_match: /^\s|\s$/ });
}

/** The jsonl lines of the batches' baseline rows, in chunks of 1,000 (never one string). */
function* baselineChunks(loaded: readonly LoadedBatch[]) {
  for (const b of loaded) {
    for (let i = 0; i < b.baselineRows.length; i += 1_000) {
      yield b.baselineRows
        .slice(i, i + 1_000)
        .map((row) => `${JSON.stringify(flatBaselineRow(row))}\n`)
        .join('');
    }
  }
}

/** The grade rows of every batch, in order, then the baseline rows. */
function* jsonlOf(loaded: readonly LoadedBatch[]) {
  yield* jsonlChunks(rowsOf(loaded));
  yield* baselineChunks(loaded);
}

/** The rows of every batch, in order. */
function* rowsOf(loaded: readonly LoadedBatch[]) {
  for (const b of loaded) yield* b.rows;
}

/** Writes `chunks` to a new file at `path`, replacing what was there. */
async function writeChunks(path: string, chunks: Iterable<string>) {
  const file = await open(path, 'w');
  try {
    for (const chunk of chunks) await file.write(chunk);
  } finally {
    await file.close();
  }
}

/**
 * One report.json per instance, as SWE-bench lays them out: DIR/<instance_id>/report.json.
 * None for an empty patch: SWE-bench never runs one, so it writes no report for it. Each
 * tests_status comes from the grade's stored per-test statuses, or is inferred from its
 * verdict when it has none (a grade stored before they were kept). Returns how many it wrote,
 * and how many of those were inferred.
 */
async function writeInstanceReports(
  store: JobStore,
  dir: string,
  loaded: LoadedBatch,
): Promise<{ written: number; inferred: number }> {
  // Only this form reads bundles: the others never load the oracle.
  const { loadBundle } = await import('../oracle/index.js');
  const declared = new Map<string, { existing: string[]; hidden: string[] }>();
  const declaredOf = async (row: ReportRow) => {
    if (row.bundle === null) return { existing: [], hidden: [] };
    let ids = declared.get(row.bundle);
    if (!ids) {
      const bundle = await loadBundle(row.bundle).catch(() => null);
      ids = { existing: bundle?.existingIds ?? [], hidden: bundle?.hiddenIds ?? [] };
      declared.set(row.bundle, ids);
    }
    return ids;
  };
  let inferred = 0;
  const rows = [...instanceRows(loaded.rows)].filter(([, row]) => !isEmptyPatch(row));
  // A page at a time: a document can be megabytes, and a batch holds thousands.
  for (let start = 0; start < rows.length; start += MAX_TEST_STATUS_JOBS) {
    const page = rows.slice(start, start + MAX_TEST_STATUS_JOBS);
    const stored = await readTestStatuses(
      store,
      page.flatMap(([, row]) => (row.gradeJobId === null ? [] : [row.gradeJobId])),
    );
    for (const [key, row] of page) {
      const ids = await declaredOf(row);
      const tests = row.gradeJobId === null ? undefined : stored.get(row.gradeJobId);
      if (tests === undefined || storedTestsStatus(tests, ids) === null) inferred++;
      const report = instanceReport(row, ids, tests);
      // instance ids are dataset names (owner__repo-123); keep a folder name safe whatever it is.
      const folder = join(dir, key.replace(/[^A-Za-z0-9._-]/g, '_'));
      await mkdir(folder, { recursive: true });
      await writeFile(
        join(folder, 'report.json'),
        `${JSON.stringify({ [instanceKey(row)]: report }, null, 2)}\n`,
      );
    }
  }
  return { written: rows.length, inferred };
}

export async function reportCommand(
  context: CommandContext,
  batchIds: string[],
  options: ReportOptions,
): Promise<number> {
  const format = formatOf(options.format);
  if (options.against !== undefined) {
    return againstCommand(context, batchIds, format, { ...options, against: options.against });
  }
  if (format === 'swebench' && batchIds.length !== 1) {
    throw new ProctorError('USAGE', '--format swebench reports one batch at a time');
  }
  const target = options.out === undefined ? null : await outTarget(options.out, format);
  const store = context.openStore();
  try {
    const loaded: LoadedBatch[] = [];
    for (const id of batchIds) loaded.push(await loadBatch(store, id));
    const reference =
      options.compare === undefined ? null : await loadBatch(store, options.compare);
    if (reference !== null) checkComparable(loaded, reference);

    let text: string;
    switch (format) {
      case 'table': {
        const report = reportObject(loaded, reference);
        text = [
          ...loaded.flatMap((b) => [
            ...(hasGrades(b.kind) ? [...summaryLines(b.summary), ''] : []),
            ...(hasBaselines(b.kind) ? [...baselineLines(b.baselineSummary), ''] : []),
          ]),
          ...(report.comparisons ?? []).flatMap((c) => [...comparisonLines(c), '']),
          ...(report.baselineComparisons ?? []).flatMap((c) => [...baselineComparisonLines(c), '']),
        ]
          .join('\n')
          .replace(/\n+$/, '\n');
        break;
      }
      case 'json':
        text = `${JSON.stringify(reportObject(loaded, reference), null, 2)}\n`;
        break;
      case 'jsonl':
        if (target !== null) {
          await writeChunks(target.path, jsonlOf(loaded));
          return 0;
        }
        text = [...jsonlOf(loaded)].join('');
        break;
      case 'csv':
        text = csvText(loaded);
        break;
      case 'swebench': {
        const only = loaded[0] as LoadedBatch;
        if (only.kind === 'baseline') {
          throw new ProctorError(
            'USAGE',
            `--format swebench: batch ${only.batch.id} is a baseline sweep; SWE-bench's form is of grades`,
          );
        }
        const suite = suiteInstanceKeys(only.rows, only.suiteTasks);
        text = `${JSON.stringify(swebenchSummary(only.rows, suite), null, 2)}\n`;
        if (target?.kind === 'dir') {
          await mkdir(target.path, { recursive: true });
          const reports = await writeInstanceReports(store, target.path, only);
          await writeFile(join(target.path, 'summary.json'), text);
          const inferred =
            reports.inferred === 0
              ? ''
              : ` (${reports.inferred} with tests_status inferred from the verdict: no per-test statuses stored)`;
          context.io.out(
            `wrote ${join(target.path, 'summary.json')} and ${reports.written} report.json files${inferred}`,
          );
          return 0;
        }
        break;
      }
    }
    if (target !== null) await writeFile(target.path, text);
    else if (text.length > 0) context.io.out(text.replace(/\n$/, ''));
    return 0;
  } finally {
    await store.close();
  }
}

/** `report BATCH --against FILE`: the checks, then the file, then the batch. */
async function againstCommand(
  context: CommandContext,
  batchIds: string[],
  format: ReportFormat,
  options: ReportOptions & { against: string },
): Promise<number> {
  const { AGAINST_FORMATS, parityOf, parityText, readOfficial } = await import('./against.js');
  if (batchIds.length !== 1) {
    throw new ProctorError('USAGE', '--against compares one batch at a time');
  }
  if (options.compare !== undefined) {
    throw new ProctorError('USAGE', '--against and --compare cannot be used together');
  }
  if (!(AGAINST_FORMATS as readonly string[]).includes(format)) {
    throw new ProctorError(
      'USAGE',
      `--format: with --against, expected one of ${AGAINST_FORMATS.join(', ')}, got ${JSON.stringify(format)}`,
    );
  }
  const target = options.out === undefined ? null : await outTarget(options.out, format);
  const official = await readOfficial(options.against);
  const store = context.openStore();
  try {
    const batch = await loadBatch(store, batchIds[0] as string);
    const text = parityText(await parityOf(batch, official, store), format, options.against);
    if (target !== null) await writeFile(target.path, text);
    else context.io.out(text.replace(/\n$/, ''));
    return 0;
  } finally {
    await store.close();
  }
}
