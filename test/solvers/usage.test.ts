// The solve meter, the providers' usage shapes and the cost of tokens at a profile's prices.
import { describe, expect, it } from 'vitest';
import { chatCompletionUsage, costUsd, createSolveMeter } from '../../src/solvers/usage.js';

describe('the solve meter', () => {
  it('sums the usage of every answer and counts turns and tool calls', () => {
    const meter = createSolveMeter();
    meter.answer({ inputTokens: 100, cachedInputTokens: 40, outputTokens: 7 });
    meter.toolCall();
    meter.answer({ inputTokens: 150, cachedInputTokens: 100, outputTokens: 3 });
    expect(meter.totals()).toEqual({
      usage: { inputTokens: 250, cachedInputTokens: 140, outputTokens: 10 },
      turns: 2,
      toolCalls: 1,
    });
  });

  it('counts zero tokens when no answer came, and unknown (null) once any answer had no usage', () => {
    expect(createSolveMeter().totals().usage).toEqual({
      inputTokens: 0,
      cachedInputTokens: 0,
      outputTokens: 0,
    });
    const meter = createSolveMeter();
    meter.answer({ inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 });
    meter.answer(null);
    expect(meter.totals()).toEqual({ usage: null, turns: 2, toolCalls: 0 });
    const hidden = createSolveMeter();
    hidden.unknown();
    expect(hidden.totals()).toEqual({ usage: null, turns: 0, toolCalls: 0 });
  });
});

describe('usage shapes', () => {
  it('reads Chat Completions usage, cached tokens included in prompt_tokens', () => {
    expect(
      chatCompletionUsage({
        prompt_tokens: 1200,
        completion_tokens: 80,
        total_tokens: 1280,
        prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 64 },
      }),
    ).toEqual({ inputTokens: 1200, cachedInputTokens: 1024, outputTokens: 80 });
    expect(chatCompletionUsage({ prompt_tokens: 5, completion_tokens: 2 })).toEqual({
      inputTokens: 5,
      cachedInputTokens: 0,
      outputTokens: 2,
    });
  });

  it.each([
    ['absent', undefined],
    ['null', null],
    ['without completion_tokens', { prompt_tokens: 5 }],
    ['negative', { prompt_tokens: -1, completion_tokens: 2 }],
    ['fractional', { prompt_tokens: 1.5, completion_tokens: 2 }],
    ['a string count', { prompt_tokens: '5', completion_tokens: 2 }],
    [
      'a bad cached count',
      { prompt_tokens: 5, completion_tokens: 2, prompt_tokens_details: { cached_tokens: -3 } },
    ],
  ])('takes Chat Completions usage %s as unknown (null)', (_, usage) => {
    expect(chatCompletionUsage(usage)).toBeNull();
  });
});

describe('costUsd', () => {
  const prices = { input: 2, cachedInput: 0.5, output: 8 };

  it('prices uncached input, cached input and output each once', () => {
    // 1M input of which 400k cached: 600k × $2 + 400k × $0.50 + 100k × $8 per million.
    const usage = { inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 100_000 };
    expect(costUsd(usage, prices)).toBeCloseTo(1.2 + 0.2 + 0.8, 12);
  });

  it('takes more cached than input tokens as all input cached, and zero tokens as $0', () => {
    expect(
      costUsd({ inputTokens: 10, cachedInputTokens: 50, outputTokens: 0 }, prices),
    ).toBeCloseTo(0.000005, 12);
    expect(costUsd({ inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 }, prices)).toBe(0);
  });
});
