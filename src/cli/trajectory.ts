// A solve's trajectory (the model proxy's record, src/proxy/trajectory.ts) as text for
// `proctor status JOB --trajectory`: one line per step (protocol, model, outcome, tokens, cost,
// time), then what the model answered, its text and its tool calls, each clipped to a line.
import { trajectorySchema, type Trajectory, type TrajectoryMessage } from '../proxy/trajectory.js';

const LINE_CHARS = 200;

const clip = (text: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > LINE_CHARS ? `${flat.slice(0, LINE_CHARS)}…` : flat;
};

function messageLines(message: TrajectoryMessage): string[] {
  const lines =
    message.content.trim() === '' ? [] : [`  ${message.role}: ${clip(message.content)}`];
  for (const call of message.toolCalls ?? []) {
    lines.push(`  ${message.role} → ${call.name} ${clip(call.arguments)}`);
  }
  return lines;
}

/** The trajectory's lines; null when the text is not a trajectory of this version. */
export function trajectoryLines(text: string): string[] | null {
  let trajectory: Trajectory;
  try {
    const parsed = trajectorySchema.safeParse(JSON.parse(text));
    if (!parsed.success) return null;
    trajectory = parsed.data;
  } catch {
    return null;
  }
  const lines: string[] = [];
  for (const step of trajectory.steps) {
    const tokens = step.usage
      ? `${step.usage.inputTokens} in, ${step.usage.outputTokens} out`
      : 'tokens unknown';
    const cost = step.costUsd === null ? '' : `, $${step.costUsd.toFixed(4)}`;
    lines.push(
      `step ${step.index}: ${step.protocol ?? '-'} ${step.model ?? '-'} ${step.outcome} ${step.status} (${tokens}${cost}, ${Math.round(step.durationMs)} ms)${step.error ? `: ${clip(step.error)}` : ''}`,
    );
    for (const message of step.output) lines.push(...messageLines(message));
  }
  const { totals, stop } = trajectory;
  const usage = totals.usage
    ? `${totals.usage.inputTokens} in, ${totals.usage.outputTokens} out`
    : 'tokens unknown';
  const cost = totals.costUsd === null ? '' : `, $${totals.costUsd.toFixed(4)}`;
  lines.push(
    `${totals.requests} request(s), ${totals.turns} turn(s) (${usage}${cost})${trajectory.droppedSteps > 0 ? `, ${trajectory.droppedSteps} step(s) not kept` : ''}${stop ? `; stopped ${stop.reason}: ${stop.detail}` : ''}`,
  );
  return lines;
}
