// Token counts from each protocol's own usage fields, in Proctor's semantics (solvers/usage.ts:
// OpenAI's, where input counts every prompt token, the cached ones included). Chat Completions
// is read by the solvers' own parser; Responses and Anthropic Messages are read here.
//
// Anthropic counts differently: its `input_tokens` leaves out both the tokens read from the
// cache and the ones written to it, so input here is the sum of the three and cached input the
// cache reads. (Cache writes are priced as ordinary input: the price table has no write price.)
//
// Gemini's `usageMetadata` counts like OpenAI's on input (`promptTokenCount` includes the
// `cachedContentTokenCount`), plus the `toolUsePromptTokenCount` of a built-in tool's own
// prompt. Its output is `candidatesTokenCount` and, apart from it, the `thoughtsTokenCount`
// billed as output. Google omits a zero count (proto3's JSON), so a missing count is 0 once
// the prompt's count is there; without it nothing can be counted and the usage is unknown. A
// `totalTokenCount` above the sum of the parts counts the difference as output: tokens billed
// under a count Proctor does not know are spent all the same.
import { z } from 'zod';
import { chatCompletionUsage, type TokenUsage } from '../solvers/usage.js';
import type { WireProtocol } from './protocols.js';

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

// Providers add fields of their own, so unknown keys are ignored (not .strict()).
const responsesUsage = z.object({
  input_tokens: count,
  output_tokens: count,
  input_tokens_details: z.object({ cached_tokens: count.nullish() }).nullish(),
});

const anthropicUsage = z.object({
  input_tokens: count.nullish(),
  output_tokens: count.nullish(),
  cache_read_input_tokens: count.nullish(),
  cache_creation_input_tokens: count.nullish(),
});

export type AnthropicUsage = z.output<typeof anthropicUsage>;

const geminiUsage = z.object({
  promptTokenCount: count,
  cachedContentTokenCount: count.nullish(),
  toolUsePromptTokenCount: count.nullish(),
  candidatesTokenCount: count.nullish(),
  thoughtsTokenCount: count.nullish(),
  totalTokenCount: count.nullish(),
});

/** Gemini's `usageMetadata` (a stream's last one: its counts are cumulative), or null. */
export function geminiApiUsage(usage: unknown): TokenUsage | null {
  const parsed = geminiUsage.safeParse(usage);
  if (!parsed.success) return null;
  const u = parsed.data;
  const inputTokens = u.promptTokenCount + (u.toolUsePromptTokenCount ?? 0);
  const outputTokens = (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0);
  const unnamed = Math.max(0, (u.totalTokenCount ?? 0) - inputTokens - outputTokens);
  return {
    inputTokens,
    cachedInputTokens: Math.min(u.cachedContentTokenCount ?? 0, inputTokens),
    outputTokens: outputTokens + unnamed,
  };
}

/** A Responses `usage` (in `response.completed` when streaming), or null when absent or bad. */
export function responsesApiUsage(usage: unknown): TokenUsage | null {
  const parsed = responsesUsage.safeParse(usage);
  if (!parsed.success) return null;
  const u = parsed.data;
  return {
    inputTokens: u.input_tokens,
    cachedInputTokens: u.input_tokens_details?.cached_tokens ?? 0,
    outputTokens: u.output_tokens,
  };
}

/** Anthropic's usage fields as they come (a stream sends them in two events), or null. */
export function anthropicUsagePart(usage: unknown): AnthropicUsage | null {
  const parsed = anthropicUsage.safeParse(usage);
  return parsed.success ? parsed.data : null;
}

/**
 * Anthropic's usage, merged from the parts seen (the stream's message_start, then each
 * message_delta, whose counts are cumulative and so replace earlier ones), or null when no
 * input or no output count was ever given.
 */
export function anthropicMessagesUsage(parts: ReadonlyArray<AnthropicUsage>): TokenUsage | null {
  const merged: AnthropicUsage = {};
  for (const part of parts) {
    for (const [key, value] of Object.entries(part) as Array<[keyof AnthropicUsage, unknown]>) {
      if (typeof value === 'number') merged[key] = value;
    }
  }
  if (merged.input_tokens == null || merged.output_tokens == null) return null;
  const cacheRead = merged.cache_read_input_tokens ?? 0;
  return {
    inputTokens: merged.input_tokens + cacheRead + (merged.cache_creation_input_tokens ?? 0),
    cachedInputTokens: cacheRead,
    outputTokens: merged.output_tokens,
  };
}

/** A whole (non-streamed) answer's usage, per protocol. */
export function answerUsage(protocol: WireProtocol, body: Record<string, unknown>) {
  switch (protocol) {
    case 'openai-chat':
      return chatCompletionUsage(body['usage']);
    case 'openai-responses':
      return responsesApiUsage(body['usage']);
    case 'anthropic-messages': {
      const part = anthropicUsagePart(body['usage']);
      return part ? anthropicMessagesUsage([part]) : null;
    }
    case 'gemini-generate-content':
      return geminiApiUsage(body['usageMetadata']);
  }
}
