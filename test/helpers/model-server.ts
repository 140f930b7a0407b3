// A scripted OpenAI-compatible model server on 127.0.0.1 for solver tests: each POST to
// /v1/chat/completions takes the next step of the script, which answers with a completion
// (tool calls or a final message), an HTTP error, or never answers (a hang). Every request is
// recorded, headers included, so tests can check what the adapter sent.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onCleanup } from './temp.js';

export interface ToolCallStep {
  id?: string;
  name: string;
  arguments: unknown;
}

/**
 * An answer's `usage`: a number is total_tokens (one of them completion), an object gives
 * prompt, cached and completion tokens, and null sends no usage at all. Default 10.
 */
export type StepUsage = number | { prompt: number; cached?: number; completion: number } | null;

export type Step =
  | { toolCalls: ToolCallStep[]; usage?: StepUsage }
  | { message: string; usage?: StepUsage }
  | { status: number; body?: string }
  | { hang: true };

export interface RecordedRequest {
  headers: IncomingMessage['headers'];
  body: {
    model: string;
    messages: Array<{ role: string; content: unknown; tool_call_id?: string }>;
    tools?: unknown[];
    parallel_tool_calls?: boolean;
  };
}

export interface ModelServer {
  baseUrl: string;
  requests: RecordedRequest[];
}

let callCounter = 0;

function completion(step: Extract<Step, { toolCalls: ToolCallStep[] } | { message: string }>) {
  const toolCalls =
    'toolCalls' in step
      ? step.toolCalls.map((call) => ({
          id: call.id ?? `call_${++callCounter}`,
          type: 'function',
          function: {
            name: call.name,
            arguments:
              typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
          },
        }))
      : undefined;
  const usage = usageOf(step.usage === undefined ? 10 : step.usage);
  return {
    id: `chatcmpl-${++callCounter}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'scripted',
    choices: [
      {
        index: 0,
        finish_reason: toolCalls ? 'tool_calls' : 'stop',
        message: {
          role: 'assistant',
          content: 'message' in step ? step.message : null,
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
      },
    ],
    ...(usage === null ? {} : { usage }),
  };
}

function usageOf(usage: StepUsage) {
  if (usage === null) return null;
  if (typeof usage === 'number') {
    return { prompt_tokens: usage - 1, completion_tokens: 1, total_tokens: usage };
  }
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
    ...(usage.cached === undefined
      ? {}
      : { prompt_tokens_details: { cached_tokens: usage.cached } }),
  };
}

export async function startModelServer(script: Step[]): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const steps = [...script];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      requests.push({ headers: req.headers, body: JSON.parse(raw) as RecordedRequest['body'] });
      const step = steps.shift() ?? { message: 'done' };
      if ('hang' in step) {
        hanging.push(res);
        return;
      }
      if ('status' in step) {
        res.writeHead(step.status, { 'content-type': 'application/json' });
        res.end(step.body ?? JSON.stringify({ error: { message: 'scripted failure' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(step)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests };
}
