// How a solve ended, and its transcript: every request, response and tool call, bounded as it
// is recorded (each text field clipped, a fixed number of events kept), stored as a redacted
// JSON artifact.

/** Why a solve stopped. Only `done` leads to a grade; every other reason is a FAIL. */
export const SOLVE_ENDS = [
  'done',
  'turn_limit',
  'tool_call_limit',
  'token_limit',
  'deadline',
  'cancelled',
  'provider_error',
  'protocol_error',
  /** The agent adapter: the model proxy refused past a token, turn or cost limit. */
  'budget_exceeded',
  /** The agent adapter: the agent's process exited non-zero (or was killed by the OOM killer). */
  'agent_crashed',
  /** The agent adapter: the agent printed more than its bound and was killed. */
  'output_flood',
] as const;

export type SolveEndReason = (typeof SOLVE_ENDS)[number];

export interface SolveEnd {
  reason: SolveEndReason;
  detail: string;
}

/** A cancel or the spent deadline, as the solve's end; null while the solve may go on. */
export function solveStopped(
  signal: AbortSignal,
  deadline: { expired(): boolean },
): SolveEnd | null {
  if (signal.aborted) return { reason: 'cancelled', detail: 'the job was cancelled' };
  if (deadline.expired()) {
    return { reason: 'deadline', detail: 'the solver deadline (solver_seconds) was reached' };
  }
  return null;
}

export type TranscriptEvent = Record<string, unknown> & { kind: string };

export interface Transcript {
  add(event: TranscriptEvent): void;
  /** The recorded events as JSON text, each with its offset from the start in ms. */
  toJson(end: SolveEnd): string;
}

const MAX_FIELD_CHARS = 4_000;
const MAX_EVENTS = 2_000;

function clip(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    return value.length > MAX_FIELD_CHARS
      ? `${value.slice(0, MAX_FIELD_CHARS)}…[${value.length - MAX_FIELD_CHARS} more chars]`
      : value;
  }
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.slice(0, 100).map((v) => clip(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clip(v, depth + 1)]));
}

export function createTranscript(now: () => number = () => performance.now()): Transcript {
  const started = now();
  const events: TranscriptEvent[] = [];
  let dropped = 0;
  return {
    add(event) {
      if (events.length >= MAX_EVENTS) {
        dropped++;
        return;
      }
      events.push({ at: Math.round(now() - started), ...(clip(event) as TranscriptEvent) });
    },
    toJson(end) {
      return `${JSON.stringify({ end, dropped, events }, null, 1)}\n`;
    },
  };
}
