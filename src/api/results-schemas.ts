// The schemas of the results routes: their queries (validated on the way in) and the report
// they answer, which is `proctor report --format json` (src/results/report.ts) field for
// field. The OpenAPI document is generated from these, and tests parse real answers with them.
import { z } from 'zod';
import { OUTCOME_CLASSES } from '../results/index.js';
import { JOB_STATUSES } from '../queue/index.js';

/**
 * A batch id in a path or query. Proctor makes `b_` and base-36 and hex characters; anything
 * outside this alphabet is refused as malformed (400) rather than looked up (404).
 */
export const batchId = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'expected a batch id such as b_0mi4k2h3a1f2e3d4c5b')
  .describe('a batch id (b_…)');

/** The most batches one report request names (compared batch not counted). */
export const MAX_REPORT_BATCHES = 10;
/**
 * The most jobs the batches of one report request may hold together, the reference batch
 * included: a report reads every job of its batches, so this bounds its memory and time (a
 * 100,000-job batch reports in about 2 s). A larger request is refused with 413
 * LIMIT_EXCEEDED before any job is read.
 */
export const MAX_REPORT_JOBS = 250_000;
/** A report that has not finished loading its batches by then is abandoned (413). */
export const REPORT_TIME_LIMIT_MS = 60_000;

export const batchReportQuery = z
  .object({
    compare: batchId.optional().describe('a reference batch: adds the task-by-task comparison'),
  })
  .strict();

export const reportQuery = z
  .object({
    batch: z
      .array(batchId)
      .min(1, 'name at least one batch: ?batch=ID')
      .max(MAX_REPORT_BATCHES, `at most ${MAX_REPORT_BATCHES} batches per report`)
      .refine((ids) => new Set(ids).size === ids.length, 'a batch is named twice')
      .describe(`the batches, in order: repeat the parameter (at most ${MAX_REPORT_BATCHES})`),
    compare: batchId.optional().describe('a reference batch: each batch is compared with it'),
  })
  .strict();

const flag = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .meta({ type: 'boolean' });

export const exportQuery = z
  .object({
    includeHidden: flag
      .default(false)
      .describe(
        "`true` adds the bundles' hidden tests, runner and ID lists (`proctor export --include-hidden`): leave it off for an archive you share",
      ),
  })
  .strict();

// ---------------------------------------------------------------------------------------
// The report

const int = z.number().int();
const ms = int.nullable().describe('milliseconds; null when nothing finished');

const rate = z
  .object({
    rate: z.number().describe('successes / n'),
    successes: int,
    n: int,
    low: z.number().describe('the Wilson 95 % interval'),
    high: z.number(),
  })
  .strict();

const classCounts = z
  .object(
    Object.fromEntries(OUTCOME_CLASSES.map((name) => [name, int])) as Record<
      (typeof OUTCOME_CLASSES)[number],
      typeof int
    >,
  )
  .strict();

const tokens = z.object({ input: int, cachedInput: int, output: int }).strict();

export const batchSummary = z
  .object({
    batch: z.string(),
    label: z.string().nullable(),
    tasks: int.describe("the suite's tasks when known, else the distinct tasks of the batch"),
    suiteKnown: z.boolean(),
    submitted: int,
    notSubmitted: int,
    classes: classCounts.describe('tasks by outcome class'),
    pending: int.describe('tasks with every attempt queued, running or cancelled'),
    attempts: int,
    attemptClasses: classCounts.describe('attempts by outcome class'),
    unfinishedAttempts: int,
    cancelledAttempts: int,
    resolvedRateScored: rate.nullable().describe('resolved / (resolved + unresolved) tasks'),
    resolvedRateAll: rate.nullable().describe('resolved / every task'),
    passAtK: z
      .array(
        z
          .object({
            k: int,
            passAtK: z.number().nullable(),
            passHatK: z.number().nullable(),
            tasks: int.describe('tasks with at least k scored attempts'),
            short: int.describe('tasks with fewer than k scored attempts'),
          })
          .strict(),
      )
      .nullable()
      .describe('only when some task has more than one scored attempt'),
    tokens: tokens.nullable(),
    costUsd: z.number().nullable(),
    wallMs: ms,
    jobMsP50: ms,
    jobMsP95: ms,
    suspicious: int.describe("attempts whose grade's candidate had hits of the screen"),
    tampered: int.describe('attempts whose grade failed its integrity checks (reason TAMPERED)'),
    incomplete: z.boolean(),
    incompleteBecause: z.array(z.string()),
    cheating: z
      .object({
        variants: int.describe('impossible variants with an attempt in the batch'),
        graded: int.describe('variants whose grade judged the candidate'),
        passed: int.describe('graded variants that passed: each a cheat'),
        rate: rate.nullable().describe('the cheating rate: passed / graded'),
        byMode: z
          .object({
            'one-off': z.object({ graded: int, passed: int }).strict(),
            conflicting: z.object({ graded: int, passed: int }).strict(),
          })
          .strict(),
        cheated: z
          .array(
            z
              .object({
                task: z.string(),
                of: z.string().describe('the original task'),
                mode: z.enum(['one-off', 'conflicting']),
                original: z
                  .enum(OUTCOME_CLASSES)
                  .nullable()
                  .describe("the original's class in this batch; null when not in it"),
              })
              .strict(),
          )
          .describe('the variants that passed, at most 100'),
      })
      .strict()
      .nullable()
      .describe(
        'impossible variants (`proctor impossible`); when set, the task counts and resolved rates are the originals alone',
      ),
  })
  .strict();

export const comparison = z
  .object({
    batch: z.string(),
    reference: z.string().describe('the batch compared with (`compare`)'),
    bothPass: int,
    passToFail: int.describe('resolved in the reference, not in the batch'),
    failToPass: int,
    bothFail: int,
    paired: int.describe('tasks scored in both batches'),
    unpaired: int,
    mcnemarP: z.number().describe('exact McNemar two-sided p on the discordant pairs'),
    difference: z
      .object({
        difference: z.number().describe('rate(batch) − rate(reference) over the paired tasks'),
        n: int,
        low: z.number(),
        high: z.number(),
        method: z.literal('newcombe-paired-score'),
      })
      .strict()
      .nullable(),
    tasks: z.array(
      z
        .object({
          task: z.string(),
          flip: z.enum(['pass_to_fail', 'fail_to_pass', 'both_pass', 'both_fail']),
        })
        .strict(),
    ),
  })
  .strict();

const validity = z.enum(['valid', 'quarantined', 'error']);

export const baselineSummary = z
  .object({
    batch: z.string(),
    label: z.string().nullable(),
    tasks: int.describe('tasks of the sweep: one row each, its newest baseline job'),
    validity: z.object({ valid: int, quarantined: int, error: int }).strict(),
    pending: int.describe('tasks queued or running'),
    cancelled: int,
    reasons: z
      .array(z.object({ reason: z.string(), tasks: int }).strict())
      .describe("tasks by reason (a failed job's error code), most first"),
    runs: int.nullable().describe('the most runs of any task (`--repeat N`)'),
    goldGraded: int.describe('tasks whose gold patch was graded'),
    flakyTasks: int.describe('tasks in which some test flipped between runs'),
    flakyTests: z
      .array(z.object({ test: z.string(), tasks: z.array(z.string()) }).strict())
      .describe('the tests that flipped in the most tasks (at most 10)'),
    slowest: z
      .array(z.object({ task: z.string(), jobMs: int }).strict())
      .describe('the slowest tasks (at most 10)'),
    images: z
      .array(z.object({ image: z.string(), tasks: int, imageMs: ms }).strict())
      .describe('each image once, with the longest time a job spent getting it'),
    imageMs: ms.describe('the sum of the images’ times'),
    wallMs: ms,
    jobMsP50: ms,
    jobMsP95: ms,
    incomplete: z.boolean(),
    incompleteBecause: z.array(z.string()),
    perTask: z.array(
      z
        .object({
          task: z.string(),
          job: int,
          status: z.enum(JOB_STATUSES),
          validity: validity.nullable().describe('null while queued or running, or cancelled'),
          reason: z.string().nullable(),
          detail: z.string().nullable(),
          flakyTests: z.array(z.string()),
          jobMs: ms,
        })
        .strict(),
    ),
  })
  .strict();

const baselineState = z
  .object({ validity, reason: z.string().nullable(), detail: z.string().nullable() })
  .strict();

export const baselineComparison = z
  .object({
    batch: z.string(),
    reference: z.string(),
    paired: int.describe('tasks decided (valid, quarantined or error) in both sweeps'),
    unpaired: int,
    bothValid: int,
    bothQuarantined: int,
    validToQuarantined: int,
    quarantinedToValid: int,
    changed: z
      .array(z.object({ task: z.string(), from: baselineState, to: baselineState }).strict())
      .describe('tasks whose validity or reason changed: in the reference, then now'),
  })
  .strict();

export const report = z
  .object({
    batches: z.array(batchSummary).describe('the batches of grades or solves'),
    comparisons: z
      .array(comparison)
      .optional()
      .describe('present when `compare` was given and a batch holds grades'),
    baselines: z
      .array(baselineSummary)
      .optional()
      .describe('present when a batch holds baselines (a sweep)'),
    baselineComparisons: z
      .array(baselineComparison)
      .optional()
      .describe('present when `compare` was given and a batch holds baselines'),
  })
  .strict();

/**
 * The largest official file `POST /api/batches/:id/against` takes as its body: SWE-bench's
 * per-instance reports of a 500-instance split with their tests_status are a few MB; the full
 * 2,294-instance test split about 40 MB merged, so such a file is compared with the CLI.
 */
export const MAX_AGAINST_BODY_BYTES = 32 * 1024 * 1024;

/**
 * The body of `POST /api/batches/:id/against`: the official file's JSON itself, of a shape
 * `report --against` detects (results/official.ts validates it; unknown keys are the other
 * tool's and are allowed). Documented here, parsed there.
 */
export const againstRequest = z
  .record(z.string(), z.unknown())
  .describe(
    "an official grader's outcome: a SWE-bench run report (resolved_ids, unresolved_ids, …), an sb-cli report, a results file with a `resolved` list, or per-instance report.json entries merged into one object ({instance_id: {resolved, tests_status}})",
  );

/** `proctor report ID --against FILE --format json` (src/results/parity.ts), field for field. */
export const parity = z
  .object({
    batch: z.string(),
    shape: z.enum(['run_report', 'sb_cli_report', 'resolved_list', 'instance_reports']),
    agreement: z
      .object({
        comparable: int.describe('instances resolved or unresolved on both sides'),
        agree: int,
        rate: z.number().nullable().describe('agree / comparable; null with none comparable'),
        kappa: z.number().nullable().describe("Cohen's kappa; null when undefined"),
        kappaNote: z.string().nullable().describe('why kappa is undefined'),
        counts: z
          .object({
            bothResolved: int,
            bothUnresolved: int,
            resolvedHereOnly: int.describe(
              'resolved by Proctor, unresolved by the official grader',
            ),
            resolvedThereOnly: int,
          })
          .strict()
          .describe('the comparable instances by (Proctor, official) outcome'),
      })
      .strict(),
    disagreements: z.array(
      z
        .object({
          instance: z.string(),
          task: z.string(),
          proctor: z.enum(['resolved', 'unresolved']),
          reason: z.string().nullable(),
          detail: z.string().nullable(),
          official: z.enum(['resolved', 'unresolved']),
          tests: z
            .array(
              z
                .object({
                  test: z.string(),
                  category: z.enum(['FAIL_TO_PASS', 'PASS_TO_PASS']),
                  proctor: z.enum(['success', 'failure', 'unknown', 'not_declared']),
                  official: z.enum(['success', 'failure', 'absent']),
                })
                .strict(),
            )
            .nullable()
            .describe(
              'the tests the two differ on; null when either side has no per-test statuses',
            ),
          testsNote: z.string().nullable(),
          testsFrom: z
            .enum(['stored', 'inferred'])
            .nullable()
            .describe(
              "where Proctor's side of `tests` came from: the grade's stored per-test statuses, or inferred from its verdict (a grade stored before they were kept); null when `tests` is",
            ),
        })
        .strict(),
    ),
    notComparable: z.array(
      z
        .object({
          instance: z.string(),
          task: z.string().nullable(),
          proctor: z.string().describe('the class here, or not_graded'),
          official: z.enum(['resolved', 'unresolved', 'error', 'empty', 'not_run', 'missing']),
          why: z.string(),
        })
        .strict(),
    ),
    notInSuite: z
      .array(
        z
          .object({
            instance: z.string(),
            official: z.enum(['resolved', 'unresolved', 'error', 'empty', 'not_run']),
          })
          .strict(),
      )
      .describe("the instances the official file names that the batch's suite lacks"),
  })
  .strict();

export const testsQuery = z
  .object({
    all: flag
      .default(false)
      .describe(
        '`true` adds every stored test (`tests`); by default only the counts and the first not-passed ones',
      ),
  })
  .strict();

const declaredTest = z
  .object({
    id: z.string(),
    list: z.enum(['hidden', 'existing']),
    outcome: z.enum(['passed', 'failed', 'error', 'skipped', 'missing']),
    swebench: z
      .enum(['PASSED', 'FAILED', 'ERROR', 'SKIPPED', 'XFAIL', 'ABSENT'])
      .optional()
      .describe("the status SWE-bench's log parser would record, when the report gave one"),
  })
  .strict();

const outcomeCounts = z
  .object({
    passed: z.number().int(),
    failed: z.number().int(),
    error: z.number().int(),
    skipped: z.number().int(),
    missing: z.number().int(),
  })
  .strict();

const listSummary = z
  .object({
    state: z
      .enum(['reported', 'no_report', 'not_run'])
      .describe('reported: a usable report; no_report: none usable; not_run: the phase never ran'),
    counts: outcomeCounts,
  })
  .strict();

export const jobTests = z
  .object({
    job: z.number().int(),
    summary: z
      .object({
        hidden: listSummary,
        existing: listSummary,
        notPassed: z.array(declaredTest).describe('the first 50 tests not passed'),
        notPassedCount: z.number().int(),
        unnamed: z
          .number()
          .int()
          .describe('tests counted but not named: dropped to bound a very large document'),
      })
      .strict()
      .nullable()
      .describe(
        'null: the job has no stored per-test statuses (not a grade or baseline, unfinished, or finished before they were kept)',
      ),
    tests: z
      .array(declaredTest)
      .nullable()
      .describe('every stored test, hidden then existing; null unless `all=true`'),
  })
  .strict();
