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
// A cost cap may also be shared with the other solves of a batch (SharedCost): each answer's
// cost is added to it when charged, and the next request of any solve that draws on it is
// refused once the shared spend reaches the cap.
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
 * A cost cap shared with other solves (the batch's `--max-cost`, src/workers/cost-ledger.ts):
 * each answer's cost is added as it is charged, and a request is refused once the shared spend
 * has reached the cap, whoever spent it.
 */
export interface SharedCost {
  readonly capUsd: number;
  spentUsd(): number;
  add(usd: number): void;
}

export interface Budget {
  /**
   * Takes a turn for a request about to be forwarded, or returns the stop that refuses it
   * (an earlier one, or this request being one turn too many).
   */
  admit(): ProxyStop | null;
  /**
   * Charges an answer's usage (null: the answer's tokens are unknown); `whole` says whether
   * the answer arrived whole, so that its missing usage means the provider does not report it.
   */
  charge(usage: TokenUsage | null, whole: boolean): { costUsd: number | null };
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

  const stopWith = (next: ProxyStop) => {
    if (stop) return;
    stop = next;
    onStop(next);
  };
  /** The stop when the shared cap is reached, by this solve or another. */
  const sharedStop = (): ProxyStop | null => {
    if (!shared) return null;
    const spent = shared.spentUsd();
    if (spent < shared.capUsd) return null;
    return {
      reason: 'BUDGET_EXCEEDED',
      limit: 'cost',
      detail: `the batch has spent $${spent.toFixed(4)}, reaching its cost cap of $${shared.capUsd}`,
    };
  };

  return {
    admit() {
      if (stop) return stop;
      const capped = sharedStop();
      if (capped) {
        stopWith(capped);
        return stop;
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
    charge(usage, whole) {
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
      if (answerCost !== null) {
        cost += answerCost;
        shared?.add(answerCost);
      }
      const capped = sharedStop();
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
