// A reusable wake-up signal: wait() resolves on the next notify(), or after `ms`, whichever
// comes first. Claim loops sleep on it instead of spinning, and wake when a slot frees, when
// this process enqueues, or (listenForWork) when another host's enqueue reaches the store.

export interface Wakeup {
  wait(ms: number): Promise<void>;
  notify(): void;
}

export function createWakeup(): Wakeup {
  let waiters: Array<() => void> = [];
  let pendingNotify = false;
  return {
    wait(ms) {
      if (pendingNotify) {
        pendingNotify = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          waiters = waiters.filter((w) => w !== done);
          resolve();
        }
        waiters.push(done);
      });
    },
    notify() {
      if (waiters.length === 0) {
        pendingNotify = true;
        return;
      }
      for (const waiter of waiters) waiter();
    },
  };
}

/** What listenForWork needs of a job store: its optional cross-process wake-ups. */
export interface WakeupSource {
  subscribe?(listener: (kind: string) => void): Promise<() => Promise<void>>;
}

/**
 * Wakes `notify` whenever the store says another process or host made jobs claimable
 * (PostgreSQL's LISTEN/NOTIFY). The claim loops' poll stays the backstop: a store without
 * wake-ups (SQLite), or one whose listener cannot connect, costs at most a poll interval.
 * Returns the function that stops listening.
 */
export async function listenForWork(
  store: WakeupSource,
  notify: () => void,
  onError: (error: unknown) => void,
): Promise<() => Promise<void>> {
  if (store.subscribe === undefined) return () => Promise.resolve();
  try {
    return await store.subscribe(() => notify());
  } catch (error) {
    onError(error);
    return () => Promise.resolve();
  }
}
