// The API's schemas: requests (validated on the way in) and answers (the types the routes must
// build, and what tests parse real answers with). The OpenAPI document is generated from both.
import { z } from 'zod';
import { integerExpected, parseInteger } from '../numbers.js';
import { proxyStopSchema, trajectorySchema, trajectoryStepSchema } from '../proxy/trajectory.js';
import { CANCEL_OUTCOMES, JOB_KINDS, JOB_STATUSES, MAX_PAGE } from '../queue/index.js';

/**
 * A whole number in a JSON body within [min, max]. Any other value (1e308, 1.5, -1, "5", null)
 * is a 400 naming the field and these bounds in the command line's words, never zod's own
 * (which would name the safe-integer limit for 1e308).
 */
function integer(min: number, max: number) {
  const error = (issue: { input: unknown }) => integerExpected({ min, max }, issue.input);
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

/** The most runs of each state one baseline job may ask for (`proctor baseline --repeat`). */
export const MAX_REPEAT = 20;
/** The longest solve timeout a job may ask for, in seconds (`proctor solve --timeout`). */
export const MAX_TIMEOUT_SECONDS = 86_400;

const bundle = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), 'must not contain NUL')
  .refine((p) => !p.includes('\\'), 'must not contain a backslash: paths use /')
  .describe('a bundle folder, relative to tasks_root (or absolute inside it)');

/** One job to enqueue. A grade carries its candidate diff as text. */
export const jobRequest = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('baseline'),
      bundle,
      gold: z.boolean().default(false),
      repeat: integer(1, MAX_REPEAT).default(1),
      idempotencyKey: z.string().min(1).max(512).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('solve'),
      bundle,
      solver: z.string().min(1).max(64).describe('a solver profile of proctor.toml'),
      timeoutSeconds: integer(1, MAX_TIMEOUT_SECONDS).optional(),
      idempotencyKey: z.string().min(1).max(512).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('grade'),
      bundle,
      patch: z
        .string()
        .max(64 * 1024 * 1024)
        .describe('the candidate diff (git format)'),
      idempotencyKey: z.string().min(1).max(512).optional(),
    })
    .strict(),
]);

export type JobRequest = z.output<typeof jobRequest>;

/**
 * The most jobs one batch request may hold. Each job may name another bundle to read (about
 * 25 ms of CPU for a small one), so this bounds the work of one request; a larger batch is
 * refused at once with 413 LIMIT_EXCEEDED, before any bundle is read. Split larger suites.
 */
export const MAX_BATCH_JOBS = 1000;

export const batchRequest = z
  .object({
    label: z.string().max(200).optional(),
    idempotencyKey: z.string().min(1).max(512).optional(),
    jobs: z
      .array(jobRequest)
      .min(1)
      .max(MAX_BATCH_JOBS)
      .describe(
        `at most ${MAX_BATCH_JOBS} jobs; a longer list is refused with 413 LIMIT_EXCEEDED before any bundle is read`,
      ),
  })
  .strict();

export const validateRequest = z
  .object({
    path: bundle.describe(
      'a bundle or suite folder, relative to tasks_root (or absolute inside it)',
    ),
    idempotencyKey: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe('a replay with the same key and bundles answers the same jobs, enqueuing none'),
  })
  .strict();

export const emptyRequest = z.object({}).strict();

/**
 * A whole number in a URL path or query, by the command line's strict rule (src/numbers.ts):
 * decimal digits only, within [min, max], so `1e3`, `0x10` and ids beyond 2^53 are a 400
 * naming the bounds. Documented as the integer it stands for.
 */
function decimal(min: number, max: number) {
  return z
    .string()
    .transform((text, ctx) => {
      const parsed = parseInteger(text, { min, max });
      if (parsed.ok) return parsed.value;
      ctx.addIssue({ code: 'custom', message: parsed.problem });
      return z.NEVER;
    })
    .meta({ type: 'integer', minimum: min, maximum: max });
}

const limit = decimal(1, MAX_PAGE).default(50);

export const jobListQuery = z
  .object({
    batch: z.string().min(1).max(100).optional(),
    status: z.enum(JOB_STATUSES).optional(),
    kind: z.enum(['baseline', 'solve', 'grade', 'validate']).optional(),
    limit,
    cursor: z.string().min(1).max(200).optional(),
  })
  .strict();

export const pageQuery = z
  .object({ limit, cursor: z.string().min(1).max(200).optional() })
  .strict();

export const MAX_LOG_SLICE = 1024 * 1024;

export const logQuery = z
  .object({
    offset: decimal(0, Number.MAX_SAFE_INTEGER).default(0),
    limit: decimal(1, MAX_LOG_SLICE).default(64 * 1024),
  })
  .strict();

/** The most steps one answer of the trajectory's steps view holds. */
export const MAX_TRAJECTORY_STEPS_PAGE = 200;
/**
 * The largest trajectory.json the steps view parses (it must read the file whole to answer);
 * a larger one is read by byte slices from `/api/jobs/:id/trajectory`.
 */
export const MAX_TRAJECTORY_VIEW_BYTES = 32 * 1024 * 1024;

export const trajectoryStepsQuery = z
  .object({
    offset: decimal(0, Number.MAX_SAFE_INTEGER).default(0),
    limit: decimal(1, MAX_TRAJECTORY_STEPS_PAGE).default(50),
  })
  .strict();

export const jobId = decimal(1, Number.MAX_SAFE_INTEGER);

// ---------------------------------------------------------------------------------------
// Answers

const int = z.number().int();
const time = int.describe('milliseconds since the epoch');
const cursor = z.string().nullable().describe('pass as `cursor` for the next page; null: no more');

export const jobView = z
  .object({
    id: int,
    batchId: z.string().nullable(),
    parentId: int.nullable().describe('the solve job a grade was made by, if any'),
    kind: z.enum(JOB_KINDS),
    status: z.enum(JOB_STATUSES),
    attempt: int,
    maxAttempts: int,
    payload: z.unknown().describe('what was enqueued: bundle, solver, candidate artifact…'),
    result: z
      .unknown()
      .describe(
        'null until done; a grade: { verdict, reason, detail, testsHash, … }; a validate job: { validity, problems, image, detail, … }',
      ),
    lastError: z.string().nullable(),
    errorCode: z
      .string()
      .nullable()
      .describe(
        'the code of the last failure (BUNDLE_INVALID, DOCKER_ERROR, WORKER_LOST, CANCELLED, …)',
      ),
    createdAt: time,
    startedAt: time.nullable(),
    finishedAt: time.nullable(),
    cancelRequested: z.boolean(),
    pull: z
      .object({
        image: z.string().describe('the digest-pinned reference being pulled'),
        bytes: int.describe('bytes downloaded so far'),
        totalBytes: int.nullable().describe("the layers' sizes as far as known"),
        layersDone: int,
        layers: int,
        bytesPerSecond: z.number().nullable(),
        etaSeconds: z.number().nullable(),
        startedAt: time,
        updatedAt: time,
      })
      .strict()
      .nullable()
      .describe('the image pull a running job waits on (written about once a second); else null'),
  })
  .strict();

export const artifactView = z
  .object({
    id: z.string(),
    name: z.string(),
    mediaType: z.string(),
    size: int,
    sha256: z.string(),
  })
  .strict();

export const batchView = z
  .object({
    id: z.string(),
    idempotencyKey: z.string().nullable(),
    label: z.string().nullable(),
    total: int,
    createdAt: time,
  })
  .strict();

const statusCounts = z.object(
  Object.fromEntries(JOB_STATUSES.map((status) => [status, int])) as Record<
    (typeof JOB_STATUSES)[number],
    typeof int
  >,
);

const progressFigures = {
  total: int,
  finished: int,
  remaining: int,
  ratePerMinute: z.number().nullable().describe('jobs finished per minute, recently'),
  etaSeconds: int.nullable().describe('0 when nothing is left; null when no rate is known yet'),
};

const cancelOutcome = z.enum(CANCEL_OUTCOMES);

export const answers = {
  job: z.object({ job: jobView, artifacts: z.array(artifactView) }).strict(),
  enqueued: z.object({ job: jobView, created: z.boolean() }).strict(),
  jobPage: z.object({ items: z.array(jobView), nextCursor: cursor }).strict(),
  batchEnqueued: z
    .object({ batch: batchView.nullable(), jobIds: z.array(int), created: z.boolean() })
    .strict(),
  batchPage: z
    .object({
      items: z.array(batchView.extend({ counts: statusCounts, ...progressFigures }).strict()),
      nextCursor: cursor,
    })
    .strict(),
  batchProgress: z
    .object({
      batch: batchView,
      counts: statusCounts,
      verdicts: z.record(z.string(), int).describe('finished jobs by verdict (or validity)'),
      ...progressFigures,
    })
    .strict(),
  jobCancelled: z.object({ id: int, outcome: cancelOutcome }).strict(),
  batchCancelled: z
    .object({ batchId: z.string(), outcomes: z.record(z.string(), cancelOutcome) })
    .strict(),
  logSlice: z
    .object({
      artifact: z.string(),
      size: int.describe('the whole log, in bytes'),
      offset: int,
      text: z.string(),
      nextOffset: int.nullable().describe('where the next slice starts; null: the end'),
    })
    .strict(),
  trajectorySteps: z
    .object({
      artifact: z.string(),
      size: int.describe('the whole trajectory.json, in bytes'),
      totals: trajectorySchema.shape.totals,
      stop: proxyStopSchema.nullable(),
      droppedSteps: int.describe('steps the proxy did not keep (still counted in the totals)'),
      stepCount: int.describe('the steps kept in the trajectory'),
      offset: int.describe('the position (from 0) of the first step of this answer'),
      steps: z.array(trajectoryStepSchema),
      nextOffset: int.nullable().describe('pass as `offset` for the next steps; null: no more'),
    })
    .strict(),
  validated: z
    .object({
      results: z
        .array(
          z.discriminatedUnion('ok', [
            z
              .object({
                ok: z.literal(true).describe('the static checks (format, paths) passed'),
                dir: z.string(),
                id: z.string(),
                job: int.describe(
                  'the validate job checking the image and base commit: poll GET /api/jobs/{job}',
                ),
              })
              .strict(),
            z
              .object({
                ok: z.literal(false).describe('the static checks failed; no job was enqueued'),
                dir: z.string(),
                id: z.string().optional(),
                problems: z.array(z.string()),
              })
              .strict(),
          ]),
        )
        .describe('one per bundle: a bundle folder gives one, a suite folder one per bundle'),
      batchId: z
        .string()
        .nullable()
        .describe('the batch of the validate jobs; null when no bundle passed the static checks'),
      created: z.boolean().describe('false when nothing was enqueued, or for a replayed key'),
    })
    .strict(),
  error: z.object({ error: z.object({ code: z.string(), message: z.string() }).strict() }).strict(),
};

/** What a route must answer: the input type of its answer schema. */
export type Answer<K extends keyof typeof answers> = z.input<(typeof answers)[K]>;
