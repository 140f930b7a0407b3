// The trajectory as the proxy builds it: steps appended as exchanges finish, new messages
// split from the conversation already recorded, every text masked for the secrets and bounded
// (trajectory.ts), and the result checked against the schema when it is read.
import type { TokenUsage } from '../solvers/usage.js';
import type { WireProtocol } from './protocols.js';
import { scrubText } from './scrub.js';
import {
  MAX_MESSAGES_PER_STEP,
  MAX_STEPS,
  splitPrefix,
  trajectorySchema,
  type Conversation,
  type ProxyStop,
  type Trajectory,
  type TrajectoryMessage,
  type TrajectoryStep,
} from './trajectory.js';

/** How many recent conversations a request's messages are matched against. */
const RECENT_CONVERSATIONS = 16;

export interface StepDraft {
  protocol: WireProtocol | null;
  startMs: number;
  firstByteMs: number | null;
  durationMs: number;
  requestedModel: string | null;
  model: string | null;
  stream: boolean;
  input: TrajectoryMessage[];
  tools: string[];
  output: TrajectoryMessage[];
  finishReason: string | null;
  usage: TokenUsage | null;
  costUsd: number | null;
  status: number;
  outcome: TrajectoryStep['outcome'];
  error: string | null;
}

export interface Recorder {
  /** Numbers the next step (in arrival order). */
  nextIndex(): number;
  record(index: number, draft: StepDraft): void;
  requests(): number;
  trajectory(totals: Omit<Trajectory['totals'], 'requests'>, stop: ProxyStop | null): Trajectory;
}

export function createRecorder(secrets: readonly string[]): Recorder {
  const steps: TrajectoryStep[] = [];
  const recent: Conversation[] = [];
  let dropped = 0;
  let counter = 0;
  const mask = (m: TrajectoryMessage): TrajectoryMessage => {
    const out: TrajectoryMessage = { ...m, content: scrubText(m.content, secrets) };
    if (m.toolCalls) {
      out.toolCalls = m.toolCalls.map((c) => ({
        id: scrubText(c.id, secrets),
        name: scrubText(c.name, secrets),
        arguments: scrubText(c.arguments, secrets),
      }));
    }
    if (m.toolCallId !== undefined) out.toolCallId = scrubText(m.toolCallId, secrets);
    return out;
  };
  return {
    nextIndex: () => ++counter,
    record(index, draft) {
      const input = draft.input.map(mask);
      const output = draft.output.map(mask);
      const { prefix, rest } = splitPrefix(input, recent);
      if (draft.outcome === 'ok') {
        recent.push({ step: index, messages: [...input, ...output] });
        if (recent.length > RECENT_CONVERSATIONS) recent.shift();
      }
      if (steps.length >= MAX_STEPS) {
        dropped++;
        return;
      }
      const keptInput = rest.slice(0, MAX_MESSAGES_PER_STEP);
      const keptOutput = output.slice(0, MAX_MESSAGES_PER_STEP);
      steps.push({
        index,
        ...draft,
        requestedModel: draft.requestedModel && scrubText(draft.requestedModel, secrets),
        error: draft.error && scrubText(draft.error, secrets),
        tools: draft.tools.slice(0, MAX_MESSAGES_PER_STEP),
        prefix,
        input: keptInput,
        output: keptOutput,
        droppedMessages: rest.length - keptInput.length + (output.length - keptOutput.length),
      });
    },
    requests: () => counter,
    trajectory(totals, stop) {
      const ordered = [...steps].sort((a, b) => a.index - b.index);
      return trajectorySchema.parse({
        version: 1,
        steps: ordered,
        droppedSteps: dropped,
        totals: { requests: counter, ...totals },
        stop,
      });
    },
  };
}
