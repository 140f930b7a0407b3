// What solves spent, as the CLI prints it: one solve's tokens, turns, tool calls and cost
// (`proctor status JOB`), and a batch's total (`proctor solve --wait`).
import type { Job } from '../queue/index.js';
import type { SolveResult } from '../workers/index.js';

type Spend = Pick<SolveResult, 'usage' | 'turns' | 'toolCalls' | 'costUsd'>;

/** The spend a solve's result recorded, or undefined for any other result. */
export function spendOf(result: unknown): Spend | undefined {
  const r = result as Partial<Spend> | null;
  if (r === null || typeof r !== 'object' || typeof r.turns !== 'number') return undefined;
  return {
    usage: r.usage ?? null,
    turns: r.turns,
    toolCalls: r.toolCalls ?? 0,
    costUsd: typeof r.costUsd === 'number' ? r.costUsd : null,
  };
}

export function usd(value: number): string {
  return `$${value.toFixed(4)}`;
}

/** `6000 input tokens (4400 cached), 170 output, 3 turns, 2 tool calls, $0.0068`. */
export function spendText(spend: Spend): string {
  const tokens =
    spend.usage === null
      ? 'tokens unknown (no usage from the provider)'
      : `${spend.usage.inputTokens} input tokens (${spend.usage.cachedInputTokens} cached), ${spend.usage.outputTokens} output`;
  const cost = spend.costUsd === null ? 'no cost (no prices, or no usage)' : usd(spend.costUsd);
  return `${tokens}, ${spend.turns} turns, ${spend.toolCalls} tool calls, ${cost}`;
}

export interface BatchSpend {
  /** Solves that recorded a spend (finished with a result). */
  solves: number;
  /** The sum of their costUsd; solves without one add nothing. */
  costUsd: number;
  /** Solves whose cost is unknown (no prices or no usage). */
  unpriced: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

export function batchSpend(jobs: readonly Pick<Job, 'result'>[]): BatchSpend {
  const total: BatchSpend = {
    solves: 0,
    costUsd: 0,
    unpriced: 0,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
  };
  for (const job of jobs) {
    const spend = spendOf(job.result);
    if (spend === undefined) continue;
    total.solves++;
    if (spend.costUsd === null) total.unpriced++;
    else total.costUsd += spend.costUsd;
    total.inputTokens += spend.usage?.inputTokens ?? 0;
    total.cachedInputTokens += spend.usage?.cachedInputTokens ?? 0;
    total.outputTokens += spend.usage?.outputTokens ?? 0;
  }
  return total;
}

/** `spent $2.0000 on 2 solves: 2000000 input tokens (0 cached), 0 output`. */
export function batchSpendText(spend: BatchSpend): string {
  const unknown = spend.unpriced > 0 ? ` (${spend.unpriced} without a cost)` : '';
  return `spent ${usd(spend.costUsd)} on ${spend.solves} solve(s)${unknown}: ${spend.inputTokens} input tokens (${spend.cachedInputTokens} cached), ${spend.outputTokens} output`;
}
