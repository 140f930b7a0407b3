// The solve's trajectory: every exchange the model proxy saw, one step per request, in one
// normalized format whatever the agent's wire protocol. Bounded as it is recorded (each text
// clipped, a fixed number of messages per step and of steps kept) and redacted: no header is
// recorded at all, and the real key and the run token are masked wherever they appear.
//
// A request repeats the conversation so far, so recording every request whole would grow with
// the square of its length. A step records only the messages that are new: when a request
// begins with the whole conversation of an earlier step (that step's input then its output),
// `prefix` names that step and how many messages it stands for, and `input` holds the rest.
import { z } from 'zod';
import { WIRE_PROTOCOLS } from './protocols.js';

export const MAX_TEXT_CHARS = 4_000;
export const MAX_MESSAGES_PER_STEP = 200;
export const MAX_STEPS = 5_000;

const toolCallSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    /** The arguments as the model wrote them (JSON text, clipped). */
    arguments: z.string(),
  })
  .strict();

export const trajectoryMessageSchema = z
  .object({
    role: z.enum(['system', 'user', 'assistant', 'tool', 'reasoning']),
    /** The text parts joined; other parts as placeholders (`[image]`). */
    content: z.string(),
    toolCalls: z.array(toolCallSchema).optional(),
    /** For role `tool`: the call this is the result of. */
    toolCallId: z.string().optional(),
  })
  .strict();

export type TrajectoryMessage = z.output<typeof trajectoryMessageSchema>;

const usageSchema = z
  .object({
    inputTokens: z.number().int().min(0),
    cachedInputTokens: z.number().int().min(0),
    outputTokens: z.number().int().min(0),
  })
  .strict();

export const STEP_OUTCOMES = [
  /** The provider answered 2xx and the answer reached the agent whole. */
  'ok',
  /** The provider answered an HTTP error, passed on to the agent. */
  'upstream_error',
  /** The provider could not be reached, broke off or went silent. */
  'upstream_failed',
  /** The proxy refused the request (token, malformed, a spent budget or deadline). */
  'refused',
  /** The solve's deadline passed while the request was in flight. */
  'timeout',
  /** The agent went away before the answer was complete. */
  'aborted',
] as const;

export const trajectoryStepSchema = z
  .object({
    /** 1-based, in the order requests arrived. */
    index: z.number().int().min(1),
    protocol: z.enum(WIRE_PROTOCOLS).nullable(),
    /** Milliseconds from the proxy's start to the request's arrival. */
    startMs: z.number().min(0),
    /** Until the first byte of the answer reached the agent; null when none did. */
    firstByteMs: z.number().min(0).nullable(),
    durationMs: z.number().min(0),
    /** The model the agent asked for, and the one sent to the provider. */
    requestedModel: z.string().nullable(),
    model: z.string().nullable(),
    stream: z.boolean(),
    prefix: z
      .object({ step: z.number().int().min(1), messages: z.number().int().min(0) })
      .strict()
      .nullable(),
    input: z.array(trajectoryMessageSchema),
    /** Tool names the request offered the model. */
    tools: z.array(z.string()),
    output: z.array(trajectoryMessageSchema),
    /** The provider's finish/stop reason. */
    finishReason: z.string().nullable(),
    usage: usageSchema.nullable(),
    costUsd: z.number().min(0).nullable(),
    /** The HTTP status the agent got. */
    status: z.number().int(),
    outcome: z.enum(STEP_OUTCOMES),
    error: z.string().nullable(),
    /** Messages left out of `input`/`output` beyond MAX_MESSAGES_PER_STEP. */
    droppedMessages: z.number().int().min(0),
  })
  .strict();

export type TrajectoryStep = z.output<typeof trajectoryStepSchema>;

export const STOP_REASONS = ['BUDGET_EXCEEDED', 'TIMEOUT'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export const proxyStopSchema = z
  .object({
    reason: z.enum(STOP_REASONS),
    /** Which limit: `tokens`, `turns`, `cost`, `usage` (a count that cannot be made) or `deadline`. */
    limit: z.enum(['tokens', 'turns', 'cost', 'usage', 'deadline']),
    detail: z.string(),
  })
  .strict();

export type ProxyStop = z.output<typeof proxyStopSchema>;

export const trajectorySchema = z
  .object({
    version: z.literal(1),
    steps: z.array(trajectoryStepSchema),
    /** Steps not kept beyond MAX_STEPS (still counted in the totals). */
    droppedSteps: z.number().int().min(0),
    totals: z
      .object({
        requests: z.number().int().min(0),
        /** Requests forwarded to the provider: the solve's turns. */
        turns: z.number().int().min(0),
        /** Null when any answer's usage was unknown. */
        usage: usageSchema.nullable(),
        costUsd: z.number().min(0).nullable(),
      })
      .strict(),
    stop: proxyStopSchema.nullable(),
  })
  .strict();

export type Trajectory = z.output<typeof trajectorySchema>;

/** Clips text to MAX_TEXT_CHARS, saying how much was left out. */
export function clipText(text: string): string {
  return text.length > MAX_TEXT_CHARS
    ? `${text.slice(0, MAX_TEXT_CHARS)}…[${text.length - MAX_TEXT_CHARS} more chars]`
    : text;
}

const sameMessage = (a: TrajectoryMessage, b: TrajectoryMessage): boolean =>
  JSON.stringify(a) === JSON.stringify(b);

/** A step's whole conversation: what it sent, then what it got. */
export interface Conversation {
  step: number;
  messages: TrajectoryMessage[];
}

/**
 * The longest of `earlier` that `messages` begins with, as a prefix reference, and the rest;
 * `{prefix: null, rest: messages}` when none does (a new conversation, or a compacted one).
 */
export function splitPrefix(
  messages: TrajectoryMessage[],
  earlier: ReadonlyArray<Conversation>,
): { prefix: { step: number; messages: number } | null; rest: TrajectoryMessage[] } {
  let best: Conversation | null = null;
  for (const c of earlier) {
    if (c.messages.length === 0 || c.messages.length > messages.length) continue;
    if (best && best.messages.length >= c.messages.length) continue;
    if (c.messages.every((m, i) => sameMessage(m, messages[i] as TrajectoryMessage))) best = c;
  }
  if (!best) return { prefix: null, rest: messages };
  return {
    prefix: { step: best.step, messages: best.messages.length },
    rest: messages.slice(best.messages.length),
  };
}
