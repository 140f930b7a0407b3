// A batch's cost cap (`--max-cost`) as a solve draws on it: the batch's spend is kept by the
// job store (`batches.spent_usd`), so every solve of the batch, in any worker process on any
// host, reads and draws on the same figure. Every model request of a capped solve reads it
// first and every answer's cost is drawn on it (src/proxy/budget.ts): in the agent adapter's
// model proxy, in the flat adapter's loop, and in the proxy the codex adapter then runs codex
// through.
import type { SharedCost } from '../proxy/budget.js';
import type { JobStore } from '../queue/index.js';

export type BatchCostStore = Pick<JobStore, 'batchSpent' | 'drawCost'>;

export function batchCost(store: BatchCostStore, batchId: string, capUsd: number): SharedCost {
  return {
    capUsd,
    spentUsd: () => store.batchSpent(batchId),
    draw: (usd) => store.drawCost(batchId, usd),
  };
}
