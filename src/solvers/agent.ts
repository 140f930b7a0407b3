// The agent adapter: a CLI agent (src/agents/) run in the solver's sandbox on the work tree,
// its only route to a model one metering proxy per solve (src/proxy/) on the host.
//
// The order matters for what the container can see: the proxy starts first, on a socket in a
// fresh host folder of its own; the sandbox is created with that folder bind-mounted
// read-only (the profile's one bind mount, checked to hold the socket alone); the agent runs
// under the loopback forwarder with the run-scoped token in the variable its definition names.
// The provider's key and address stay in this process: the container gets the token, a
// loopback URL and the socket.
//
// How the solve ends, decided here rather than by the agent's word: a proxy stop first (a
// limit passed: budget_exceeded; the deadline: deadline), then a cancel, then the agent's
// outcome class (completed: done; timed_out: deadline; crashed; output_flood). Once the proxy
// stops the solve the agent gets refusals; it is given STOP_GRACE_MS to exit by itself, then
// killed, so that an agent that retries for ever does not hold the solve to its deadline.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentDefinition } from '../agents/definition.js';
import type { AgentLog } from '../agents/logs.js';
import { runAgent, startAgentSandbox, type AgentRunResult } from '../agents/run.js';
import type { Logger } from '../logger.js';
import type { ProxyLimits, SharedCost } from '../proxy/budget.js';
import { SOCKET_NAME } from '../proxy/options.js';
import { scrubText } from '../proxy/scrub.js';
import { startModelProxy } from '../proxy/server.js';
import type { Trajectory } from '../proxy/trajectory.js';
import type { DockerClient } from '../sandbox/docker.js';
import type { Owner } from '../sandbox/labels.js';
import type { Limits } from '../sandbox/profile.js';
import type { History, TemplateStore } from '../sandbox/template.js';
import type { WorkspaceContainer } from '../sandbox/workspace-start.js';
import type { Deadline } from './deadline.js';
import type { SolveEnd, Transcript } from './transcript.js';
import type { SolveMeter, TokenPrices } from './usage.js';

/** Where the proxy's socket folder is mounted in the sandbox. */
export const PROXY_MOUNT = '/run/proctor';
/** The forwarder's port inside the sandbox (its own network namespace: nothing else there). */
export const FORWARDER_PORT = 8787;
/** How long an agent may take to exit by itself once the proxy has stopped the solve. */
export const STOP_GRACE_MS = 5_000;
/** The tail of the agent's stdout and stderr kept in the transcript. */
const OUTPUT_TAIL_CHARS = 4_000;

export interface AgentSolveRun {
  docker: DockerClient;
  definition: AgentDefinition;
  /** The agent layer's image id (src/agents/layer.ts). */
  image: string;
  owner: Owner;
  repoPath: string;
  baseCommit: string;
  history?: History;
  /** SWE-bench's layout: a setup commit on baseCommit, untracked build output (template.ts). */
  setupCommit?: boolean;
  uid: number;
  gid: number;
  limits: Limits;
  runtime?: string;
  templates?: TemplateStore;
  prompt: string;
  /** The provider, on the host: its base URL (protocol paths are appended), key and model. */
  upstream: { baseUrl: string; apiKey: string; model: string };
  /** The solve's limits, enforced by the proxy. */
  proxyLimits: ProxyLimits;
  /** The batch's cost cap, shared with its other solves in this process. */
  sharedCost?: SharedCost;
  prices: TokenPrices | null;
  meter: SolveMeter;
  deadline: Deadline;
  /** The job's cancel. */
  signal: AbortSignal;
  transcript: Transcript;
  /** Provider keys: refused in the agent's environment, masked in what is recorded. */
  secrets: readonly string[];
  logger?: Logger;
  /** Told of the started sandbox, before the agent runs (the caller captures from it). */
  onStarted?: (started: WorkspaceContainer) => void;
}

export interface AgentSolve {
  end: SolveEnd;
  /** The sandbox the agent ran in, still there (its work tree is captured next). */
  started: WorkspaceContainer;
  trajectory: Trajectory;
  run: AgentRunResult;
  /** The files the definition's `logs` name, as read back (bounded), the token masked. */
  logs: AgentLog[];
}

const tail = (text: string, secrets: readonly string[]): string =>
  scrubText(text.length > OUTPUT_TAIL_CHARS ? `…${text.slice(-OUTPUT_TAIL_CHARS)}` : text, secrets);

/** The solve's end from the proxy's stop, the cancel, and the agent's outcome, in that order. */
export function agentSolveEnd(
  stop: ReturnType<Awaited<ReturnType<typeof startModelProxy>>['stop']>,
  cancelled: boolean,
  run: AgentRunResult,
): SolveEnd {
  if (stop?.reason === 'BUDGET_EXCEEDED') return { reason: 'budget_exceeded', detail: stop.detail };
  if (stop?.reason === 'TIMEOUT') return { reason: 'deadline', detail: stop.detail };
  if (cancelled) return { reason: 'cancelled', detail: 'the job was cancelled' };
  const { outcome } = run;
  switch (outcome.kind) {
    case 'completed':
      return { reason: 'done', detail: 'the agent finished' };
    case 'timed_out':
      return { reason: 'deadline', detail: 'the solver deadline (solver_seconds) was reached' };
    case 'output_flood':
      return {
        reason: 'output_flood',
        detail: `the agent printed more than ${outcome.bytes} bytes and was killed`,
      };
    case 'crashed': {
      const last = run.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 200) ?? '';
      const why = outcome.oomKilled
        ? 'killed by the memory limit'
        : `exit ${String(outcome.exitCode)}`;
      return { reason: 'agent_crashed', detail: `the agent ${why}${last ? `: ${last}` : ''}` };
    }
    case 'cancelled':
      // The caller's signal aborted with neither a stop nor a cancel: the deadline's own.
      return { reason: 'deadline', detail: 'the solver deadline (solver_seconds) was reached' };
  }
}

export async function runAgentSolve(run: AgentSolveRun): Promise<AgentSolve> {
  const { definition, deadline, transcript } = run;
  const { protocol } = definition;
  const socketDir = await mkdtemp(join(tmpdir(), 'proctor-proxy-'));
  const stopped = new AbortController();
  let grace: NodeJS.Timeout | undefined;
  try {
    const proxy = await startModelProxy({
      socketDir,
      upstream: run.upstream,
      protocols: [protocol],
      limits: run.proxyLimits,
      ...(run.sharedCost ? { sharedCost: run.sharedCost } : {}),
      prices: run.prices,
      deadline,
      meter: run.meter,
      ...(run.logger ? { logger: run.logger } : {}),
      onStop: () => {
        grace = setTimeout(() => stopped.abort(), STOP_GRACE_MS);
        grace.unref();
      },
    });
    try {
      const started = await startAgentSandbox(run.docker, {
        owner: run.owner,
        image: run.image,
        repoPath: run.repoPath,
        baseCommit: run.baseCommit,
        ...(run.history ? { history: run.history } : {}),
        ...(run.setupCommit ? { setupCommit: true } : {}),
        uid: run.uid,
        gid: run.gid,
        limits: run.limits,
        ...(run.runtime ? { runtime: run.runtime } : {}),
        ...(run.templates ? { templates: run.templates } : {}),
        proxySocket: { dir: socketDir, target: PROXY_MOUNT },
        signal: run.signal,
      });
      run.onStarted?.(started);
      transcript.add({
        kind: 'agent_start',
        agent: definition.name,
        protocol,
        model: run.upstream.model,
      });
      const result = await runAgent(run.docker, started.container.id, {
        definition,
        prompt: run.prompt,
        baseUrl: `http://127.0.0.1:${FORWARDER_PORT}`,
        token: proxy.token,
        model: run.upstream.model,
        workdir: run.repoPath,
        uid: run.uid,
        gid: run.gid,
        timeoutMs: Math.max(1, Math.floor(deadline.remainingMs())),
        signal: AbortSignal.any([run.signal, deadline.signal, stopped.signal]),
        forwarder: { port: FORWARDER_PORT, socketPath: `${PROXY_MOUNT}/${SOCKET_NAME}` },
        secrets: run.secrets,
      });
      const secrets = [...run.secrets, proxy.token];
      const end = agentSolveEnd(proxy.stop(), run.signal.aborted, result);
      transcript.add({
        kind: 'agent_end',
        agent: definition.name,
        outcome: result.outcome,
        exitCode: result.exitCode,
        durationMs: result.durationMs,
        stdoutBytes: result.stdoutBytes,
        stderrBytes: result.stderrBytes,
        stdout: tail(result.stdout, secrets),
        stderr: tail(result.stderr, secrets),
        logs: result.logs.map((log) => log.path),
      });
      const logs = result.logs.map((log) => ({ ...log, text: scrubText(log.text, secrets) }));
      return { end, started, trajectory: proxy.trajectory(), run: result, logs };
    } finally {
      await proxy.close();
    }
  } finally {
    if (grace) clearTimeout(grace);
    await rm(socketDir, { recursive: true, force: true });
  }
}
