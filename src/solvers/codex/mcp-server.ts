// The Codex adapter's MCP server: the three tools (tools.ts) served to one run's Codex over an
// ephemeral Unix socket. Codex only speaks MCP to a child process over stdio, so it starts
// bridge.ts, which connects here and pipes bytes both ways (../shared/research/codex-offline.md,
// "The MCP server").
//
// Who may connect: the socket is `<dir>/mcp.sock`, mode 0600 in a directory of mode 0700
// owned by us, and every connection must first present this run's capability token, which
// only reaches the bridge through Codex's environment (never argv):
//
//   bridge → server   `PROCTOR-MCP <64 hex digits>\n`   within 5 s, at most 256 bytes
//   server → bridge   `PROCTOR-MCP OK\n`                 then MCP JSON-RPC, one JSON per line
//                  or `PROCTOR-MCP BUSY\n` and close     another session is open
//                  or close, without a word              anything else, or too slow
//
// The reply exists so that the bridge can tell "refused" (exit 1, Codex fails at startup as
// the server is required) from a session that ended normally.
//
// One session at a time: Codex starts exactly one MCP child per run, so a second
// authenticated connection while one is open is a stray or a replay, and is refused. A new
// session may start once the previous one has closed (a restarted child). Handshakes in
// progress are bounded too, so that nothing can pile up connections.
//
// What Codex sees is exactly the flat adapter's surface: a server named `proctor` with the
// three tools and their JSON Schemas (TOOL_DEFINITIONS), no resources, no prompts. The low-
// level SDK `Server` is used because McpServer would generate its own schema from zod and
// validate arguments itself; here callTool's zod schema is the single source. Malformed
// arguments are an `isError` result (the model can read why) and an `onCall` event with
// `fault: 'arguments'`, which the adapter may treat as the end of the solve as flat does; an
// unknown tool is a JSON-RPC InvalidParams error. A call stops when Codex cancels it, when its
// session closes, when `signal` aborts, and at the deadline (callTool spends it).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, lstat, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type JSONRPCMessage,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { describeError, ProctorError } from '../../errors.js';
import type { Deadline } from '../deadline.js';
import {
  callTool,
  TOOL_DEFINITIONS,
  TOOL_NAMES,
  ToolArgumentsError,
  type ToolResult,
  type ToolSandbox,
} from '../tools.js';

/** The MCP server's name, as Codex's `mcp_servers.<name>` and the model's namespace know it. */
const SERVER_NAME = 'proctor';
/** The environment variables through which the bridge learns the socket and the token. */
export const BRIDGE_ENV = { socket: 'PROCTOR_MCP_SOCKET', token: 'PROCTOR_MCP_TOKEN' } as const;

const SOCKET_NAME = 'mcp.sock';
const HANDSHAKE_PREFIX = 'PROCTOR-MCP ';
const ACCEPTED = 'PROCTOR-MCP OK\n';
const BUSY = 'PROCTOR-MCP BUSY\n';
/** The longest handshake line read before the connection is dropped (the real one is 77). */
const HANDSHAKE_BYTES = 256;
/** How long a connection may take to present the token. */
const HANDSHAKE_TIMEOUT_MS = 5000;
/** Connections that may be in their handshake at once; more are dropped on arrival. */
const MAX_PENDING = 8;
/**
 * The longest JSON-RPC line accepted. A patch of the usual patch_bytes (1 MiB), JSON-escaped
 * at worst six bytes a byte, fits; a longer line closes the session.
 */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** Characters of a tool name kept in calls() and events: the name is untrusted input. */
const NAME_CHARS = 100;
/** sockaddr_un's sun_path is 108 bytes with its NUL. */
const MAX_SOCKET_PATH_BYTES = 107;

export interface McpCallEvent {
  /** The tool's name as Codex sent it (cut to 100 characters). */
  tool: string;
  /** callTool's `ok`; false as well for malformed arguments, unknown tools and engine errors. */
  ok: boolean;
  /** One bounded line for the transcript. */
  summary: string;
  /**
   * Set when the call did not reach the tool: `arguments` for malformed arguments or an unknown
   * tool (callTool's ToolArgumentsError), `engine` for anything else it threw (DOCKER_ERROR).
   */
  fault?: 'arguments' | 'engine';
}

export interface McpSocketServerOptions {
  /** A fresh directory of mode 0700 owned by this process, for this run; the socket goes in it. */
  dir: string;
  sandbox: ToolSandbox;
  /** The solver deadline every call spends. */
  deadline: Deadline;
  /** Stops every call in flight (the job's cancel). Default: none. */
  signal?: AbortSignal;
  /** Called once per tools/call as it ends, in the order they end. Default: none. */
  onCall?: (event: McpCallEvent) => void;
}

export interface McpSocketServer {
  /** `<dir>/mcp.sock`, for PROCTOR_MCP_SOCKET. */
  socketPath: string;
  /** 64 hex digits, for PROCTOR_MCP_TOKEN. */
  token: string;
  /** Refuses new connections, closes every one, waits for calls in flight, removes the socket. */
  close(): Promise<void>;
  /** Every tools/call so far, in the order they ended. */
  calls(): Array<{ tool: string; ok: boolean }>;
}

export async function startMcpSocketServer(
  options: McpSocketServerOptions,
): Promise<McpSocketServer> {
  const { dir } = options;
  await requirePrivateDir(dir);
  const socketPath = join(dir, SOCKET_NAME);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    throw new ProctorError(
      'USAGE',
      `Expected \`dir\` to be short enough for a Unix socket path (${MAX_SOCKET_PATH_BYTES} bytes), got \`${dir}\``,
    );
  }
  const token = randomBytes(32).toString('hex');
  const expected = Buffer.from(`${HANDSHAKE_PREFIX}${token}\n`);
  const calls: Array<{ tool: string; ok: boolean }> = [];
  const inFlight = new Set<Promise<unknown>>();
  const sockets = new Set<Socket>();
  let pending = 0;
  let session: { socket: Socket; server: Server } | undefined;
  let closing: Promise<void> | undefined;

  const record = (event: McpCallEvent): void => {
    calls.push({ tool: event.tool, ok: event.ok });
    options.onCall?.(event);
  };
  const track = <T>(promise: Promise<T>): Promise<T> => {
    inFlight.add(promise);
    const forget = (): boolean => inFlight.delete(promise);
    promise.then(forget, forget);
    return promise;
  };

  const openSession = (socket: Socket, rest: Buffer): void => {
    const server = createMcpServer({ ...options, record, track });
    const current = { socket, server };
    session = current;
    socket.once('close', () => {
      if (session === current) session = undefined;
      void server.close(); // aborts its calls in flight (their execs are killed)
    });
    socket.write(ACCEPTED);
    server.connect(new SocketTransport(socket, rest)).catch(() => socket.destroy());
  };

  const net = createServer((socket) => {
    if (closing !== undefined || pending >= MAX_PENDING) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => {}); // a reset is the peer's business; 'close' follows
    pending++;
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      pending--;
      clearTimeout(timer);
      socket.off('data', onData);
    };
    const timer = setTimeout(() => socket.destroy(), HANDSHAKE_TIMEOUT_MS);
    socket.once('close', settle);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(0x0a);
      if (end === -1 && head.length < HANDSHAKE_BYTES) return;
      // Paused before the listener goes, so no byte after the line is lost: the session's
      // transport resumes the socket.
      socket.pause();
      settle();
      const line = head.subarray(0, end + 1);
      if (end === -1 || end >= HANDSHAKE_BYTES || !sameBytes(line, expected)) {
        socket.destroy();
      } else if (session !== undefined || closing !== undefined) {
        socket.end(BUSY, () => socket.destroy());
      } else {
        openSession(socket, head.subarray(end + 1));
      }
    };
    socket.on('data', onData);
  });

  await new Promise<void>((resolve, reject) => {
    net.once('error', reject);
    net.listen(socketPath, () => {
      net.off('error', reject);
      resolve();
    });
  });
  net.on('error', () => {}); // after listen, only accept errors (EMFILE): the client retries
  // The 0700 directory already keeps other users out; 0600 says the same of the socket itself.
  await chmod(socketPath, 0o600).catch(async (error: unknown) => {
    await new Promise((resolve) => net.close(resolve));
    throw error;
  });

  const close = async (): Promise<void> => {
    const stopped = new Promise<void>((resolve) => net.close(() => resolve()));
    await session?.server.close();
    for (const socket of sockets) socket.destroy();
    await stopped;
    await Promise.allSettled([...inFlight]);
    await rm(socketPath, { force: true });
  };

  return {
    socketPath,
    token,
    close: () => (closing ??= close()),
    calls: () => [...calls],
  };
}

/** Refuses a directory that others could enter or that is not ours: the socket's only wall. */
async function requirePrivateDir(dir: string): Promise<void> {
  const stat = await lstat(dir).catch((error: unknown) => {
    throw new ProctorError('USAGE', `Expected \`dir\` to exist, got \`${dir}\``, { cause: error });
  });
  const mode = stat.mode & 0o777;
  const uid = process.getuid?.();
  if (!stat.isDirectory() || mode !== 0o700 || (uid !== undefined && stat.uid !== uid)) {
    const what = stat.isDirectory()
      ? `mode ${mode.toString(8).padStart(4, '0')}, uid ${stat.uid}`
      : 'not a directory';
    throw new ProctorError(
      'USAGE',
      `Expected \`dir\` to be a directory of mode 0700 owned by uid ${String(uid)}, got ${what} at \`${dir}\``,
    );
  }
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

interface SessionContext extends McpSocketServerOptions {
  record: (event: McpCallEvent) => void;
  track: <T>(promise: Promise<T>) => Promise<T>;
}

const TOOLS: Tool[] = TOOL_NAMES.map((name) => ({
  name,
  description: TOOL_DEFINITIONS[name].description,
  inputSchema: TOOL_DEFINITIONS[name].parameters as Tool['inputSchema'],
}));

/** One session's MCP server: initialize, tools/list and tools/call, nothing else. */
function createMcpServer(context: SessionContext): Server {
  // `Server` is marked deprecated in favour of McpServer, which cannot publish our own schemas.
  const server = new Server(
    { name: SERVER_NAME, version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.onerror = () => {}; // a bad line from the client is answered (or ignored) by the SDK
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const signal = context.signal ? AbortSignal.any([extra.signal, context.signal]) : extra.signal;
    const { name, arguments: args } = request.params;
    return context.track(runTool(context, name, args ?? {}, signal));
  });
  return server;
}

async function runTool(
  context: SessionContext,
  rawName: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const tool = rawName.slice(0, NAME_CHARS);
  const { sandbox, deadline, record } = context;
  let result: ToolResult;
  try {
    result = await callTool(sandbox, rawName, JSON.stringify(args), deadline, signal);
  } catch (error) {
    if (!(error instanceof ToolArgumentsError)) {
      record({ tool, ok: false, summary: `${tool}: ${describeError(error)}`, fault: 'engine' });
      throw error; // a JSON-RPC InternalError
    }
    record({ tool, ok: false, summary: error.message, fault: 'arguments' });
    if (!(TOOL_NAMES as readonly string[]).includes(rawName)) {
      throw new McpError(ErrorCode.InvalidParams, error.message);
    }
    return { content: [{ type: 'text', text: error.message }], isError: true };
  }
  record({ tool, ok: result.ok, summary: result.summary });
  const content: CallToolResult['content'] = [{ type: 'text', text: result.content }];
  return result.ok ? { content } : { content, isError: true };
}

/**
 * MCP over one connected socket, framed as the stdio transport frames it: one JSON-RPC
 * message per line. The SDK's StdioServerTransport accepts any streams but never reports the
 * peer's end, so the session would outlive its connection; this one closes with the socket.
 */
class SocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  private closed = false;

  /** `socket` is paused; `initial` holds any bytes that arrived after the handshake line. */
  constructor(
    private readonly socket: Socket,
    private readonly initial: Buffer,
  ) {}

  start(): Promise<void> {
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    this.socket.once('close', () => this.finish());
    if (this.socket.destroyed) this.finish();
    if (this.initial.length > 0) this.receive(this.initial);
    this.socket.resume();
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error('the MCP connection is closed'));
        return;
      }
      this.socket.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  close(): Promise<void> {
    this.socket.destroy();
    this.finish();
    return Promise.resolve();
  }

  private receive(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
    } catch (error) {
      // Longer than MAX_MESSAGE_BYTES without a newline: the stream cannot be resynchronised.
      this.onerror?.(error as Error);
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error); // one bad line; the next may be fine
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}
