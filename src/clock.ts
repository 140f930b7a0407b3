// Time comes from an injected clock so that tests control it and, later, PostgreSQL can
// supply database time. Times are integer milliseconds since the epoch.

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock for tests: starts at `start` and moves only when told. */
export function manualClock(start = 1_700_000_000_000): Clock & { advance(ms: number): void } {
  let current = start;
  return {
    now: () => current,
    advance(ms: number) {
      current += ms;
    },
  };
}
