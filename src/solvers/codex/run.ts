// The codex adapter: the pinned Codex CLI (`@openai/codex`, exactly CODEX_VERSION) run
// host-side, offline but for the profile's model endpoint, with one run-scoped MCP server as
// its only way into the checkout. Following ../shared/research/codex-offline.md:
//
// - a fresh private root (0700) per run holds CODEX_HOME (= HOME), an empty read-only working
//   directory and the MCP socket; it is deleted with everything in it (auth.json included)
//   when the run ends;
// - the key reaches codex only through `codex login --with-api-key` on stdin: never argv, never
//   an environment; codex itself runs with a clean environment (PATH, HOME, CODEX_HOME and the
//   two variables the MCP bridge needs);
// - every built-in tool and feature the seed lists is disabled, user config and rules are
//   ignored, config is strict, retries are off, and a model catalog entry for the profile's
//   model stops the metadata notice at its source;
// - exactly one MCP server, `proctor`, required and pre-approved: the stdio bridge
//   (bridge.ts) to an ephemeral Unix socket served here, which checks a capability token
//   passed in the environment (never argv) and publishes only the three tools;
// - the JSONL on stdout is audited line by line, fail-closed (audit.ts); the first fatal line
//   kills the process group at once, as do cancel and the deadline. Preflight (version, system
//   config, catalog, login) and the run spend the same deadline.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describeError } from '../../errors.js';
import { createOutputBuffer } from '../../sandbox/index.js';
import type { Deadline } from '../deadline.js';
import { TOOL_NAMES, type ToolSandbox } from '../tools.js';
import { solveStopped, type SolveEnd, type Transcript } from '../transcript.js';
import {
  createAudit,
  DEFAULT_MAX_LINE_BYTES,
  MCP_SERVER_NAME,
  type AuditFinding,
} from './audit.js';
import { startMcpSocketServer } from './mcp-server.js';

export const CODEX_VERSION = '0.171.0';

export interface CodexProfile {
  baseUrl: string;
  model: string;
  apiKey: string;
  maxToolCalls: number;
  maxTokens: number;
}

export interface CodexRun {
  profile: CodexProfile;
  prompt: string;
  sandbox: ToolSandbox;
  deadline: Deadline;
  signal: AbortSignal;
  transcript: Transcript;
}

/** Configuration files codex would read whatever its flags say; none may exist. */
const SYSTEM_CONFIG = [
  '/etc/codex/config.toml',
  '/etc/codex/managed_config.toml',
  '/etc/codex/requirements.toml',
];

const DISABLED_FEATURES = [
  'shell_tool',
  'unified_exec',
  'view_image',
  'apps',
  'plugins',
  'hooks',
  'goals',
  'multi_agent',
  'multi_agent_v2',
  'browser_use',
  'browser_use_external',
  'in_app_browser',
  'computer_use',
  'image_generation',
  'memories',
  'skill_search',
  'skill_mcp_dependency_install',
  'workspace_dependencies',
  'tool_suggest',
  'sleep_tool',
  'shell_snapshot',
  'code_mode_host',
  'tool_call_mcp_elicitation',
  'api_key_model_discovery',
  'unbounded_connection_retries',
];

const PATH = '/usr/local/bin:/usr/bin:/bin';
const STDERR_BYTES = 64 * 1024;

/** The native binary (the npm launcher would only re-exec it). */
export function codexBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve('@openai/codex-linux-x64/package.json'));
  return join(pkg, 'vendor/x86_64-unknown-linux-musl/bin/codex');
}

/** How codex starts the bridge: compiled JavaScript, or the TypeScript source under tsx. */
function bridgeCommand(): { command: string; args: string[] } {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) {
    return {
      command: process.execPath,
      args: ['--import', 'tsx', join(dirname(here), 'bridge.ts')],
    };
  }
  return { command: process.execPath, args: [join(dirname(here), 'bridge.js')] };
}

const toml = (value: unknown) => JSON.stringify(value);

interface Spawned {
  child: ChildProcess;
  exited: Promise<number | null>;
}

function start(command: string, args: string[], env: Record<string, string>, cwd: string): Spawned {
  const child = spawn(command, args, { env, cwd, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  // Killing the group can close a pipe under a pending write (EPIPE): that is expected, and
  // must not become an uncaught error of the whole worker.
  for (const pipe of [child.stdin, child.stdout, child.stderr]) pipe?.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code));
  });
  return { child, exited };
}

/**
 * Calls `onLine` for each line of `input` without ever holding more than `maxBytes` of one
 * line: a longer line calls `onOversized` once and the rest of the stream is dropped.
 */
function splitLines(
  input: Readable,
  maxBytes: number,
  onLine: (line: string) => void,
  onOversized: () => void,
): void {
  let parts: Buffer[] = [];
  let size = 0;
  let dropped = false;
  input.on('data', (chunk: Buffer) => {
    if (dropped) return;
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      parts.push(chunk.subarray(start, nl));
      size += nl - start;
      if (size > maxBytes) break;
      onLine(Buffer.concat(parts).toString('utf8'));
      parts = [];
      size = 0;
      start = nl + 1;
    }
    if (size <= maxBytes) {
      parts.push(chunk.subarray(start));
      size += chunk.length - start;
    }
    if (size > maxBytes) {
      dropped = true;
      parts = [];
      onOversized();
    }
  });
  input.on('end', () => {
    if (!dropped && size > 0) onLine(Buffer.concat(parts).toString('utf8'));
  });
}

/** SIGKILL to the whole process group (codex and the bridge it started). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Runs a short preflight command within the deadline; its stdout, or an error. */
async function preflight(
  command: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
  deadline: Deadline,
  stdin = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = start(command, args, env, cwd);
  const out = createOutputBuffer(4 * 1024 * 1024);
  const err = createOutputBuffer(STDERR_BYTES);
  run.child.stdout?.on('data', (c: Buffer) => out.write(c));
  run.child.stderr?.on('data', (c: Buffer) => err.write(c));
  run.child.stdin?.end(stdin);
  const timer = setTimeout(() => killGroup(run.child), Math.max(1, deadline.remainingMs()));
  const onAbort = () => killGroup(run.child);
  deadline.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const code = await run.exited;
    return { code, stdout: out.text(), stderr: err.text() };
  } finally {
    clearTimeout(timer);
    deadline.signal.removeEventListener('abort', onAbort);
  }
}

let catalogCache: Promise<Record<string, unknown>> | undefined;

/** A catalog entry for `slug` cloned from the bundled gpt-5.5, as the research describes. */
async function catalogEntry(
  env: Record<string, string>,
  cwd: string,
  deadline: Deadline,
): Promise<Record<string, unknown>> {
  catalogCache ??= (async () => {
    const listed = await preflight(
      codexBinary(),
      ['debug', 'models', '--bundled'],
      env,
      cwd,
      deadline,
    );
    const models = (JSON.parse(listed.stdout) as { models: Array<Record<string, unknown>> }).models;
    const base = models.find((m) => m['slug'] === 'gpt-5.5') ?? models[0];
    if (!base) throw new Error('codex lists no bundled models');
    return base;
  })();
  catalogCache.catch(() => (catalogCache = undefined));
  return catalogCache;
}

export async function runCodex(run: CodexRun): Promise<SolveEnd> {
  const { profile, deadline, transcript } = run;
  const stopped = () => solveStopped(run.signal, deadline);
  const present = SYSTEM_CONFIG.filter((file) => existsSync(file));
  if (present.length > 0) {
    return {
      reason: 'protocol_error',
      detail: `system codex configuration present (${present.join(', ')}); refusing to run codex`,
    };
  }
  const root = await mkdtemp(join(tmpdir(), 'proctor-codex-'));
  await chmod(root, 0o700);
  const home = join(root, 'home');
  const cwd = join(root, 'cwd');
  const mcpDir = join(root, 'mcp');
  let server: Awaited<ReturnType<typeof startMcpSocketServer>> | undefined;
  try {
    await mkdir(home, { mode: 0o700 });
    await mkdir(mcpDir, { mode: 0o700 });
    await mkdir(cwd, { mode: 0o700 });
    await chmod(cwd, 0o555);
    const env = { PATH, HOME: home, CODEX_HOME: home };
    const binary = codexBinary();

    const version = await preflight(binary, ['--version'], env, cwd, deadline);
    const early = stopped();
    if (early) return early;
    if (version.stdout.trim() !== `codex-cli ${CODEX_VERSION}`) {
      return {
        reason: 'protocol_error',
        detail: `codex ${version.stdout.trim() || '(no version)'} is not the pinned ${CODEX_VERSION}`,
      };
    }
    const entry = {
      ...(await catalogEntry(env, cwd, deadline)),
      slug: profile.model,
      upgrade: null,
      supports_search_tool: false,
      apply_patch_tool_type: null,
    };
    const catalog = join(home, 'catalog.json');
    await writeFile(catalog, JSON.stringify({ models: [entry] }), { mode: 0o600 });

    const login = await preflight(
      binary,
      ['login', '--with-api-key'],
      env,
      cwd,
      deadline,
      `${profile.apiKey}\n`,
    );
    const late = stopped();
    if (late) return late;
    if (login.code !== 0) {
      return {
        reason: 'protocol_error',
        detail: `codex login failed: ${login.stderr.trim().slice(-300)}`,
      };
    }

    let toolCalls = 0;
    let overLimit = false;
    // Set once codex runs; a tool call over the limit kills it.
    const running: { child?: ChildProcess } = {};
    server = await startMcpSocketServer({
      dir: mcpDir,
      sandbox: run.sandbox,
      deadline,
      signal: AbortSignal.any([run.signal, deadline.signal]),
      onCall: (event) => {
        toolCalls++;
        transcript.add({ kind: 'tool', name: event.tool, ok: event.ok, summary: event.summary });
        if (toolCalls > profile.maxToolCalls && running.child) {
          overLimit = true;
          killGroup(running.child);
        }
      },
    });
    const bridge = bridgeCommand();
    const seconds = Math.max(1, Math.floor(deadline.remainingMs() / 1000));
    const provider = `{name="proctor", base_url=${toml(profile.baseUrl)}, wire_api="responses", requires_openai_auth=true, request_max_retries=0, stream_max_retries=0, stream_idle_timeout_ms=${Math.max(1000, Math.floor(deadline.remainingMs()))}}`;
    const args = [
      'exec',
      '--json',
      '--ephemeral',
      '--ignore-user-config',
      '--ignore-rules',
      '--skip-git-repo-check',
      '--strict-config',
      '--color',
      'never',
      '-s',
      'read-only',
      '-C',
      cwd,
      '-m',
      profile.model,
      '-c',
      'model_provider="proctor"',
      '-c',
      `model_providers.proctor=${provider}`,
      '-c',
      `model_catalog_json=${toml(catalog)}`,
      ...DISABLED_FEATURES.flatMap((feature) => ['--disable', feature]),
      '-c',
      'web_search="disabled"',
      '-c',
      'tools.experimental_request_user_input.enabled=false',
      '-c',
      'tools.update_plan.enabled=false',
      '-c',
      'skills.bundled.enabled=false',
      '-c',
      'skills.include_instructions=false',
      '-c',
      'features.skip_host_skill_discovery=true',
      '-c',
      'include_apps_instructions=false',
      '-c',
      'project_doc_max_bytes=0',
      '-c',
      'suppress_unstable_features_warning=true',
      '-c',
      `mcp_servers.${MCP_SERVER_NAME}.command=${toml(bridge.command)}`,
      '-c',
      `mcp_servers.${MCP_SERVER_NAME}.args=${toml(bridge.args)}`,
      '-c',
      `mcp_servers.${MCP_SERVER_NAME}.env_vars=${toml(['PROCTOR_MCP_SOCKET', 'PROCTOR_MCP_TOKEN'])}`,
      '-c',
      `mcp_servers.${MCP_SERVER_NAME}.required=true`,
      '-c',
      `mcp_servers.${MCP_SERVER_NAME}.default_tools_approval_mode="approve"`,
      '-c',
      `mcp_servers.${MCP_SERVER_NAME}.enabled_tools=${toml([...TOOL_NAMES])}`,
      '-c',
      `mcp_servers.${MCP_SERVER_NAME}.startup_timeout_sec=${Math.min(30, seconds)}`,
      '-c',
      `mcp_servers.${MCP_SERVER_NAME}.tool_timeout_sec=${seconds}`,
      '-',
    ];
    const spawned = start(
      binary,
      args,
      { ...env, PROCTOR_MCP_SOCKET: server.socketPath, PROCTOR_MCP_TOKEN: server.token },
      cwd,
    );
    running.child = spawned.child;
    const proc = spawned.child;
    const stderr = createOutputBuffer(STDERR_BYTES);
    proc.stderr?.on('data', (c: Buffer) => stderr.write(c));
    proc.stdin?.end(run.prompt);
    // A tool-call line carries the tool's result: up to output_bytes per stream, and JSON
    // escaping can make one byte six characters.
    const maxLineBytes = Math.max(
      DEFAULT_MAX_LINE_BYTES,
      12 * run.sandbox.outputBytes + 6 * run.sandbox.patchBytes + 64 * 1024,
    );
    const audit = createAudit({ model: profile.model, maxLineBytes });
    let fatal: AuditFinding | null = null;
    const onLine = (line: string) => {
      if (fatal) return;
      const finding = audit.line(line);
      if (finding?.fatal) {
        fatal = finding;
        killGroup(proc);
      }
    };
    splitLines(proc.stdout!, maxLineBytes, onLine, () => {
      fatal ??= {
        fatal: true,
        category: 'oversized',
        detail: `a line longer than ${maxLineBytes} bytes`,
      };
      killGroup(proc);
    });
    const onStop = () => killGroup(proc);
    run.signal.addEventListener('abort', onStop, { once: true });
    deadline.signal.addEventListener('abort', onStop, { once: true });
    const timer = setTimeout(onStop, Math.max(1, deadline.remainingMs()));
    let code: number | null;
    try {
      code = await spawned.exited;
    } finally {
      clearTimeout(timer);
      run.signal.removeEventListener('abort', onStop);
      deadline.signal.removeEventListener('abort', onStop);
    }
    const summary = audit.summary();
    transcript.add({
      kind: 'codex',
      exitCode: code,
      summary,
      warnings: audit.warnings(),
      stderr: stderr.text(),
    });
    const halted = stopped();
    if (halted) return halted;
    if (overLimit) {
      return {
        reason: 'tool_call_limit',
        detail: `the model made more than ${profile.maxToolCalls} tool calls`,
      };
    }
    const finding: AuditFinding | null = fatal ?? audit.end();
    if (finding) {
      const provider = ['turn_failed', 'provider_error', 'stream_error'].includes(finding.category);
      return {
        reason: provider ? 'provider_error' : 'protocol_error',
        detail: `codex audit: ${finding.category}: ${finding.detail}`,
      };
    }
    if (code !== 0) {
      return {
        reason: 'protocol_error',
        detail: `codex exited ${String(code)}: ${stderr.text().trim().slice(-300)}`,
      };
    }
    const usage = summary.usage ?? {};
    const tokens = (usage['input_tokens'] ?? 0) + (usage['output_tokens'] ?? 0);
    if (tokens > profile.maxTokens) {
      return {
        reason: 'token_limit',
        detail: `the model used ${tokens} tokens; the profile allows ${profile.maxTokens}`,
      };
    }
    return { reason: 'done', detail: 'codex finished its turn' };
  } catch (error) {
    const halted = stopped();
    if (halted) return halted;
    return { reason: 'protocol_error', detail: `codex could not run: ${describeError(error)}` };
  } finally {
    await server?.close().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
}
