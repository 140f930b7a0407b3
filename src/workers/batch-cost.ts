// A batch's cost cap (`--max-cost`) as a solve draws on it: the batch's spend is kept by the
// job store (`batches.spent_usd`), so every solve of the batch, in any worker process on any
// host, reads and draws on the same figure. The agent adapter's model proxy reads it before
// each request and draws each answer's cost on it (src/proxy/budget.ts); the flat and codex
// adapters, whose model loops run without the proxy, draw their solve's cost when it ends.
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
