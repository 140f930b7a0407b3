// Capped exponential backoff for retryable failures: base * 2^(attempt-1), at most `cap`.
// No jitter: Proctor's retries are few and per job, not a thundering herd, and a
// deterministic delay keeps retries predictable for users and tests.

export interface BackoffOptions {
  /** Delay after the first failed attempt. Default 2 000 ms. */
  baseMs?: number;
  /** Longest delay. Default 300 000 ms (5 min). */
  capMs?: number;
}

export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 2_000;
  const cap = options.capMs ?? 300_000;
  const exponent = Math.max(0, Math.min(attempt - 1, 30));
  return Math.min(cap, base * 2 ** exponent);
}
