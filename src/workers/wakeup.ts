// A reusable wake-up signal: wait() resolves on the next notify(), or after `ms`, whichever
// comes first. Claim loops sleep on it instead of spinning, and wake when a slot frees.

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
