// Natural batching of the PostgreSQL store's hottest statements (claims and plain
// completions), the round-trip twin of the SQLite store's group commit (write-batcher.ts).
// A request that finds its statement idle goes out on the next turn of the event loop with
// whatever else arrived in that turn; requests that arrive while it is in flight wait for it
// and then go out together as one statement. So an idle store adds no latency, and a busy one
// (8 slots finishing no-op jobs at once, bench:scale (a)) pays one round trip, one parse and
// one commit for many jobs instead of one each. Keys keep apart requests that cannot share a
// statement (another kind, owner or lease; another test-clock time).
//
// A batch that fails wrote nothing (the statement is atomic). When `isolate` says the error
// may be one request's own (PostgreSQL refused a value), the batch is run again one request
// at a time, so that request fails alone; otherwise (a connection lost mid-statement, when
// running it again could apply it twice) every request in it fails with the same error.

/** Most requests in one statement; more wait for the next one. */
export const MAX_COALESCED = 256;

interface Waiter<A, R> {
  arg: A;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

interface Lane<A, R> {
  waiting: Waiter<A, R>[];
  busy: boolean;
}

export interface Coalescer<A, R> {
  submit(key: string, arg: A): Promise<R>;
}

/**
 * `execute` runs one statement for the requests of one key and returns one result per
 * request, in order.
 */
export function createCoalescer<A, R>(
  execute: (key: string, args: A[]) => Promise<R[]>,
  isolate: (error: unknown) => boolean = () => false,
): Coalescer<A, R> {
  const lanes = new Map<string, Lane<A, R>>();

  const flush = (key: string, lane: Lane<A, R>) => {
    const batch = lane.waiting.splice(0, MAX_COALESCED);
    if (batch.length === 0) {
      lane.busy = false;
      lanes.delete(key);
      return;
    }
    execute(
      key,
      batch.map((w) => w.arg),
    ).then(
      (results) => {
        batch.forEach((w, i) => w.resolve(results[i] as R));
        flush(key, lane);
      },
      async (error: unknown) => {
        if (batch.length > 1 && isolate(error)) {
          for (const w of batch) {
            await execute(key, [w.arg]).then(
              ([result]) => w.resolve(result as R),
              (alone: unknown) => w.reject(alone),
            );
          }
        } else {
          for (const w of batch) w.reject(error);
        }
        flush(key, lane);
      },
    );
  };

  return {
    submit(key, arg) {
      return new Promise<R>((resolve, reject) => {
        let lane = lanes.get(key);
        if (lane === undefined) {
          lane = { waiting: [], busy: false };
          lanes.set(key, lane);
        }
        lane.waiting.push({ arg, resolve, reject });
        if (!lane.busy) {
          lane.busy = true;
          const started = lane;
          setImmediate(() => flush(key, started));
        }
      });
    },
  };
}
