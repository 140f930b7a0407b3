// Waiting for a condition with a deadline, instead of fixed sleeps.
import { setTimeout as sleep } from 'node:timers/promises';

export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${options.timeoutMs ?? 10_000} ms waiting for ${options.what ?? 'a condition'}`,
      );
    }
    await sleep(options.intervalMs ?? 20);
  }
}
