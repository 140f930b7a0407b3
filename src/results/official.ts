// An official grader's outcome per instance, read from the files SWE-bench's tools write, for
// `report --against` (parity.ts compares it with Proctor's). Pure: the CLI reads the file (or
// the folder's report.json files) and the API takes the JSON body; both hand the parsed JSON
// here. The shape is detected, never asked for:
//
//   - run_report: what SWE-bench's make_run_report writes (harness/reporting.py): the lists
//     `resolved_ids`, `unresolved_ids`, `error_ids`, `empty_patch_ids`, `incomplete_ids`,
//     `completed_ids`, `submitted_ids` (schema_version 2; older forms have the same lists
//     without it, some without `unresolved_ids` or `empty_patch_ids`).
//   - sb_cli_report: what `sb-cli get-report` saves: the run report's counts and lists plus
//     `pending_instances` / `failed_instances` (and, when present, `pending_ids` /
//     `failed_ids`). A report with counts but no lists names no instance: refused.
//   - resolved_list: a results file with a `resolved` list, as SWE-bench/experiments keeps in
//     `results/results.json` (`resolved`, `no_generation`, `no_logs`; the older
//     get_model_report form adds `install_fail`, `reset_failed`, `no_apply`, `test_errored`,
//     `test_timeout`, `generated`, `applied`, `with_logs`). An instance it does not list as
//     not generated or not run was evaluated and not resolved: the file names the resolved
//     ones only.
//   - instance_reports: SWE-bench's per-instance report.json (`{id: {resolved, tests_status,
//     …}}`), one file or a folder of them (merged), the only shape with per-test statuses.
//
// These files are other tools' output, so unknown keys are allowed (they carry counts, image
// lists, container names); only the keys read are checked.
import { z } from 'zod';
import { ProctorError } from '../errors.js';
import type { TestSplit } from './swebench.js';

export type OfficialShape = 'run_report' | 'sb_cli_report' | 'resolved_list' | 'instance_reports';

/** What the official grader made of an instance. `not_run`: listed, but never evaluated. */
export type OfficialStatus = 'resolved' | 'unresolved' | 'error' | 'empty' | 'not_run';

/** SWE-bench's tests_status: FAIL_TO_PASS and PASS_TO_PASS (the others are not compared). */
export interface OfficialTests {
  FAIL_TO_PASS: TestSplit;
  PASS_TO_PASS: TestSplit;
}

export interface OfficialInstance {
  status: OfficialStatus;
  tests: OfficialTests | null;
}

export interface Official {
  shape: OfficialShape;
  instances: Map<string, OfficialInstance>;
  /**
   * The status of an instance the file does not name: `unresolved` for a resolved list (it
   * names only the resolved ones), null (missing there) for the others.
   */
  unlisted: 'unresolved' | null;
}

export const SHAPE_NAMES: Record<OfficialShape, string> = {
  run_report: "a SWE-bench run report (make_run_report's resolved_ids, unresolved_ids, …)",
  sb_cli_report: 'an sb-cli report',
  resolved_list: 'a results file with a resolved list',
  instance_reports: "SWE-bench's per-instance report.json",
};

/** What `--against` accepts, for the one line that refuses anything else. */
export const EXPECTED_SHAPES =
  'a SWE-bench run report (resolved_ids, unresolved_ids, error_ids, …), an sb-cli report, a results file with a "resolved" list, or per-instance report.json ({"<instance_id>": {"resolved": …, "tests_status": …}}, one file or a folder of them)';

/** Instances one official file may name: more than SWE-bench's full test split, many times over. */
export const MAX_OFFICIAL_INSTANCES = 100_000;

const id = z.string().min(1).max(200);
const ids = z.array(id).max(MAX_OFFICIAL_INSTANCES);
const testIds = z.array(z.string().max(10_000)).max(100_000);
const split = z.object({ success: testIds, failure: testIds });

const runReport = z.object({
  resolved_ids: ids,
  unresolved_ids: ids.optional(),
  error_ids: ids.optional(),
  empty_patch_ids: ids.optional(),
  incomplete_ids: ids.optional(),
  completed_ids: ids.optional(),
  submitted_ids: ids.optional(),
  pending_ids: ids.optional(),
  failed_ids: ids.optional(),
});

/** The lists of a resolved-list results file, by what they say of an instance. */
const RESOLVED_LIST_KEYS = {
  resolved: 'resolved',
  no_generation: 'empty',
  no_logs: 'error',
  install_fail: 'error',
  reset_failed: 'error',
  // The patch was judged and did not resolve: SWE-bench counts these as not resolved.
  no_apply: 'unresolved',
  test_errored: 'unresolved',
  test_timeout: 'unresolved',
} as const satisfies Record<string, OfficialStatus>;

/** The older form's lists of what got how far: read after the outcome lists above. */
const PROGRESS_KEYS = ['with_logs', 'applied', 'generated'] as const;

const resolvedList = z.object(
  Object.fromEntries(
    [...Object.keys(RESOLVED_LIST_KEYS), ...PROGRESS_KEYS].map((k) => [k, ids.optional()]),
  ),
);

const instanceReport = z.object({
  resolved: z.boolean(),
  patch_is_None: z.boolean().optional(),
  patch_exists: z.boolean().optional(),
  tests_status: z
    .object({ FAIL_TO_PASS: split.optional(), PASS_TO_PASS: split.optional() })
    .optional(),
});

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** One line naming the file (or body) and what is wrong; the CLI prefixes `--against: `. */
function invalid(where: string, detail: string): never {
  throw new ProctorError('USAGE', `${where}: ${detail}`);
}

function checked<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.join('.') ?? '';
  return invalid(where, `${path === '' ? '' : `${path}: `}${issue?.message ?? 'invalid'}`);
}

/**
 * Sets each listed instance's status; an instance in two lists keeps the first one given in
 * `order` (SWE-bench puts an instance in one outcome list; completed_ids and submitted_ids
 * overlap them and are not read for the outcome).
 */
function fromLists(lists: Array<[readonly string[] | undefined, OfficialStatus]>) {
  const instances = new Map<string, OfficialInstance>();
  for (const [list, status] of lists) {
    for (const key of list ?? []) {
      if (!instances.has(key)) instances.set(key, { status, tests: null });
    }
  }
  return instances;
}

function parseRunReport(value: Record<string, unknown>, where: string): Official {
  const sbCli = ['pending_instances', 'failed_instances', 'pending_ids', 'failed_ids'].some(
    (key) => key in value,
  );
  const report = checked(runReport, value, where);
  return {
    shape: sbCli ? 'sb_cli_report' : 'run_report',
    instances: fromLists([
      [report.resolved_ids, 'resolved'],
      [report.unresolved_ids, 'unresolved'],
      [report.error_ids, 'error'],
      [report.failed_ids, 'error'],
      [report.empty_patch_ids, 'empty'],
      [report.incomplete_ids, 'not_run'],
      [report.pending_ids, 'not_run'],
      // Submitted, in no outcome list: an older report without unresolved_ids lists a
      // completed instance only in completed_ids.
      [report.completed_ids, 'unresolved'],
      [report.submitted_ids, 'not_run'],
    ]),
    unlisted: null,
  };
}

/**
 * A resolved list. With the older form's progress lists, an instance that has logs or was
 * applied and is in no outcome list is unresolved, one generated without logs is an error
 * there, and one not even generated is missing there; without them (experiments' results.json)
 * every instance not named is unresolved.
 */
function parseResolvedList(value: Record<string, unknown>, where: string): Official {
  const lists = checked(resolvedList, value, where) as Partial<Record<string, string[]>>;
  const outcomes = Object.entries(RESOLVED_LIST_KEYS).map(
    ([key, status]): [string[] | undefined, OfficialStatus] => [lists[key], status],
  );
  return {
    shape: 'resolved_list',
    instances: fromLists([
      ...outcomes,
      [lists.with_logs, 'unresolved'],
      [lists.applied, 'unresolved'],
      [lists.generated, lists.with_logs === undefined ? 'unresolved' : 'error'],
    ]),
    unlisted: lists.generated === undefined ? 'unresolved' : null,
  };
}

const splitOf = (s: TestSplit | undefined): TestSplit => ({
  success: s?.success ?? [],
  failure: s?.failure ?? [],
});

/** One per-instance report's instances into `into`; an instance seen twice is refused. */
function addInstanceReports(
  into: Map<string, OfficialInstance>,
  value: Record<string, unknown>,
  where: string,
  seenIn: Map<string, string>,
): void {
  for (const [key, entry] of Object.entries(value)) {
    checked(id, key, where);
    const report = checked(instanceReport, entry, `${where}: ${key}`);
    const earlier = seenIn.get(key);
    if (earlier !== undefined) {
      invalid(
        where,
        `instance ${key} is also reported in ${earlier}; give one report per instance`,
      );
    }
    seenIn.set(key, where);
    const status: OfficialStatus = report.resolved
      ? 'resolved'
      : report.patch_is_None === true || report.patch_exists === false
        ? 'empty'
        : 'unresolved';
    const tests = report.tests_status;
    into.set(key, {
      status,
      tests:
        tests === undefined
          ? null
          : {
              FAIL_TO_PASS: splitOf(tests.FAIL_TO_PASS),
              PASS_TO_PASS: splitOf(tests.PASS_TO_PASS),
            },
    });
  }
}

const isInstanceReports = (value: Record<string, unknown>) => {
  const entries = Object.values(value);
  return entries.length > 0 && entries.every((e) => isObject(e) && typeof e.resolved === 'boolean');
};

/**
 * The official outcome in `value`, a file's parsed JSON; `where` names it in errors. An
 * unknown shape is one line naming what is accepted.
 */
export function parseOfficial(value: unknown, where: string): Official {
  if (isObject(value)) {
    if ('resolved_ids' in value) return parseRunReport(value, where);
    if ('resolved' in value && Array.isArray(value.resolved))
      return parseResolvedList(value, where);
    if (isInstanceReports(value)) {
      const instances = new Map<string, OfficialInstance>();
      addInstanceReports(instances, value, where, new Map());
      return { shape: 'instance_reports', instances, unlisted: null };
    }
    if ('resolved_instances' in value || 'pending_instances' in value) {
      invalid(where, 'the report has counts but no instance lists (resolved_ids, …) to compare');
    }
  }
  return invalid(where, `unknown shape; expected ${EXPECTED_SHAPES}`);
}

/**
 * A folder's per-instance report.json files, merged. `files` are each one's path (for
 * errors) and text; an empty file is an error there, as make_run_report counts it, but it
 * names no instance, so it is only counted.
 */
export function parseInstanceReports(
  files: ReadonlyArray<{ where: string; text: string }>,
  folder: string,
): Official {
  const instances = new Map<string, OfficialInstance>();
  const seenIn = new Map<string, string>();
  for (const { where, text } of files) {
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      invalid(where, 'not JSON');
    }
    if (!isObject(value) || !isInstanceReports(value)) {
      invalid(where, `not a per-instance report.json; expected {"<instance_id>": {"resolved": …}}`);
    }
    addInstanceReports(instances, value, where, seenIn);
  }
  if (instances.size === 0) {
    invalid(folder, `no report.json with an instance in it; expected ${EXPECTED_SHAPES}`);
  }
  return { shape: 'instance_reports', instances, unlisted: null };
}
