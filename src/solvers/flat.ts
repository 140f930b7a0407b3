// The flat adapter: any OpenAI-compatible Chat Completions endpoint, through the `openai`
// SDK, host-side. The model sees description.md (the only prompt) and exactly three strict
// function schemas; it reaches the checkout only through them (tools.ts).
//
// Fail-closed: more than one tool call in a response (parallel calls are switched off, so
// they are a protocol violation), a repeated call id, arguments that do not parse or validate,
// a call that is not a function call, and more turns, tool calls or tokens (from `usage`)
// than the profile allows each end the solve with its reason. Every request gets the remaining
// solver deadline as its timeout and one AbortSignal (deadline and cancel); the SDK never
// retries, so no request outlives the deadline. Each answer's `usage`, the turns and the tool
// calls run go to the solve's meter (usage.ts) as they happen. With a batch's cost cap, every
// request is first admitted by the batch's spend and every answer's cost is drawn on it as it
// arrives (the proxy's budget, src/proxy/budget.ts), so a running solve stops at its next
// request once the batch, in any process, has spent the cap.
import OpenAI from 'openai';
import type {
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { describeError } from '../errors.js';
import type { Budget } from '../proxy/budget.js';
import type { Deadline } from './deadline.js';
import {
  callTool,
  TOOL_DEFINITIONS,
  TOOL_NAMES,
  ToolArgumentsError,
  type ToolSandbox,
} from './tools.js';
import { solveStopped, type SolveEnd, type Transcript } from './transcript.js';
import { chatCompletionUsage, type SolveMeter } from './usage.js';

export interface FlatProfile {
  baseUrl: string;
  model: string;
  apiKey: string;
  maxTurns: number;
  maxToolCalls: number;
  maxTokens: number;
}

export interface FlatRun {
  profile: FlatProfile;
  /** description.md: the whole prompt. */
  prompt: string;
  sandbox: ToolSandbox;
  deadline: Deadline;
  /** The job's cancel; aborting it ends the solve as `cancelled`. */
  signal: AbortSignal;
  transcript: Transcript;
  /** Counts the answers' tokens, the turns and the tool calls run. */
  meter: SolveMeter;
  /** The batch's cost cap (a budget holding its SharedCost); absent without one. */
  spend?: Pick<Budget, 'admit' | 'charge'>;
}

const TOOLS: ChatCompletionTool[] = TOOL_NAMES.map((name) => ({
  type: 'function',
  function: {
    name,
    description: TOOL_DEFINITIONS[name].description,
    parameters: TOOL_DEFINITIONS[name].parameters as Record<string, unknown>,
    strict: true,
  },
}));

export async function runFlat(run: FlatRun): Promise<SolveEnd> {
  const { profile, deadline, transcript } = run;
  const client = new OpenAI({
    baseURL: profile.baseUrl,
    apiKey: profile.apiKey,
    maxRetries: 0,
    // The SDK must not read the environment for anything else (organization, project).
    organization: null,
    project: null,
  });
  const signal = AbortSignal.any([run.signal, deadline.signal]);
  const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: run.prompt }];
  const seen = new Set<string>();
  let tokens = 0;
  let toolCalls = 0;

  const stopped = () => solveStopped(run.signal, deadline);

  for (let turn = 1; ; turn++) {
    const early = stopped();
    if (early) return early;
    if (turn > profile.maxTurns) {
      return { reason: 'turn_limit', detail: `the model used all ${profile.maxTurns} turns` };
    }
    const capped = await run.spend?.admit();
    if (capped) return { reason: 'budget_exceeded', detail: capped.detail };
    transcript.add({ kind: 'request', turn, messages: messages.length });
    let response;
    try {
      response = await client.chat.completions.create(
        {
          model: profile.model,
          messages,
          tools: TOOLS,
          tool_choice: 'auto',
          parallel_tool_calls: false,
        },
        { timeout: Math.max(1, Math.floor(deadline.remainingMs())), signal, maxRetries: 0 },
      );
    } catch (error) {
      const late = stopped();
      if (late) return late;
      const status = (error as { status?: number }).status;
      return {
        reason: 'provider_error',
        detail: `the model provider failed${status ? ` (HTTP ${status})` : ''}: ${describeError(error)}`,
      };
    }
    tokens += response.usage?.total_tokens ?? 0;
    const usage = chatCompletionUsage(response.usage);
    run.meter.answer(usage);
    // The answer that reaches the cap is still used; the next request is refused.
    await run.spend?.charge(usage, true);
    const message = response.choices[0]?.message;
    transcript.add({
      kind: 'response',
      turn,
      content: message?.content ?? null,
      toolCalls: (message?.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.type === 'function' ? c.function.name : c.type,
        arguments: c.type === 'function' ? c.function.arguments : '',
      })),
      usage: response.usage ?? null,
    });
    if (tokens > profile.maxTokens) {
      return {
        reason: 'token_limit',
        detail: `the model used ${tokens} tokens; the profile allows ${profile.maxTokens}`,
      };
    }
    if (!message) return { reason: 'protocol_error', detail: 'the response has no choice' };
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return { reason: 'done', detail: 'the model finished' };
    if (calls.length > 1) {
      return {
        reason: 'protocol_error',
        detail: `the model made ${calls.length} tool calls at once; parallel tool calls are off`,
      };
    }
    const call = calls[0];
    if (call === undefined || call.type !== 'function') {
      return {
        reason: 'protocol_error',
        detail: 'the model made a call that is not a function call',
      };
    }
    if (seen.has(call.id)) {
      return { reason: 'protocol_error', detail: `the model repeated the tool call id ${call.id}` };
    }
    seen.add(call.id);
    toolCalls++;
    if (toolCalls > profile.maxToolCalls) {
      return {
        reason: 'tool_call_limit',
        detail: `the model made more than ${profile.maxToolCalls} tool calls`,
      };
    }
    let result;
    run.meter.toolCall();
    try {
      result = await callTool(
        run.sandbox,
        call.function.name,
        call.function.arguments,
        deadline,
        signal,
      );
    } catch (error) {
      if (error instanceof ToolArgumentsError) {
        return {
          reason: 'protocol_error',
          detail: `malformed arguments for ${call.function.name}: ${error.message}`,
        };
      }
      const late = stopped();
      if (late) return late;
      throw error;
    }
    transcript.add({
      kind: 'tool',
      turn,
      id: call.id,
      name: call.function.name,
      ok: result.ok,
      summary: result.summary,
    });
    messages.push(
      {
        role: 'assistant',
        content: message.content ?? null,
        tool_calls: [
          {
            id: call.id,
            type: 'function',
            function: { name: call.function.name, arguments: call.function.arguments },
          },
        ],
      },
      { role: 'tool', tool_call_id: call.id, content: result.content },
    );
  }
}
