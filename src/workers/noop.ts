// The handler of the `noop` kind: waits `sleepMs` (abortably) and succeeds, or fails
// retryably on its first `failAttempts` attempts. It exercises the queue and the pool in
// tests and benchmarks; `proctor` registers it nowhere else.
import { setTimeout as sleep } from 'node:timers/promises';
import type { PayloadOf } from '../queue/index.js';
import { ProctorError } from '../errors.js';
import type { JobContext } from './pool.js';

export async function noopHandler(context: JobContext): Promise<{ result: unknown }> {
  const payload = context.payload as PayloadOf<'noop'>;
  if (payload.sleepMs > 0) await sleep(payload.sleepMs, undefined, { signal: context.signal });
  if (context.job.attempt <= payload.failAttempts) {
    // INTERNAL is retryable: the job is tried again, as after a machine failure.
    throw new ProctorError('INTERNAL', `noop: planned failure on attempt ${context.job.attempt}`);
  }
  return { result: { ok: true, attempt: context.job.attempt } };
}
