// What a solve spent: tokens from the provider's own usage counts, model turns and tool calls,
// kept by one meter per solve that the adapter feeds as it goes (so every way a solve ends,
// limits and errors included, leaves the counts so far), and the cost of those tokens at a
// profile's prices.
//
// Token semantics are OpenAI's: `inputTokens` counts every prompt token, the cached ones
// included (Chat Completions' `prompt_tokens`, Responses' and codex's `input_tokens`), and
// `cachedInputTokens` is the part of them served from the provider's cache; `outputTokens`
// includes reasoning tokens. A provider that reports no usage, or usage that is not counts,
// leaves the total unknown: `usage` is then null, never a guess and never zeros.
import { z } from 'zod';

export interface TokenUsage {
  /** Every input (prompt) token, cached ones included. */
  inputTokens: number;
  /** The part of inputTokens read from the provider's prompt cache. */
  cachedInputTokens: number;
  /** Every output token, reasoning included. */
  outputTokens: number;
}

/** USD per million tokens; `cachedInput` is the input price when the profile sets none. */
export interface TokenPrices {
  input: number;
  cachedInput: number;
  output: number;
}

export interface SolveMeter {
  /** One model answer, with its usage, or null when the answer carried none. */
  answer(usage: TokenUsage | null): void;
  /** Some of the model's work happened out of sight (codex killed before it reported). */
  unknown(): void;
  /** One tool call run in the sandbox. */
  toolCall(): void;
  /** The totals so far. */
  totals(): SolveTotals;
}

export interface SolveTotals {
  /** Summed over every answer; null when any answer (or hidden work) carried no usage. */
  usage: TokenUsage | null;
  /** Model answers received. */
  turns: number;
  /** Tool calls run in the sandbox. */
  toolCalls: number;
}

export function createSolveMeter(): SolveMeter {
  const sum: TokenUsage = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  let known = true;
  let turns = 0;
  let toolCalls = 0;
  return {
    answer(usage) {
      turns++;
      if (usage === null) {
        known = false;
        return;
      }
      sum.inputTokens += usage.inputTokens;
      sum.cachedInputTokens += usage.cachedInputTokens;
      sum.outputTokens += usage.outputTokens;
    },
    unknown() {
      known = false;
    },
    toolCall() {
      toolCalls++;
    },
    totals: () => ({ usage: known ? { ...sum } : null, turns, toolCalls }),
  };
}

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

// Providers add fields of their own to usage, so unknown keys are ignored here (not .strict()):
// only the counts Proctor reads are checked.
const chatUsage = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  prompt_tokens_details: z.object({ cached_tokens: count.nullish() }).nullish(),
});

/**
 * A Chat Completions answer's `usage`, or null when it is absent or malformed. Absent
 * `prompt_tokens_details.cached_tokens` means nothing was cached (providers without a cache
 * send none).
 */
export function chatCompletionUsage(usage: unknown): TokenUsage | null {
  const parsed = chatUsage.safeParse(usage);
  if (!parsed.success) return null;
  const u = parsed.data;
  return {
    inputTokens: u.prompt_tokens,
    cachedInputTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
    outputTokens: u.completion_tokens,
  };
}

/**
 * The USD cost of `usage` at `prices`: uncached input at the input price, cached input at the
 * cached price (and not also at the input price), output at the output price. A provider that
 * reports more cached than input tokens is taken to have cached all of its input.
 */
export function costUsd(usage: TokenUsage, prices: TokenPrices): number {
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const micro =
    (usage.inputTokens - cached) * prices.input +
    cached * prices.cachedInput +
    usage.outputTokens * prices.output;
  return micro / 1_000_000;
}
