// The batch cost cap (`--max-cost`) shared by the solves of one batch that run at the same time
// in one worker process. Each solve's model proxy draws on its batch's ledger: every metered
// answer adds its cost as it is charged, and once the batch's spend reaches the cap the next
// request of any of them is refused. Without it each solve was given what was left of the cap
// at its start, so N concurrent solves could together spend N times that.
//
// What the batch has spent, as this process knows it, is the larger of two sums, each never
// more than the truth:
//   - the store's spend when the ledger was opened, plus every cost metered here since;
//   - the store's latest spend (done solves, whichever process ran them), plus the cost of
//     this process's solves still running.
// The first covers a solve of this process that has finished but whose result the store does
// not hold yet; the second takes in what other processes' finished solves spent. What neither
// sees is the spend of solves running in other worker processes (another `proctor work`, or
// another host on PostgreSQL) until they finish: across processes the cap is still checked
// only at each solve's start.
import type { SharedCost } from '../proxy/budget.js';

export interface CostLedgers {
  /**
   * Opens one solve's share of its batch's ledger: `storeSpentUsd` is what the store's budget
   * check just found. Close the share when the solve ends.
   */
  open(batchId: string, capUsd: number, storeSpentUsd: number): CostShare;
}

export interface CostShare extends SharedCost {
  close(): void;
}

interface Ledger {
  capUsd: number;
  /** The store's spend when the ledger was made, plus everything metered here since. */
  total: number;
  /** The store's spend at the latest check. */
  stored: number;
  /** The running solves' spend, per share. */
  live: Map<object, number>;
  /** The order in which the last share closed (for pruning idle ledgers); null while in use. */
  idleSince: number | null;
}

/** Idle ledgers kept, so that a solve starting just after another ended still sees its spend. */
const IDLE_KEPT = 64;

export function createCostLedgers(): CostLedgers {
  const ledgers = new Map<string, Ledger>();
  let closes = 0;

  const prune = () => {
    const idle = [...ledgers.entries()].filter(([, l]) => l.idleSince !== null);
    if (idle.length <= IDLE_KEPT) return;
    idle.sort(([, a], [, b]) => (a.idleSince ?? 0) - (b.idleSince ?? 0));
    for (const [id] of idle.slice(0, idle.length - IDLE_KEPT)) ledgers.delete(id);
  };

  return {
    open(batchId, capUsd, storeSpentUsd) {
      let ledger = ledgers.get(batchId);
      if (!ledger) {
        ledger = {
          capUsd,
          total: storeSpentUsd,
          stored: storeSpentUsd,
          live: new Map(),
          idleSince: null,
        };
        ledgers.set(batchId, ledger);
        prune();
      }
      const own = ledger;
      own.capUsd = capUsd;
      own.stored = Math.max(own.stored, storeSpentUsd);
      own.idleSince = null;
      const key = {};
      own.live.set(key, 0);
      let closed = false;
      return {
        capUsd,
        spentUsd() {
          let running = 0;
          for (const cost of own.live.values()) running += cost;
          return Math.max(own.total, own.stored + running);
        },
        add(usd) {
          own.total += usd;
          if (!closed) own.live.set(key, (own.live.get(key) ?? 0) + usd);
        },
        close() {
          if (closed) return;
          closed = true;
          own.live.delete(key);
          if (own.live.size === 0) own.idleSince = ++closes;
        },
      };
    },
  };
}
