// The model proxy speaking Google's Gemini API (`gemini-generate-content`), as Gemini CLI and
// `@google/genai` send it: POST /v1beta/models/MODEL:generateContent, and
// :streamGenerateContent?alt=sse, the key in `x-goog-api-key` or `?key=`. Through the real
// forwarder to the scripted provider on loopback; the stream and usage readers also alone.
import { describe, expect, it } from 'vitest';
import { trajectorySchema } from '../../src/proxy/index.js';
import {
  createSseParser,
  createStreamAccumulator,
  MAX_EVENT_BYTES,
} from '../../src/proxy/stream.js';
import { answerUsage, geminiApiUsage } from '../../src/proxy/usage.js';
import { createDeadline } from '../../src/solvers/deadline.js';
import { startTestProxy } from '../helpers/model-proxy.js';
import { startProtocolServer, type ProtocolServer } from '../helpers/protocol-server.js';

const KEY = 'AIzaSyREALKEY0123456789abcdefREALKEY';
const PRICES = { input: 2, cachedInput: 0.5, output: 8 };
const GEMINI = 'gemini-generate-content';

/** The provider's base URL as a Gemini profile names it: the API version, v1beta. */
const v1beta = (server: ProtocolServer) => server.baseUrl.replace(/\/v1$/, '/v1beta');
/** The forwarder's origin: Gemini CLI's GOOGLE_GEMINI_BASE_URL has no version. */
const origin = (baseUrl: string) => baseUrl.replace(/\/v1$/, '');

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The `data:` events of an SSE text, parsed. */
const sseData = (text: string): unknown[] =>
  text
    .split(/\r?\n\r?\n/)
    .filter((e) => e.startsWith('data: '))
    .map((e) => JSON.parse(e.slice('data: '.length)) as unknown);

const TOOLS = [
  {
    functionDeclarations: [
      { name: 'run_shell_command', parameters: { type: 'OBJECT', properties: {} } },
      { name: 'replace', parameters: { type: 'OBJECT', properties: {} } },
    ],
  },
];

describe('the model proxy, Gemini generateContent', () => {
  it('forwards a request with the real key and the configured model in the path, and records the step', async () => {
    const upstream = await startProtocolServer([
      {
        toolCall: { name: 'run_shell_command', arguments: { command: 'ls' } },
        usage: { input: 100, cached: 40, output: 20, thoughts: 5 },
      },
    ]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: v1beta(upstream), apiKey: KEY, model: 'gemini-real' },
      prices: PRICES,
      protocols: [GEMINI],
    });
    const answer = await post(
      `${origin(baseUrl)}/v1beta/models/gemini-agent:generateContent`,
      {
        systemInstruction: { parts: [{ text: 'be brief' }] },
        contents: [
          { role: 'user', parts: [{ text: 'fix it' }] },
          { role: 'model', parts: [{ functionCall: { name: 'read_file', args: { path: 'a' } } }] },
          {
            role: 'user',
            parts: [{ functionResponse: { name: 'read_file', response: { output: 'text' } } }],
          },
        ],
        tools: TOOLS,
      },
      { 'x-goog-api-key': proxy.token },
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ functionCall: { name: 'run_shell_command', args: { command: 'ls' } } }],
          },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: { promptTokenCount: 100, thoughtsTokenCount: 5 },
    });

    const sent = upstream.requests[0]!;
    expect(sent.path).toBe('/v1beta/models/gemini-real:generateContent');
    expect(sent.query).toBe('');
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(JSON.stringify(sent.headers)).not.toContain(proxy.token);
    // The model is in the path, never added to a Gemini body.
    expect(sent.body['model']).toBeUndefined();

    const trajectory = proxy.trajectory();
    expect(trajectory.steps[0]).toMatchObject({
      protocol: GEMINI,
      requestedModel: 'gemini-agent',
      model: 'gemini-real',
      stream: false,
      input: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'fix it' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'read_file', name: 'read_file', arguments: '{"path":"a"}' }],
        },
        { role: 'tool', content: '{"output":"text"}', toolCallId: 'read_file' },
      ],
      tools: ['run_shell_command', 'replace'],
      output: [
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'run_shell_command', name: 'run_shell_command', arguments: '{"command":"ls"}' },
          ],
        },
      ],
      finishReason: 'STOP',
      // promptTokenCount counts the cached tokens in; thoughts are output.
      usage: { inputTokens: 100, cachedInputTokens: 40, outputTokens: 25 },
      costUsd: (60 * 2 + 40 * 0.5 + 25 * 8) / 1e6,
      status: 200,
      outcome: 'ok',
    });
    expect(() => trajectorySchema.parse(trajectory)).not.toThrow();
  });

  it('passes a stream through event by event, the token in ?key=, and meters its last usage', async () => {
    const upstream = await startProtocolServer([
      { text: 'hello streaming world', chunks: 4, usage: { input: 50, cached: 10, output: 7 } },
      { toolCall: { name: 'replace', arguments: { file_path: 'a' }, id: 'fc-1' } },
    ]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: v1beta(upstream), apiKey: KEY },
      protocols: [GEMINI],
    });
    const url = `${origin(baseUrl)}/v1beta/models/gemini-agent:streamGenerateContent?alt=sse&key=${proxy.token}`;
    const text = await post(url, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(text.status).toBe(200);
    expect(text.headers.get('content-type')).toContain('text/event-stream');
    const events = sseData(text.text) as Array<{
      candidates: Array<{ content: { parts: Array<{ text: string }> } }>;
    }>;
    expect(events.length).toBeGreaterThan(1);
    expect(events.map((e) => e.candidates[0]?.content.parts[0]?.text).join('')).toBe(
      'hello streaming world',
    );
    const call = await post(
      url,
      {
        contents: [
          { role: 'user', parts: [{ text: 'hi' }] },
          { role: 'model', parts: [{ text: 'hello streaming world' }] },
          { role: 'user', parts: [{ text: 'now edit' }] },
        ],
        tools: TOOLS,
      },
      {},
    );
    expect(sseData(call.text)).toMatchObject([
      { candidates: [{ content: { parts: [{ functionCall: { id: 'fc-1', name: 'replace' } }] } }] },
    ]);

    // Upstream: the path's own model (none configured), alt=sse, and no token in the query.
    for (const sent of upstream.requests) {
      expect(sent.path).toBe('/v1beta/models/gemini-agent:streamGenerateContent');
      expect(sent.query).toBe('alt=sse');
      expect(sent.headers['x-goog-api-key']).toBe(KEY);
    }
    const [one, two] = proxy.trajectory().steps;
    expect(one).toMatchObject({
      protocol: GEMINI,
      stream: true,
      requestedModel: 'gemini-agent',
      model: 'gemini-agent',
      output: [{ role: 'assistant', content: 'hello streaming world' }],
      finishReason: 'STOP',
      // The earlier events carried the prompt's count alone; the last one's counts are whole.
      usage: { inputTokens: 50, cachedInputTokens: 10, outputTokens: 7 },
      outcome: 'ok',
    });
    expect(two).toMatchObject({
      prefix: { step: 1, messages: 2 },
      input: [{ role: 'user', content: 'now edit' }],
      output: [
        {
          role: 'assistant',
          toolCalls: [{ id: 'fc-1', name: 'replace', arguments: '{"file_path":"a"}' }],
        },
      ],
    });
    expect(JSON.stringify(proxy.trajectory())).not.toContain(proxy.token);
  });

  it('refuses a bad token, a bad path or body in Google’s error shape, and forwards none', async () => {
    const upstream = await startProtocolServer();
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: v1beta(upstream), apiKey: KEY },
      maxRequestBytes: 1000,
    });
    const models = `${origin(baseUrl)}/v1beta/models`;
    const auth = { 'x-goog-api-key': proxy.token };
    // The token with its last character changed (one in 16 tokens already ends in 0).
    const wrong = `${proxy.token.slice(0, -1)}${proxy.token.endsWith('0') ? '1' : '0'}`;
    const cases: Array<[string, string, Record<string, string>, number, string, string]> = [
      [
        `${models}/m:generateContent`,
        '{}',
        { 'x-goog-api-key': wrong },
        401,
        'UNAUTHENTICATED',
        'did not present this run’s token',
      ],
      [`${models}/m:generateContent?key=${KEY}`, '{}', {}, 401, 'UNAUTHENTICATED', 'token'],
      [`${models}/m:generateContent`, '{}', {}, 401, 'UNAUTHENTICATED', 'token'],
      [`${models}/m:generateContent`, 'not json', auth, 400, 'INVALID_ARGUMENT', 'JSON object'],
      [`${models}/m:generateContent`, '[1]', auth, 400, 'INVALID_ARGUMENT', 'JSON object'],
      [
        `${models}/m:streamGenerateContent`,
        '{}',
        auth,
        400,
        'INVALID_ARGUMENT',
        'streamGenerateContent is served with ?alt=sse only',
      ],
      [
        `${models}/m:generateContent`,
        JSON.stringify({ pad: 'x'.repeat(2000) }),
        auth,
        413,
        'INVALID_ARGUMENT',
        'larger than 1000 bytes',
      ],
      [`${models}/m:countTokens`, '{}', auth, 404, 'NOT_FOUND', 'no model endpoint'],
      [`${models}/a%2Fb:generateContent`, '{}', auth, 404, 'NOT_FOUND', 'no model endpoint'],
    ];
    for (const [url, body, headers, status, code, message] of cases) {
      const answer = await post(url, body, headers);
      expect(answer.status, url).toBe(status);
      if (status === 404) continue; // an unknown path has no protocol: OpenAI's shape
      const error = (JSON.parse(answer.text) as { error: Record<string, unknown> }).error;
      expect(error, url).toMatchObject({ code: status, status: code });
      expect(error['message'], url).toContain(message);
    }
    expect(upstream.requests).toHaveLength(0);
    expect(proxy.trajectory().steps.every((s) => s.outcome === 'refused')).toBe(true);
    expect(JSON.stringify(proxy.trajectory())).not.toContain(KEY);
  });

  it('never lets the real key back: a provider error quoting it is masked', async () => {
    const upstream = await startProtocolServer([{ echoKey: true }]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: v1beta(upstream), apiKey: KEY },
    });
    const answer = await post(
      `${origin(baseUrl)}/v1beta/models/m:generateContent`,
      { contents: [] },
      { 'x-goog-api-key': proxy.token },
    );
    expect(answer.status).toBe(401);
    expect(upstream.requests[0]?.headers['x-goog-api-key']).toBe(KEY);
    expect(answer.text).not.toContain(KEY);
    expect(answer.text).toContain('[REDACTED]');
    expect([...answer.headers.values()].join('\n')).not.toContain(KEY);
    expect(JSON.stringify(proxy.trajectory())).not.toContain(KEY);
  });
});

describe('the model proxy’s limits, Gemini', () => {
  it('stops on tokens: the crossing answer arrives, the next is refused RESOURCE_EXHAUSTED', async () => {
    const upstream = await startProtocolServer();
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: v1beta(upstream), apiKey: KEY },
      limits: { maxTokens: 150 },
    });
    const ask = () =>
      post(
        `${origin(baseUrl)}/v1beta/models/m:streamGenerateContent?alt=sse`,
        { contents: [{ role: 'user', parts: [{ text: 'x' }] }] },
        { 'x-goog-api-key': proxy.token },
      );
    expect((await ask()).status).toBe(200); // 120 tokens
    expect((await ask()).status).toBe(200); // 240: over
    const refused = await ask();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-should-retry')).toBe('false');
    expect(JSON.parse(refused.text)).toEqual({
      error: {
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        message: 'the agent used 240 tokens; the solve allows 150',
      },
    });
    expect(stops).toEqual([
      {
        reason: 'BUDGET_EXCEEDED',
        limit: 'tokens',
        detail: 'the agent used 240 tokens; the solve allows 150',
      },
    ]);
    expect(upstream.requests).toHaveLength(2);
  });

  it('stops when a token limit cannot be counted: an answer without usageMetadata', async () => {
    const upstream = await startProtocolServer([
      { text: 'no usage', usage: null },
      { text: 'no usage', usage: null },
    ]);
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: v1beta(upstream), apiKey: KEY },
      limits: { maxTokens: 1000 },
    });
    const first = await post(
      `${origin(baseUrl)}/v1beta/models/m:streamGenerateContent?alt=sse`,
      { contents: [] },
      { 'x-goog-api-key': proxy.token },
    );
    expect(first.status).toBe(200);
    expect(proxy.trajectory().steps[0]).toMatchObject({ outcome: 'ok', usage: null });
    const second = await post(
      `${origin(baseUrl)}/v1beta/models/m:generateContent`,
      { contents: [] },
      { 'x-goog-api-key': proxy.token },
    );
    expect(second.status).toBe(429);
    expect(stops[0]?.limit).toBe('usage');
    expect(proxy.trajectory().totals.usage).toBeNull();
    expect(upstream.requests).toHaveLength(1);
  });

  it('ends a stream in flight at the deadline with a bare JSON error, as @google/genai raises one', async () => {
    const upstream = await startProtocolServer([{ slow: { chunks: 100, everyMs: 100 } }]);
    const { proxy, baseUrl, stops } = await startTestProxy({
      upstream: { baseUrl: v1beta(upstream), apiKey: KEY },
      deadline: createDeadline(1500),
    });
    const answer = await post(
      `${origin(baseUrl)}/v1beta/models/m:streamGenerateContent?alt=sse`,
      { contents: [] },
      { 'x-goog-api-key': proxy.token },
    );
    expect(answer.status).toBe(200);
    expect(sseData(answer.text).length).toBeGreaterThan(0);
    const last = answer.text.trimEnd().split('\n').at(-1)!;
    expect(JSON.parse(last)).toEqual({
      error: {
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        message: 'the solver deadline was reached while the request was in flight',
      },
    });
    expect(stops.map((s) => s.reason)).toEqual(['TIMEOUT']);
    expect(proxy.trajectory().steps[0]).toMatchObject({ outcome: 'timeout', usage: null });
  });

  it('records a stream the provider cut before its finish reason as failed', async () => {
    const upstream = await startProtocolServer([{ cut: true }]);
    const { proxy, baseUrl } = await startTestProxy({
      upstream: { baseUrl: v1beta(upstream), apiKey: KEY },
    });
    await post(
      `${origin(baseUrl)}/v1beta/models/m:streamGenerateContent?alt=sse`,
      { contents: [] },
      { 'x-goog-api-key': proxy.token },
    ).catch(() => undefined);
    expect(proxy.trajectory().steps[0]).toMatchObject({ outcome: 'upstream_failed', usage: null });
  });
});

/** Feeds SSE text, in pieces of `size` bytes, to a Gemini accumulator; its summary. */
function readStream(text: string, size = 7) {
  const accumulator = createStreamAccumulator(GEMINI);
  const parser = createSseParser((e) => accumulator.event(e));
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) parser.push(bytes.subarray(i, i + size));
  return accumulator.summary();
}

const event = (value: unknown) => `data: ${JSON.stringify(value)}\r\n\r\n`;
const chunk = (parts: unknown[], extra: Record<string, unknown> = {}) =>
  event({ candidates: [{ content: { role: 'model', parts }, ...extra }] });

describe('reading a Gemini stream', () => {
  it('joins text across events, keeps thoughts apart as reasoning, and takes the last usage', () => {
    const summary = readStream(
      chunk([{ text: 'Let me ', thought: true }], { index: 0 }) +
        chunk([{ text: 'think.', thought: true }]) +
        event({
          ...JSON.parse(chunk([{ text: 'Fix' }]).slice(6)),
          usageMetadata: { promptTokenCount: 9 },
        }) +
        chunk([{ text: 'ed ' }, { text: 'it.' }]) +
        chunk([{ functionCall: { name: 'write_file', args: { file_path: 'a', content: 'b' } } }], {
          finishReason: 'STOP',
        }) +
        event({
          candidates: [],
          usageMetadata: {
            promptTokenCount: 9,
            candidatesTokenCount: 4,
            thoughtsTokenCount: 3,
            totalTokenCount: 16,
          },
        }),
    );
    expect(summary).toEqual({
      messages: [
        { role: 'reasoning', content: 'Let me think.' },
        {
          role: 'assistant',
          content: 'Fixed it.',
          toolCalls: [
            {
              id: 'write_file',
              name: 'write_file',
              arguments: '{"file_path":"a","content":"b"}',
            },
          ],
        },
      ],
      finishReason: 'STOP',
      usage: { inputTokens: 9, cachedInputTokens: 0, outputTokens: 7 },
      error: null,
      complete: true,
    });
  });

  it('skips malformed events, and is incomplete without a finish reason', () => {
    const summary = readStream(
      'data: {not json\r\n\r\n' +
        'data: [1, 2]\r\n\r\n' +
        chunk(['a string part', { text: 'kept' }, null]) +
        event({ candidates: 'no list' }),
    );
    expect(summary).toMatchObject({
      messages: [{ role: 'assistant', content: 'kept' }],
      finishReason: null,
      usage: null,
      complete: false,
    });
  });

  it('reports the provider’s error event', () => {
    const summary = readStream(
      chunk([{ text: 'par' }]) +
        event({ error: { code: 500, message: 'backend broke', status: 'INTERNAL' } }),
    );
    expect(summary).toMatchObject({ error: 'backend broke', complete: false });
  });

  it('does not parse an event larger than the limit, and goes on after it', () => {
    const huge = chunk([{ text: 'x'.repeat(MAX_EVENT_BYTES + 10) }]);
    const summary = readStream(
      huge + chunk([{ text: 'after' }], { finishReason: 'STOP' }),
      1024 * 1024,
    );
    expect(summary).toMatchObject({
      messages: [{ role: 'assistant', content: 'after' }],
      finishReason: 'STOP',
      complete: true,
    });
  });

  it('keeps a long text clipped, counting what it left out', () => {
    const summary = readStream(
      chunk([{ text: 'y'.repeat(3000) }]) +
        chunk([{ text: 'z'.repeat(3000) }], { finishReason: 'MAX_TOKENS' }),
    );
    const content = summary.messages[0]?.content ?? '';
    expect(content.startsWith('y'.repeat(3000) + 'z'.repeat(1000))).toBe(true);
    expect(content).toMatch(/…\[2000 more chars\]$/);
    expect(summary.finishReason).toBe('MAX_TOKENS');
  });
});

describe('metering Gemini usageMetadata', () => {
  it('counts cached input in, thoughts and tool-use prompts, and reads omitted zeros as 0', () => {
    expect(
      geminiApiUsage({
        promptTokenCount: 1000,
        cachedContentTokenCount: 600,
        toolUsePromptTokenCount: 50,
        candidatesTokenCount: 30,
        thoughtsTokenCount: 70,
        totalTokenCount: 1150,
      }),
    ).toEqual({ inputTokens: 1050, cachedInputTokens: 600, outputTokens: 100 });
    // proto3 JSON leaves a zero count out.
    expect(geminiApiUsage({ promptTokenCount: 12, totalTokenCount: 12 })).toEqual({
      inputTokens: 12,
      cachedInputTokens: 0,
      outputTokens: 0,
    });
  });

  it('counts a total above its parts as output, and never more cached than input', () => {
    expect(
      geminiApiUsage({ promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 40 }),
    ).toEqual({ inputTokens: 10, cachedInputTokens: 0, outputTokens: 30 });
    expect(geminiApiUsage({ promptTokenCount: 10, cachedContentTokenCount: 99 })).toMatchObject({
      cachedInputTokens: 10,
    });
  });

  it('is unknown without a prompt count or with a bad count', () => {
    for (const bad of [
      undefined,
      null,
      {},
      'usage',
      { candidatesTokenCount: 5 },
      { promptTokenCount: -1 },
      { promptTokenCount: 1.5 },
      { promptTokenCount: '10' },
      { promptTokenCount: 10, candidatesTokenCount: -3 },
      { promptTokenCount: 2 ** 60 },
    ]) {
      expect(geminiApiUsage(bad), JSON.stringify(bad)).toBeNull();
    }
  });

  it('reads a whole answer’s usageMetadata', () => {
    expect(
      answerUsage(GEMINI, {
        candidates: [],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4 },
      }),
    ).toEqual({ inputTokens: 3, cachedInputTokens: 0, outputTokens: 4 });
    expect(answerUsage(GEMINI, { candidates: [] })).toBeNull();
  });
});
