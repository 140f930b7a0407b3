import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { startModelProxy, trajectorySchema } from '../../src/proxy/index.js';
import { createDeadline } from '../../src/solvers/deadline.js';
import { createSolveMeter } from '../../src/solvers/usage.js';
import { startModelServer } from '../helpers/model-server.js';
import { startTestProxy } from '../helpers/model-proxy.js';
import { startProtocolServer } from '../helpers/protocol-server.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const KEY = 'sk-proj-REALKEY0123456789abcdefREALKEY';
const PRICES = { input: 2, cachedInput: 0.5, output: 8 };

function client(baseURL: string, apiKey: string) {
  return new OpenAI({ baseURL, apiKey, maxRetries: 0, organization: null, project: null });
}

/** A raw POST through the forwarder, as an Anthropic-style client sends it. */
async function post(url: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'read_file', parameters: { type: 'object', properties: {} } },
  },
];

describe('the model proxy, OpenAI Chat Completions', () => {
  it('forwards a request with the real key and the configured model, and records the step', async () => {
    const upstream = await startProtocolServer([
      { toolCall: { name: 'read_file', arguments: { path: 'a.txt' }, id: 'call_a' } },
    ]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY, model: 'gpt-real' },
      prices: PRICES,
    });
    const answer = await client(baseUrl, proxy.token).chat.completions.create({
      model: 'agent-choice',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'fix it' },
      ],
      tools,
    });
    expect(answer.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      id: 'call_a',
      function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
    });
    const sent = upstream.requests[0]!;
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.stringify(sent.headers)).not.toContain(proxy.token);
    expect(sent.body['model']).toBe('gpt-real');

    const trajectory = proxy.trajectory();
    expect(trajectory.steps).toHaveLength(1);
    expect(trajectory.steps[0]).toMatchObject({
      index: 1,
      protocol: 'openai-chat',
      requestedModel: 'agent-choice',
      model: 'gpt-real',
      stream: false,
      prefix: null,
      input: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'fix it' },
      ],
      tools: ['read_file'],
      output: [
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_a', name: 'read_file', arguments: '{"path":"a.txt"}' }],
        },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 100, cachedInputTokens: 0, outputTokens: 20 },
      costUsd: (100 * 2 + 20 * 8) / 1e6,
      status: 200,
      outcome: 'ok',
    });
    expect(trajectory.totals).toEqual({
      requests: 1,
      turns: 1,
      usage: { inputTokens: 100, cachedInputTokens: 0, outputTokens: 20 },
      costUsd: (100 * 2 + 20 * 8) / 1e6,
    });
  });

  it('passes a stream through chunk by chunk and asks the provider for its usage', async () => {
    const upstream = await startProtocolServer([
      { text: 'hello streaming world', chunks: 4, usage: { input: 50, cached: 10, output: 7 } },
      { toolCall: { name: 'read_file', arguments: { path: 'b' }, id: 'call_b' } },
    ]);
    const meter = createSolveMeter();
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      meter,
    });
    const sdk = client(baseUrl, proxy.token);
    const stream = await sdk.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const pieces: string[] = [];
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content;
      if (piece) pieces.push(piece);
    }
    expect(pieces.join('')).toBe('hello streaming world');
    expect(pieces.length).toBeGreaterThan(1);
    // The agent did not ask for usage; the proxy did, and the agent got the usage chunk too.
    expect(upstream.requests[0]?.body['stream_options']).toEqual({ include_usage: true });

    const calls = await sdk.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: false },
      tools,
    });
    for await (const _ of calls) void _;
    expect(upstream.requests[1]?.body['stream_options']).toEqual({ include_usage: true });

    const steps = proxy.trajectory().steps;
    expect(steps[0]).toMatchObject({
      stream: true,
      output: [{ role: 'assistant', content: 'hello streaming world' }],
      finishReason: 'stop',
      usage: { inputTokens: 50, cachedInputTokens: 10, outputTokens: 7 },
      outcome: 'ok',
    });
    expect(steps[0]?.firstByteMs).not.toBeNull();
    expect(steps[1]?.output[0]?.toolCalls).toEqual([
      { id: 'call_b', name: 'read_file', arguments: '{"path":"b"}' },
    ]);
    expect(meter.totals()).toMatchObject({
      turns: 2,
      usage: { inputTokens: 150, cachedInputTokens: 10, outputTokens: 27 },
    });
  });

  it('works with the flat solver’s scripted server as the provider', async () => {
    const upstream = await startModelServer([{ message: 'done here', usage: 42 }]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
    });
    const answer = await client(baseUrl, proxy.token).chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'go' }],
    });
    expect(answer.choices[0]?.message.content).toBe('done here');
    expect(upstream.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(proxy.trajectory().totals.usage).toEqual({
      inputTokens: 41,
      cachedInputTokens: 0,
      outputTokens: 1,
    });
  });

  it('records only the new messages of a continued conversation', async () => {
    const upstream = await startProtocolServer([
      { toolCall: { name: 'read_file', arguments: {}, id: 'call_1' } },
      { text: 'finished' },
    ]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
    });
    const sdk = client(baseUrl, proxy.token);
    const first = await sdk.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'task' }],
      tools,
    });
    const call = first.choices[0]!.message.tool_calls![0]!;
    await sdk.chat.completions.create({
      model: 'm',
      messages: [
        { role: 'user', content: 'task' },
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: call.id, content: 'file contents' },
      ],
      tools,
    });
    const second = proxy.trajectory().steps[1]!;
    expect(second.prefix).toEqual({ step: 1, messages: 2 });
    expect(second.input).toEqual([
      { role: 'tool', content: 'file contents', toolCallId: 'call_1' },
    ]);
  });

  it('answers several requests at once, each counted once', async () => {
    const upstream = await startProtocolServer(
      Array.from({ length: 8 }, (_, i) => ({
        text: `answer ${i}`,
        usage: { input: 10, output: 1 },
      })),
    );
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      limits: { maxTurns: 8 },
    });
    const sdk = client(baseUrl, proxy.token);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2 === 0
          ? sdk.chat.completions
              .create({ model: 'm', messages: [{ role: 'user', content: `q${i}` }] })
              .then((a) => a.choices[0]?.message.content)
          : sdk.chat.completions
              .create({ model: 'm', messages: [{ role: 'user', content: `q${i}` }], stream: true })
              .then(async (s) => {
                let text = '';
                for await (const c of s) text += c.choices[0]?.delta.content ?? '';
                return text;
              }),
      ),
    );
    expect(answers.every((a) => typeof a === 'string' && a.startsWith('answer '))).toBe(true);
    expect(new Set(answers).size).toBe(8);
    const trajectory = proxy.trajectory();
    expect(trajectory.totals).toMatchObject({
      requests: 8,
      turns: 8,
      usage: { inputTokens: 80, outputTokens: 8 },
    });
    expect(trajectory.steps.map((s) => s.index)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(proxy.stop()).toBeNull();
  });

  it('forwards no more requests than the turn limit when they arrive at once', async () => {
    const upstream = await startProtocolServer();
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      limits: { maxTurns: 3 },
    });
    const sdk = client(baseUrl, proxy.token);
    const statuses = await Promise.all(
      Array.from({ length: 6 }, () =>
        sdk.chat.completions
          .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
          .then(
            () => 200,
            (e: { status?: number }) => e.status,
          ),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    expect(upstream.requests).toHaveLength(3);
    expect(stops.map((s) => s.limit)).toEqual(['turns']);
  });

  it('answers a model listing with the configured model, without the provider', async () => {
    const upstream = await startProtocolServer();
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY, model: 'gpt-real' },
    });
    const models = await client(baseUrl, proxy.token).models.list();
    expect(models.data.map((m) => m.id)).toEqual(['gpt-real']);
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('the model proxy, OpenAI Responses and Anthropic Messages', () => {
  it('forwards Responses plain and streamed, tool calls included', async () => {
    const upstream = await startProtocolServer([
      { toolCall: { name: 'apply_patch', arguments: { patch: 'x' }, id: 'call_r' } },
      { text: 'streamed reply', usage: { input: 30, cached: 5, output: 3 } },
    ]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      protocols: ['openai-responses'],
    });
    const sdk = client(baseUrl, proxy.token);
    const plain = await sdk.responses.create({
      model: 'm',
      instructions: 'system words',
      input: 'fix it',
    });
    expect(plain.output[0]).toMatchObject({ type: 'function_call', call_id: 'call_r' });
    const stream = await sdk.responses.create({ model: 'm', input: 'again', stream: true });
    let text = '';
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(text).toBe('streamed reply');
    expect(upstream.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);

    const [one, two] = proxy.trajectory().steps;
    expect(one).toMatchObject({
      protocol: 'openai-responses',
      input: [
        { role: 'system', content: 'system words' },
        { role: 'user', content: 'fix it' },
      ],
      output: [
        {
          role: 'assistant',
          toolCalls: [{ id: 'call_r', name: 'apply_patch', arguments: '{"patch":"x"}' }],
        },
      ],
      usage: { inputTokens: 100, outputTokens: 20 },
    });
    expect(two).toMatchObject({
      stream: true,
      output: [{ role: 'assistant', content: 'streamed reply' }],
      finishReason: 'completed',
      usage: { inputTokens: 30, cachedInputTokens: 5, outputTokens: 3 },
    });
    // A protocol this proxy does not serve is not there.
    await expect(
      sdk.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 404 });
  });

  it('forwards Anthropic Messages with x-api-key, plain and streamed, in Anthropic’s counts', async () => {
    const upstream = await startProtocolServer([
      { text: 'plain answer', usage: { input: 40, cached: 30, output: 4 } },
      { toolCall: { name: 'run', arguments: { command: 'ls' }, id: 'toolu_1' } },
    ]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY, model: 'claude-real' },
      prices: PRICES,
    });
    const headers = { 'x-api-key': proxy.token, 'anthropic-version': '2023-06-01' };
    const plain = await post(
      `${baseUrl}/messages`,
      {
        model: 'claude-agent',
        max_tokens: 100,
        system: 'sys',
        messages: [{ role: 'user', content: 'hi' }],
      },
      headers,
    );
    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.text)).toMatchObject({
      content: [{ type: 'text', text: 'plain answer' }],
    });
    const streamed = await post(
      // The Anthropic SDK's base URL has no /v1 and it adds a query.
      `${baseUrl.replace(/\/v1$/, '')}/v1/messages?beta=true`,
      {
        model: 'claude-agent',
        max_tokens: 100,
        stream: true,
        system: [{ type: 'text', text: 'sys' }],
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'text', text: 'plain answer' }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'out' }],
          },
        ],
        tools: [{ name: 'run', input_schema: { type: 'object' } }],
      },
      headers,
    );
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    expect(streamed.text).toContain('event: message_stop');

    const sent = upstream.requests[0]!;
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body['model']).toBe('claude-real');

    const [one, two] = proxy.trajectory().steps;
    expect(one).toMatchObject({
      protocol: 'anthropic-messages',
      input: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
      ],
      output: [{ role: 'assistant', content: 'plain answer' }],
      finishReason: 'end_turn',
      // Anthropic's input_tokens (10) leaves the 30 cache reads out; Proctor's counts them in.
      usage: { inputTokens: 40, cachedInputTokens: 30, outputTokens: 4 },
      costUsd: (10 * 2 + 30 * 0.5 + 4 * 8) / 1e6,
    });
    expect(two).toMatchObject({
      stream: true,
      prefix: { step: 1, messages: 3 },
      input: [{ role: 'tool', content: 'out', toolCallId: 'toolu_0' }],
      tools: ['run'],
      output: [
        {
          role: 'assistant',
          toolCalls: [{ id: 'toolu_1', name: 'run', arguments: '{"command":"ls"}' }],
        },
      ],
      finishReason: 'tool_use',
      usage: { inputTokens: 100, cachedInputTokens: 0, outputTokens: 20 },
    });
  });
});

describe('the model proxy’s token and the real key', () => {
  it('refuses a wrong or missing token with 401 and no detail, and forwards nothing', async () => {
    const upstream = await startProtocolServer();
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
    });
    // The token with its last character changed (one in 16 tokens already ends in 0).
    const last = proxy.token.endsWith('0') ? '1' : '0';
    const wrong = client(baseUrl, `${proxy.token.slice(0, -1)}${last}`);
    const error = await wrong.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    const message = (error as Error).message;
    expect(message).toContain('did not present this run’s token');
    expect(message).not.toContain(proxy.token);
    expect(message).not.toContain(KEY);

    const none = await post(`${baseUrl}/messages`, { model: 'm' }, {});
    expect(none.status).toBe(401);
    expect(JSON.parse(none.text)).toEqual({
      type: 'error',
      error: {
        type: 'authentication_error',
        message: 'the request did not present this run’s token',
      },
    });
    const badKey = await post(`${baseUrl}/messages`, { model: 'm' }, { 'x-api-key': KEY });
    expect(badKey.status).toBe(401);
    // Unauthenticated callers learn nothing about paths either.
    const unknown = await post(`${baseUrl}/nowhere`, {}, {});
    expect(unknown.status).toBe(401);
    expect(upstream.requests).toHaveLength(0);
    expect(proxy.trajectory().totals.turns).toBe(0);
  });

  it('never lets the real key back to the agent: bodies, headers, errors, trajectory, logs', async () => {
    const upstream = await startProtocolServer([{ echoKey: true }, { echoKey: true }]);
    const { proxy, baseUrl, logs } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
    });
    const error = await client(baseUrl, proxy.token)
      .chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: `my ${proxy.token}` }],
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(JSON.stringify(error)).not.toContain(KEY);
    expect((error as Error).message).toContain('[REDACTED]');

    const raw = await post(
      `${baseUrl}/messages`,
      { model: 'm', messages: [] },
      { 'x-api-key': proxy.token },
    );
    expect(raw.status).toBe(401);
    expect(raw.text).not.toContain(KEY);
    expect(raw.text).toContain('[REDACTED]');
    expect([...raw.headers.values()].join('\n')).not.toContain(KEY);
    expect(raw.headers.get('x-echo')).toBeNull();
    expect(raw.headers.get('x-request-id')).toBeNull();
    // The provider did see the key, which is how the echo test can fail.
    expect(upstream.requests[1]?.headers['x-api-key']).toBe(KEY);

    const recorded = JSON.stringify(proxy.trajectory());
    expect(recorded).not.toContain(KEY);
    expect(recorded).not.toContain(proxy.token);
    expect(proxy.trajectory().steps[0]).toMatchObject({
      outcome: 'upstream_error',
      status: 401,
      input: [{ role: 'user', content: 'my [REDACTED]' }],
    });
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.join('\n')).not.toContain(KEY);
    expect(logs.join('\n')).not.toContain(proxy.token);
  });
});

describe('the model proxy’s limits', () => {
  it('stops on tokens: the answer that crosses the limit arrives, the next is refused', async () => {
    const upstream = await startProtocolServer();
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      limits: { maxTokens: 150 },
    });
    const sdk = client(baseUrl, proxy.token);
    const ask = () =>
      sdk.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    await ask(); // 120 tokens
    await ask(); // 240: over
    const refused = await ask().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect(refused).toMatchObject({ status: 429, code: 'budget_exceeded' });
    expect((refused as Error).message).toContain('the agent used 240 tokens; the solve allows 150');
    expect(upstream.requests).toHaveLength(2);
    expect(stops).toEqual([
      {
        reason: 'BUDGET_EXCEEDED',
        limit: 'tokens',
        detail: 'the agent used 240 tokens; the solve allows 150',
      },
    ]);
    expect(proxy.stop()).toEqual(stops[0]);
    expect(proxy.trajectory().steps[2]).toMatchObject({ outcome: 'refused', status: 429 });
  });

  it('stops on turns, in the Anthropic error shape for an Anthropic client', async () => {
    const upstream = await startProtocolServer();
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      limits: { maxTurns: 2 },
    });
    const ask = () =>
      post(
        `${baseUrl}/messages`,
        { model: 'm', max_tokens: 5, messages: [] },
        { 'x-api-key': proxy.token },
      );
    expect((await ask()).status).toBe(200);
    expect((await ask()).status).toBe(200);
    const third = await ask();
    expect(third.status).toBe(429);
    expect(third.headers.get('x-should-retry')).toBe('false');
    expect(JSON.parse(third.text)).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'the agent used all 2 turns (model requests)' },
    });
    expect(stops.map((s) => [s.reason, s.limit])).toEqual([['BUDGET_EXCEEDED', 'turns']]);
    expect(upstream.requests).toHaveLength(2);
  });

  it('stops on cost at the profile’s prices', async () => {
    const upstream = await startProtocolServer();
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      prices: { input: 1000, cachedInput: 1000, output: 1000 },
      limits: { maxCostUsd: 0.2 },
    });
    const sdk = client(baseUrl, proxy.token);
    const ask = () =>
      sdk.responses.create({ model: 'm', input: 'x' }).then(
        () => 'ok',
        (e: { status?: number }) => e.status,
      );
    // 120 tokens at $1000 per million: $0.12 each.
    expect(await ask()).toBe('ok');
    expect(await ask()).toBe('ok');
    expect(await ask()).toBe(429);
    expect(stops[0]).toEqual({
      reason: 'BUDGET_EXCEEDED',
      limit: 'cost',
      detail: "the agent spent $0.2400, reaching the solve's cap of $0.2",
    });
    expect(proxy.trajectory().totals.costUsd).toBeCloseTo(0.24, 10);
  });

  it('stops when a token limit cannot be counted (an answer without usage)', async () => {
    const upstream = await startProtocolServer([{ text: 'no usage', usage: null }]);
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      limits: { maxTokens: 1000 },
    });
    const sdk = client(baseUrl, proxy.token);
    await sdk.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    await expect(
      sdk.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({ status: 429 });
    expect(stops[0]?.limit).toBe('usage');
    expect(proxy.trajectory().totals.usage).toBeNull();
  });

  it('is stopped from the start when its deadline is already spent', async () => {
    const deadline = createDeadline(0);
    const proxy = await startModelProxy({
      socketDir: tempDir('proctor-proxy-'),
      upstream: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: KEY },
      deadline,
    });
    try {
      expect(proxy.stop()).toMatchObject({ reason: 'TIMEOUT' });
    } finally {
      await proxy.close();
    }
  });

  it('refuses every request once the deadline has passed, as TIMEOUT', async () => {
    const upstream = await startProtocolServer();
    const deadline = createDeadline(150);
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      deadline,
    });
    await waitFor(() => stops.length > 0 || undefined, { timeoutMs: 5_000 });
    const error = await client(baseUrl, proxy.token)
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, code: 'deadline_exceeded' });
    expect(stops).toEqual([
      { reason: 'TIMEOUT', limit: 'deadline', detail: 'the solver deadline was reached' },
    ]);
    expect(upstream.requests).toHaveLength(0);
  });

  it('cuts a stream in flight when the deadline passes, with an error event the SDK raises', async () => {
    const upstream = await startProtocolServer([{ slow: { chunks: 100, everyMs: 100 } }]);
    const deadline = createDeadline(1500);
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      deadline,
    });
    const stream = await client(baseUrl, proxy.token).chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    let chunks = 0;
    const error = await (async () => {
      for await (const chunk of stream) chunks += chunk ? 1 : 0;
    })().catch((e: unknown) => e);
    expect(chunks).toBeGreaterThan(0);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('the solver deadline was reached');
    expect(stops.map((s) => s.reason)).toEqual(['TIMEOUT']);
    const step = proxy.trajectory().steps[0];
    expect(step).toMatchObject({ outcome: 'timeout', status: 200, usage: null });
    expect(proxy.trajectory().totals.usage).toBeNull();
  });

  it('answers a plain request in flight at the deadline with a timeout error', async () => {
    const upstream = await startProtocolServer([{ hang: true }]);
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      // Long enough for the forwarder and the request on a loaded machine; the hang outlasts it.
      deadline: createDeadline(1500),
    });
    const error = await client(baseUrl, proxy.token)
      .responses.create({ model: 'm', input: 'x' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, code: 'deadline_exceeded' });
    expect(stops.map((s) => s.reason)).toEqual(['TIMEOUT']);
    expect(proxy.trajectory().steps[0]?.outcome).toBe('timeout');
    expect(upstream.requests).toHaveLength(1);
  });
});

describe('the model proxy’s upstream failures and malformed requests', () => {
  it('passes a provider’s 500 on with its status', async () => {
    const upstream = await startProtocolServer([{ status: 500 }]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
    });
    const error = await client(baseUrl, proxy.token)
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(proxy.trajectory().steps[0]).toMatchObject({
      outcome: 'upstream_error',
      status: 500,
      error: expect.stringContaining('the model provider answered HTTP 500: '),
    });
    expect(proxy.trajectory().totals.usage).toEqual({
      inputTokens: 0,
      cachedInputTokens: 0,
      outputTokens: 0,
    });
  });

  it('answers 502 when the provider cannot be reached', async () => {
    const { proxy, baseUrl } = await startTestProxy({
      // Port 9 on loopback: nothing listens (discard is never enabled here).
      upstream: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: KEY },
    });
    const error = await client(baseUrl, proxy.token)
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, code: 'upstream_unreachable' });
    expect((error as Error).message).toContain(
      'the model provider could not be reached: ECONNREFUSED',
    );
  });

  it('answers 504 when the provider stays silent', async () => {
    const upstream = await startProtocolServer([{ hang: true }]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      upstreamIdleMs: 300,
    });
    const error = await post(
      `${baseUrl}/messages`,
      { model: 'm', messages: [] },
      { 'x-api-key': proxy.token },
    );
    expect(error.status).toBe(504);
    expect(JSON.parse(error.text)).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'the model provider sent nothing for 0.3 s' },
    });
    expect(proxy.stop()).toBeNull();
  });

  it('records a stream the provider cut as failed, its tokens unknown', async () => {
    const upstream = await startProtocolServer([{ cut: true }]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
    });
    const stream = await client(baseUrl, proxy.token).chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    const error = await (async () => {
      for await (const _ of stream) void _;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(proxy.trajectory().steps[0]).toMatchObject({ outcome: 'upstream_failed' });
    expect(proxy.trajectory().totals.usage).toBeNull();
  });

  it('refuses malformed requests in the protocol’s shape and forwards none', async () => {
    const upstream = await startProtocolServer();
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      maxRequestBytes: 1000,
    });
    const auth = { authorization: `Bearer ${proxy.token}` };
    const cases: Array<[string, string, number, string]> = [
      ['/chat/completions', 'not json', 400, 'the request body must be a JSON object'],
      ['/chat/completions', '[1, 2]', 400, 'the request body must be a JSON object'],
      ['/responses', '{"stream": "yes"}', 400, '`stream` must be true or false'],
      [
        '/chat/completions',
        JSON.stringify({ pad: 'x'.repeat(2000) }),
        413,
        'larger than 1000 bytes',
      ],
      ['/embeddings', '{}', 404, 'no model endpoint at /v1/embeddings'],
    ];
    for (const [path, body, status, message] of cases) {
      const answer = await post(`${baseUrl}${path}`, body, auth);
      expect(answer.status, path).toBe(status);
      expect((JSON.parse(answer.text) as { error: { message: string } }).error.message).toContain(
        message,
      );
    }
    const get = await fetch(`${baseUrl}/chat/completions`, { headers: auth });
    expect(get.status).toBe(405);
    const anthropic = await post(`${baseUrl}/messages`, 'nope', { 'x-api-key': proxy.token });
    expect(JSON.parse(anthropic.text)).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    });
    expect(upstream.requests).toHaveLength(0);
    const trajectory = proxy.trajectory();
    expect(trajectory.totals.turns).toBe(0);
    expect(trajectory.steps.every((s) => s.outcome === 'refused')).toBe(true);
    expect(() => trajectorySchema.parse(trajectory)).not.toThrow();
  });
});

describe('the model proxy’s edges', () => {
  it('answers 413 to a large body before reading it all', async () => {
    const upstream = await startProtocolServer();
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      maxRequestBytes: 64 * 1024,
    });
    const error = await client(baseUrl, proxy.token)
      .chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'x'.repeat(8 * 1024 * 1024) }],
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 413 });
    expect(upstream.requests).toHaveLength(0);
  });

  it('answers a refusal while the body is still arriving without resetting the connection, and keeps it', async () => {
    const upstream = await startProtocolServer();
    const { proxy } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
    });
    // A client that has sent its headers and the start of its body when the 401 comes (the
    // forwarder relays in pieces; under load the rest arrives after the answer).
    const socket = connect(proxy.socketPath);
    const errors: Error[] = [];
    socket.on('error', (e) => errors.push(e));
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    const answers = (n: number) =>
      waitFor(() => (received.split('HTTP/1.1 401').length > n ? true : undefined));
    const body = 'x'.repeat(512 * 1024);
    socket.write(
      'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer not-the-token\r\n' +
        `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await answers(1);
    expect(received).not.toMatch(/^connection: close/im);
    await new Promise<void>((resolve, reject) =>
      socket.write(body.slice(10), (e) => (e ? reject(e) : resolve())),
    );
    // The same connection takes the next request.
    socket.write(
      'POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer not-the-token\r\n' +
        'content-type: application/json\r\ncontent-length: 2\r\n\r\n{}',
    );
    await answers(2);
    socket.destroy();
    expect(errors).toEqual([]);
    expect(upstream.requests).toHaveLength(0);
    expect(proxy.trajectory().steps.map((s) => s.status)).toEqual([401, 401]);
  });

  it('records an agent that goes away mid-stream as aborted, without stopping the solve', async () => {
    const upstream = await startProtocolServer([{ slow: { chunks: 100, everyMs: 50 } }]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
      limits: { maxTokens: 1000 },
    });
    const controller = new AbortController();
    const stream = await client(baseUrl, proxy.token).chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true },
      { signal: controller.signal },
    );
    for await (const chunk of stream) {
      if (chunk) controller.abort();
    }
    await waitFor(() => proxy.trajectory().steps.length === 1 || undefined);
    expect(proxy.trajectory().steps[0]).toMatchObject({ outcome: 'aborted', usage: null });
    // The tokens of an answer that began are spent but unknown; its usage was never going
    // to come, so the token limit does not stop the solve over it.
    expect(proxy.trajectory().totals.usage).toBeNull();
    expect(proxy.stop()).toBeNull();
    const next = await client(baseUrl, proxy.token).chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'again' }],
    });
    expect(next.choices[0]?.message.content).toBe('done');
  });

  it('cuts requests in flight when it closes, and removes its socket', async () => {
    const upstream = await startProtocolServer([{ hang: true }]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: upstream.baseUrl, apiKey: KEY },
    });
    const pending = client(baseUrl, proxy.token)
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    await waitFor(() => upstream.requests.length === 1 || undefined);
    await proxy.close();
    expect(await pending).toBeInstanceOf(OpenAI.APIError);
    expect(existsSync(proxy.socketPath)).toBe(false);
    expect(proxy.stop()).toBeNull();
  });
});

describe('startModelProxy’s options', () => {
  const deadline = () => createDeadline(1000);
  const base = { baseUrl: 'http://127.0.0.1:9/v1', apiKey: KEY };
  const refused = async (options: Parameters<typeof startModelProxy>[0], text: string) => {
    const error = await startModelProxy(options).catch((e: unknown) => e);
    expect(isProctorError(error, 'USAGE')).toBe(true);
    expect((error as Error).message).toContain(text);
    expect((error as Error).message).not.toContain(KEY);
  };

  it('refuses a cost limit without prices, a bad URL, a bad key, a long socket path', async () => {
    const socketDir = tempDir('proctor-proxy-');
    await refused(
      { socketDir, upstream: base, deadline: deadline(), limits: { maxCostUsd: 1 } },
      'a cost limit needs prices',
    );
    await refused(
      { socketDir, upstream: { ...base, baseUrl: 'ftp://x' }, deadline: deadline() },
      'must be http or https',
    );
    await refused(
      { socketDir, upstream: { ...base, apiKey: 'a b' }, deadline: deadline() },
      'the provider key must be non-empty',
    );
    await refused(
      { socketDir, upstream: base, deadline: deadline(), limits: { maxTokens: -1 } },
      'Expected `maxTokens` to be a finite number >= 0, got `-1`',
    );
    await refused(
      { socketDir, upstream: base, deadline: deadline(), upstreamIdleMs: 0 },
      'Expected `upstreamIdleMs` to be an integer >= 1, got `0`',
    );
    await refused(
      { socketDir: `${socketDir}/${'d'.repeat(120)}`, upstream: base, deadline: deadline() },
      'is longer than 107 bytes',
    );
  });
});
