// What a report reads from stored job payloads and results. They come from the database, so
// they are checked here rather than trusted; a field that is missing or malformed reads as
// null instead of failing the whole report (a result written by an older Proctor, say).
// Unknown keys are kept out, not refused: results carry much more than a report needs.
import { z } from 'zod';

const count = z.number().int().nonnegative();
const text = z.string().max(100_000);
const hash = z.string().regex(/^[0-9a-f]{64}$/);

const task = z.object({
  id: z.string().max(200),
  source: z.object({ instance_id: z.string().max(200).optional() }).optional(),
});

const image = z.union([
  z.object({ portable: z.literal(true), digest: z.string().max(200) }),
  z.object({ portable: z.literal(false), kind: z.literal('local_build'), imageId: z.string() }),
]);

export const storedGrade = z.object({
  verdict: z.enum(['PASS', 'FAIL']),
  reason: z.string().max(100),
  detail: text.optional(),
  testsHash: hash.optional(),
  task: task.optional(),
  image: image.optional(),
  diffSha256: hash.nullable().optional(),
  log: z.string().max(200).optional(),
  timings: z.record(z.string().max(100), z.number().nonnegative()).optional(),
});

export const storedSolve = z.object({
  verdict: z.enum(['PASS', 'FAIL']),
  reason: z.string().max(100),
  detail: text.optional(),
  task: task.optional(),
  candidate: z.object({ sha256: hash }).nullable().optional(),
  transcript: z.string().max(200).optional(),
  solveMs: z.number().nonnegative().optional(),
  usage: z
    .object({ inputTokens: count, cachedInputTokens: count, outputTokens: count })
    .nullable()
    .optional(),
  turns: count.optional(),
  toolCalls: count.optional(),
  costUsd: z.number().nonnegative().nullable().optional(),
});

export const storedPayload = z.object({
  bundle: z.string().max(4096).optional(),
  candidate: z.string().max(200).optional(),
  solver: z.string().max(64).optional(),
  sample: z.number().int().min(1).optional(),
  retryOf: z.number().int().positive().optional(),
  prediction: z.object({ instanceId: z.string().max(200), model: z.string().max(500) }).optional(),
});

export type StoredGrade = z.output<typeof storedGrade>;
export type StoredSolve = z.output<typeof storedSolve>;
export type StoredPayload = z.output<typeof storedPayload>;

function parsed<T>(schema: z.ZodType<T>, value: unknown): T | null {
  if (value === null || value === undefined) return null;
  const result = schema.safeParse(value);
  return result.success ? result.data : null;
}

export const gradeOf = (value: unknown) => parsed(storedGrade, value);
export const solveOf = (value: unknown) => parsed(storedSolve, value);
export const payloadOf = (value: unknown): StoredPayload => parsed(storedPayload, value) ?? {};

/** The identity a grade recorded for its image: the manifest digest, or `local_build:<id>`. */
export function imageIdentity(result: StoredGrade | null): string | null {
  const image = result?.image;
  if (!image) return null;
  return image.portable ? image.digest : `local_build:${image.imageId}`;
}
