// A scripted fake of the OpenAI Responses API on 127.0.0.1, for tests that drive the real
// `codex` binary (it only speaks `wire_api = "responses"`). Each POST to /v1/responses takes
// the next step of the script and answers it as `text/event-stream`, in the shape Codex
// 0.171.0 was seen to accept (shared/research/codex-offline.md, "SSE the fake returns"):
// `event: <type>\ndata: <json with the same type>\n\n`, response.created, then
// response.output_item.added/done per output item, then response.completed with `usage`.
// A step can also be an HTTP error, a response.failed event, a hang (no answer at all) or a
// cut (the stream starts, then the connection is destroyed before response.completed). When
// the script runs out, every request gets the message "done". Every request is recorded,
// headers included, so tests can check what Codex sent (the key, the tools it was offered,
// the tool output it passed back).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { onCleanup } from './temp.js';

export interface ResponsesCall {
  /** The tool's name inside its namespace, e.g. `read_file`. */
  name: string;
  /** JSON-encoded unless already a string (a string is sent as is, so it may be invalid JSON). */
  arguments: unknown;
  /**
   * The Responses namespace Codex gives an MCP server's tools. Default `mcp__proctor`; `null`
   * sends no namespace, which is how a built-in tool such as `list_mcp_resources` is called.
   */
  namespace?: string | null;
  /** Default `call_<n>`, unique per server. */
  callId?: string;
}

export type ResponsesStep =
  /** One function call, optionally after a reasoning summary; `usage` replaces SCRIPTED_USAGE. */
  | { call: ResponsesCall; reasoning?: string; usage?: Record<string, unknown> }
  /** A final assistant message, optionally after a reasoning summary. */
  | { message: string; reasoning?: string; usage?: Record<string, unknown> }
  /** A plain HTTP error with a JSON error body. */
  | { status: number }
  /** A 200 stream that ends in response.failed with this message. */
  | { failed: string }
  /** Never answers; the socket stays open until the test's cleanup. */
  | { hang: true }
  /** Starts the stream, then destroys the connection before response.completed. */
  | { cut: true };

/** What Codex posts, as far as tests look at it; everything else is kept as sent. */
export interface ResponsesRequestBody {
  model: string;
  stream: boolean;
  input: Array<Record<string, unknown>>;
  tools?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

export interface ResponsesRequest {
  headers: IncomingHttpHeaders;
  body: ResponsesRequestBody;
}

export interface ResponsesServer {
  /** `http://127.0.0.1:<port>/v1`: Codex posts to `<baseUrl>/responses`. */
  baseUrl: string;
  requests: ResponsesRequest[];
}

/** Token counts every completed response reports (Codex sums them into turn.completed). */
export const SCRIPTED_USAGE = {
  input_tokens: 20,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 10,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 30,
} as const;

/** Request bodies above this are refused with 413 (Codex's are tens of KiB). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

function sse(res: ServerResponse, type: string, data: Record<string, unknown>): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

export async function startResponsesServer(script: ResponsesStep[]): Promise<ResponsesServer> {
  const requests: ResponsesRequest[] = [];
  const steps = [...script];
  const sockets = new Set<Socket>();
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}_${++counter}`;

  /** Sends `items` as output items of one response and completes it. */
  const complete = (
    res: ServerResponse,
    items: Array<Record<string, unknown>>,
    usage: Record<string, unknown> = SCRIPTED_USAGE,
  ) => {
    const id = nextId('resp');
    startStream(res);
    sse(res, 'response.created', { response: { id } });
    items.forEach((item, index) => {
      sse(res, 'response.output_item.added', { output_index: index, item });
      if (item.type === 'message') {
        const text = (item.content as Array<{ text: string }>)[0]?.text ?? '';
        const delta = { item_id: item.id, output_index: index, content_index: 0, delta: text };
        sse(res, 'response.output_text.delta', delta);
      }
      sse(res, 'response.output_item.done', { output_index: index, item });
    });
    sse(res, 'response.completed', { response: { id, usage } });
    res.end();
  };

  const answer = (res: ServerResponse, step: ResponsesStep) => {
    if ('hang' in step) return; // the socket is destroyed at cleanup
    if ('status' in step) {
      res.writeHead(step.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'scripted failure', type: 'server_error' } }));
      return;
    }
    if ('failed' in step) {
      startStream(res);
      const id = nextId('resp');
      sse(res, 'response.created', { response: { id } });
      const error = { code: 'server_error', message: step.failed };
      sse(res, 'response.failed', { response: { id, status: 'failed', error } });
      res.end();
      return;
    }
    if ('cut' in step) {
      startStream(res);
      sse(res, 'response.created', { response: { id: nextId('resp') } });
      // Destroy only once the bytes are out, so the client sees a started, unfinished stream.
      res.write('', () => res.socket?.destroy());
      return;
    }
    const items: Array<Record<string, unknown>> = [];
    if (step.reasoning !== undefined) {
      const summary = [{ type: 'summary_text', text: step.reasoning }];
      items.push({ type: 'reasoning', id: nextId('rs'), summary, encrypted_content: null });
    }
    if ('call' in step) {
      const { call } = step;
      const namespace = call.namespace === undefined ? 'mcp__proctor' : call.namespace;
      items.push({
        type: 'function_call',
        id: nextId('fc'),
        call_id: call.callId ?? nextId('call'),
        name: call.name,
        ...(namespace === null ? {} : { namespace }),
        arguments:
          typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      });
    } else {
      items.push({
        type: 'message',
        id: nextId('msg'),
        role: 'assistant',
        content: [{ type: 'output_text', text: step.message, annotations: [] }],
      });
    }
    complete(res, items, step.usage);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/responses') {
        res.writeHead(404).end();
        return;
      }
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413).end();
        return;
      }
      // Codex 0.171.0 sends plain JSON; a compressed body would be a change worth failing on.
      if (req.headers['content-encoding'] !== undefined) {
        res.writeHead(415).end(`unexpected content-encoding ${req.headers['content-encoding']}`);
        return;
      }
      let body: ResponsesRequestBody;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ResponsesRequestBody;
      } catch {
        res.writeHead(400).end('request body is not JSON');
        return;
      }
      requests.push({ headers: req.headers, body });
      answer(res, steps.shift() ?? { message: 'done' });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        // Hanging requests keep their sockets open; close() would wait for them forever.
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests };
}
