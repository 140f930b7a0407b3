// The codex adapter: the pinned Codex CLI (`@openai/codex`, exactly CODEX_VERSION) run
// host-side, offline but for the profile's model endpoint, with one run-scoped MCP server as
// its only way into the checkout. Following ../shared/research/codex-offline.md:
//
// - a fresh private root (0700) per run holds CODEX_HOME (= HOME), an empty read-only working
//   directory and the MCP socket; it is deleted with everything in it (auth.json included)
//   when the run ends;
// - codex reaches the model only through a model proxy of the run's own (its socket in the
//   private root, a loopback route to it: src/proxy/host-route.ts), logged in with that
//   proxy's run token through `codex login --with-api-key` on stdin: the provider's key never
//   reaches codex, its argv, its environment or its auth.json; codex itself runs with a clean environment (PATH, HOME, CODEX_HOME and the
//   two variables the MCP bridge needs);
// - the command line (argv.ts) disables every built-in tool and feature the seed lists, ignores
//   user config and rules, makes config strict and turns retries off; a model catalog entry for
//   the profile's model (catalog.ts) stops the metadata notice at its source;
// - exactly one MCP server, `proctor`, required and pre-approved: the stdio bridge
//   (bridge.ts) to an ephemeral Unix socket served here, which checks a capability token
//   passed in the environment (never argv) and publishes only the three tools;
// - the JSONL on stdout is audited line by line, fail-closed (audit.ts); the first fatal line
//   kills the process group at once (process.ts), as do cancel and the deadline. Preflight
//   (version, system config, catalog, login) and the run spend the same deadline.
// - the proxy meters each model answer as it arrives (a run killed mid-turn still has its
//   tokens counted), and every tool call goes to the solve's meter; with a batch's cost cap,
//   the proxy also admits each request by the batch's spend and draws each answer's cost on
//   it, and its stop kills codex at once (`budget_exceeded`).
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeError } from '../../errors.js';
import {
  startHostRoute,
  startModelProxy,
  type HostRoute,
  type ModelProxy,
  type ProxyStop,
  type SharedCost,
} from '../../proxy/index.js';
import { createOutputBuffer } from '../../sandbox/index.js';
import type { Deadline } from '../deadline.js';
import type { ToolSandbox } from '../tools.js';
import { solveStopped, type SolveEnd, type Transcript } from '../transcript.js';
import type { SolveMeter, TokenPrices } from '../usage.js';
import { codexExecArgs } from './argv.js';
import { createAudit, DEFAULT_MAX_LINE_BYTES, type AuditFinding } from './audit.js';
import { CODEX_VERSION, bridgeCommand, codexBinary } from './binary.js';
import type { ModelCatalog } from './catalog.js';
import { startMcpSocketServer, type McpSocketServer } from './mcp-server.js';
import { STDERR_BYTES, killGroup, preflight, splitLines, start, type Spawned } from './process.js';

export { CODEX_VERSION, codexBinary } from './binary.js';

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
  /** Counts each answer's tokens (the run's proxy meters them) and the tool calls run. */
  meter: SolveMeter;
  /** The batch's cost cap, with the profile's prices: the run's proxy then holds codex to it. */
  spend?: { shared: SharedCost; prices: TokenPrices };
}

/** What a codex run uses beyond its own request: owned by the worker pool's runtime. */
export interface CodexDeps {
  catalog: ModelCatalog;
}

/** Configuration files codex would read whatever its flags say; none may exist. */
const SYSTEM_CONFIG = [
  '/etc/codex/config.toml',
  '/etc/codex/managed_config.toml',
  '/etc/codex/requirements.toml',
];

const PATH = '/usr/local/bin:/usr/bin:/bin';

/** The run's private folders, all under one 0700 root removed when the run ends. */
interface RunDirs {
  root: string;
  home: string;
  cwd: string;
  mcp: string;
  /** The model proxy's socket folder, when the run has one. */
  proxy: string;
}

async function makeDirs(root: string): Promise<RunDirs> {
  const dirs = {
    root,
    home: join(root, 'home'),
    cwd: join(root, 'cwd'),
    mcp: join(root, 'mcp'),
    proxy: join(root, 'proxy'),
  };
  await mkdir(dirs.home, { mode: 0o700 });
  await mkdir(dirs.mcp, { mode: 0o700 });
  await mkdir(dirs.cwd, { mode: 0o700 });
  await chmod(dirs.cwd, 0o555);
  return dirs;
}

/**
 * Checks the version, writes the model catalog and logs in (the key on stdin): the catalog
 * file's path, or how the run ends when any of it fails or the run is stopped meanwhile.
 */
async function prepare(
  run: CodexRun,
  deps: CodexDeps,
  dirs: RunDirs,
  env: Record<string, string>,
  loginKey: string,
): Promise<{ catalogPath: string } | SolveEnd> {
  const { profile, deadline } = run;
  const binary = codexBinary();
  const version = await preflight(binary, ['--version'], env, dirs.cwd, deadline);
  const early = solveStopped(run.signal, deadline);
  if (early) return early;
  if (version.stdout.trim() !== `codex-cli ${CODEX_VERSION}`) {
    return {
      reason: 'protocol_error',
      detail: `codex ${version.stdout.trim() || '(no version)'} is not the pinned ${CODEX_VERSION}`,
    };
  }
  const source = { binary, env, cwd: dirs.cwd, deadline };
  const entry = await deps.catalog.entryFor(profile.model, source);
  const catalogPath = join(dirs.home, 'catalog.json');
  await writeFile(catalogPath, JSON.stringify({ models: [entry] }), { mode: 0o600 });

  const login = await preflight(
    binary,
    ['login', '--with-api-key'],
    env,
    dirs.cwd,
    deadline,
    `${loginKey}\n`,
  );
  const late = solveStopped(run.signal, deadline);
  if (late) return late;
  if (login.code !== 0) {
    return {
      reason: 'protocol_error',
      detail: `codex login failed: ${login.stderr.trim().slice(-300)}`,
    };
  }
  return { catalogPath };
}

/** How `codex exec` ended, as far as the run's verdict needs it. */
interface ExecOutcome {
  code: number | null;
  /** The first fatal audit finding (or an oversized line), which killed codex. */
  fatal: AuditFinding | null;
  audit: ReturnType<typeof createAudit>;
  stderr: string;
}

/**
 * Runs `codex exec` on the prompt until it exits, auditing its stdout as it streams; the
 * process group is killed on the first fatal line, a cancel or the deadline.
 */
async function exec(run: CodexRun, proc: Spawned, maxLineBytes: number): Promise<ExecOutcome> {
  const { deadline } = run;
  const child = proc.child;
  const stderr = createOutputBuffer(STDERR_BYTES);
  child.stderr?.on('data', (c: Buffer) => stderr.write(c));
  child.stdin?.end(run.prompt);
  const audit = createAudit({ model: run.profile.model, maxLineBytes });
  let fatal: AuditFinding | null = null;
  const onLine = (line: string) => {
    if (fatal) return;
    const finding = audit.line(line);
    if (finding?.fatal) {
      fatal = finding;
      killGroup(child);
    }
  };
  splitLines(child.stdout!, maxLineBytes, onLine, () => {
    fatal ??= {
      fatal: true,
      category: 'oversized',
      detail: `a line longer than ${maxLineBytes} bytes`,
    };
    killGroup(child);
  });
  const onStop = () => killGroup(child);
  run.signal.addEventListener('abort', onStop, { once: true });
  deadline.signal.addEventListener('abort', onStop, { once: true });
  const timer = setTimeout(onStop, Math.max(1, deadline.remainingMs()));
  try {
    const code = await proc.exited;
    return { code, fatal, audit, stderr: stderr.text() };
  } finally {
    clearTimeout(timer);
    run.signal.removeEventListener('abort', onStop);
    deadline.signal.removeEventListener('abort', onStop);
  }
}

/** How the run ends, from what codex did; the stopped and over-limit cases come first. */
function judge(
  run: CodexRun,
  outcome: ExecOutcome,
  overLimit: boolean,
  capped: ProxyStop | null,
): SolveEnd {
  const { profile } = run;
  const halted = solveStopped(run.signal, run.deadline);
  if (halted) return halted;
  if (capped) return { reason: 'budget_exceeded', detail: capped.detail };
  if (overLimit) {
    return {
      reason: 'tool_call_limit',
      detail: `the model made more than ${profile.maxToolCalls} tool calls`,
    };
  }
  const finding = outcome.fatal ?? outcome.audit.end();
  if (finding) {
    const provider = ['turn_failed', 'provider_error', 'stream_error'].includes(finding.category);
    return {
      reason: provider ? 'provider_error' : 'protocol_error',
      detail: `codex audit: ${finding.category}: ${finding.detail}`,
    };
  }
  if (outcome.code !== 0) {
    return {
      reason: 'protocol_error',
      detail: `codex exited ${String(outcome.code)}: ${outcome.stderr.trim().slice(-300)}`,
    };
  }
  const usage = outcome.audit.summary().usage ?? {};
  const tokens = (usage['input_tokens'] ?? 0) + (usage['output_tokens'] ?? 0);
  if (tokens > profile.maxTokens) {
    return {
      reason: 'token_limit',
      detail: `the model used ${tokens} tokens; the profile allows ${profile.maxTokens}`,
    };
  }
  return { reason: 'done', detail: 'codex finished its turn' };
}

export async function runCodex(run: CodexRun, deps: CodexDeps): Promise<SolveEnd> {
  const { profile, deadline, transcript } = run;
  const present = SYSTEM_CONFIG.filter((file) => existsSync(file));
  if (present.length > 0) {
    return {
      reason: 'protocol_error',
      detail: `system codex configuration present (${present.join(', ')}); refusing to run codex`,
    };
  }
  const root = await mkdtemp(join(tmpdir(), 'proctor-codex-'));
  await chmod(root, 0o700);
  let server: McpSocketServer | undefined;
  let proxy: ModelProxy | undefined;
  let route: HostRoute | undefined;
  try {
    const dirs = await makeDirs(root);
    const env = { PATH, HOME: dirs.home, CODEX_HOME: dirs.home };
    // Set once codex runs; a tool call over the limit, or the batch's cap, kills it.
    const running: { proc?: Spawned } = {};
    let capped: ProxyStop | null = null;
    // Codex always reaches the model through a proxy of the run's own: it is logged in with
    // the proxy's run token, so the provider's key never reaches codex or its auth.json.
    proxy = await startModelProxy({
      socketDir: dirs.proxy,
      upstream: { baseUrl: profile.baseUrl, apiKey: profile.apiKey },
      protocols: ['openai-responses'],
      ...(run.spend ? { sharedCost: run.spend.shared, prices: run.spend.prices } : {}),
      // The proxy meters each answer as it arrives, so turn.completed is not counted again.
      meter: run.meter,
      deadline,
      onStop: (stop) => {
        if (stop.reason !== 'BUDGET_EXCEEDED') return;
        capped = stop;
        if (running.proc) killGroup(running.proc.child);
      },
    });
    route = await startHostRoute(proxy.socketPath);
    const prepared = await prepare(run, deps, dirs, env, proxy.token);
    if ('reason' in prepared) return prepared;

    let toolCalls = 0;
    let overLimit = false;
    server = await startMcpSocketServer({
      dir: dirs.mcp,
      sandbox: run.sandbox,
      deadline,
      signal: AbortSignal.any([run.signal, deadline.signal]),
      onCall: (event) => {
        toolCalls++;
        run.meter.toolCall();
        transcript.add({ kind: 'tool', name: event.tool, ok: event.ok, summary: event.summary });
        if (toolCalls > profile.maxToolCalls && running.proc) {
          overLimit = true;
          killGroup(running.proc.child);
        }
      },
    });
    const args = codexExecArgs({
      cwd: dirs.cwd,
      model: profile.model,
      baseUrl: route.baseUrl,
      catalogPath: prepared.catalogPath,
      bridge: bridgeCommand(),
      remainingMs: deadline.remainingMs(),
    });
    const bridgeEnv = { PROCTOR_MCP_SOCKET: server.socketPath, PROCTOR_MCP_TOKEN: server.token };
    running.proc = start(codexBinary(), args, { ...env, ...bridgeEnv }, dirs.cwd);
    // A tool-call line carries the tool's result: up to output_bytes per stream, and JSON
    // escaping can make one byte six characters.
    const maxLineBytes = Math.max(
      DEFAULT_MAX_LINE_BYTES,
      12 * run.sandbox.outputBytes + 6 * run.sandbox.patchBytes + 64 * 1024,
    );
    const outcome = await exec(run, running.proc, maxLineBytes);
    transcript.add({
      kind: 'codex',
      exitCode: outcome.code,
      summary: outcome.audit.summary(),
      warnings: outcome.audit.warnings(),
      stderr: outcome.stderr,
    });
    return judge(run, outcome, overLimit, capped);
  } catch (error) {
    const halted = solveStopped(run.signal, deadline);
    if (halted) return halted;
    return { reason: 'protocol_error', detail: `codex could not run: ${describeError(error)}` };
  } finally {
    await server?.close().catch(() => undefined);
    await route?.close();
    await proxy?.close().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
}
