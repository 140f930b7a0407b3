// Each protocol's messages, as the trajectory's normalized ones: a role, the text, tool calls
// (id, name, arguments as JSON text) and the call a tool result answers. Requests and whole
// answers are read here; streamed answers are put together in stream.ts. Reading is lenient:
// whatever does not have the expected shape is skipped, never an error, since the proxy
// forwards what the agent sent and the trajectory is a record, not a check.
import type { WireProtocol } from './protocols.js';
import { clipText, type TrajectoryMessage } from './trajectory.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Text of a content value: a string, or parts whose text is joined (others as placeholders). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  const parts = list(content).map((part) => {
    if (typeof part === 'string') return part;
    if (!isObject(part)) return '';
    if (typeof part['text'] === 'string') return part['text'];
    if (typeof part['refusal'] === 'string') return part['refusal'];
    const type = str(part['type']);
    if (type === 'tool_result' || type === 'tool_use') return '';
    return type === '' ? '' : `[${type}]`;
  });
  return parts.filter((p) => p !== '').join('\n');
}

function message(
  role: TrajectoryMessage['role'],
  content: string,
  extra: Partial<TrajectoryMessage> = {},
): TrajectoryMessage {
  return { role, content: clipText(content), ...extra };
}

function toolCall(id: unknown, name: unknown, args: unknown) {
  const text = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  return { id: str(id), name: str(name), arguments: clipText(text) };
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const role = (r: unknown): TrajectoryMessage['role'] =>
  r === 'developer' ? 'system' : ROLES.has(str(r)) ? (r as TrajectoryMessage['role']) : 'user';

function chatMessage(m: unknown): TrajectoryMessage[] {
  if (!isObject(m)) return [];
  const calls = list(m['tool_calls'])
    .filter(isObject)
    .map((c) => {
      const fn = isObject(c['function']) ? c['function'] : {};
      return toolCall(c['id'], fn['name'], fn['arguments']);
    });
  const extra: Partial<TrajectoryMessage> = {};
  if (calls.length > 0) extra.toolCalls = calls;
  if (typeof m['tool_call_id'] === 'string') extra.toolCallId = m['tool_call_id'];
  return [message(role(m['role']), contentText(m['content']), extra)];
}

/** One Responses input or output item. */
function responsesItem(item: unknown): TrajectoryMessage[] {
  if (typeof item === 'string') return [message('user', item)];
  if (!isObject(item)) return [];
  switch (item['type'] ?? 'message') {
    case 'message':
      return [message(role(item['role']), contentText(item['content']))];
    case 'function_call':
    case 'custom_tool_call':
      return [
        message('assistant', '', {
          toolCalls: [toolCall(item['call_id'], item['name'], item['arguments'] ?? item['input'])],
        }),
      ];
    case 'function_call_output':
    case 'custom_tool_call_output':
      return [message('tool', contentText(item['output']), { toolCallId: str(item['call_id']) })];
    case 'reasoning':
      return [message('reasoning', contentText(item['summary']))];
    default:
      return [message('user', `[${str(item['type'])}]`)];
  }
}

/** One Anthropic message: tool results become `tool` messages, tool uses tool calls. */
function anthropicMessage(m: unknown): TrajectoryMessage[] {
  if (!isObject(m)) return [];
  const r = role(m['role']);
  const blocks = typeof m['content'] === 'string' ? [m['content']] : list(m['content']);
  const out: TrajectoryMessage[] = [];
  const calls = blocks
    .filter((b): b is Json => isObject(b) && b['type'] === 'tool_use')
    .map((b) => toolCall(b['id'], b['name'], b['input']));
  for (const b of blocks) {
    if (isObject(b) && b['type'] === 'tool_result') {
      out.push(message('tool', contentText(b['content']), { toolCallId: str(b['tool_use_id']) }));
    }
    if (isObject(b) && b['type'] === 'thinking') {
      out.push(message('reasoning', str(b['thinking'])));
    }
  }
  const text = contentText(blocks.filter((b) => !isObject(b) || b['type'] !== 'thinking'));
  if (text !== '' || calls.length > 0 || out.length === 0) {
    out.push(message(r, text, calls.length > 0 ? { toolCalls: calls } : {}));
  }
  return out;
}

/**
 * A Gemini `functionCall` part's call. A call carries an `id` only sometimes (Gemini's API
 * pairs calls and results by name and order): without one, the name stands for it, in the call
 * and in its result (geminiContent) alike.
 */
export function geminiCall(call: Json) {
  return toolCall(str(call['id']) || str(call['name']), call['name'], call['args']);
}

/**
 * One Gemini `Content` (a role and its parts). Text parts are joined (a `thought` part is
 * reasoning), `functionCall` parts are tool calls and `functionResponse` parts tool results;
 * other parts (`inlineData`, `executableCode`, …) are placeholders.
 */
function geminiContent(c: unknown, defaultRole: TrajectoryMessage['role']): TrajectoryMessage[] {
  if (!isObject(c)) return [];
  const r = c['role'] === 'model' ? 'assistant' : c['role'] === 'user' ? 'user' : defaultRole;
  const out: TrajectoryMessage[] = [];
  const texts: string[] = [];
  const calls: ReturnType<typeof toolCall>[] = [];
  for (const part of list(c['parts'])) {
    if (!isObject(part)) continue;
    const call = part['functionCall'];
    const result = part['functionResponse'];
    if (typeof part['text'] === 'string') {
      if (part['thought'] === true) out.push(message('reasoning', part['text']));
      else texts.push(part['text']);
    } else if (isObject(call)) {
      calls.push(geminiCall(call));
    } else if (isObject(result)) {
      const id = str(result['id']) || str(result['name']);
      out.push(message('tool', JSON.stringify(result['response'] ?? {}), { toolCallId: id }));
    } else {
      const kind = Object.keys(part).find((k) => k !== 'thought' && k !== 'thoughtSignature');
      if (kind !== undefined) texts.push(`[${kind}]`);
    }
  }
  const text = texts.join('');
  if (text !== '' || calls.length > 0 || out.length === 0) {
    out.push(message(r, text, calls.length > 0 ? { toolCalls: calls } : {}));
  }
  return out;
}

/** Gemini's system instruction: a `Content`, its parts, or (as the SDKs accept) a string. */
function geminiSystem(system: unknown): string {
  if (typeof system === 'string') return system;
  const parts = isObject(system) ? system['parts'] : system;
  return list(parts)
    .map((p) => (isObject(p) ? str(p['text']) : str(p)))
    .filter((t) => t !== '')
    .join('\n');
}

/** The names of the functions a Gemini request declares (one tool may declare several). */
function geminiTools(tools: unknown): string[] {
  return list(tools)
    .filter(isObject)
    .flatMap((t) => {
      const declared = list(t['functionDeclarations']).filter(isObject);
      if (declared.length > 0) return declared.map((d) => str(d['name']));
      const kind = Object.keys(t)[0];
      return kind === undefined ? [] : [`[${kind}]`];
    });
}

/** The messages of a whole Gemini answer (its first candidate) and its finish reason. */
export function geminiAnswer(body: Json): {
  messages: TrajectoryMessage[];
  finishReason: string | null;
} {
  const candidate = list(body['candidates']).find(isObject);
  if (!candidate) return { messages: [], finishReason: null };
  return {
    messages: geminiContent(candidate['content'], 'assistant'),
    finishReason: str(candidate['finishReason']) || null,
  };
}

/** The messages a request sends (its system prompt first), and the names of the tools offered. */
export function requestMessages(
  protocol: WireProtocol,
  body: Json,
): { messages: TrajectoryMessage[]; tools: string[] } {
  const tools =
    protocol === 'gemini-generate-content'
      ? geminiTools(body['tools'])
      : list(body['tools'])
          .filter(isObject)
          .map((t) => str(t['name']) || str(isObject(t['function']) ? t['function']['name'] : ''));
  switch (protocol) {
    case 'openai-chat':
      return { messages: list(body['messages']).flatMap(chatMessage), tools };
    case 'openai-responses': {
      const system = typeof body['instructions'] === 'string' ? body['instructions'] : '';
      const input = typeof body['input'] === 'string' ? [body['input']] : list(body['input']);
      return {
        messages: [
          ...(system === '' ? [] : [message('system', system)]),
          ...input.flatMap(responsesItem),
        ],
        tools,
      };
    }
    case 'anthropic-messages': {
      const system = contentText(body['system']);
      return {
        messages: [
          ...(system === '' ? [] : [message('system', system)]),
          ...list(body['messages']).flatMap(anthropicMessage),
        ],
        tools,
      };
    }
    case 'gemini-generate-content': {
      const system = geminiSystem(body['systemInstruction']);
      return {
        messages: [
          ...(system === '' ? [] : [message('system', system)]),
          ...list(body['contents']).flatMap((c) => geminiContent(c, 'user')),
        ],
        tools,
      };
    }
  }
}

/** The messages of a whole (non-streamed) answer, and its finish reason. */
export function answerMessages(
  protocol: WireProtocol,
  body: Json,
): { messages: TrajectoryMessage[]; finishReason: string | null } {
  switch (protocol) {
    case 'openai-chat': {
      const choice = list(body['choices']).find(isObject);
      return {
        messages: choice ? chatMessage(choice['message']) : [],
        finishReason: choice ? str(choice['finish_reason']) || null : null,
      };
    }
    case 'openai-responses':
      return {
        messages: list(body['output']).flatMap(responsesItem),
        finishReason: str(body['status']) || null,
      };
    case 'anthropic-messages':
      return {
        messages: anthropicMessage({ role: 'assistant', content: body['content'] }),
        finishReason: str(body['stop_reason']) || null,
      };
    case 'gemini-generate-content':
      return geminiAnswer(body);
  }
}
