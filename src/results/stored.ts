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
  /** Set for an impossible variant (oracle/task-impossible.ts). */
  impossible: z
    .object({ of: z.string().max(200), mode: z.enum(['one-off', 'conflicting']) })
    .optional(),
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
  // null in a grade recorded when enqueued (an empty or oversized prediction): nothing ran.
  image: image.nullable().optional(),
  diffSha256: hash.nullable().optional(),
  log: z.string().max(200).nullable().optional(),
  timings: z.record(z.string().max(100), z.number().nonnegative()).optional(),
  /** The screen of the candidate (oracle/screen.ts); only its count is read. */
  suspicious: z.object({ count }).optional(),
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

const runVerdict = z.object({ verdict: z.enum(['PASS', 'FAIL']) });

export const storedBaseline = z.object({
  verdict: z.enum(['PASS', 'FAIL']),
  reason: z.string().max(100),
  validity: z.enum(['valid', 'quarantined']),
  detail: text.optional(),
  testsHash: hash.optional(),
  task: task.optional(),
  image: image.optional(),
  runs: z.array(runVerdict).max(1_000).optional(),
  gold: runVerdict.nullable().optional(),
  flaky: z.array(z.string().max(10_000)).max(10_000).optional(),
  timings: z.record(z.string().max(100), z.number().nonnegative()).optional(),
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
export type StoredBaseline = z.output<typeof storedBaseline>;

// The checks below are the schemas above, written out by hand: a report reads one result and
// one payload per job, and at 100,000 jobs zod's generic walk was a third of the report's
// time. They accept exactly what the schemas accept (test/results/stored.test.ts compares
// them) and hand back the value itself: its unknown keys stay on it, but nothing reads them.
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isCount = (v: unknown) => isNum(v) && Number.isInteger(v) && v >= 0;
const isText = (v: unknown, max: number) => typeof v === 'string' && v.length <= max;
const HASH = /^[0-9a-f]{64}$/;
const isHash = (v: unknown) => typeof v === 'string' && HASH.test(v);
const isVerdict = (v: unknown) => v === 'PASS' || v === 'FAIL';
/** An optional field: absent (or undefined), or passing `check`. */
const opt = (v: unknown, check: (v: unknown) => boolean) => v === undefined || check(v);

function isTask(v: unknown): boolean {
  if (!isObj(v) || !isText(v.id, 200)) return false;
  return (
    opt(v.source, (s) => isObj(s) && opt(s.instance_id, (i) => isText(i, 200))) &&
    opt(
      v.impossible,
      (i) => isObj(i) && isText(i.of, 200) && (i.mode === 'one-off' || i.mode === 'conflicting'),
    )
  );
}

function isImage(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (v.portable === true) return isText(v.digest, 200);
  return v.portable === false && v.kind === 'local_build' && typeof v.imageId === 'string';
}

function isTimings(v: unknown): boolean {
  if (!isObj(v)) return false;
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue;
    const ms = v[key];
    if (key.length > 100 || !isNum(ms) || ms < 0) return false;
  }
  return true;
}

function isGrade(v: Obj): boolean {
  return (
    isVerdict(v.verdict) &&
    isText(v.reason, 100) &&
    opt(v.detail, (d) => isText(d, 100_000)) &&
    opt(v.testsHash, isHash) &&
    opt(v.task, isTask) &&
    opt(v.image, (i) => i === null || isImage(i)) &&
    opt(v.diffSha256, (d) => d === null || isHash(d)) &&
    opt(v.log, (l) => l === null || isText(l, 200)) &&
    opt(v.timings, isTimings) &&
    opt(v.suspicious, (s) => isObj(s) && isCount(s.count))
  );
}

const isUsage = (u: unknown) =>
  u === null ||
  (isObj(u) && isCount(u.inputTokens) && isCount(u.cachedInputTokens) && isCount(u.outputTokens));

function isSolve(v: Obj): boolean {
  return (
    isVerdict(v.verdict) &&
    isText(v.reason, 100) &&
    opt(v.detail, (d) => isText(d, 100_000)) &&
    opt(v.task, isTask) &&
    opt(v.candidate, (c) => c === null || (isObj(c) && isHash(c.sha256))) &&
    opt(v.transcript, (t) => isText(t, 200)) &&
    opt(v.solveMs, (n) => isNum(n) && n >= 0) &&
    opt(v.usage, isUsage) &&
    opt(v.turns, isCount) &&
    opt(v.toolCalls, isCount) &&
    opt(v.costUsd, (c) => c === null || (isNum(c) && c >= 0))
  );
}

function isPayload(v: Obj): boolean {
  return (
    opt(v.bundle, (b) => isText(b, 4096)) &&
    opt(v.candidate, (c) => isText(c, 200)) &&
    opt(v.solver, (s) => isText(s, 64)) &&
    opt(v.sample, (n) => isNum(n) && Number.isInteger(n) && n >= 1) &&
    opt(v.retryOf, (n) => isNum(n) && Number.isInteger(n) && n > 0) &&
    opt(v.prediction, (p) => isObj(p) && isText(p.instanceId, 200) && isText(p.model, 500))
  );
}

const isRun = (r: unknown) => isObj(r) && isVerdict(r.verdict);

function isBaseline(v: Obj): boolean {
  return (
    isVerdict(v.verdict) &&
    isText(v.reason, 100) &&
    (v.validity === 'valid' || v.validity === 'quarantined') &&
    opt(v.detail, (d) => isText(d, 100_000)) &&
    opt(v.testsHash, isHash) &&
    opt(v.task, isTask) &&
    opt(v.image, isImage) &&
    opt(v.runs, (r) => Array.isArray(r) && r.length <= 1_000 && r.every(isRun)) &&
    opt(v.gold, (g) => g === null || isRun(g)) &&
    opt(
      v.flaky,
      (f) => Array.isArray(f) && f.length <= 10_000 && f.every((id) => isText(id, 10_000)),
    ) &&
    opt(v.timings, isTimings)
  );
}

function checked<T>(check: (v: Obj) => boolean, value: unknown): T | null {
  if (!isObj(value)) return null;
  return check(value) ? (value as T) : null;
}

export const gradeOf = (value: unknown) => checked<StoredGrade>(isGrade, value);
export const solveOf = (value: unknown) => checked<StoredSolve>(isSolve, value);
export const baselineOf = (value: unknown) => checked<StoredBaseline>(isBaseline, value);
export const payloadOf = (value: unknown): StoredPayload =>
  checked<StoredPayload>(isPayload, value) ?? {};

/** The identity a grade recorded for its image: the manifest digest, or `local_build:<id>`. */
export function imageIdentity(result: Pick<StoredGrade, 'image'> | null): string | null {
  const image = result?.image;
  if (!image) return null;
  return image.portable ? image.digest : `local_build:${image.imageId}`;
}
