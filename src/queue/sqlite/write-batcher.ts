// Group commit: writes requested during one turn of the event loop run together in a single
// BEGIN IMMEDIATE transaction, each inside its own savepoint. With synchronous=FULL a commit
// costs an fsync, so a pool finishing 64 jobs at once pays for one instead of 64, and with
// several processes each takes the write lock once per turn instead of once per write.
// A write that throws rolls back only its own savepoint; the others still commit.
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
  const runAll = sqlite.transaction((ops: Op[], outcomes: Outcome[]) => {
    for (const op of ops) {
      try {
        outcomes.push({ ok: true, value: savepoint(op.fn) });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
  });

  const flush = () => {
    scheduled = false;
    const ops = pending;
    pending = [];
    const outcomes: Outcome[] = [];
    try {
      runAll.immediate(ops, outcomes);
    } catch (error) {
      // The transaction itself failed (lock timeout, disk full): nothing was written.
      for (const op of ops) op.reject(error);
      return;
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
