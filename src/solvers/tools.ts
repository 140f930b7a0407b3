// The solver's tool surface: the only way a host-side model loop reaches the checkout (seed
// 003: the flat adapter "only serializes three strict function schemas"; the Codex adapter's
// MCP server "only publishes run_command, read_file, and apply_patch"). Each tool is one
// bounded exec in the solver container, as the task's uid:gid, in its workdir.
//
// Arguments are untrusted model output. Each tool's zod schema is the single source: it
// validates the arguments (strict, so an unknown key is an error) and is turned into the
// JSON Schema the model is shown, so the two cannot drift. Arguments that are not JSON or do
// not match throw ToolArgumentsError, which ends the solve; everything a well-formed call can
// run into (a missing file, a patch that does not apply, the deadline) is an ok:false result
// the model can read.
//
// Bounds: every call spends the one solver deadline (its exec's time limit is what remains of
// it, so none can extend it; a kill and the post-exit drain add a few seconds at most), a
// cancel kills the command in flight, stdout and stderr are bounded by the task's
// output_bytes each, and a patch by patch_bytes.
//
// read_file's containment check (symlinks resolved inside the container, the result under
// the workdir) keeps the tool to its contract; it is no security boundary, since run_command
// runs anything as the same user. The container is the boundary.
import { z } from 'zod';
import { ProctorError } from '../errors.js';
import { zodProblem } from '../problems.js';
import {
  execInContainer,
  type DockerClient,
  type ExecOptions,
  type ExecResult,
} from '../sandbox/index.js';
import { omittedMarker } from '../sandbox/output-buffer.js';
import type { Deadline } from './deadline.js';

export const TOOL_NAMES = ['run_command', 'read_file', 'apply_patch'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export interface ToolSandbox {
  docker: DockerClient;
  /** The running solver container (startIdleContainer). */
  containerId: string;
  /** The checkout's mount point ([environment].workdir), absolute. */
  workdir: string;
  /** The task identity, numeric `uid:gid`. */
  user: string;
  /** The task's output_bytes: bytes kept per stream of a command, and most bytes one read returns. */
  outputBytes: number;
  /** The task's patch_bytes: the largest patch apply_patch accepts. */
  patchBytes: number;
}

export interface ToolResult {
  /** False when the tool could not do its job (a command's non-zero exit is still ok). */
  ok: boolean;
  /** What the model sees: JSON text. */
  content: string;
  /** One bounded line for the transcript. */
  summary: string;
}

/** Malformed arguments from the model, or an unknown tool: the adapter ends the solve. */
export class ToolArgumentsError extends ProctorError {
  constructor(message: string, data: Record<string, unknown>) {
    super('PAYLOAD_INVALID', message, { data });
  }
}

/** The longest command: Linux refuses a single argv string of 128 KiB (MAX_ARG_STRLEN). */
const MAX_COMMAND_BYTES = 100_000;
/** The longest path read_file takes (PATH_MAX). */
const MAX_PATH_BYTES = 4096;
/** Characters of a command or path quoted in a summary. */
const SUMMARY_CHARS = 200;
/** Bytes kept of stderr for read_file's own messages, whatever the read's size. */
const MESSAGE_BYTES = 4096;
const DEADLINE_REACHED = 'solver deadline reached';

const nullable = <T extends z.ZodType>(schema: T, description: string) =>
  schema.nullable().describe(description);

const SCHEMAS = {
  run_command: z
    .strictObject({
      command: z.string().describe('A shell command, run with `sh -c` in the repository.'),
      timeout_s: nullable(
        z.number().positive(),
        'Seconds before the command is killed; null for the rest of the time budget.',
      ),
    })
    .describe(
      'Runs a shell command in the repository as the task user (no network). Returns its exit ' +
        'code and its stdout and stderr, each cut to the middle when longer than the limit.',
    ),
  read_file: z
    .strictObject({
      path: z.string().describe('A path relative to the repository root, or absolute inside it.'),
      offset: nullable(z.int().min(0), 'The first byte to read; null for 0.'),
      limit: nullable(z.int().min(1), 'The most bytes to read; null for the output limit.'),
    })
    .describe(
      'Reads a regular file inside the repository (symlinks are followed but must stay inside). ' +
        'Returns the bytes as UTF-8 text, at most the output limit per call: page with offset.',
    ),
  apply_patch: z
    .strictObject({
      patch: z.string().describe('A unified diff as `git diff` writes it, paths a/… and b/….'),
    })
    .describe(
      'Applies a unified diff to the work tree with `git apply`, all or nothing: when any hunk ' +
        'fails, no file changes and git says why.',
    ),
} as const satisfies Record<ToolName, z.ZodObject>;

/**
 * The JSON Schema of a tool's arguments for OpenAI strict function calling: zod's draft
 * 2020-12 output (every property required, additionalProperties false) without `$schema`, and
 * each nullable property as `type: [T, "null"]`, the form OpenAI documents for optional
 * parameters, instead of zod's equivalent `anyOf`.
 */
function strictParameters(schema: z.ZodObject): Record<string, unknown> {
  const json = { ...z.toJSONSchema(schema, { io: 'input' }) };
  // The tool's description goes beside the schema, and `$schema` is no part of a tool's.
  delete json.$schema;
  delete json.description;
  const properties = Object.entries(json.properties ?? {}).map(([key, property]) => {
    if (typeof property !== 'object' || property.anyOf === undefined) return [key, property];
    const { anyOf, ...outer } = property;
    const [inner, none, ...rest] = anyOf;
    if (typeof inner !== 'object' || typeof inner.type !== 'string') return [key, property];
    if (typeof none !== 'object' || none.type !== 'null' || rest.length > 0) return [key, property];
    return [key, { ...inner, ...outer, type: [inner.type, 'null'] }];
  });
  return { ...json, properties: Object.fromEntries(properties) };
}

export const TOOL_DEFINITIONS: Record<ToolName, { description: string; parameters: object }> = {
  run_command: tool('run_command'),
  read_file: tool('read_file'),
  apply_patch: tool('apply_patch'),
};

function tool(name: ToolName): { description: string; parameters: object } {
  return {
    description: SCHEMAS[name].description ?? name,
    parameters: strictParameters(SCHEMAS[name]),
  };
}

/**
 * Runs one tool call. Throws ToolArgumentsError for an unknown tool or malformed arguments,
 * and ProctorError (DOCKER_ERROR) when the engine fails; every other outcome is a result.
 */
export async function callTool(
  sandbox: ToolSandbox,
  name: string,
  rawArguments: string,
  deadline: Deadline,
  signal?: AbortSignal,
): Promise<ToolResult> {
  if (!(TOOL_NAMES as readonly string[]).includes(name)) {
    const shown = JSON.stringify(name.slice(0, SUMMARY_CHARS));
    throw new ToolArgumentsError(`unknown tool ${shown}; the tools are ${TOOL_NAMES.join(', ')}`, {
      tool: name.slice(0, SUMMARY_CHARS),
    });
  }
  return invoke(name as ToolName, rawArguments, { sandbox, deadline, signal });
}

type Arguments<N extends ToolName> = z.output<(typeof SCHEMAS)[N]>;
interface Context {
  sandbox: ToolSandbox;
  deadline: Deadline;
  signal: AbortSignal | undefined;
}

const HANDLERS: { [N in ToolName]: (context: Context, args: Arguments<N>) => Promise<ToolResult> } =
  { run_command: runCommand, read_file: readFile, apply_patch: applyPatch };

async function invoke<N extends ToolName>(
  name: N,
  rawArguments: string,
  context: Context,
): Promise<ToolResult> {
  let raw: unknown;
  try {
    raw = JSON.parse(rawArguments);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new ToolArgumentsError(`${name}: the arguments are not JSON: ${detail}`, { tool: name });
  }
  const parsed = SCHEMAS[name].safeParse(raw);
  if (!parsed.success) {
    const { path, detail } = zodProblem(parsed.error, name);
    throw new ToolArgumentsError(`${path}: ${detail}`, { tool: name, path });
  }
  if (context.deadline.expired()) return failure(name, DEADLINE_REACHED);
  return HANDLERS[name](context, parsed.data as Arguments<N>);
}

async function runCommand(
  { sandbox, deadline, signal }: Context,
  { command, timeout_s }: Arguments<'run_command'>,
): Promise<ToolResult> {
  const shown = `run_command ${quote(command)}`;
  if (Buffer.byteLength(command) > MAX_COMMAND_BYTES || command.includes('\0')) {
    return failure(shown, `the command must be at most ${MAX_COMMAND_BYTES} bytes, without NUL`);
  }
  const limitMs = timeout_s === null ? Infinity : timeout_s * 1000;
  const result = await exec(sandbox, ['sh', '-c', command], {
    timeoutMs: Math.max(1, Math.min(limitMs, deadline.remainingMs())),
    outputBytes: sandbox.outputBytes,
    signal,
  });
  if (result.aborted) return failure(shown, stoppedBy(deadline));
  const content = {
    exit_code: result.exitCode,
    timed_out: result.timedOut,
    stdout: result.stdout,
    stderr: result.stderr,
    truncated: result.truncated,
  };
  const outcome = result.timedOut ? 'timed out' : `exit ${String(result.exitCode)}`;
  const sizes = `${result.stdoutBytes} B stdout, ${result.stderrBytes} B stderr`;
  return { ok: true, content: JSON.stringify(content), summary: `${shown}: ${outcome}, ${sizes}` };
}

// $1 path, $2 workdir, $3 offset, $4 count. Exit 3 with one line on stderr for the model, or
// exit 0 with the file's size as stderr's first line and the bytes on stdout. The type is
// checked on the resolved path before anything opens it, so a FIFO is never read (one the
// model's own background process swaps in after the check costs it only the deadline).
const READ_SCRIPT = String.raw`p=$1 root=$2 offset=$3 count=$4
fail() { printf '%s\n' "$1" >&2; exit 3; }
top=$(realpath -e -- "$root") || fail "the workspace $root is missing"
real=$(realpath -e -- "$p" 2>/dev/null) || fail "no such file: $p"
case $real in "$top" | "$top"/*) ;; *) fail "$p resolves to $real, outside the workspace $top" ;; esac
[ -f "$real" ] || fail "$p is not a regular file but a $(stat -c %F -- "$real")"
[ -r "$real" ] || fail "$p is not readable"
stat -c %s -- "$real" >&2 || exit 4
tail -c +"$((offset + 1))" -- "$real" | head -c "$count"`;

async function readFile(
  { sandbox, deadline, signal }: Context,
  { path, offset, limit }: Arguments<'read_file'>,
): Promise<ToolResult> {
  const shown = `read_file ${quote(path)}`;
  if (Buffer.byteLength(path) > MAX_PATH_BYTES || path.includes('\0')) {
    return failure(shown, `the path must be at most ${MAX_PATH_BYTES} bytes, without NUL`);
  }
  const start = offset ?? 0;
  const count = Math.min(limit ?? sandbox.outputBytes, sandbox.outputBytes);
  const args = [path, sandbox.workdir, String(start), String(count)];
  const result = await exec(sandbox, ['sh', '-c', READ_SCRIPT, 'proctor-read', ...args], {
    timeoutMs: Math.max(1, deadline.remainingMs()),
    outputBytes: Math.max(count, MESSAGE_BYTES),
    signal,
  });
  if (result.aborted) return failure(shown, stoppedBy(deadline));
  if (result.timedOut) return failure(shown, DEADLINE_REACHED);
  const [first = ''] = result.stderr.split('\n');
  if (result.exitCode === 3) return failure(shown, first);
  const total = Number(first);
  if (result.exitCode !== 0 || !/^\d+$/.test(first)) {
    return failure(shown, `cannot read it: ${result.stderr.trim() || `exit ${result.exitCode}`}`);
  }
  const read = result.stdoutBytes;
  const truncated = start + read < total;
  const content = { content: result.stdout, bytes_read: read, total_bytes: total, truncated };
  const summary = `${shown}: ${read} of ${total} B from ${start}`;
  return { ok: true, content: JSON.stringify(content), summary };
}

// git as the task user with no system or global configuration and no hooks. `--numstat
// --apply` prints what changed and applies in one pass; git apply checks every hunk of every
// file before it writes any, so a patch that does not apply changes nothing.
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const APPLY = ['git', '-c', 'core.hooksPath=/dev/null', 'apply', '--whitespace=nowarn'];

async function applyPatch(
  { sandbox, deadline, signal }: Context,
  { patch }: Arguments<'apply_patch'>,
): Promise<ToolResult> {
  const bytes = Buffer.from(patch, 'utf8');
  const shown = `apply_patch (${bytes.length} B)`;
  if (bytes.length > sandbox.patchBytes) {
    return failure(shown, `patch larger than patch_bytes (${sandbox.patchBytes} bytes)`);
  }
  const result = await exec(sandbox, [...APPLY, '--numstat', '-z', '--apply', '-'], {
    timeoutMs: Math.max(1, deadline.remainingMs()),
    outputBytes: sandbox.outputBytes,
    env: GIT_ENV,
    stdin: bytes,
    signal,
  });
  if (result.aborted) return failure(shown, stoppedBy(deadline));
  if (result.timedOut) return failure(shown, DEADLINE_REACHED);
  if (result.exitCode !== 0) {
    const content = { error: 'the patch does not apply; nothing changed', stderr: result.stderr };
    const why = quote(result.stderr.split('\n')[0] ?? '');
    return {
      ok: false,
      content: JSON.stringify(content),
      summary: `${shown}: does not apply: ${why}`,
    };
  }
  const { files, complete } = numstatFiles(result, sandbox.outputBytes);
  // files_truncated appears only in the rare case of a file list longer than output_bytes.
  const content = { applied: true, files, ...(complete ? {} : { files_truncated: true }) };
  return { ok: true, content: JSON.stringify(content), summary: `${shown}: ${files.length} files` };
}

/**
 * The paths in `git apply --numstat -z` output: `added\tdeleted\tpath\0`, or for a rename or
 * copy `added\tdeleted\t\0from\0to\0` (the new path is listed). When the output was longer
 * than `outputBytes`, only the complete entries of its head are, and `complete` is false.
 */
function numstatFiles(
  result: ExecResult,
  outputBytes: number,
): { files: string[]; complete: boolean } {
  let text = result.stdout;
  const complete = result.stdoutBytes <= outputBytes;
  if (!complete) {
    text = text.slice(0, text.indexOf(omittedMarker(result.stdoutBytes - outputBytes)));
    text = text.slice(0, text.lastIndexOf('\0') + 1);
  }
  const tokens = text.split('\0');
  const files: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const path = (tokens[i] ?? '').split('\t')[2];
    if (path === undefined) continue;
    if (path !== '') files.push(path);
    else if (i + 2 < tokens.length) files.push(tokens[(i += 2)] ?? '');
  }
  return { files, complete };
}

function exec(
  sandbox: ToolSandbox,
  cmd: string[],
  options: Pick<ExecOptions, 'timeoutMs' | 'outputBytes' | 'signal' | 'env' | 'stdin'>,
): Promise<ExecResult> {
  const { docker, containerId, user, workdir } = sandbox;
  return execInContainer(docker, containerId, { cmd, user, workdir, ...options });
}

/**
 * Why an aborted exec stopped: the adapter's signal carries the deadline as well as the
 * job's cancel, and whichever fired, the model should be told the true one.
 */
function stoppedBy(deadline: Deadline): string {
  return deadline.expired() ? DEADLINE_REACHED : 'cancelled';
}

/** A result saying why the tool did nothing (or was stopped); `shown` names the call. */
function failure(shown: string, error: string): ToolResult {
  return { ok: false, content: JSON.stringify({ error }), summary: `${shown}: ${error}` };
}

function quote(text: string): string {
  const shown = JSON.stringify(text);
  return shown.length > SUMMARY_CHARS ? `${shown.slice(0, SUMMARY_CHARS - 2)}…"` : shown;
}
