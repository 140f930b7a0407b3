// The command line of `codex exec`, built from plain values so that every flag can be tested
// without running codex. Following ../shared/research/codex-offline.md: user config and rules
// are ignored and config is strict; the sandbox is read-only in an empty working directory;
// every built-in tool and feature the seed lists is disabled; retries are off and the stream
// idle timeout is the deadline; exactly one MCP server, required and pre-approved, limited to
// Proctor's three tools. Credentials never appear here: the proxy's run token goes through `codex login` on
// stdin and the MCP token through the environment (`env_vars` names the variables only), since
// argv is readable by every process on the host (/proc/<pid>/cmdline).
import { TOOL_NAMES } from '../tools.js';
import { MCP_SERVER_NAME } from './audit.js';

/** The provider id codex is pointed at (a `model_providers` entry, not a built-in one). */
export const PROVIDER_ID = 'proctor';

/** The environment variables the bridge reads; codex forwards exactly these to it. */
export const BRIDGE_ENV_VARS = ['PROCTOR_MCP_SOCKET', 'PROCTOR_MCP_TOKEN'] as const;

/** Codex features that would give the model another way out of the three tools. */
export const DISABLED_FEATURES = [
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
] as const;

export interface ExecArgsInput {
  /** The empty, read-only working directory. */
  cwd: string;
  model: string;
  /** The profile's Responses endpoint. */
  baseUrl: string;
  /** The model catalog file written for this run. */
  catalogPath: string;
  /** How codex starts the MCP bridge. */
  bridge: { command: string; args: readonly string[] };
  /** What is left of the solver deadline when codex starts, ms. */
  remainingMs: number;
}

/** A TOML value: JSON strings and arrays of strings are valid TOML. */
const toml = (value: unknown) => JSON.stringify(value);

/** The argv of `codex exec` after the binary; the prompt is read from stdin (`-`). */
export function codexExecArgs(input: ExecArgsInput): string[] {
  const seconds = Math.max(1, Math.floor(input.remainingMs / 1000));
  const idleMs = Math.max(1000, Math.floor(input.remainingMs));
  const provider = `{name=${toml(PROVIDER_ID)}, base_url=${toml(input.baseUrl)}, wire_api="responses", requires_openai_auth=true, request_max_retries=0, stream_max_retries=0, stream_idle_timeout_ms=${idleMs}}`;
  const mcp = `mcp_servers.${MCP_SERVER_NAME}`;
  const config = [
    `model_provider=${toml(PROVIDER_ID)}`,
    `model_providers.${PROVIDER_ID}=${provider}`,
    `model_catalog_json=${toml(input.catalogPath)}`,
  ];
  const lockdown = [
    'web_search="disabled"',
    'tools.experimental_request_user_input.enabled=false',
    'tools.update_plan.enabled=false',
    'skills.bundled.enabled=false',
    'skills.include_instructions=false',
    'features.skip_host_skill_discovery=true',
    'include_apps_instructions=false',
    'project_doc_max_bytes=0',
    'suppress_unstable_features_warning=true',
  ];
  const server = [
    `${mcp}.command=${toml(input.bridge.command)}`,
    `${mcp}.args=${toml(input.bridge.args)}`,
    `${mcp}.env_vars=${toml(BRIDGE_ENV_VARS)}`,
    `${mcp}.required=true`,
    `${mcp}.default_tools_approval_mode="approve"`,
    `${mcp}.enabled_tools=${toml([...TOOL_NAMES])}`,
    `${mcp}.startup_timeout_sec=${Math.min(30, seconds)}`,
    `${mcp}.tool_timeout_sec=${seconds}`,
  ];
  const c = (settings: string[]) => settings.flatMap((setting) => ['-c', setting]);
  return [
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
    input.cwd,
    '-m',
    input.model,
    ...c(config),
    ...DISABLED_FEATURES.flatMap((feature) => ['--disable', feature]),
    ...c(lockdown),
    ...c(server),
    '-',
  ];
}
