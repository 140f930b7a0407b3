// The scripted Responses API fake, hit with fetch over real HTTP: each step's answer is
// well-formed SSE in the shape Codex reads, failures fail the way the script says, and every
// request is recorded.
import { describe, expect, it } from 'vitest';
import { SCRIPTED_USAGE, startResponsesServer } from './responses-server.js';
import { waitFor } from './wait.js';

interface SseEvent {
  event: string;
  data: Record<string, unknown> & { type: string };
}

/** Splits an SSE body into events, checking each has one `event:` and one `data:` line. */
function parseSse(text: string): SseEvent[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const [event, data, ...rest] = block.split('\n');
      expect(rest).toEqual([]);
      expect(event).toMatch(/^event: \S+$/);
      expect(data).toMatch(/^data: \{/);
      return {
        event: event!.slice('event: '.length),
        data: JSON.parse(data!.slice('data: '.length)) as SseEvent['data'],
      };
    });
}

function post(baseUrl: string, body: unknown = { model: 'm', stream: true, input: [] }, init = {}) {
  return fetch(`${baseUrl}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify(body),
    ...init,
  });
}

async function events(response: Response): Promise<SseEvent[]> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  const parsed = parseSse(await response.text());
  for (const { event, data } of parsed) expect(data.type).toBe(event);
  return parsed;
}

describe('startResponsesServer', () => {
  it('listens on 127.0.0.1 and records each request with its headers and body', async () => {
    const server = await startResponsesServer([]);
    expect(server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const body = { model: 'fake-model', stream: true, input: [{ role: 'user', content: 'hi' }] };
    await (await post(server.baseUrl, body)).text();
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.body).toEqual(body);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test');
  });

  it('answers a call step with a namespaced function call, then response.completed', async () => {
    const server = await startResponsesServer([
      { call: { name: 'read_file', arguments: { path: 'README.md' } } },
    ]);
    const sse = await events(await post(server.baseUrl));
    expect(sse.map((e) => e.event)).toEqual([
      'response.created',
      'response.output_item.added',
      'response.output_item.done',
      'response.completed',
    ]);
    const item = {
      type: 'function_call',
      id: expect.any(String),
      call_id: expect.stringMatching(/^call_\d+$/),
      name: 'read_file',
      namespace: 'mcp__proctor',
      arguments: '{"path":"README.md"}',
    };
    expect(sse[1]?.data).toEqual({ type: 'response.output_item.added', output_index: 0, item });
    expect(sse[2]?.data).toEqual({ type: 'response.output_item.done', output_index: 0, item });
    const id = (sse[0]?.data.response as { id: string }).id;
    expect(sse[3]?.data).toEqual({
      type: 'response.completed',
      response: { id, usage: SCRIPTED_USAGE },
    });
  });

  it('sends a call without namespace, with given call id and verbatim string arguments', async () => {
    const server = await startResponsesServer([
      { call: { name: 'list_mcp_resources', arguments: '{bad', namespace: null, callId: 'c1' } },
    ]);
    const sse = await events(await post(server.baseUrl));
    const item = sse.find((e) => e.event === 'response.output_item.done')?.data.item;
    expect(item).toEqual({
      type: 'function_call',
      id: expect.any(String),
      call_id: 'c1',
      name: 'list_mcp_resources',
      arguments: '{bad',
    });
  });

  it('answers a message step with a reasoning summary, the text delta and the message', async () => {
    const server = await startResponsesServer([{ message: 'All done.', reasoning: 'think' }]);
    const sse = await events(await post(server.baseUrl));
    expect(sse.map((e) => e.event)).toEqual([
      'response.created',
      'response.output_item.added',
      'response.output_item.done',
      'response.output_item.added',
      'response.output_text.delta',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(sse[2]?.data.item).toEqual({
      type: 'reasoning',
      id: expect.any(String),
      summary: [{ type: 'summary_text', text: 'think' }],
      encrypted_content: null,
    });
    const message = sse[5]?.data.item as { id: string };
    expect(message).toEqual({
      type: 'message',
      id: expect.any(String),
      role: 'assistant',
      content: [{ type: 'output_text', text: 'All done.', annotations: [] }],
    });
    expect(sse[4]?.data).toMatchObject({
      item_id: message.id,
      output_index: 1,
      delta: 'All done.',
    });
  });

  it('takes one step per request, then answers "done" once the script runs out', async () => {
    const server = await startResponsesServer([{ message: 'one' }, { status: 503 }]);
    const texts = async () => {
      const sse = await events(await post(server.baseUrl));
      const done = sse.find((e) => e.event === 'response.output_item.done');
      return (done?.data.item as { content: Array<{ text: string }> }).content[0]?.text;
    };
    expect(await texts()).toBe('one');
    expect((await post(server.baseUrl)).status).toBe(503);
    expect(await texts()).toBe('done');
    expect(await texts()).toBe('done');
    expect(server.requests).toHaveLength(4);
  });

  it('answers a status step with that HTTP status and a JSON error', async () => {
    const server = await startResponsesServer([{ status: 500 }]);
    const response = await post(server.baseUrl);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: { message: 'scripted failure', type: 'server_error' },
    });
  });

  it('ends a failed step with response.failed and no response.completed', async () => {
    const server = await startResponsesServer([{ failed: 'scripted failure' }]);
    const sse = await events(await post(server.baseUrl));
    expect(sse.map((e) => e.event)).toEqual(['response.created', 'response.failed']);
    expect(sse[1]?.data.response).toMatchObject({
      status: 'failed',
      error: { code: 'server_error', message: 'scripted failure' },
    });
  });

  it('cuts the connection after the stream started', async () => {
    const server = await startResponsesServer([{ cut: true }]);
    const response = await post(server.baseUrl);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    expect(server.requests).toHaveLength(1);
  });

  it('never answers a hang step, and cleanup still closes the server', async () => {
    const server = await startResponsesServer([{ hang: true }]);
    const abort = new AbortController();
    let settled = false;
    const pending = post(server.baseUrl, undefined, { signal: abort.signal }).finally(() => {
      settled = true;
    });
    await waitFor(() => server.requests.length === 1, { what: 'the request' });
    // The request has been read and not answered; a later step would have answered by now.
    const next = await post(server.baseUrl);
    expect(next.status).toBe(200);
    await next.text();
    expect(settled).toBe(false);
    abort.abort();
    await expect(pending).rejects.toThrow();
  });

  it('refuses other paths, methods and bodies that are not JSON', async () => {
    const server = await startResponsesServer([]);
    expect((await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST' })).status).toBe(
      404,
    );
    expect((await fetch(`${server.baseUrl}/responses`)).status).toBe(404);
    const notJson = await fetch(`${server.baseUrl}/responses`, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
    expect(server.requests).toEqual([]);
  });
});
