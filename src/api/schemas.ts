// The API's request schemas: one zod source for validation and for the OpenAPI document.
import { z } from 'zod';
import { MAX_PAGE } from '../queue/index.js';

const bundle = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), 'must not contain NUL')
  .describe('a bundle folder, relative to tasks_root (or absolute inside it)');

/** One job to enqueue. A grade carries its candidate diff as text. */
export const jobRequest = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('baseline'),
      bundle,
      gold: z.boolean().default(false),
      repeat: z.number().int().min(1).max(20).default(1),
      idempotencyKey: z.string().min(1).max(512).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('solve'),
      bundle,
      solver: z.string().min(1).max(64).describe('a solver profile of proctor.toml'),
      timeoutSeconds: z.number().int().positive().max(86_400).optional(),
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

export const batchRequest = z
  .object({
    label: z.string().max(200).optional(),
    idempotencyKey: z.string().min(1).max(512).optional(),
    jobs: z.array(jobRequest).min(1).max(10_000),
  })
  .strict();

export const validateRequest = z.object({ path: bundle }).strict();

export const emptyRequest = z.object({}).strict();

const limit = z.coerce.number().int().min(1).max(MAX_PAGE).default(50);

export const jobListQuery = z
  .object({
    batch: z.string().min(1).max(100).optional(),
    status: z.enum(['queued', 'running', 'done', 'failed', 'cancelled']).optional(),
    kind: z.enum(['baseline', 'solve', 'grade']).optional(),
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
    offset: z.coerce.number().int().min(0).default(0),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_LOG_SLICE)
      .default(64 * 1024),
  })
  .strict();

export const jobId = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);
