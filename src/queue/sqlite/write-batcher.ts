// Group commit: writes requested during one turn of the event loop run together in a single
// BEGIN IMMEDIATE transaction, each inside its own savepoint. With synchronous=FULL a commit
// costs an fsync, so a pool finishing 64 jobs at once pays for one instead of 64, and with
// several processes each takes the write lock once per turn instead of once per write.
// A write that throws must not take the others down: the batch first runs without
// savepoints (the common case, two statements cheaper per write); if any write throws, that
// transaction rolls back whole and the batch runs again with a savepoint around each write,
// so only the failing one is rolled back. Writes are plain functions of the database state,
// so running them again after a rollback is safe.
import type Database from 'better-sqlite3';

interface Op {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface WriteBatcher {
  run<T>(fn: () => T): Promise<T>;
}

export function createWriteBatcher(sqlite: Database.Database): WriteBatcher {
  let pending: Op[] = [];
  let scheduled = false;
  const savepoint = sqlite.transaction((fn: () => unknown) => fn());
  type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
  const runFast = sqlite.transaction((ops: Op[]) =>
    ops.map((op): Outcome => ({ ok: true, value: op.fn() })),
  );
  const runIsolated = sqlite.transaction((ops: Op[]) =>
    ops.map((op): Outcome => {
      try {
        return { ok: true, value: savepoint(op.fn) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );

  const flush = () => {
    scheduled = false;
    const ops = pending;
    pending = [];
    let outcomes: Outcome[];
    try {
      outcomes = runFast.immediate(ops);
    } catch {
      try {
        outcomes = runIsolated.immediate(ops);
      } catch (error) {
        // The transaction itself failed (lock timeout, disk full): nothing was written.
        for (const op of ops) op.reject(error);
        return;
      }
    }
    ops.forEach((op, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) op.resolve(outcome.value);
      else op.reject(outcome ? outcome.error : new Error('write was not run'));
    });
  };

  return {
    run<T>(fn: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        pending.push({ fn, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
  };
}
