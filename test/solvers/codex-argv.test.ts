// The command line of `codex exec` (pure logic): every flag the research requires is there,
// every flag that would widen codex's reach is not, each `-c` value is valid TOML that means
// what Proctor meant (whatever quotes a model, URL or path holds), the one MCP server is wired
// with names only, and no credential has a way into argv.
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { TOOL_NAMES } from '../../src/solvers/index.js';
import {
  BRIDGE_ENV_VARS,
  DISABLED_FEATURES,
  codexExecArgs,
  type ExecArgsInput,
} from '../../src/solvers/codex/argv.js';

const INPUT: ExecArgsInput = {
  cwd: '/tmp/proctor-codex-abc/cwd',
  model: 'proctor-test-model',
  baseUrl: 'http://127.0.0.1:8080/v1',
  catalogPath: '/tmp/proctor-codex-abc/home/catalog.json',
  bridge: { command: '/usr/bin/node', args: ['/opt/proctor/dist/solvers/codex/bridge.js'] },
  remainingMs: 90_500,
};

/** The `-c key=value` settings, in order, each value parsed as codex parses it (TOML). */
function settings(args: string[]): Array<[string, unknown]> {
  const found: Array<[string, unknown]> = [];
  args.forEach((arg, i) => {
    if (arg !== '-c') return;
    const setting = args[i + 1] ?? '';
    const eq = setting.indexOf('=');
    expect(eq, setting).toBeGreaterThan(0);
    const value = (parse(`v = ${setting.slice(eq + 1)}`) as { v: unknown }).v;
    found.push([setting.slice(0, eq), value]);
  });
  return found;
}

const config = (args: string[]) => Object.fromEntries(settings(args));

/** The flags (words starting with `-`) that are not values of `-c`, `-C` or `-m`. */
function flags(args: string[]): string[] {
  return args.filter(
    (arg, i) => arg.startsWith('-') && !['-c', '-C', '-m'].includes(args[i - 1] ?? ''),
  );
}

describe('codexExecArgs', () => {
  it('runs exec with JSON output, ephemeral, strict, user config and rules ignored, prompt on stdin', () => {
    const args = codexExecArgs(INPUT);
    expect(args[0]).toBe('exec');
    expect(args.at(-1)).toBe('-');
    for (const flag of [
      '--json',
      '--ephemeral',
      '--ignore-user-config',
      '--ignore-rules',
      '--skip-git-repo-check',
      '--strict-config',
    ]) {
      expect(
        args.filter((a) => a === flag),
        flag,
      ).toHaveLength(1);
    }
    expect(args.join(' ')).toContain('--color never -s read-only');
  });

  it('places codex in the empty working directory with the model of the profile', () => {
    const args = codexExecArgs({ ...INPUT, cwd: '/tmp/a dir/cwd' });
    expect(args[args.indexOf('-C') + 1]).toBe('/tmp/a dir/cwd');
    expect(args[args.indexOf('-m') + 1]).toBe('proctor-test-model');
    expect(args.filter((a) => a === '-C' || a === '-m')).toHaveLength(2);
  });

  it('emits no flag that widens the sandbox, approvals, search, profiles, images or directories', () => {
    const emitted = flags(codexExecArgs(INPUT));
    const allowed = new Set([
      '--json',
      '--ephemeral',
      '--ignore-user-config',
      '--ignore-rules',
      '--skip-git-repo-check',
      '--strict-config',
      '--color',
      '-s',
      '-C',
      '-m',
      '-c',
      '--disable',
      '-',
    ]);
    expect(emitted.filter((f) => !allowed.has(f))).toEqual([]);
    const args = codexExecArgs(INPUT);
    expect(args[args.indexOf('-s') + 1]).toBe('read-only');
    expect(args.filter((a) => a === '-s')).toHaveLength(1);
    for (const widening of [
      '--dangerously-bypass-approvals-and-sandbox',
      '--full-auto',
      '--yolo',
      '--search',
      '--oss',
      '-p',
      '--profile',
      '--add-dir',
      '-i',
      '--image',
      '--enable',
      'workspace-write',
      'danger-full-access',
    ]) {
      expect(args, widening).not.toContain(widening);
    }
    const keys = settings(args).map(([key]) => key);
    for (const key of ['sandbox_mode', 'approval_policy', 'sandbox_workspace_write', 'profile']) {
      expect(
        keys.filter((k) => k === key || k.startsWith(`${key}.`)),
        key,
      ).toEqual([]);
    }
  });

  it('disables every listed feature, shell and exec first among them', () => {
    const args = codexExecArgs(INPUT);
    const disabled = args.flatMap((a, i) => (a === '--disable' ? [args[i + 1]] : []));
    expect(disabled).toEqual([...DISABLED_FEATURES]);
    for (const feature of [
      'shell_tool',
      'unified_exec',
      'apps',
      'plugins',
      'hooks',
      'multi_agent',
    ]) {
      expect(disabled).toContain(feature);
    }
    expect(config(args)).toMatchObject({
      web_search: 'disabled',
      'tools.experimental_request_user_input.enabled': false,
      'tools.update_plan.enabled': false,
      'skills.bundled.enabled': false,
      'skills.include_instructions': false,
      'features.skip_host_skill_discovery': true,
      include_apps_instructions: false,
      project_doc_max_bytes: 0,
      suppress_unstable_features_warning: true,
    });
  });

  it('points codex at the profile endpoint as its own provider, retries off, idle timeout the deadline', () => {
    const c = config(codexExecArgs(INPUT));
    expect(c['model_provider']).toBe('proctor');
    expect(c['model_providers.proctor']).toEqual({
      name: 'proctor',
      base_url: 'http://127.0.0.1:8080/v1',
      wire_api: 'responses',
      requires_openai_auth: true,
      request_max_retries: 0,
      stream_max_retries: 0,
      stream_idle_timeout_ms: 90_500,
    });
    expect(c['model_catalog_json']).toBe(INPUT.catalogPath);
    // Less than a second left still gives the stream one second, never zero.
    const late = config(codexExecArgs({ ...INPUT, remainingMs: 10 }));
    expect(late['model_providers.proctor']).toMatchObject({ stream_idle_timeout_ms: 1000 });
  });

  it('sets each key once', () => {
    const keys = settings(codexExecArgs(INPUT)).map(([key]) => key);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('keeps quotes, backslashes and newlines in values as data, never as more TOML', () => {
    const hostile = {
      ...INPUT,
      baseUrl: 'http://127.0.0.1:1/v1", requires_openai_auth=false, x="\\\n',
      catalogPath: '/tmp/a"b\\c/catalog.json',
      bridge: { command: '/usr/bin/no"de', args: ['a"]', 'b\\', '\n'] },
    };
    const c = config(codexExecArgs(hostile));
    expect(c['model_providers.proctor']).toMatchObject({
      base_url: hostile.baseUrl,
      requires_openai_auth: true,
    });
    expect(Object.keys(c['model_providers.proctor'] as object)).toHaveLength(7);
    expect(c['model_catalog_json']).toBe(hostile.catalogPath);
    expect(c['mcp_servers.proctor.command']).toBe(hostile.bridge.command);
    expect(c['mcp_servers.proctor.args']).toEqual(hostile.bridge.args);
  });

  it('wires exactly one MCP server, required, pre-approved, limited to the three tools', () => {
    const c = config(codexExecArgs(INPUT));
    const servers = new Set(
      Object.keys(c).flatMap((key) => (key.startsWith('mcp_servers.') ? [key.split('.')[1]] : [])),
    );
    expect([...servers]).toEqual(['proctor']);
    expect(c).toMatchObject({
      'mcp_servers.proctor.command': '/usr/bin/node',
      'mcp_servers.proctor.args': ['/opt/proctor/dist/solvers/codex/bridge.js'],
      'mcp_servers.proctor.env_vars': ['PROCTOR_MCP_SOCKET', 'PROCTOR_MCP_TOKEN'],
      'mcp_servers.proctor.required': true,
      'mcp_servers.proctor.default_tools_approval_mode': 'approve',
      'mcp_servers.proctor.enabled_tools': [...TOOL_NAMES],
    });
    expect(TOOL_NAMES).toHaveLength(3);
  });

  it('gives the MCP server the remaining whole seconds, at least one, startup at most 30', () => {
    const timeouts = (remainingMs: number) => {
      const c = config(codexExecArgs({ ...INPUT, remainingMs }));
      return [
        c['mcp_servers.proctor.startup_timeout_sec'],
        c['mcp_servers.proctor.tool_timeout_sec'],
      ];
    };
    expect(timeouts(90_500)).toEqual([30, 90]);
    expect(timeouts(12_999)).toEqual([12, 12]);
    expect(timeouts(0)).toEqual([1, 1]);
  });

  it('has no way to carry a credential: names of variables only, no env, headers or tokens', () => {
    const args = codexExecArgs(INPUT);
    const keys = settings(args).map(([key]) => key);
    for (const forbidden of [
      'mcp_servers.proctor.env',
      'mcp_servers.proctor.bearer_token',
      'mcp_servers.proctor.bearer_token_env_var',
      'mcp_servers.proctor.http_headers',
      'mcp_servers.proctor.env_http_headers',
    ]) {
      expect(keys, forbidden).not.toContain(forbidden);
    }
    const provider = config(args)['model_providers.proctor'] as Record<string, unknown>;
    for (const key of [
      'env_key',
      'experimental_bearer_token',
      'http_headers',
      'env_http_headers',
    ]) {
      expect(provider, key).not.toHaveProperty(key);
    }
    expect([...BRIDGE_ENV_VARS]).toEqual(['PROCTOR_MCP_SOCKET', 'PROCTOR_MCP_TOKEN']);
    // No key, token or socket path is an input, so none can reach argv.
    // @ts-expect-error -- the builder takes no credential, and ignores one it is handed
    expect(codexExecArgs({ ...INPUT, apiKey: 'sk-planted' })).toEqual(args);
    expect(args.join('\n')).not.toMatch(/sk-|Bearer|PROCTOR_MCP_TOKEN=|PROCTOR_MCP_SOCKET=/);
  });

  it('is the same for the same input (no clock, no environment, no state)', () => {
    expect(codexExecArgs(INPUT)).toEqual(codexExecArgs(structuredClone(INPUT)));
  });
});
