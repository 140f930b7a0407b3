// Time comes from an injected clock so that tests control it and, later, PostgreSQL can
// supply database time. Times are integer milliseconds since the epoch.

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Wall times of named steps, ms, summed when a step runs more than once. */
export interface StepTimer {
  readonly steps: Record<string, number>;
  /** Runs `work`, adding its wall time to `step`, whether it succeeds or throws. */
  readonly time: <T>(step: string, work: () => Promise<T>) => Promise<T>;
  /** Adds `ms` to `step` (a time measured elsewhere). */
  readonly add: (step: string, ms: number) => void;
}

export function stepTimer(clock: Clock = systemClock): StepTimer {
  const steps: Record<string, number> = {};
  const add = (step: string, ms: number) => {
    steps[step] = (steps[step] ?? 0) + ms;
  };
  return {
    steps,
    add,
    time: async (step, work) => {
      const started = clock.now();
      try {
        return await work();
      } finally {
        add(step, clock.now() - started);
      }
    },
  };
}

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
