// Running an agent: its layer's solver container (the isolation profile: no network, a
// read-only root with the work tree writable, no capabilities, a non-root uid, pids, memory and
// CPU limits, a tmpfs HOME), its settings files and prompt written into HOME, then its command
// in the work tree as the task's uid, with one deadline and its output bounded, and what it
// logged read back for the solve's artifacts.
//
// How it ended is one of a few classes, decided by Proctor rather than by the agent's word:
//   completed     exit status 0
//   crashed       any other exit status (with it, and whether the memory limit killed it)
//   timed_out     the deadline passed; every process of the command was killed
//   output_flood  stdout and stderr together passed `floodBytes`; killed at once, so that an
//                 agent printing without end costs neither the host's memory nor the deadline
//   cancelled     the caller's signal
// A crash, a hang and a flood are measured outcomes, never errors: only the machinery (Docker)
// throws.
//
// The agent's base URL and token come from the proxy (src/proxy/); a definition holds only
// placeholders for them. With no proxy, any URL will do: an agent that cannot reach a model
// fails by itself, and the deadline bounds one that retries for ever.
import type { ExecResult } from '../sandbox/exec.js';
import { execInContainer } from '../sandbox/exec.js';
import type { DockerClient } from '../sandbox/docker.js';
import type { Owner } from '../sandbox/labels.js';
import {
  checkAgentEnv,
  workTmpfs,
  type Limits,
  type ProxySocketMount,
  type VolumeMount,
} from '../sandbox/profile.js';
import { forwarderArgv } from '../proxy/forwarder.js';
import type { History, TemplateStore } from '../sandbox/template.js';
import {
  startWithWorkspace,
  type WorkspaceContainer,
  type WorkspaceMedium,
} from '../sandbox/workspace-start.js';
import type { AgentDefinition } from './definition.js';
import { agentBinDir } from './layer.js';
import { AGENT_HOME, NODE_ROOT } from './layer-script.js';
import { captureAgentLogs, type AgentLog } from './logs.js';
import { fill, type PlaceholderValues } from './placeholders.js';
import { ProctorError } from '../errors.js';

/** Defaults of a run's bounds, each overridable per run. */
export const AGENT_DEFAULTS = {
  /** Bytes kept of each of stdout and stderr (head and tail). */
  outputBytes: 1024 * 1024,
  /** Bytes of stdout and stderr together past which the agent is killed as a flood. */
  floodBytes: 64 * 1024 * 1024,
  /** The size of the agent's HOME (a tmpfs; its pages count against the memory limit). */
  homeMb: 256,
  /** The time allowed to write each settings file. */
  setupMs: 30_000,
} as const;

/** Where the task's description is written when the definition takes it as a file. */
export const PROMPT_FILE = `${AGENT_HOME}/.proctor/prompt.md`;
const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface AgentSandboxSpec {
  owner: Owner;
  /** The agent layer's daemon-local image id. */
  image: string;
  repoPath: string;
  baseCommit: string;
  uid: number;
  gid: number;
  limits?: Limits;
  homeMb?: number;
  /** The work tree's history (workspace-start.ts); default `full`. */
  history?: History;
  /** SWE-bench's layout: a setup commit on baseCommit, untracked build output (template.ts). */
  setupCommit?: boolean;
  medium?: WorkspaceMedium;
  runtime?: string;
  templates?: TemplateStore;
  /** More harness volumes. */
  mounts?: VolumeMount[];
  /** The model proxy's socket folder, mounted read-only (the profile's one bind mount). */
  proxySocket?: ProxySocketMount;
  signal?: AbortSignal;
}

/** Starts the solver container of an agent layer with a fresh work tree and a tmpfs HOME. */
export function startAgentSandbox(
  docker: DockerClient,
  spec: AgentSandboxSpec,
): Promise<WorkspaceContainer> {
  const memoryMb = spec.limits?.memoryMb ?? 2048;
  return startWithWorkspace(docker, {
    owner: spec.owner,
    role: 'solver',
    image: spec.image,
    repoPath: spec.repoPath,
    baseCommit: spec.baseCommit,
    uid: spec.uid,
    gid: spec.gid,
    ...(spec.history ? { history: spec.history } : {}),
    ...(spec.setupCommit ? { setupCommit: true } : {}),
    ...(spec.medium ? { medium: spec.medium } : {}),
    ...(spec.runtime ? { runtime: spec.runtime } : {}),
    ...(spec.templates ? { templates: spec.templates } : {}),
    ...(spec.signal ? { signal: spec.signal } : {}),
    container: {
      workdir: spec.repoPath,
      tmpfs: [
        workTmpfs(memoryMb),
        { path: AGENT_HOME, sizeMb: spec.homeMb ?? AGENT_DEFAULTS.homeMb, exec: true },
      ],
      ...(spec.limits ? { limits: spec.limits } : {}),
      ...(spec.mounts ? { mounts: spec.mounts } : {}),
      ...(spec.proxySocket ? { proxySocket: spec.proxySocket } : {}),
    },
  });
}

export interface AgentRunSpec {
  definition: AgentDefinition;
  /** The task's description. */
  prompt: string;
  /** The model proxy's forwarder, `http://127.0.0.1:PORT`. */
  baseUrl: string;
  /** The run-scoped token; never a provider's key. */
  token: string;
  model: string;
  /** The work tree (the container's workdir). */
  workdir: string;
  uid: number;
  gid: number;
  timeoutMs: number;
  outputBytes?: number;
  floodBytes?: number;
  /** Bytes read of each log file; default 1 MiB (logs.ts). */
  logBytes?: number;
  signal?: AbortSignal;
  /** Runs `version_command` instead of `command` (no prompt, no files): a smoke check. */
  versionOnly?: boolean;
  /**
   * Runs the command under the loopback forwarder (src/proxy/forwarder.ts, on the layer's own
   * Node) listening on `port` and piping to the proxy's socket at `socketPath` in the
   * container: the agent's `{{base_url}}` is then `http://127.0.0.1:PORT`.
   */
  forwarder?: { port: number; socketPath: string };
  /** Provider keys: refused as any variable's value (the profile's checkAgentEnv). */
  secrets?: readonly string[];
}

export type AgentOutcome =
  | { kind: 'completed' }
  | { kind: 'crashed'; exitCode: number | null; oomKilled: boolean }
  | { kind: 'timed_out' }
  | { kind: 'output_flood'; bytes: number }
  | { kind: 'cancelled' };

export interface AgentRunResult {
  outcome: AgentOutcome;
  exitCode: number | null;
  durationMs: number;
  stdout: string;
  stderr: string;
  stdoutBytes: number;
  stderrBytes: number;
  truncated: boolean;
  logs: AgentLog[];
}

/** The class of a finished exec: the caller's own kills first, then the exit status. */
export function classify(result: ExecResult, flooded: number | undefined): AgentOutcome {
  if (flooded !== undefined) return { kind: 'output_flood', bytes: flooded };
  if (result.aborted) return { kind: 'cancelled' };
  if (result.timedOut) return { kind: 'timed_out' };
  if (result.exitCode === 0) return { kind: 'completed' };
  return { kind: 'crashed', exitCode: result.exitCode, oomKilled: result.oomKilled };
}

/** The PATH the container has from its image, which the agent's bin folder goes before. */
async function imagePath(docker: DockerClient, containerId: string): Promise<string> {
  const info = await docker.getContainer(containerId).inspect();
  const entry = (info.Config.Env ?? []).find((e) => e.startsWith('PATH='));
  return entry?.slice('PATH='.length) || FALLBACK_PATH;
}

/** Writes one file under HOME as the sandbox user, its folders made on the way. */
async function writeHomeFile(
  docker: DockerClient,
  containerId: string,
  spec: AgentRunSpec,
  path: string,
  content: string,
): Promise<void> {
  const result = await execInContainer(docker, containerId, {
    cmd: ['sh', '-c', 'umask 077 && mkdir -p -- "${1%/*}" && cat > "$1"', 'proctor-write', path],
    user: `${spec.uid}:${spec.gid}`,
    workdir: AGENT_HOME,
    env: { HOME: AGENT_HOME },
    stdin: Buffer.from(content),
    timeoutMs: AGENT_DEFAULTS.setupMs,
    outputBytes: 4096,
    ...(spec.signal ? { signal: spec.signal } : {}),
  });
  if (result.exitCode !== 0) {
    const why = result.timedOut
      ? 'timed out'
      : result.stderr.trim().split('\n').slice(-1)[0] || `exit ${String(result.exitCode)}`;
    throw new ProctorError(
      'SANDBOX_INVALID',
      `agent ${spec.definition.name}: cannot write ${path}: ${why}`,
    );
  }
}

/** Runs the agent once in a started agent sandbox (startAgentSandbox). */
export async function runAgent(
  docker: DockerClient,
  containerId: string,
  spec: AgentRunSpec,
): Promise<AgentRunResult> {
  const { definition } = spec;
  const values: PlaceholderValues = {
    base_url: spec.baseUrl,
    token: spec.token,
    model: spec.model,
    prompt: spec.prompt,
    prompt_file: PROMPT_FILE,
    home: AGENT_HOME,
    workdir: spec.workdir,
  };
  const command = spec.versionOnly
    ? (definition.versionCommand ?? [definition.command[0] ?? 'true', '--version'])
    : definition.command;
  if (!spec.versionOnly) {
    for (const file of definition.files) {
      await writeHomeFile(
        docker,
        containerId,
        spec,
        `${AGENT_HOME}/${file.path}`,
        fill(file.content, values),
      );
    }
    if (definition.prompt === 'file') {
      await writeHomeFile(docker, containerId, spec, PROMPT_FILE, spec.prompt);
    }
  }
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(definition.env)) env[name] = fill(value, values);
  env['HOME'] = AGENT_HOME;
  env['TMPDIR'] = '/tmp';
  env['PATH'] = `${agentBinDir(definition.name)}:${await imagePath(docker, containerId)}`;
  checkAgentEnv(env, spec.token, spec.secrets);
  const argv = command.map((arg) => fill(arg, values));
  const cmd = spec.forwarder
    ? forwarderArgv({
        runtime: 'node',
        interpreter: `${NODE_ROOT}/bin/node`,
        port: spec.forwarder.port,
        socketPath: spec.forwarder.socketPath,
        command: argv,
      })
    : argv;

  const floodBytes = spec.floodBytes ?? AGENT_DEFAULTS.floodBytes;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  if (spec.signal?.aborted) stop.abort();
  let flooded: number | undefined;
  try {
    const result = await execInContainer(docker, containerId, {
      cmd,
      user: `${spec.uid}:${spec.gid}`,
      workdir: spec.workdir,
      env,
      timeoutMs: spec.timeoutMs,
      outputBytes: spec.outputBytes ?? AGENT_DEFAULTS.outputBytes,
      signal: stop.signal,
      ...(definition.prompt === 'stdin' && !spec.versionOnly
        ? { stdin: Buffer.from(spec.prompt) }
        : {}),
      onOutput: (bytes) => {
        if (bytes > floodBytes && flooded === undefined) {
          flooded = bytes;
          stop.abort();
        }
      },
    });
    const logs =
      spec.versionOnly || definition.logs.length === 0
        ? []
        : await captureAgentLogs(
            docker,
            containerId,
            definition.logs.map((path) => fill(path, values)),
            {
              user: `${spec.uid}:${spec.gid}`,
              ...(spec.logBytes === undefined ? {} : { fileBytes: spec.logBytes }),
            },
          );
    return {
      outcome: classify(result, flooded),
      exitCode: result.exitCode,
      durationMs: result.durationMs,
      stdout: result.stdout,
      stderr: result.stderr,
      stdoutBytes: result.stdoutBytes,
      stderrBytes: result.stderrBytes,
      truncated: result.truncated,
      logs,
    };
  } finally {
    spec.signal?.removeEventListener('abort', onAbort);
  }
}
