// SWE-bench rows: read from a JSON-lines file, a JSON array or a parquet file (Hugging Face's
// `test-00000-of-00001.parquet` as downloaded, read by hyparquet), each checked
// on its own, so that one malformed row is listed with its reasons and skipped while the
// others are imported. The two ID lists are JSON-encoded strings in SWE-bench and plain lists
// in some derivatives, spelled FAIL_TO_PASS/PASS_TO_PASS or fail_to_pass/pass_to_pass: all
// are accepted. FAIL_TO_PASS must name at least one test; PASS_TO_PASS may be empty (many
// SWE-bench tasks have none).
import { readFile, stat } from 'node:fs/promises';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import { z } from 'zod';
import { ProctorError } from '../errors.js';

/** Largest ROWS file read (SWE-bench's full test split is about 100 MB). */
export const MAX_ROWS_BYTES = 2 * 1024 * 1024 * 1024 - 1;

export interface SwebenchRow {
  instanceId: string;
  /** `owner/name`. */
  repo: string;
  baseCommit: string;
  patch: string;
  testPatch: string;
  failToPass: string[];
  passToPass: string[];
  problemStatement: string;
  version?: string;
  environmentSetupCommit?: string;
  hintsText?: string;
  createdAt?: string;
  /** The dataset the row says it comes from, when it has a `dataset` field. */
  dataset?: string;
}

/** One row as found: its 1-based number in the file, and the row or why it is refused. */
export type RowResult =
  | { row: number; ok: true; value: SwebenchRow }
  | { row: number; ok: false; instanceId?: string; reasons: string[] };

const nonEmpty = (what: string) =>
  z.string(`${what} must be a string`).refine((s) => s.trim() !== '', `${what} is empty`);
const commit = (what: string) =>
  z
    .string(`${what} must be a string`)
    .regex(/^[0-9a-f]{40}$/, `${what} must be 40 lowercase hex digits`);

/** A list of test IDs, or a JSON-encoded one (SWE-bench's own spelling). */
const idList = (what: string) =>
  z
    .union([z.array(z.unknown()), z.string()], `${what} must be a list or a JSON-encoded list`)
    .transform((value, ctx) => {
      let list: unknown = value;
      if (typeof value === 'string') {
        try {
          list = JSON.parse(value);
        } catch {
          ctx.addIssue({ code: 'custom', message: `${what} is a string but not JSON` });
          return z.NEVER;
        }
      }
      if (!Array.isArray(list) || !list.every((id) => typeof id === 'string' && id !== '')) {
        ctx.addIssue({ code: 'custom', message: `${what} must be a list of non-empty strings` });
        return z.NEVER;
      }
      const bad = (list as string[]).find((id) => /[\n\r\0]/.test(id));
      if (bad !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `${what} has an ID with a line break or NUL: ${JSON.stringify(bad).slice(0, 80)}`,
        });
        return z.NEVER;
      }
      return list as string[];
    });

const rowSchema = z.object({
  instance_id: nonEmpty('instance_id'),
  repo: z
    .string('repo must be a string')
    .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'repo must be owner/name'),
  base_commit: commit('base_commit'),
  patch: nonEmpty('patch'),
  test_patch: nonEmpty('test_patch'),
  FAIL_TO_PASS: idList('FAIL_TO_PASS').refine((l) => l.length > 0, 'FAIL_TO_PASS is empty'),
  PASS_TO_PASS: idList('PASS_TO_PASS'),
  problem_statement: nonEmpty('problem_statement'),
  version: z
    .union([z.string(), z.number()], 'version must be a string or a number')
    .transform(String)
    .optional(),
  environment_setup_commit: commit('environment_setup_commit').optional(),
  hints_text: z.string('hints_text must be a string').optional(),
  created_at: z.string('created_at must be a string').optional(),
  // Not a column of SWE-bench's own files; a derivative that mixes datasets names each row's.
  dataset: nonEmpty('dataset').optional(),
});

/** Checks one parsed row; every problem is a reason. */
export function checkRow(raw: unknown): { value?: SwebenchRow; reasons: string[] } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { reasons: ['is not a JSON object'] };
  }
  const input: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  // The lower-case spelling of some derivatives; the upper-case one wins when both are there.
  for (const key of ['FAIL_TO_PASS', 'PASS_TO_PASS']) {
    if (input[key] === undefined && input[key.toLowerCase()] !== undefined) {
      input[key] = input[key.toLowerCase()];
    }
  }
  // Datasets write null for an absent optional field.
  for (const key of [
    'version',
    'environment_setup_commit',
    'hints_text',
    'created_at',
    'dataset',
  ]) {
    if (input[key] === null) delete input[key];
  }
  const parsed = rowSchema.safeParse(input);
  if (!parsed.success) {
    return {
      reasons: parsed.error.issues.map((issue) =>
        // zod does not keep the input of an issue, so "missing" is read from the row itself.
        issue.code === 'invalid_type' && input[String(issue.path[0])] === undefined
          ? `${issue.path.join('.')} is missing`
          : issue.message,
      ),
    };
  }
  const r = parsed.data;
  return {
    reasons: [],
    value: {
      instanceId: r.instance_id,
      repo: r.repo,
      baseCommit: r.base_commit,
      patch: r.patch,
      testPatch: r.test_patch,
      failToPass: r.FAIL_TO_PASS,
      passToPass: r.PASS_TO_PASS,
      problemStatement: r.problem_statement,
      ...(r.version !== undefined ? { version: r.version } : {}),
      ...(r.environment_setup_commit !== undefined
        ? { environmentSetupCommit: r.environment_setup_commit }
        : {}),
      ...(r.hints_text !== undefined && r.hints_text !== '' ? { hintsText: r.hints_text } : {}),
      ...(r.created_at !== undefined && r.created_at !== '' ? { createdAt: r.created_at } : {}),
      ...(r.dataset !== undefined ? { dataset: r.dataset.trim() } : {}),
    },
  };
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The columns every row needs; the ID lists in either spelling. */
const REQUIRED_COLUMNS = [
  'instance_id',
  'repo',
  'base_commit',
  'patch',
  'test_patch',
  'FAIL_TO_PASS',
  'PASS_TO_PASS',
  'problem_statement',
] as const;

/** A parquet value as JSON would have it: INT64 as a number (or its digits), a time as ISO. */
function plain(value: unknown): unknown {
  if (typeof value === 'bigint') {
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  }
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return value.map(plain);
  return value;
}

const PARQUET_MAGIC = Buffer.from('PAR1');

/**
 * The rows of a parquet file, every column as JSON would have it. A file that is not parquet,
 * or lacks a column every row needs, is one USAGE line naming the file (and the column, and the
 * columns it has).
 */
export async function readParquet(path: string, bytes: Buffer): Promise<Record<string, unknown>[]> {
  if (
    bytes.length < 12 ||
    !bytes.subarray(0, 4).equals(PARQUET_MAGIC) ||
    !bytes.subarray(bytes.length - 4).equals(PARQUET_MAGIC)
  ) {
    throw new ProctorError('USAGE', `${path}: not a parquet file (no PAR1 at its start and end)`);
  }
  const file = new Uint8Array(bytes).buffer;
  let columns: string[];
  try {
    columns = parquetSchema(parquetMetadata(file)).children.map((c) => c.element.name);
  } catch (error) {
    throw new ProctorError(
      'USAGE',
      `${path}: not a readable parquet file: ${(error as Error).message}`,
    );
  }
  const missing = REQUIRED_COLUMNS.filter(
    (c) => !columns.includes(c) && !(c.includes('_TO_') && columns.includes(c.toLowerCase())),
  );
  if (missing.length > 0) {
    throw new ProctorError(
      'USAGE',
      `${path}: no column ${missing.join(', ')} (its columns: ${columns.join(', ')})`,
    );
  }
  try {
    const rows = await parquetReadObjects({ file });
    return rows.map((row) =>
      Object.fromEntries(Object.entries(row).map(([key, value]) => [key, plain(value)])),
    );
  } catch (error) {
    throw new ProctorError(
      'USAGE',
      `${path}: not a readable parquet file: ${(error as Error).message}`,
    );
  }
}

/** Reads ROWS: parquet (by its PAR1 magic or a .parquet name), a JSON array, or JSON lines. */
export async function readRows(path: string): Promise<RowResult[]> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new ProctorError('USAGE', `${path}: cannot be read`);
  }
  if (!info.isFile()) throw new ProctorError('USAGE', `${path}: not a regular file`);
  if (info.size > MAX_ROWS_BYTES) throw new ProctorError('USAGE', `${path}: larger than 2 GiB`);
  const bytes = await readFile(path);
  const results: RowResult[] = [];
  const add = (row: number, raw: unknown) => {
    const { value, reasons } = checkRow(raw);
    if (value !== undefined) results.push({ row, ok: true, value });
    else {
      const id = (raw as { instance_id?: unknown } | null)?.instance_id;
      results.push({
        row,
        ok: false,
        ...(typeof id === 'string' && id !== '' ? { instanceId: id } : {}),
        reasons,
      });
    }
  };
  if (path.endsWith('.parquet') || bytes.subarray(0, 4).equals(PARQUET_MAGIC)) {
    (await readParquet(path, bytes)).forEach((raw, index) => add(index + 1, raw));
    return results;
  }
  // A byte-order mark (some exporters write one) is not part of the first row.
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  if (text.trimStart().startsWith('[')) {
    let rows: unknown;
    try {
      rows = JSON.parse(text);
    } catch (error) {
      throw new ProctorError('USAGE', `${path}: not a JSON array: ${(error as Error).message}`);
    }
    (rows as unknown[]).forEach((raw, index) => add(index + 1, raw));
    return results;
  }
  const lines = text.split('\n');
  if (lines.length > 1 && text.trimStart().startsWith('{') && !parses(lines[0] ?? '')) {
    // One row printed over several lines is a JSON document, not JSON lines.
    if (parses(text)) {
      throw new ProctorError(
        'USAGE',
        `${path}: one JSON object over several lines; expected JSON lines (a row per line) or a JSON array`,
      );
    }
  }
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      results.push({ row: index + 1, ok: false, reasons: ['is not valid JSON'] });
      return;
    }
    add(index + 1, raw);
  });
  return results;
}

/** A bundle id from an instance_id: lower-cased, characters outside [a-z0-9._-] become `-`. */
export function bundleId(instanceId: string): string {
  return instanceId.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
}
