// [source] in task.toml: where a task came from. Optional and informational:
// nothing in grading reads it. It is shown by `proctor status` and kept with every job's result
// (and in the oracle log), so that reports and predictions can be matched by `instance_id`.
//
//   [source]
//   dataset = "princeton-nlp/SWE-bench_Verified"   # free text, one line
//   instance_id = "astropy__astropy-12907"         # the dataset's id of the task, one line
//   repo = "astropy/astropy"                        # owner/name, or an https:// URL
//   base_commit = "<40 hex>"                        # upstream; [environment].base_commit is
//                                                   # the image's own (a snapshot commit)
//   fix_commit = "<40 hex>"
//   version = "4.3"                                 # a string: quote it
//   environment_setup_commit = "<40 hex>"           # SWE-bench rows
//   hints_text = "…"                                # SWE-bench rows, at most 65536 characters
//   created_at = "2022-03-03T15:14:54Z"             # a date or date-time, as text
//
// The keys keep task.toml's spelling everywhere they go (job results, JSON output), so that
// one name means one thing from the dataset to the report.
import { z } from 'zod';
import type { ImpossibleRecord, TaskImpossible } from './task-impossible.js';

/** True when `value` holds a character that would break its one-line display (NUL included). */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** A one-line text value of at most `max` characters. */
const line = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((value) => !hasControl(value), 'must be one line, without control characters');

const commit = z
  .string()
  .regex(
    /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/,
    'must be a full commit id: 40 (or 64) lowercase hex digits',
  );

const REPO = /^(?:https:\/\/[^\s/]+\/)?[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+$/;

/** A value that TOML may read as a number or a date although the dataset means text. */
const quotedText = (example: string, max: number) =>
  z
    .string({
      error: (issue) =>
        issue.code === 'invalid_type' && issue.input !== undefined
          ? `must be a string; quote it: ${example}`
          : undefined,
    })
    .min(1)
    .max(max);

export const sourceSchema = z
  .object({
    dataset: line(200).optional(),
    instance_id: line(200).optional(),
    repo: z
      .string()
      .max(300)
      .regex(REPO, 'must be owner/name (as on GitHub) or an https:// URL of the repository')
      .optional(),
    base_commit: commit.optional(),
    fix_commit: commit.optional(),
    version: quotedText('version = "1.0"', 100)
      .refine((value) => !hasControl(value), 'must be one line, without control characters')
      .optional(),
    environment_setup_commit: commit.optional(),
    hints_text: z
      .string()
      .max(65_536)
      .refine((value) => !value.includes('\0'), 'must not contain NUL')
      .optional(),
    created_at: quotedText('created_at = "2024-01-31T12:00:00Z"', 40)
      .regex(
        /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/,
        'must be a date or date-time such as 2024-01-31T12:00:00Z',
      )
      .optional(),
  })
  .strict();

/** [source] as written in task.toml: every key optional. */
export type TaskSource = z.output<typeof sourceSchema>;

/** The keys of [source] in display order (the order of the table above). */
export const SOURCE_KEYS = [
  'dataset',
  'instance_id',
  'repo',
  'base_commit',
  'fix_commit',
  'version',
  'environment_setup_commit',
  'hints_text',
  'created_at',
] as const satisfies ReadonlyArray<keyof TaskSource>;

/** [source] as kept with job results: every key but hints_text, which is prose for a solver's
 * author, long, and in the bundle anyway. */
export type SourceRecord = Omit<TaskSource, 'hints_text'>;

/** The task as a job result records it: its id, its content hash, and [source] if any. */
export interface TaskRecord {
  id: string;
  contentHash: string;
  source?: SourceRecord;
  /** Set for an impossible variant (task-impossible.ts): its original and its mode. */
  impossible?: ImpossibleRecord;
}

export function taskRecord(bundle: {
  id: string;
  contentHash: string;
  source?: TaskSource;
  impossible?: TaskImpossible;
}): TaskRecord {
  const record: TaskRecord = { id: bundle.id, contentHash: bundle.contentHash };
  if (bundle.impossible !== undefined) {
    record.impossible = { of: bundle.impossible.of, mode: bundle.impossible.mode };
  }
  if (bundle.source !== undefined) {
    const kept: SourceRecord = { ...bundle.source };
    delete (kept as TaskSource).hints_text;
    if (Object.keys(kept).length > 0) record.source = kept;
  }
  return record;
}

/** [source] on one line, `key value` pairs in SOURCE_KEYS order; undefined when empty. */
export function sourceLine(source: TaskSource | undefined): string | undefined {
  if (source === undefined) return undefined;
  const parts = SOURCE_KEYS.filter((key) => key !== 'hints_text' && source[key] !== undefined).map(
    (key) => `${key} ${source[key] ?? ''}`,
  );
  return parts.length === 0 ? undefined : parts.join(', ');
}
