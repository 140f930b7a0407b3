// A scripted model provider on 127.0.0.1 speaking all four wire protocols the model proxy
// serves: POST /v1/chat/completions (OpenAI Chat Completions), /v1/responses (OpenAI Responses)
// and /v1/messages (Anthropic Messages), each plain or streamed (SSE) as the request's `stream`
// asks, and Google's /v1beta/models/MODEL:generateContent, streamed at
// :streamGenerateContent?alt=sse (and the same under /v1), in the shapes the providers document.
// A Gemini request's model is recorded from its path, as `body.model` is for the others. Each request takes the next step of the script:
// a text answer, a tool call, an HTTP error, an error that echoes the credential it was sent
// (as some providers' 401s do), a hang, a stream cut before its end, a slow stream, or another
// step held until a promise settles. Chat
// streams carry usage only when `stream_options.include_usage` asks for it, as OpenAI's do.
// Every request is recorded, headers included. When the script runs out, `otherwise` (if given)
// picks each answer from the request itself: a real agent's side requests (a title, a check)
// then cannot shift a script out of step.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { onCleanup } from './temp.js';

export interface StepUsage {
  input: number;
  cached?: number;
  output: number;
  /** Gemini only: thinking tokens, apart from `output` (its thoughtsTokenCount). */
  thoughts?: number;
}

export type UpstreamStep =
  | { text: string; usage?: StepUsage | null; chunks?: number }
  | { toolCall: { name: string; arguments: unknown; id?: string }; usage?: StepUsage | null }
  | { status: number; body?: string }
  /** A 401 whose body and headers quote the credential the request carried. */
  | { echoKey: true }
  | { hang: true }
  /** A 200 stream (or body) that starts, then the connection is destroyed. */
  | { cut: true }
  /** A streamed text sent one chunk every `everyMs`. */
  | { slow: { chunks: number; everyMs: number }; usage?: StepUsage | null }
  /** `then`, answered once `until` has settled (a barrier between concurrent clients). */
  | { until: Promise<unknown>; then: UpstreamStep };

export interface UpstreamRequest {
  path: string;
  /** The query string, without its `?` ('' when none). */
  query: string;
  /** The model a Gemini path names (null for the other protocols). */
  model: string | null;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface ProtocolServer {
  /** `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  requests: UpstreamRequest[];
  /** Appends steps to the script. */
  push(...steps: UpstreamStep[]): void;
}

export const DEFAULT_USAGE: StepUsage = { input: 100, output: 20 };

type Protocol = 'chat' | 'responses' | 'anthropic' | 'gemini';

const PATHS: Record<string, Protocol> = {
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'responses',
  '/v1/messages': 'anthropic',
};

const GEMINI_PATH = /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

let counter = 0;
const id = (prefix: string) => `${prefix}_${++counter}`;

function split(text: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

function usageFor(protocol: Protocol, u: StepUsage) {
  switch (protocol) {
    case 'chat':
      return {
        prompt_tokens: u.input,
        completion_tokens: u.output,
        total_tokens: u.input + u.output,
        ...(u.cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: u.cached } }),
      };
    case 'responses':
      return {
        input_tokens: u.input,
        input_tokens_details: { cached_tokens: u.cached ?? 0 },
        output_tokens: u.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: u.input + u.output,
      };
    case 'anthropic':
      // Anthropic's input_tokens leaves out the cache reads.
      return {
        input_tokens: u.input - (u.cached ?? 0),
        cache_read_input_tokens: u.cached ?? 0,
        cache_creation_input_tokens: 0,
        output_tokens: u.output,
      };
    case 'gemini':
      // promptTokenCount counts the cached tokens in; thoughts are apart from candidates.
      return {
        promptTokenCount: u.input,
        candidatesTokenCount: u.output,
        totalTokenCount: u.input + u.output + (u.thoughts ?? 0),
        ...(u.cached === undefined ? {} : { cachedContentTokenCount: u.cached }),
        ...(u.thoughts === undefined ? {} : { thoughtsTokenCount: u.thoughts }),
      };
  }
}

/** A Gemini candidate holding `parts`, with its finish reason when it is the last. */
function geminiChunk(
  model: string,
  parts: unknown[],
  finish: boolean,
  usageMetadata: unknown,
  responseId: string,
): Record<string, unknown> {
  return {
    candidates: [
      {
        content: { role: 'model', parts },
        index: 0,
        ...(finish ? { finishReason: 'STOP' } : {}),
      },
    ],
    ...(usageMetadata ? { usageMetadata } : {}),
    modelVersion: model,
    responseId,
  };
}

/** The Gemini part of an answer: a function call (its id only when the script gave one), or text. */
function geminiParts(a: Answer, text: string): unknown[] {
  if (!a.call) return [{ text }];
  const call = {
    name: a.call.name,
    args: JSON.parse(a.call.arguments) as unknown,
    ...(a.call.named ? { id: a.call.id } : {}),
  };
  return [{ functionCall: call }];
}

interface Answer {
  text: string | null;
  /** `named`: the script gave the id (a Gemini call carries one only then). */
  call: { id: string; named: boolean; name: string; arguments: string } | null;
  usage: StepUsage | null;
}

function answerOf(step: UpstreamStep): Answer | null {
  const usage =
    'usage' in step ? (step.usage === undefined ? DEFAULT_USAGE : step.usage) : DEFAULT_USAGE;
  if ('text' in step) return { text: step.text, call: null, usage };
  // One character per chunk, so that the stream really has `chunks` text events (plus its
  // role, finish and usage events) and lasts `chunks × everyMs`.
  if ('slow' in step) return { text: 's'.repeat(step.slow.chunks), call: null, usage };
  if ('toolCall' in step) {
    const args = step.toolCall.arguments;
    return {
      text: null,
      call: {
        id: step.toolCall.id ?? id('call'),
        named: step.toolCall.id !== undefined,
        name: step.toolCall.name,
        arguments: typeof args === 'string' ? args : JSON.stringify(args),
      },
      usage,
    };
  }
  return null;
}

function whole(protocol: Protocol, model: string, a: Answer): Record<string, unknown> {
  const usage = a.usage ? { usage: usageFor(protocol, a.usage) } : {};
  switch (protocol) {
    case 'chat':
      return {
        id: id('chatcmpl'),
        object: 'chat.completion',
        created: 1_700_000_000,
        model,
        choices: [
          {
            index: 0,
            finish_reason: a.call ? 'tool_calls' : 'stop',
            message: {
              role: 'assistant',
              content: a.text,
              ...(a.call
                ? {
                    tool_calls: [
                      {
                        id: a.call.id,
                        type: 'function',
                        function: { name: a.call.name, arguments: a.call.arguments },
                      },
                    ],
                  }
                : {}),
            },
          },
        ],
        ...usage,
      };
    case 'responses':
      return {
        id: id('resp'),
        object: 'response',
        created_at: 1_700_000_000,
        status: 'completed',
        model,
        output: [responsesItem(a)],
        ...usage,
      };
    case 'anthropic':
      return {
        id: id('msg'),
        type: 'message',
        role: 'assistant',
        model,
        content: [
          a.call
            ? {
                type: 'tool_use',
                id: a.call.id,
                name: a.call.name,
                input: JSON.parse(a.call.arguments) as unknown,
              }
            : { type: 'text', text: a.text ?? '' },
        ],
        stop_reason: a.call ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        ...usage,
      };
    case 'gemini':
      return geminiChunk(
        model,
        geminiParts(a, a.text ?? ''),
        true,
        a.usage && usageFor('gemini', a.usage),
        id('resp'),
      );
  }
}

function responsesItem(a: Answer): Record<string, unknown> {
  return a.call
    ? {
        type: 'function_call',
        id: id('fc'),
        call_id: a.call.id,
        name: a.call.name,
        arguments: a.call.arguments,
        status: 'completed',
      }
    : {
        type: 'message',
        id: id('msg'),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: a.text ?? '', annotations: [] }],
      };
}

/** The events of a streamed answer, as SSE text, one string per chunk to write. */
function events(
  protocol: Protocol,
  model: string,
  a: Answer,
  includeUsage: boolean,
  parts: number,
): string[] {
  const out: string[] = [];
  const data = (value: unknown) => out.push(`data: ${JSON.stringify(value)}\n\n`);
  const event = (type: string, value: Record<string, unknown>) =>
    out.push(`event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`);
  switch (protocol) {
    case 'chat': {
      const cid = id('chatcmpl');
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        data({
          id: cid,
          object: 'chat.completion.chunk',
          created: 1,
          model,
          choices: [{ index: 0, delta, finish_reason: finish }],
        });
      chunk({ role: 'assistant', content: '' });
      if (a.call) {
        const args = split(a.call.arguments, 2);
        chunk({
          tool_calls: [
            {
              index: 0,
              id: a.call.id,
              type: 'function',
              function: { name: a.call.name, arguments: args[0] },
            },
          ],
        });
        for (const rest of args.slice(1))
          chunk({ tool_calls: [{ index: 0, function: { arguments: rest } }] });
      } else {
        for (const piece of split(a.text ?? '', parts)) chunk({ content: piece });
      }
      chunk({}, a.call ? 'tool_calls' : 'stop');
      if (includeUsage && a.usage) {
        data({
          id: cid,
          object: 'chat.completion.chunk',
          created: 1,
          model,
          choices: [],
          usage: usageFor('chat', a.usage),
        });
      }
      out.push('data: [DONE]\n\n');
      return out;
    }
    case 'responses': {
      const rid = id('resp');
      event('response.created', { response: { id: rid, status: 'in_progress', output: [] } });
      const item = responsesItem(a);
      event('response.output_item.added', { output_index: 0, item });
      if (!a.call) {
        for (const piece of split(a.text ?? '', parts)) {
          event('response.output_text.delta', {
            item_id: item['id'],
            output_index: 0,
            content_index: 0,
            delta: piece,
          });
        }
      }
      event('response.output_item.done', { output_index: 0, item });
      event('response.completed', {
        response: {
          id: rid,
          object: 'response',
          status: 'completed',
          model,
          output: [item],
          ...(a.usage ? { usage: usageFor('responses', a.usage) } : {}),
        },
      });
      return out;
    }
    case 'anthropic': {
      const u = a.usage ? usageFor('anthropic', a.usage) : null;
      event('message_start', {
        message: {
          id: id('msg'),
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          ...(u ? { usage: { ...u, output_tokens: 1 } } : {}),
        },
      });
      if (a.call) {
        event('content_block_start', {
          index: 0,
          content_block: { type: 'tool_use', id: a.call.id, name: a.call.name, input: {} },
        });
        for (const piece of split(a.call.arguments, 2)) {
          event('content_block_delta', {
            index: 0,
            delta: { type: 'input_json_delta', partial_json: piece },
          });
        }
      } else {
        event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        for (const piece of split(a.text ?? '', parts)) {
          event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
        }
      }
      event('content_block_stop', { index: 0 });
      event('message_delta', {
        delta: { stop_reason: a.call ? 'tool_use' : 'end_turn', stop_sequence: null },
        ...(u ? { usage: { output_tokens: u.output_tokens } } : {}),
      });
      event('message_stop', {});
      return out;
    }
    case 'gemini': {
      // Google ends each event with CRLF CRLF. Every chunk but the last carries the prompt's
      // count alone; the last, with the finish reason, the whole usage.
      const rid = id('resp');
      const send = (value: unknown) => out.push(`data: ${JSON.stringify(value)}\r\n\r\n`);
      const full = a.usage && usageFor('gemini', a.usage);
      const partial = a.usage && {
        promptTokenCount: a.usage.input,
        totalTokenCount: a.usage.input,
      };
      const pieces = a.call ? [''] : split(a.text ?? '', parts);
      pieces.forEach((piece, i) => {
        const last = i === pieces.length - 1;
        send(geminiChunk(model, geminiParts(a, piece), last, last ? full : partial, rid));
      });
      return out;
    }
  }
}

export interface ProtocolServerOptions {
  /** The answer to a request once the script is spent; default the text "done". */
  otherwise?: (request: UpstreamRequest) => UpstreamStep;
}

export async function startProtocolServer(
  script: UpstreamStep[] = [],
  options: ProtocolServerOptions = {},
): Promise<ProtocolServer> {
  const requests: UpstreamRequest[] = [];
  const steps = [...script];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const respond = (
    res: ServerResponse,
    protocol: Protocol,
    body: Record<string, unknown>,
    headers: IncomingHttpHeaders,
    request: UpstreamRequest,
    chosen?: UpstreamStep,
  ): void => {
    const step = chosen ?? steps.shift() ?? options.otherwise?.(request) ?? { text: 'done' };
    if ('until' in step) {
      const then = () => respond(res, protocol, body, headers, request, step.then);
      void step.until.then(then, then);
      return;
    }
    const model = request.model ?? (typeof body['model'] === 'string' ? body['model'] : 'scripted');
    // Gemini streams at its own method, as SSE only with ?alt=sse (the proxy always asks so).
    const streamed =
      protocol === 'gemini'
        ? request.path.endsWith(':streamGenerateContent') &&
          new URLSearchParams(request.query).get('alt') === 'sse'
        : body['stream'] === true;
    if ('hang' in step) return;
    if ('status' in step) {
      res.writeHead(step.status, { 'content-type': 'application/json' });
      res.end(
        step.body ??
          JSON.stringify({ error: { message: 'scripted failure', type: 'server_error' } }),
      );
      return;
    }
    if ('echoKey' in step) {
      const presented = String(
        headers.authorization ?? headers['x-api-key'] ?? headers['x-goog-api-key'] ?? '',
      );
      res.writeHead(401, {
        'content-type': 'application/json',
        'x-echo': presented,
        'x-request-id': presented,
      });
      res.end(
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${presented}`,
            type: 'invalid_request_error',
          },
        }),
      );
      return;
    }
    if ('cut' in step) {
      res.writeHead(200, { 'content-type': streamed ? 'text/event-stream' : 'application/json' });
      res.write(streamed ? 'data: {"partial": true}\n\n' : '{"partial": ', () =>
        res.socket?.destroy(),
      );
      return;
    }
    const answer = answerOf(step)!;
    if (!streamed) {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': id('req') });
      res.end(JSON.stringify(whole(protocol, model, answer)));
      return;
    }
    const includeUsage =
      typeof body['stream_options'] === 'object' &&
      (body['stream_options'] as Record<string, unknown> | null)?.['include_usage'] === true;
    const parts = 'slow' in step ? step.slow.chunks : 'chunks' in step ? (step.chunks ?? 3) : 3;
    const chunks = events(protocol, model, answer, includeUsage, parts);
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-request-id': id('req'),
    });
    if (!('slow' in step)) {
      for (const chunk of chunks) res.write(chunk);
      res.end();
      return;
    }
    const next = () => {
      const chunk = chunks.shift();
      if (chunk === undefined) {
        res.end();
        return;
      }
      res.write(chunk);
      const timer = setTimeout(() => {
        timers.delete(timer);
        next();
      }, step.slow.everyMs);
      timers.add(timer);
    };
    next();
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const [path = '', query = ''] = (req.url ?? '').split(/\?(.*)/s);
      const gemini = GEMINI_PATH.exec(path);
      const protocol = gemini ? 'gemini' : PATHS[path];
      if (req.method !== 'POST' || protocol === undefined) {
        res.writeHead(404).end();
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        res.writeHead(400).end('not JSON');
        return;
      }
      const model = gemini ? decodeURIComponent(gemini[1] as string) : null;
      const request = { path, query, model, headers: req.headers, body };
      requests.push(request);
      respond(res, protocol, body, req.headers, request);
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
        for (const timer of timers) clearTimeout(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...more) => steps.push(...more),
  };
}
