// The payload schema of each job kind, checked at enqueue (so a bad request is refused with a
// message naming the field) and again when a worker claims the job.
import { z } from 'zod';
import { ProctorError } from '../errors.js';
import { zodProblem } from '../problems.js';
import type { JobKind } from './constants.js';

/** Largest payload accepted, as JSON text. Payloads name bundles and artifacts; they never carry them. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

const path = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), 'must not contain NUL');

/** The independent attempt number of `--attempts K` (1..K); absent means 1. */
const sample = z.number().int().min(1).max(1000).optional();
/** The job a retry re-runs (`proctor retry`): the new job is its attempt anew. */
const retryOf = z.number().int().positive().optional();

export const payloadSchemas = {
  baseline: z
    .object({
      bundle: path,
      gold: z.boolean().default(false),
      repeat: z.number().int().min(1).max(20).default(1),
    })
    .strict(),
  solve: z
    .object({
      bundle: path,
      solver: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be a solver profile name'),
      timeoutSeconds: z.number().int().positive().optional(),
      /** The batch's cost cap in USD (`--max-cost`): checked as the solve starts. */
      maxCostUsd: z.number().positive().max(1_000_000_000).optional(),
      /**
       * `--agent`: run this agent (a built-in's name or an absolute definition path) through
       * the profile's provider, whatever the profile's adapter.
       */
      agent: z.string().min(1).max(4096).optional(),
      /** `--model`: the model the provider is asked for, instead of the profile's. */
      model: z.string().min(1).max(200).optional(),
      sample,
      retryOf,
    })
    .strict(),
  grade: z
    .object({
      bundle: path,
      /**
       * The candidate artifact. Absent only for a grade recorded finished at enqueue (a
       * prediction with an empty patch): such a job never runs.
       */
      candidate: z.string().min(1).max(200).optional(),
      /** A solve's grade carries its solve's sample. */
      sample,
      retryOf,
      /** A grade of a SWE-bench prediction (`grade --predictions`): whose, and for which row. */
      prediction: z
        .object({ instanceId: z.string().min(1).max(512), model: z.string().min(1).max(200) })
        .strict()
        .optional(),
    })
    .strict(),
  /** The full check of one bundle: its image resolved or built, and HEAD in it is base_commit. */
  validate: z.object({ bundle: path }).strict(),
  /** Does nothing for `sleepMs`; exercises the queue and the pool in tests and benchmarks. */
  noop: z
    .object({
      sleepMs: z.number().int().min(0).max(3_600_000).default(0),
      tag: z.string().max(200).optional(),
      /** Fail (retryably) on the first N attempts, to exercise backoff. */
      failAttempts: z.number().int().min(0).max(100).default(0),
    })
    .strict(),
} satisfies Record<JobKind, z.ZodType>;

export type PayloadOf<K extends JobKind> = z.output<(typeof payloadSchemas)[K]>;

/** Validates a payload for `kind`, returning its normalised form or a PAYLOAD_INVALID error. */
export function parsePayload<K extends JobKind>(kind: K, payload: unknown): PayloadOf<K> {
  const result = payloadSchemas[kind].safeParse(payload);
  if (!result.success) {
    const { path: where, detail } = zodProblem(result.error, 'payload');
    throw new ProctorError('PAYLOAD_INVALID', `invalid ${kind} job: ${where}: ${detail}`, {
      data: { kind, path: where },
    });
  }
  return result.data as PayloadOf<K>;
}
