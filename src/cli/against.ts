// `report BATCH --against FILE`: reads the official grader's file — one JSON file of any shape
// results/official.ts knows, or a folder of SWE-bench's per-instance report.json files (as
// SWE-bench lays them out: logs/run_evaluation/RUN/MODEL/INSTANCE/report.json, at any depth up
// to MAX_FOLDER_DEPTH) — then compares the batch with it and prints the comparison.
//
// Bounded: one file at most MAX_OFFICIAL_FILE_BYTES, a folder at most MAX_REPORT_FILES
// report.json files of at most MAX_REPORT_FILE_BYTES each; symbolic links are not followed.
// An unreadable path, a file that is not JSON or of an unknown shape: one line, exit 2.
import { open, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { ProctorError } from '../errors.js';
import type { JobStore } from '../queue/store.js';
import {
  PARITY_COLUMNS,
  parityLines,
  parityOfBatch,
  parityRecords,
  parseInstanceReports,
  parseOfficial,
  readTestStatuses,
  type LoadedBatch,
  type Official,
  type Parity,
} from '../results/index.js';

/** The largest official file read (SWE-bench's full test split with tests_status is ~40 MB). */
export const MAX_OFFICIAL_FILE_BYTES = 64 * 1024 * 1024;
/** The most report.json files one folder may hold (SWE-bench's full test split is 2,294). */
export const MAX_REPORT_FILES = 20_000;
export const MAX_REPORT_FILE_BYTES = 8 * 1024 * 1024;
/** RUN/MODEL/INSTANCE/report.json under logs/run_evaluation, and a little room above. */
export const MAX_FOLDER_DEPTH = 6;

export const AGAINST_FORMATS = ['table', 'json', 'csv'] as const;

function unreadable(path: string, error: unknown): never {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'ENOENT'
      ? 'no such file or folder'
      : code === 'EACCES'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'a folder'
          : ((error as Error).message ?? String(error));
  throw new ProctorError('USAGE', `--against: cannot read ${path}: ${why}`);
}

/** A file's text, refused past `max` bytes without reading them all. */
async function readBounded(path: string, max: number): Promise<string> {
  const file = await open(path, 'r').catch((e: unknown) => unreadable(path, e));
  try {
    const { size } = await file.stat();
    if (size > max) {
      throw new ProctorError(
        'USAGE',
        `--against: ${path} is ${size} bytes; at most ${max} are read`,
      );
    }
    return await file.readFile({ encoding: 'utf8' });
  } catch (error) {
    if (error instanceof ProctorError) throw error;
    return unreadable(path, error);
  } finally {
    await file.close();
  }
}

/** Every report.json under `dir`, depth first, sorted by path so that errors are stable. */
async function reportFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (folder: string, depth: number): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true }).catch((e: unknown) =>
      unreadable(folder, e),
    );
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = join(folder, entry.name);
      // Dirent types come from lstat: a symbolic link is neither, so it is never followed.
      if (entry.isDirectory() && depth < MAX_FOLDER_DEPTH) await walk(path, depth + 1);
      else if (entry.isFile() && entry.name === 'report.json') {
        found.push(path);
        if (found.length > MAX_REPORT_FILES) {
          throw new ProctorError(
            'USAGE',
            `--against: ${dir} holds more than ${MAX_REPORT_FILES} report.json files`,
          );
        }
      }
    }
  };
  await walk(dir, 0);
  return found;
}

/** The official outcome in FILE: a JSON file, or a folder of per-instance report.json. */
export async function readOfficial(file: string): Promise<Official> {
  try {
    return await readOfficialFile(file);
  } catch (error) {
    // The parsers name the file; the option it came from is said here.
    if (error instanceof ProctorError && !error.message.startsWith('--against: ')) {
      throw new ProctorError(error.code, `--against: ${error.message}`);
    }
    throw error;
  }
}

async function readOfficialFile(file: string): Promise<Official> {
  const path = resolve(file);
  const info = await stat(path).catch((e: unknown) => unreadable(file, e));
  if (info.isDirectory()) {
    const files = await reportFiles(path);
    const texts = [];
    for (const where of files) {
      texts.push({ where, text: await readBounded(where, MAX_REPORT_FILE_BYTES) });
    }
    return parseInstanceReports(texts, file);
  }
  const text = await readBounded(path, MAX_OFFICIAL_FILE_BYTES);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ProctorError('USAGE', `--against: ${file} is not JSON`);
  }
  return parseOfficial(value, file);
}

/** The batch against the official outcome, with the disagreements' declared tests read. */
export async function parityOf(
  batch: LoadedBatch,
  official: Official,
  store: Pick<JobStore, 'testStatuses'>,
): Promise<Parity> {
  try {
    return await parityOfBatch(
      batch,
      official,
      async (bundles) => {
        // Only disagreements read bundles: the rest of the report never loads the oracle.
        const { declaredTestIds } = await import('../oracle/index.js');
        return declaredTestIds(bundles);
      },
      (jobs) => readTestStatuses(store, jobs),
    );
  } catch (error) {
    if (error instanceof ProctorError && error.code === 'USAGE') {
      throw new ProctorError('USAGE', `--against: ${error.message}`);
    }
    throw error;
  }
}

export function parityText(parity: Parity, format: string, source: string): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(parity, null, 2)}\n`;
    case 'csv':
      return stringify(parityRecords(parity), {
        header: true,
        columns: [...PARITY_COLUMNS],
        quoted_match: /^\s|\s$/,
      });
    default:
      return `${parityLines(parity, source).join('\n')}\n`;
  }
}
