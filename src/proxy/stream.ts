// Streamed answers, read on the side while their bytes pass through untouched: a server-sent
// events parser fed chunk by chunk, and one accumulator per protocol that puts together what
// the trajectory records (the answer's messages, tool calls, finish reason) and its usage
// (Chat Completions: the final chunk's, which the proxy asks for with
// `stream_options.include_usage`; Responses: `response.completed`'s; Anthropic: message_start's
// input counts and the last message_delta's output count; Gemini: the last `usageMetadata`,
// whose counts are cumulative).
//
// Bounded: an event's data beyond MAX_EVENT_BYTES is not parsed (the bytes still reach the
// agent), and texts keep MAX_TEXT_CHARS characters while counting the rest.
import type { TokenUsage } from '../solvers/usage.js';
import { contentText, geminiCall } from './messages.js';
import type { WireProtocol } from './protocols.js';
import { chatCompletionUsage } from '../solvers/usage.js';
import { MAX_MESSAGES_PER_STEP, MAX_TEXT_CHARS, type TrajectoryMessage } from './trajectory.js';
import {
  anthropicMessagesUsage,
  anthropicUsagePart,
  geminiApiUsage,
  responsesApiUsage,
  type AnthropicUsage,
} from './usage.js';
import { answerMessages } from './messages.js';

export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

export interface SseEvent {
  event: string;
  data: string;
}

/** An incremental SSE parser: feed it bytes, get the complete events so far. */
export function createSseParser(onEvent: (event: SseEvent) => void) {
  let pending = '';
  let event = '';
  let data: string[] = [];
  let size = 0;
  let oversized = false;
  const decoder = new TextDecoder();
  const line = (text: string) => {
    if (text === '') {
      if (!oversized && data.length > 0) onEvent({ event, data: data.join('\n') });
      event = '';
      data = [];
      size = 0;
      oversized = false;
      return;
    }
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    const value = colon === -1 ? '' : text.slice(colon + (text[colon + 1] === ' ' ? 2 : 1));
    if (field === 'event') event = value;
    if (field === 'data') {
      size += value.length;
      if (size > MAX_EVENT_BYTES) oversized = true;
      else data.push(value);
    }
  };
  return {
    push(chunk: Buffer): void {
      pending += decoder.decode(chunk, { stream: true });
      let start = 0;
      for (let nl = pending.indexOf('\n'); nl !== -1; nl = pending.indexOf('\n', start)) {
        line(pending.slice(start, nl).replace(/\r$/, ''));
        start = nl + 1;
      }
      pending = pending.slice(start);
      if (pending.length > MAX_EVENT_BYTES) {
        pending = '';
        oversized = true;
      }
    },
  };
}

/** Text kept up to MAX_TEXT_CHARS, with the count of what was left out. */
class Text {
  private kept = '';
  private total = 0;
  add(s: string): void {
    this.total += s.length;
    if (this.kept.length < MAX_TEXT_CHARS)
      this.kept += s.slice(0, MAX_TEXT_CHARS - this.kept.length);
  }
  value(): string {
    const more = this.total - this.kept.length;
    return more > 0 ? `${this.kept}…[${more} more chars]` : this.kept;
  }
}

export interface StreamSummary {
  messages: TrajectoryMessage[];
  finishReason: string | null;
  usage: TokenUsage | null;
  /** An error event in the stream (the provider's), if any. */
  error: string | null;
  /** Whether the stream reached its protocol's end (`[DONE]`, response.completed, message_stop). */
  complete: boolean;
}

export interface StreamAccumulator {
  event(e: SseEvent): void;
  summary(): StreamSummary;
}

type Json = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parse(data: string): Json | null {
  try {
    const value: unknown = JSON.parse(data);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

const errorText = (e: unknown): string =>
  (isObject(e) && typeof e['message'] === 'string'
    ? e['message']
    : (JSON.stringify(e) ?? '')
  ).slice(0, 500);

interface CallParts {
  id: string;
  name: string;
  args: Text;
}

function toolCalls(calls: Iterable<CallParts>) {
  return [...calls].map((c) => ({ id: c.id, name: c.name, arguments: c.args.value() }));
}

function assistant(text: Text, calls: Map<number, CallParts>): TrajectoryMessage[] {
  const message: TrajectoryMessage = { role: 'assistant', content: text.value() };
  if (calls.size > 0) message.toolCalls = toolCalls(calls.values());
  return [message];
}

function chatAccumulator(): StreamAccumulator {
  const text = new Text();
  const calls = new Map<number, CallParts>();
  let finishReason: string | null = null;
  let usage: TokenUsage | null = null;
  let error: string | null = null;
  let complete = false;
  return {
    event({ data }) {
      if (data.trim() === '[DONE]') {
        complete = true;
        return;
      }
      const chunk = parse(data);
      if (!chunk) return;
      if (chunk['error'] !== undefined) error = errorText(chunk['error']);
      if (chunk['usage'] != null) usage = chatCompletionUsage(chunk['usage']);
      const choice = Array.isArray(chunk['choices']) ? (chunk['choices'][0] as unknown) : null;
      if (!isObject(choice)) return;
      if (typeof choice['finish_reason'] === 'string') finishReason = choice['finish_reason'];
      const delta = isObject(choice['delta']) ? choice['delta'] : {};
      if (typeof delta['content'] === 'string') text.add(delta['content']);
      for (const call of Array.isArray(delta['tool_calls']) ? delta['tool_calls'] : []) {
        if (!isObject(call)) continue;
        const index = typeof call['index'] === 'number' ? call['index'] : calls.size;
        const parts = calls.get(index) ?? { id: '', name: '', args: new Text() };
        calls.set(index, parts);
        if (typeof call['id'] === 'string') parts.id = call['id'];
        const fn = isObject(call['function']) ? call['function'] : {};
        if (typeof fn['name'] === 'string') parts.name += fn['name'];
        if (typeof fn['arguments'] === 'string') parts.args.add(fn['arguments']);
      }
    },
    summary: () => ({ messages: assistant(text, calls), finishReason, usage, error, complete }),
  };
}

function responsesAccumulator(): StreamAccumulator {
  const items: unknown[] = [];
  let final: Json | null = null;
  let error: string | null = null;
  return {
    event({ data }) {
      const event = parse(data);
      if (!event) return;
      const type = event['type'];
      if (type === 'response.output_item.done') items.push(event['item']);
      if (
        type === 'response.completed' ||
        type === 'response.incomplete' ||
        type === 'response.failed'
      ) {
        final = isObject(event['response']) ? event['response'] : {};
        if (type === 'response.failed') error = errorText(final['error']);
      }
      if (type === 'error') error = errorText(event);
    },
    summary() {
      const response: Json = final ?? {};
      const output = Array.isArray(response['output']) && response['output'].length > 0;
      const { messages } = answerMessages('openai-responses', {
        output: output ? response['output'] : items,
      });
      return {
        messages,
        finishReason: typeof response['status'] === 'string' ? response['status'] : null,
        usage: responsesApiUsage(response['usage']),
        error,
        complete: final !== null,
      };
    },
  };
}

function anthropicAccumulator(): StreamAccumulator {
  const blocks = new Map<number, { type: string; text: Text; call?: CallParts }>();
  const usage: AnthropicUsage[] = [];
  let finishReason: string | null = null;
  let error: string | null = null;
  let complete = false;
  return {
    event({ data }) {
      const event = parse(data);
      if (!event) return;
      const index = typeof event['index'] === 'number' ? event['index'] : -1;
      switch (event['type']) {
        case 'message_start': {
          const message = isObject(event['message']) ? event['message'] : {};
          const part = anthropicUsagePart(message['usage']);
          if (part) usage.push(part);
          break;
        }
        case 'content_block_start': {
          const block = isObject(event['content_block']) ? event['content_block'] : {};
          const type = str(block['type']) || 'text';
          const entry: { type: string; text: Text; call?: CallParts } = { type, text: new Text() };
          if (type === 'tool_use') {
            entry.call = {
              id: str(block['id']),
              name: str(block['name']),
              args: new Text(),
            };
          }
          if (typeof block['text'] === 'string') entry.text.add(block['text']);
          blocks.set(index, entry);
          break;
        }
        case 'content_block_delta': {
          const delta = isObject(event['delta']) ? event['delta'] : {};
          const block = blocks.get(index);
          if (!block) break;
          if (typeof delta['text'] === 'string') block.text.add(delta['text']);
          if (typeof delta['thinking'] === 'string') block.text.add(delta['thinking']);
          if (typeof delta['partial_json'] === 'string')
            block.call?.args.add(delta['partial_json']);
          break;
        }
        case 'message_delta': {
          const delta = isObject(event['delta']) ? event['delta'] : {};
          if (typeof delta['stop_reason'] === 'string') finishReason = delta['stop_reason'];
          const part = anthropicUsagePart(event['usage']);
          if (part) usage.push(part);
          break;
        }
        case 'message_stop':
          complete = true;
          break;
        case 'error':
          error = errorText(event['error']);
          break;
      }
    },
    summary() {
      const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, b]) => b);
      const messages: TrajectoryMessage[] = ordered
        .filter((b) => b.type === 'thinking')
        .map((b) => ({ role: 'reasoning', content: b.text.value() }));
      const text = contentText(
        ordered.filter((b) => b.type === 'text').map((b) => ({ text: b.text.value() })),
      );
      const calls = ordered.flatMap((b) => (b.call ? [b.call] : []));
      const reply: TrajectoryMessage = { role: 'assistant', content: text };
      if (calls.length > 0) reply.toolCalls = toolCalls(calls);
      messages.push(reply);
      return {
        messages,
        finishReason,
        usage: anthropicMessagesUsage(usage),
        error,
        complete,
      };
    },
  };
}

/**
 * Gemini's `streamGenerateContent?alt=sse`: every event is a whole GenerateContentResponse
 * holding the next parts of the first candidate. Text parts follow on from one another (a
 * thought's apart from the answer's); a function call comes whole in one part. The stream has
 * no end event: it is whole when a candidate has given its finish reason. An event that is an
 * error object (`{"error": {…}}`) is the provider's error.
 */
function geminiAccumulator(): StreamAccumulator {
  type Piece = { thought: boolean; text: Text } | { call: Json };
  const pieces: Piece[] = [];
  let usage: TokenUsage | null = null;
  let finishReason: string | null = null;
  let error: string | null = null;
  return {
    event({ data }) {
      const chunk = parse(data);
      if (!chunk) return;
      if (chunk['error'] !== undefined) error = errorText(chunk['error']);
      if (chunk['usageMetadata'] != null) usage = geminiApiUsage(chunk['usageMetadata']);
      const candidate = Array.isArray(chunk['candidates'])
        ? (chunk['candidates'][0] as unknown)
        : null;
      if (!isObject(candidate)) return;
      if (typeof candidate['finishReason'] === 'string') finishReason = candidate['finishReason'];
      const content = isObject(candidate['content']) ? candidate['content'] : {};
      for (const part of Array.isArray(content['parts']) ? content['parts'] : []) {
        if (!isObject(part)) continue;
        const last = pieces.at(-1);
        if (typeof part['text'] === 'string') {
          const thought = part['thought'] === true;
          if (last && 'text' in last && last.thought === thought) last.text.add(part['text']);
          else if (pieces.length < MAX_MESSAGES_PER_STEP) {
            const text = new Text();
            text.add(part['text']);
            pieces.push({ thought, text });
          }
        } else if (isObject(part['functionCall']) && pieces.length < MAX_MESSAGES_PER_STEP) {
          pieces.push({ call: part['functionCall'] });
        }
      }
    },
    summary() {
      const messages: TrajectoryMessage[] = [];
      const reply: TrajectoryMessage = { role: 'assistant', content: '' };
      const calls = [];
      for (const piece of pieces) {
        if ('call' in piece) calls.push(geminiCall(piece.call));
        else if (piece.thought) messages.push({ role: 'reasoning', content: piece.text.value() });
        else reply.content += piece.text.value();
      }
      if (calls.length > 0) reply.toolCalls = calls;
      messages.push(reply);
      return { messages, finishReason, usage, error, complete: finishReason !== null };
    },
  };
}

export function createStreamAccumulator(protocol: WireProtocol): StreamAccumulator {
  switch (protocol) {
    case 'openai-chat':
      return chatAccumulator();
    case 'openai-responses':
      return responsesAccumulator();
    case 'anthropic-messages':
      return anthropicAccumulator();
    case 'gemini-generate-content':
      return geminiAccumulator();
  }
}
