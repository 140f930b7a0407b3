// The fail-closed audit of `codex exec --json --ephemeral` output (seed 003: "unknown item
// types, other servers/tools, malformed events, or incomplete turns fail the solver"). Codex's
// stdout is JSONL, one event per line; the adapter feeds each line here while it streams and
// stops the run at the first fatal finding. Pure logic: no I/O, no clock.
//
// Only what a single-turn run with shell, web, plans and sub-agents switched off can emit is
// allowed: thread.started, then one turn.started, items, and turn.completed as the last event.
// Items may be agent messages, reasoning, and tool calls on Proctor's one MCP server to its
// three tools. Everything else fails the run: a line that is not a JSON object, an unknown or
// forbidden event or item type (new Codex versions add them; a type we do not know is one we
// cannot vouch for), a call to another server (Codex's built-in resource tools appear as
// server `codex`), a top-level `error` (also sent for retry notices, but failing closed on
// those is safe), turn.failed, and a stream that ends without turn.completed (an interrupted
// turn emits no terminal event at all).
//
// One item-level error is tolerated: the notice that the selected model has no local metadata,
// in its exact shape, recorded as a warning that keeps only the slug. The stream-lag notice
// stays fatal: with --ephemeral, Codex does not backfill dropped items, so the audit trail has
// holes. Unknown extra fields on known events and items are tolerated, since Codex adds
// fields between releases (turn.completed's usage grew a fifth count in 0.171.0).
//
// Checked against real 0.171.0 output: shared/research/codex-offline.md and the transcripts
// in test/solvers/codex-audit.test.ts.
import { TOOL_NAMES } from '../tools.js';

/** The one MCP server Proctor configures for Codex (`mcp_servers.proctor`). */
export const MCP_SERVER_NAME = 'proctor';
/** The tools that server publishes: the same three every solver gets. */
export const ALLOWED_TOOLS = TOOL_NAMES;

export const AUDIT_CATEGORIES = [
  /** Not a JSON object, no string `type`, an item without an object `item`, string type and id. */
  'malformed',
  /** A line longer than `maxLineBytes`. */
  'oversized',
  /** A top-level event type other than thread.*, turn.* and item.started|updated|completed. */
  'unknown_event',
  /** A top-level `error` from the provider (HTTP errors, refused connections, retry notices). */
  'provider_error',
  /** A top-level `error` saying the model's response stream broke off. */
  'stream_error',
  'turn_failed',
  /** Events out of order: not starting with thread.started, a second turn, work outside the turn, an item completed twice. */
  'sequence',
  /** Any line after turn.completed. */
  'after_completion',
  /** An item type this audit does not know. */
  'unknown_item',
  /** A known item type Proctor switches off (shell, file edits, web, plans, sub-agents). */
  'forbidden_item',
  /** A tool call to another server, or to a tool outside ALLOWED_TOOLS. */
  'foreign_tool',
  /** An item-level error other than the tolerated metadata notice. */
  'item_error',
  /** Codex dropped events: the audit trail is incomplete. */
  'stream_lag',
  /** The stream ended without turn.completed. */
  'incomplete',
  /** An item was started and never completed. */
  'unfinished_item',
  /** The tolerated notice that the model has no local metadata (a warning, never fatal). */
  'model_metadata',
] as const;

export type AuditCategory = (typeof AUDIT_CATEGORIES)[number];

export interface AuditFinding {
  fatal: boolean;
  category: AuditCategory;
  /** One line, at most DETAIL_CHARS characters, quoting only what the offending line had. */
  detail: string;
}

export interface AuditOptions {
  /**
   * The model Proctor selected. When set, the metadata notice is tolerated only for this slug.
   * Default: any slug.
   */
  model?: string;
  /**
   * The longest line accepted, in UTF-8 bytes. Default 1 MiB. A tool call's item carries its
   * arguments and result, so the adapter should allow for the task's output_bytes and
   * patch_bytes (JSON escaping can grow a byte to six characters).
   */
  maxLineBytes?: number;
}

export interface AuditSummary {
  /** Completed calls on the Proctor server, in order; `status` as Codex reported it. */
  toolCalls: Array<{ tool: string; status: string }>;
  /** turn.completed's numeric usage counts; null before it, or if it had no usage object. */
  usage: Record<string, number> | null;
  /** The agent's messages, the latest MAX_MESSAGES, each clipped to MESSAGE_CHARS. */
  messages: string[];
  completed: boolean;
}

export interface Audit {
  /** Feeds one line (without its newline). Returns the first fatal finding once, else null. */
  line(text: string): AuditFinding | null;
  /** After the process exited: the fatal finding if the run failed or was incomplete, else null. */
  end(): AuditFinding | null;
  /** Non-fatal findings (the tolerated metadata notice), for the transcript. */
  warnings(): AuditFinding[];
  /** What the run did. */
  summary(): AuditSummary;
}

export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;
const DETAIL_CHARS = 300;
/** Characters kept of a server, tool or type name quoted in a detail. */
const NAME_CHARS = 80;
const MAX_MESSAGES = 20;
const MESSAGE_CHARS = 4_000;
const MAX_TOOL_CALLS = 10_000;
const MAX_WARNINGS = 20;
const MAX_USAGE_KEYS = 16;

const EVENT_TYPES = new Set([
  'thread.started',
  'turn.started',
  'turn.completed',
  'turn.failed',
  'item.started',
  'item.updated',
  'item.completed',
]);
/** Item types Codex knows that Proctor's configuration switches off. */
const FORBIDDEN_ITEMS = new Set([
  'command_execution',
  'file_change',
  'web_search',
  'todo_list',
  'plan',
  'collab_tool_call',
]);
const ALLOWED_TOOL_SET: ReadonlySet<string> = new Set(ALLOWED_TOOLS);

/** The one tolerated item error (codex-rs: a model without local metadata falls back). */
const MODEL_METADATA =
  // eslint-disable-next-line no-control-regex
  /^Model metadata for `([^`\u0000-\u001f]{1,200})` not found\. Defaulting to fallback metadata; this can degrade performance and cause issues\.$/;
const STREAM_LAG = /event stream lagged/;
const STREAM_ERROR = /^stream disconnected before completion/;

/** One line of at most `max` characters, control characters blanked. */
function clip(text: string, max = DETAIL_CHARS): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f]/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function quote(value: unknown): string {
  return typeof value === 'string' ? `\`${clip(value, NAME_CHARS)}\`` : `(${typeof value})`;
}

function messageOf(value: unknown, fallback: string): string {
  return isObject(value) && typeof value.message === 'string' ? value.message : fallback;
}

/** The finite numbers of `record` (usage counts), unknown keys kept, at most MAX_USAGE_KEYS. */
function numbersOf(record: Record<string, unknown>): Record<string, number> {
  const numbers: Record<string, number> = {};
  let kept = 0;
  for (const [key, value] of Object.entries(record)) {
    if (kept === MAX_USAGE_KEYS) break;
    if (typeof value === 'number' && Number.isFinite(value)) {
      numbers[clip(key, NAME_CHARS)] = value;
      kept++;
    }
  }
  return numbers;
}

function fatal(category: AuditCategory, detail: string): AuditFinding {
  return { fatal: true, category, detail: clip(detail) };
}

export function createAudit(options: AuditOptions = {}): Audit {
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let failure: AuditFinding | null = null;
  let threadStarted = false;
  let turnStarted = false;
  let completed = false;
  let usage: Record<string, number> | null = null;
  const open = new Set<string>();
  const done = new Set<string>();
  const toolCalls: AuditSummary['toolCalls'] = [];
  const messages: string[] = [];
  const warnings: AuditFinding[] = [];

  /** The fatal finding for an item-level error message, or null for the tolerated notice. */
  const itemError = (message: unknown): AuditFinding | null => {
    if (typeof message !== 'string') return fatal('item_error', 'error item without a message');
    const metadata = MODEL_METADATA.exec(message);
    const slug = metadata?.[1];
    if (slug !== undefined && (options.model === undefined || slug === options.model)) {
      if (warnings.length < MAX_WARNINGS) {
        warnings.push({ fatal: false, category: 'model_metadata', detail: clip(`model ${slug}`) });
      }
      return null;
    }
    if (STREAM_LAG.test(message)) return fatal('stream_lag', message);
    return fatal('item_error', message);
  };

  const checkItem = (event: string, item: Record<string, unknown>): AuditFinding | null => {
    const { type, id } = item;
    if (typeof type !== 'string' || typeof id !== 'string') {
      return fatal('malformed', `${event} item without a string type and id`);
    }
    if (type === 'error') return itemError(item.message);
    if (FORBIDDEN_ITEMS.has(type)) return fatal('forbidden_item', `${event} ${quote(type)}`);
    if (type !== 'agent_message' && type !== 'reasoning' && type !== 'mcp_tool_call') {
      return fatal('unknown_item', `${event} ${quote(type)}`);
    }
    if (!turnStarted) return fatal('sequence', `${event} ${quote(type)} before turn.started`);
    const { server, tool } = item;
    if (
      type === 'mcp_tool_call' &&
      (server !== MCP_SERVER_NAME || typeof tool !== 'string' || !ALLOWED_TOOL_SET.has(tool))
    ) {
      return fatal('foreign_tool', `tool call to server ${quote(server)}, tool ${quote(tool)}`);
    }
    if (event === 'item.started') {
      if (done.has(id) || open.has(id)) return fatal('sequence', `${quote(id)} started twice`);
      open.add(id);
      return null;
    }
    if (event === 'item.updated') return null;
    if (done.has(id)) return fatal('sequence', `${quote(id)} completed twice`);
    open.delete(id);
    done.add(id);
    if (type === 'mcp_tool_call' && toolCalls.length < MAX_TOOL_CALLS) {
      const status = typeof item.status === 'string' ? clip(item.status, NAME_CHARS) : 'unknown';
      toolCalls.push({ tool: String(tool), status });
    }
    if (type === 'agent_message' && typeof item.text === 'string') {
      if (messages.length >= MAX_MESSAGES) messages.shift();
      messages.push(clip(item.text, MESSAGE_CHARS));
    }
    return null;
  };

  const check = (text: string): AuditFinding | null => {
    if (text.length > maxLineBytes || Buffer.byteLength(text, 'utf8') > maxLineBytes) {
      return fatal('oversized', `a line of ${Buffer.byteLength(text, 'utf8')} bytes`);
    }
    if (completed) return fatal('after_completion', `output after turn.completed`);
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      return fatal('malformed', text === '' ? 'an empty line' : 'a line that is not JSON');
    }
    if (!isObject(event) || typeof event.type !== 'string') {
      return fatal('malformed', 'a line that is not a JSON object with a string `type`');
    }
    const { type } = event;
    if (type === 'error') {
      const message = messageOf(event, 'error event without a message');
      return fatal(STREAM_ERROR.test(message) ? 'stream_error' : 'provider_error', message);
    }
    if (!EVENT_TYPES.has(type)) return fatal('unknown_event', `event ${quote(type)}`);
    if (type === 'thread.started') {
      if (threadStarted) return fatal('sequence', 'a second thread.started');
      threadStarted = true;
      return null;
    }
    if (!threadStarted) return fatal('sequence', `${type} before thread.started`);
    switch (type) {
      case 'turn.started':
        if (turnStarted) return fatal('sequence', 'a second turn.started');
        turnStarted = true;
        return null;
      case 'turn.failed':
        return fatal('turn_failed', messageOf(event.error, 'turn failed without a message'));
      case 'turn.completed':
        if (!turnStarted) return fatal('sequence', 'turn.completed before turn.started');
        completed = true;
        usage = isObject(event.usage) ? numbersOf(event.usage) : null;
        return null;
      default:
        if (!isObject(event.item)) return fatal('malformed', `${type} without an item object`);
        return checkItem(type, event.item);
    }
  };

  return {
    line(text) {
      if (failure) return null;
      failure = check(text);
      return failure;
    },
    end() {
      if (failure) return failure;
      if (!completed) return fatal('incomplete', 'the stream ended without turn.completed');
      const [unfinished] = open;
      if (unfinished !== undefined) {
        return fatal('unfinished_item', `${quote(unfinished)} started and never completed`);
      }
      return null;
    },
    warnings: () => warnings.map((w) => ({ ...w })),
    summary: () => ({
      toolCalls: toolCalls.map((c) => ({ ...c })),
      usage: usage && { ...usage },
      messages: [...messages],
      completed,
    }),
  };
}
