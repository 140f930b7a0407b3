// The Codex adapter's MCP surface end to end: the real MCP SDK client speaking through the real
// bridge process (bridge.ts under tsx, as Codex would start it) to the socket server, whose
// tools run in a real solver container on a fresh workspace of the shell-task fixture. And the
// socket's walls: wrong tokens, garbage, slow or over-long handshakes, a second session, the
// socket's and directory's modes, and close().
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { requireDocker } from '../../src/sandbox/index.js';
import {
  startMcpSocketServer,
  type McpCallEvent,
  type McpSocketServer,
} from '../../src/solvers/codex/mcp-server.js';
import {
  TOOL_DEFINITIONS,
  TOOL_NAMES,
  callTool,
  createDeadline,
  type ToolSandbox,
} from '../../src/solvers/index.js';
import { SHELL_TASK, candidateDiff } from '../helpers/bundles.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { ROOT } from '../helpers/processes.js';
import { shellTask, solverSandbox } from '../helpers/solver.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const docker = testDocker();
const BRIDGE = join(ROOT, 'src/solvers/codex/bridge.ts');
/** Where this file's solver sandboxes are labelled; nothing may be left there after it. */
const WHERE = dockerScope(docker, 'codex-mcp');
const LIB = readFileSync(`${SHELL_TASK}/environment/repo/lib.sh`, 'utf8');

beforeAll(async () => {
  await requireDocker(docker);
  await shellTask(); // builds the image once, outside any test's timeout
}, 600_000);

/** A sandbox whose container does not exist: any exec throws DOCKER_ERROR. */
const NOWHERE: ToolSandbox = {
  docker,
  containerId: 'proctor-no-such-container',
  workdir: '/repo',
  user: '1000:1000',
  outputBytes: 65_536,
  patchBytes: 1024,
};

/** A socket server in a fresh 0700 directory, closed after the test; its events collected. */
async function startServer(sandbox: ToolSandbox = NOWHERE) {
  const deadline = createDeadline(60_000);
  onCleanup(() => deadline.dispose());
  const events: McpCallEvent[] = [];
  const server = await startMcpSocketServer({
    dir: tempDir('proctor-mcp-'),
    sandbox,
    deadline,
    onCall: (event) => events.push(event),
  });
  onCleanup(() => server.close());
  return { server, events };
}

/** The SDK client, connected through a bridge process started with these variables. */
async function connectClient(server: McpSocketServer, token = server.token): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', BRIDGE],
    cwd: ROOT,
    env: {
      PROCTOR_MCP_SOCKET: server.socketPath,
      PROCTOR_MCP_TOKEN: token,
      PATH: process.env['PATH'] ?? '',
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'proctor-test', version: '1.0.0' });
  onCleanup(() => client.close());
  await client.connect(transport);
  return client;
}

/** The bridge as a bare process, its stdin and stdout pipes for the test to drive. */
function startBridge(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', BRIDGE], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'], ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/** A raw connection: what it received, and a promise that settles when it closes. */
function rawConnection(path: string) {
  const socket = connect(path);
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString()));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  onCleanup(() => {
    socket.destroy();
  });
  return { socket, closed, received: () => received };
}

const ACCEPTED = 'PROCTOR-MCP OK\n';

/** A raw connection that presents `token`, once its reply line has come or it has closed. */
async function handshake(path: string, token: string) {
  const raw = rawConnection(path);
  raw.socket.write(`PROCTOR-MCP ${token}\n`);
  await waitFor(() => raw.received().includes('\n') || raw.socket.destroyed, { what: 'a reply' });
  return raw;
}

const text = (result: Awaited<ReturnType<Client['callTool']>>): string => {
  const [item] = (result as CallToolResult).content;
  if (item?.type !== 'text') throw new Error(`expected one text item, got ${JSON.stringify(item)}`);
  return item.text;
};
const json = (result: Awaited<ReturnType<Client['callTool']>>) =>
  JSON.parse(text(result)) as Record<string, unknown>;

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '0' },
  },
});

describe('the MCP server behind the bridge', () => {
  it('publishes exactly the three tools with their schemas and descriptions, and nothing else', async () => {
    const { server } = await startServer();
    const client = await connectClient(server);
    expect(client.getServerVersion()?.name).toBe('proctor');
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
    const { tools } = await client.listTools();
    expect(tools).toEqual(
      TOOL_NAMES.map((name) => ({
        name,
        description: TOOL_DEFINITIONS[name].description,
        inputSchema: TOOL_DEFINITIONS[name].parameters,
      })),
    );
    await expect(client.listResources()).rejects.toThrow(/Method not found/);
    await expect(client.listPrompts()).rejects.toThrow(/Method not found/);
    expect(server.calls()).toEqual([]);
  });

  it('runs run_command, read_file and apply_patch in the container and records each call', async () => {
    const { server, events } = await startServer(await solverSandbox(WHERE));
    const client = await connectClient(server);

    const echo = await client.callTool({
      name: 'run_command',
      arguments: { command: 'echo hi; id -u', timeout_s: null },
    });
    expect(echo.isError).toBeFalsy();
    expect(json(echo)).toMatchObject({ exit_code: 0, stdout: 'hi\n1000\n', stderr: '' });

    const read = await client.callTool({
      name: 'read_file',
      arguments: { path: 'lib.sh', offset: null, limit: null },
    });
    expect(json(read)).toEqual({
      content: LIB,
      bytes_read: LIB.length,
      total_bytes: LIB.length,
      truncated: false,
    });

    const patch = candidateDiff({ files: { 'lib.sh': `${LIB}sub() { echo $(($1 - $2)); }\n` } });
    const applied = await client.callTool({
      name: 'apply_patch',
      arguments: { patch: patch.toString('utf8') },
    });
    expect(json(applied)).toEqual({ applied: true, files: ['lib.sh'] });
    const diff = await client.callTool({
      name: 'run_command',
      arguments: { command: 'git diff --stat', timeout_s: 10 },
    });
    expect(json(diff).stdout).toContain('lib.sh | 1 +');

    const missing = await client.callTool({
      name: 'read_file',
      arguments: { path: 'nope.txt', offset: null, limit: null },
    });
    expect(missing.isError).toBe(true);
    expect(json(missing)).toEqual({ error: 'no such file: nope.txt' });

    expect(server.calls()).toEqual([
      { tool: 'run_command', ok: true },
      { tool: 'read_file', ok: true },
      { tool: 'apply_patch', ok: true },
      { tool: 'run_command', ok: true },
      { tool: 'read_file', ok: false },
    ]);
    expect(events[0]).toEqual({
      tool: 'run_command',
      ok: true,
      summary: 'run_command "echo hi; id -u": exit 0, 8 B stdout, 0 B stderr',
    });
    expect(events[4]).toEqual({
      tool: 'read_file',
      ok: false,
      summary: 'read_file "nope.txt": no such file: nope.txt',
    });
  });

  it('answers malformed arguments with isError, an unknown tool and an engine failure with errors', async () => {
    const { server, events } = await startServer(NOWHERE);
    const client = await connectClient(server);

    const wrongType = await client.callTool({ name: 'run_command', arguments: { command: 1 } });
    expect(wrongType.isError).toBe(true);
    expect(text(wrongType)).toMatch(/^run_command\.command: /);
    const extraKey = await client.callTool({
      name: 'apply_patch',
      arguments: { patch: 'x', check: true },
    });
    expect(text(extraKey)).toBe('apply_patch: unknown key `check`');
    const none = await client.callTool({ name: 'read_file' });
    expect(text(none)).toMatch(/^read_file\.path: /);

    const unknown = await client
      .callTool({ name: 'write_file', arguments: { path: 'x' } })
      .catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(McpError);
    expect(unknown).toMatchObject({
      code: ErrorCode.InvalidParams,
      message: expect.stringMatching(/unknown tool "write_file"/),
    });

    // NOWHERE has no container: the call is well formed, the engine fails.
    const engine = await client
      .callTool({ name: 'run_command', arguments: { command: 'true', timeout_s: null } })
      .catch((error: unknown) => error);
    expect(engine).toMatchObject({ code: ErrorCode.InternalError });

    expect(server.calls()).toEqual([
      { tool: 'run_command', ok: false },
      { tool: 'apply_patch', ok: false },
      { tool: 'read_file', ok: false },
      { tool: 'write_file', ok: false },
      { tool: 'run_command', ok: false },
    ]);
    expect(events.map((e) => e.fault)).toEqual([
      'arguments',
      'arguments',
      'arguments',
      'arguments',
      'engine',
    ]);
  });

  it('stops a command in flight when the client cancels it, and when close() ends the session', async () => {
    const sandbox = await solverSandbox(WHERE);
    const { server } = await startServer(sandbox);
    const client = await connectClient(server);
    const deadline = createDeadline(30_000);
    onCleanup(() => deadline.dispose());
    const sleepers = async (): Promise<string> => {
      const scan = `for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline; echo; done 2>/dev/null`;
      const command = `${scan} | grep -c '^sleep 100 ' || true`;
      const args = JSON.stringify({ command, timeout_s: null });
      const result = await callTool(sandbox, 'run_command', args, deadline);
      return (JSON.parse(result.content) as { stdout: string }).stdout.trim();
    };
    const sleep = { name: 'run_command', arguments: { command: 'sleep 100', timeout_s: null } };

    const cancel = new AbortController();
    const cancelled = client
      .callTool(sleep, undefined, { signal: cancel.signal })
      .catch((error: unknown) => error);
    await waitFor(async () => (await sleepers()) === '1', { what: 'the first sleep' });
    cancel.abort();
    expect(await cancelled).toBeInstanceOf(Error);
    await waitFor(async () => (await sleepers()) === '0', { what: 'the first sleep to end' });
    await waitFor(() => server.calls().length === 1, { what: 'the cancelled call to end' });

    const orphaned = client.callTool(sleep).catch((error: unknown) => error);
    await waitFor(async () => (await sleepers()) === '1', { what: 'the second sleep' });
    await server.close();
    expect(await orphaned).toMatchObject({ code: ErrorCode.ConnectionClosed });
    expect(await sleepers()).toBe('0');
    expect(server.calls()).toEqual([
      { tool: 'run_command', ok: false },
      { tool: 'run_command', ok: false },
    ]);
  });
});

describe('the bridge', () => {
  it('pipes MCP both ways and exits 0 when its stdin ends', async () => {
    const { server } = await startServer();
    const bridge = startBridge({
      PROCTOR_MCP_SOCKET: server.socketPath,
      PROCTOR_MCP_TOKEN: server.token,
    });
    bridge.child.stdin.write(`${INITIALIZE}\n`);
    const line = await waitFor(() => bridge.stdout().includes('\n') && bridge.stdout(), {
      what: 'the initialize response',
    });
    expect(JSON.parse(line)).toMatchObject({ id: 1, result: { serverInfo: { name: 'proctor' } } });
    bridge.child.stdin.end();
    expect(await bridge.exited).toBe(0);
    expect(bridge.stderr()).toBe('');
  });

  it('exits 1 with one line when the token is wrong, and the server runs nothing', async () => {
    const { server } = await startServer();
    const wrong = randomBytes(32).toString('hex');
    await expect(connectClient(server, wrong)).rejects.toThrow();

    const bridge = startBridge({ PROCTOR_MCP_SOCKET: server.socketPath, PROCTOR_MCP_TOKEN: wrong });
    bridge.child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_command', arguments: { command: 'true', timeout_s: null } } })}\n`,
    );
    expect(await bridge.exited).toBe(1);
    expect(bridge.stdout()).toBe('');
    expect(bridge.stderr()).toBe('proctor MCP bridge: handshake refused: the socket closed\n');
    expect(server.calls()).toEqual([]);
  });

  it('exits 1 with one line when the socket is missing or a variable is unset', async () => {
    const missing = startBridge({
      PROCTOR_MCP_SOCKET: join(tempDir(), 'none.sock'),
      PROCTOR_MCP_TOKEN: 'x',
    });
    expect(await missing.exited).toBe(1);
    expect(missing.stderr()).toMatch(
      /^proctor MCP bridge: cannot use \S+none\.sock: .*ENOENT.*\n$/,
    );

    const unset = startBridge({ PROCTOR_MCP_TOKEN: 'x' });
    expect(await unset.exited).toBe(1);
    expect(unset.stderr()).toBe(
      'proctor MCP bridge: PROCTOR_MCP_SOCKET and PROCTOR_MCP_TOKEN must both be set\n',
    );
  });
});

describe('the socket', () => {
  it('drops garbage, an over-long first line and a token that is almost right, saying nothing', async () => {
    const { server } = await startServer();
    const tries = [
      'GET / HTTP/1.1\r\nHost: x\r\n\r\n',
      'x'.repeat(300),
      `PROCTOR-MCP ${server.token.toUpperCase()}\n`,
      `PROCTOR-MCP ${server.token} \n`,
      `PROCTOR-MCP ${server.token.slice(0, -1)}\n`,
      `proctor-mcp ${server.token}\n${INITIALIZE}\n`,
    ];
    for (const garbage of tries) {
      const raw = rawConnection(server.socketPath);
      raw.socket.write(garbage);
      await raw.closed;
      expect(raw.received()).toBe('');
    }
    expect(server.calls()).toEqual([]);
  });

  it('drops connections beyond eight in their handshake at once, and serves again once they go', async () => {
    const { server } = await startServer();
    const silent = Array.from({ length: 8 }, () => rawConnection(server.socketPath));
    await Promise.all(
      silent.map((raw) => new Promise((resolve) => raw.socket.on('connect', resolve))),
    );
    const ninth = rawConnection(server.socketPath);
    ninth.socket.write(`PROCTOR-MCP ${server.token}\n`);
    await ninth.closed;
    expect(ninth.received()).toBe('');

    for (const raw of silent) raw.socket.destroy();
    await waitFor(
      async () => (await handshake(server.socketPath, server.token)).received() === ACCEPTED,
      { what: 'a session once the silent connections are gone' },
    );
  });

  it('drops a connection that does not present its token within 5 s', async () => {
    const { server } = await startServer();
    const raw = rawConnection(server.socketPath);
    raw.socket.write('PROCTOR-MCP ');
    const started = Date.now();
    await raw.closed;
    expect(Date.now() - started).toBeGreaterThan(4000);
    expect(raw.received()).toBe('');
  }, 15_000);

  it('accepts the token with MCP in the same write, and refuses a second session while one is open', async () => {
    const { server } = await startServer();
    const first = rawConnection(server.socketPath);
    first.socket.write(`PROCTOR-MCP ${server.token}\n${INITIALIZE}\n`);
    await waitFor(() => first.received().includes('"serverInfo"'), { what: 'initialize' });
    expect(first.received()).toMatch(/^PROCTOR-MCP OK\n\{.*"id":1.*\}\n$/);

    const second = rawConnection(server.socketPath);
    second.socket.write(`PROCTOR-MCP ${server.token}\n`);
    await second.closed;
    expect(second.received()).toBe('PROCTOR-MCP BUSY\n');
    const bridge = startBridge({
      PROCTOR_MCP_SOCKET: server.socketPath,
      PROCTOR_MCP_TOKEN: server.token,
    });
    expect(await bridge.exited).toBe(1);
    expect(bridge.stderr()).toBe('proctor MCP bridge: handshake refused: "PROCTOR-MCP BUSY"\n');

    first.socket.end();
    await first.closed;
    await waitFor(
      async () => (await handshake(server.socketPath, server.token)).received() === ACCEPTED,
      { what: 'a new session after the first closed' },
    );
  });

  it('is mode 0600 in a 0700 directory, refuses any other directory, and close() removes it', async () => {
    const { server } = await startServer();
    expect(server.socketPath).toMatch(/\/mcp\.sock$/);
    expect(server.token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(server.socketPath).isSocket()).toBe(true);
    expect(statSync(server.socketPath).mode & 0o777).toBe(0o600);
    expect(statSync(join(server.socketPath, '..')).mode & 0o777).toBe(0o700);

    const open = join(tempDir(), 'open');
    mkdirSync(open);
    chmodSync(open, 0o755);
    const deadline = createDeadline(1000);
    onCleanup(() => deadline.dispose());
    for (const dir of [open, join(open, 'missing'), server.socketPath]) {
      const attempt = startMcpSocketServer({ dir, sandbox: NOWHERE, deadline });
      await expect(attempt).rejects.toSatisfy((error) => isProctorError(error, 'USAGE'));
    }
    await expect(startMcpSocketServer({ dir: open, sandbox: NOWHERE, deadline })).rejects.toThrow(
      /Expected `dir` to be a directory of mode 0700 owned by uid \d+, got mode 0755, uid \d+/,
    );

    const raw = await handshake(server.socketPath, server.token);
    expect(raw.received()).toBe(ACCEPTED);
    await server.close();
    await raw.closed;
    expect(existsSync(server.socketPath)).toBe(false);
    await server.close(); // idempotent
    const late = rawConnection(server.socketPath);
    await late.closed;
    expect(late.received()).toBe('');
  });
});
