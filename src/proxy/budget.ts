// The solve's limits, as the proxy enforces them: tokens, turns (requests forwarded to the
// provider), cost in USD and the deadline. A request is admitted or refused before anything
// goes upstream; an answer's usage is charged when it is complete. The first limit passed is
// recorded as the solve's stop, and from then on every request is refused: a limit can only
// be seen after the answer that crossed it, so the answer that crosses it still reaches the
// agent, and requests already in flight then may add to the overshoot.
//
// A whole answer that reports no usage stops the solve when a token or cost limit is set: a
// provider that does not count cannot be held to a limit, and the limit is not silently waived.
// An answer cut short (the agent went away, the provider broke off, the deadline) leaves the
// totals unknown but does not stop the solve by itself: its usage was never going to come.
//
// A cost cap may also be shared with the other solves of a batch (SharedCost, kept in the job
// store so that it holds across processes and hosts): every request first reads the shared
// spend and is refused once it has reached the cap, and each answer's cost is drawn on it
// atomically when charged. So once the spend reaches the cap no solve drawing on it has another
// request admitted, and what can still be added is the answers already in flight then. A spend
// that cannot be read or drawn (the database is away) stops the solve: the cap is not waived.
import { costUsd, type TokenPrices, type TokenUsage } from '../solvers/usage.js';
import type { ProxyStop } from './trajectory.js';

export interface ProxyLimits {
  /** Input plus output tokens, summed over the solve. Default: none. */
  maxTokens?: number;
  /** Requests forwarded to the provider. Default: none. */
  maxTurns?: number;
  /** USD at the prices given; needs prices. Default: none. */
  maxCostUsd?: number;
}

/**
 * A cost cap shared with other solves (the batch's `--max-cost`, kept by the job store:
 * src/workers/batch-cost.ts): the shared spend is read before every request, which is refused
 * once it has reached the cap, whoever spent it; each answer's cost is drawn on it atomically.
 */
export interface SharedCost {
  readonly capUsd: number;
  /** The shared spend now. */
  spentUsd(): Promise<number>;
  /** Adds an answer's cost (once); resolves to the shared spend after it. */
  draw(usd: number): Promise<number>;
}

export interface Budget {
  /**
   * Takes a turn for a request about to be forwarded, or returns the stop that refuses it
   * (an earlier one, the shared spend at its cap, or this request being one turn too many).
   */
  admit(): Promise<ProxyStop | null>;
  /**
   * Charges an answer's usage (null: the answer's tokens are unknown); `whole` says whether
   * the answer arrived whole, so that its missing usage means the provider does not report it.
   * Resolves once the answer's cost is drawn on the shared cap, if there is one.
   */
  charge(usage: TokenUsage | null, whole: boolean): Promise<{ costUsd: number | null }>;
  /** Records a stop decided elsewhere (the deadline); the first stop recorded stays. */
  stopWith(stop: ProxyStop): void;
  stop(): ProxyStop | null;
  totals(): { turns: number; usage: TokenUsage | null; costUsd: number | null };
}

export function createBudget(
  limits: ProxyLimits,
  prices: TokenPrices | null,
  onStop: (stop: ProxyStop) => void,
  shared?: SharedCost,
): Budget {
  let stop: ProxyStop | null = null;
  let turns = 0;
  let known = true;
  const sum: TokenUsage = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  let cost = 0;
  // This solve's draws not yet answered. The answer that a draw is for has reached the agent
  // already, which may ask again at once: its next request waits for them, so that it never
  // reads a spend without this solve's own answers in it.
  const drawing = new Set<Promise<number>>();

  const stopWith = (next: ProxyStop) => {
    if (stop) return;
    stop = next;
    onStop(next);
  };
  /** The stop when the shared spend has reached the cap, by this solve or another. */
  const capStop = (capUsd: number, spent: number): ProxyStop | null =>
    spent < capUsd
      ? null
      : {
          reason: 'BUDGET_EXCEEDED',
          limit: 'cost',
          detail: `the batch has spent $${spent.toFixed(4)}, reaching its cost cap of $${capUsd}`,
        };
  const unknownSpend = (what: string, error: unknown): ProxyStop => ({
    reason: 'BUDGET_EXCEEDED',
    limit: 'cost',
    detail: `the batch's spend could not be ${what}, so its cost cap cannot be held: ${
      error instanceof Error ? error.message : String(error)
    }`,
  });

  return {
    async admit() {
      if (stop) return stop;
      if (shared) {
        let capped: ProxyStop | null;
        try {
          await Promise.allSettled(drawing);
          capped = capStop(shared.capUsd, await shared.spentUsd());
        } catch (error) {
          capped = unknownSpend('read', error);
        }
        // Another request may have stopped the solve while this one waited for the store.
        if (capped) stopWith(capped);
        if (stop) return stop;
      }
      if (limits.maxTurns !== undefined && turns >= limits.maxTurns) {
        stopWith({
          reason: 'BUDGET_EXCEEDED',
          limit: 'turns',
          detail: `the agent used all ${limits.maxTurns} turns (model requests)`,
        });
        return stop;
      }
      turns++;
      return null;
    },
    async charge(usage, whole) {
      if (usage === null) {
        known = false;
        const counted = limits.maxTokens !== undefined || limits.maxCostUsd !== undefined;
        if (whole && (counted || shared)) {
          stopWith({
            reason: 'BUDGET_EXCEEDED',
            limit: 'usage',
            detail: 'the provider reported no usage for an answer, so the budget cannot be counted',
          });
        }
        return { costUsd: null };
      }
      sum.inputTokens += usage.inputTokens;
      sum.cachedInputTokens += usage.cachedInputTokens;
      sum.outputTokens += usage.outputTokens;
      const answerCost = prices ? costUsd(usage, prices) : null;
      if (answerCost !== null) cost += answerCost;
      let capped: ProxyStop | null = null;
      // A free answer adds nothing: the next request's read decides.
      if (shared && answerCost !== null && answerCost > 0) {
        // Started before anything is awaited: a request arriving next already waits for it.
        const drawn = shared.draw(answerCost);
        drawing.add(drawn);
        try {
          capped = capStop(shared.capUsd, await drawn);
        } catch (error) {
          capped = unknownSpend('recorded', error);
        } finally {
          drawing.delete(drawn);
        }
      }
      const tokens = sum.inputTokens + sum.outputTokens;
      if (limits.maxTokens !== undefined && tokens > limits.maxTokens) {
        stopWith({
          reason: 'BUDGET_EXCEEDED',
          limit: 'tokens',
          detail: `the agent used ${tokens} tokens; the solve allows ${limits.maxTokens}`,
        });
      } else if (limits.maxCostUsd !== undefined && cost >= limits.maxCostUsd) {
        stopWith({
          reason: 'BUDGET_EXCEEDED',
          limit: 'cost',
          detail: `the agent spent $${cost.toFixed(4)}, reaching the solve's cap of $${limits.maxCostUsd}`,
        });
      } else if (capped) {
        stopWith(capped);
      }
      return { costUsd: answerCost };
    },
    stopWith,
    stop: () => stop,
    totals: () => ({
      turns,
      usage: known ? { ...sum } : null,
      costUsd: known && prices ? cost : null,
    }),
  };
}
