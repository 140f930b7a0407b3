// `proctor solve` with the codex adapter: the real pinned Codex CLI, offline, against a
// scripted Responses API on 127.0.0.1, with its one MCP server bridged to Proctor, the real
// Docker engine and the shell fixture task; each solve is audited, captured and graded.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cancelWhileWaiting, proctor } from '../helpers/cli.js';
import { allBytes, leftovers } from '../helpers/home.js';
import { ROOT } from '../helpers/processes.js';
import {
  SCRIPTED_USAGE,
  startResponsesServer,
  type ResponsesStep,
} from '../helpers/responses-server.js';
import { tempDir } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const GOLD = readFileSync(join(TASK, 'solution/gold.patch'), 'utf8');
const KEY = 'sk-codexplanted0123456789abcdefghij';
const GATE = /^tests_hash=[0-9a-f]{64}$/;
/** The last response's usage: most of its input served from the prompt cache. */
const LAST_USAGE = {
  input_tokens: 1000,
  input_tokens_details: { cached_tokens: 600 },
  output_tokens: 50,
  output_tokens_details: { reasoning_tokens: 20 },
  total_tokens: 1050,
};
const lastLine = (text: string) => text.trimEnd().split('\n').at(-1) ?? '';

async function home(script: ResponsesStep[], limits = '') {
  const server = await startResponsesServer(script);
  const dir = tempDir();
  writeFileSync(
    join(dir, 'proctor.toml'),
    `[solvers.cx]\nadapter = "codex"\nbase_url = "${server.baseUrl}"\nmodel = "proctor-test-model"\napi_key_env = "PROCTOR_CODEX_KEY"\n${limits}`,
  );
  return { dir, server };
}

/** Every process whose command line holds `needle`, or which is codex with it in its environment. */
function processesHolding(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmdline.includes(needle)) found.push(`${pid} cmdline`);
      if (cmdline.includes('codex') || cmdline.includes('bridge')) {
        if (readFileSync(`/proc/${pid}/environ`, 'utf8').includes(needle)) {
          found.push(`${pid} environ`);
        }
      }
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function solve(dir: string, extra: string[] = []) {
  const seen = new Set<string>();
  const sampler = setInterval(() => processesHolding(KEY).forEach((p) => seen.add(p)), 50);
  try {
    const result = await proctor(
      ['--home', dir, 'solve', TASK, '--solver', 'cx', '--wait', ...extra],
      { PROCTOR_CODEX_KEY: KEY },
    );
    return { ...result, seen: [...seen] };
  } finally {
    clearInterval(sampler);
  }
}

describe('proctor solve (codex adapter)', () => {
  it('drives codex through the MCP bridge, captures the fix, grades it PASS, keeps the key out', async () => {
    const { dir, server } = await home(
      [
        { call: { name: 'read_file', arguments: { path: 'lib.sh', offset: null, limit: null } } },
        { call: { name: 'apply_patch', arguments: { patch: GOLD } } },
        { message: 'Fixed.', usage: LAST_USAGE },
      ],
      'price_input_per_mtok = 2\nprice_cached_input_per_mtok = 0.5\nprice_output_per_mtok = 8\n',
    );
    const result = await solve(dir);
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.stdout).toMatch(/shell-div-zero\s+PASS\s+PASS\s/);
    expect(result.code).toBe(0);
    expect(lastLine(result.stdout)).toMatch(GATE);

    // The model saw the prompt and only the proctor namespace among MCP tools; the key went
    // only to the endpoint, from the run's proxy, and never to codex (login, argv or env).
    const first = server.requests[0];
    expect(first?.headers['authorization']).toBe(`Bearer ${KEY}`);
    expect(JSON.stringify(first?.body.input)).toContain('div 1 0');
    const namespaces = (first?.body.tools as Array<{ type: string; name: string }>).filter(
      (t) => t.type === 'namespace',
    );
    expect(namespaces.map((t) => t.name)).toEqual(['mcp__proctor']);
    expect(result.seen).toEqual([]);
    expect(allBytes(dir).includes(KEY)).toBe(false);
    expect(await leftovers(dir)).toEqual([]);

    // The run's proxy metered each of the three responses; cached input is part of
    // input_tokens and priced once, at the cached price.
    const status = await proctor(['--home', dir, 'status', '1', '--json']);
    const solved = (
      JSON.parse(status.stdout) as { jobs: Array<{ result: Record<string, unknown> }> }
    ).jobs[0]?.result;
    const input = 2 * SCRIPTED_USAGE.input_tokens + LAST_USAGE.input_tokens;
    const output = 2 * SCRIPTED_USAGE.output_tokens + LAST_USAGE.output_tokens;
    const cached = LAST_USAGE.input_tokens_details.cached_tokens;
    expect(solved).toMatchObject({
      usage: { inputTokens: input, cachedInputTokens: cached, outputTokens: output },
      turns: 3,
      toolCalls: 2,
    });
    expect(solved?.['costUsd']).toBeCloseTo(
      ((input - cached) * 2 + cached * 0.5 + output * 8) / 1e6,
      12,
    );
  }, 180_000);

  // Codex's run proxy meters each answer as it arrives, so a run killed mid-turn keeps what it
  // spent; a request that got no answer costs nothing; an answer without usage makes it unknown.
  // Each scripted answer is 20 input and 10 output tokens. Codex runs its own resource tool at
  // once and may send the next request before the audit, reading its events, stops it: one
  // answer or two are metered then, never none.
  const answers = (n: number) => ({
    inputTokens: 20 * n,
    cachedInputTokens: 0,
    outputTokens: 10 * n,
  });
  const METERED: Record<string, unknown[]> = {
    'a built-in codex resource tool': [answers(1), answers(2)],
    'too many tool calls': [answers(2)],
    'a provider error': [answers(0)],
    'a failed response': [null],
  };
  it.each<[string, ResponsesStep[], string, RegExp]>([
    [
      'a built-in codex resource tool',
      [{ call: { name: 'list_mcp_resources', arguments: {}, namespace: null } }],
      '',
      /SOLVER_PROTOCOL_ERROR\s+codex audit: foreign_tool/,
    ],
    [
      'too many tool calls',
      Array.from({ length: 3 }, () => ({
        call: { name: 'run_command', arguments: { command: 'true', timeout_s: null } },
      })),
      'max_tool_calls = 1\n',
      /SOLVER_TOOL_CALL_LIMIT\s+the model made more than 1 tool calls/,
    ],
    ['a provider error', [{ status: 500 }], '', /SOLVER_PROVIDER_ERROR\s+codex audit/],
    [
      'a failed response',
      [{ failed: 'scripted failure' }],
      '',
      /SOLVER_PROVIDER_ERROR\s+codex audit/,
    ],
  ])(
    'fails the solve on %s',
    async (_, script, limits, reason) => {
      const { dir } = await home(script, limits);
      const result = await solve(dir);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(reason);
      expect(lastLine(result.stdout)).toMatch(GATE);
      expect(await leftovers(dir)).toEqual([]);
      // Killed or failed before turn.completed: what the model spent is unknown, not zero.
      const status = await proctor(['--home', dir, 'status', '1', '--json']);
      const { jobs } = JSON.parse(status.stdout) as { jobs: Array<{ result: unknown }> };
      const usage = (jobs[0]?.result as { usage?: unknown } | undefined)?.usage;
      expect(METERED[_]).toContainEqual(usage);
    },
    180_000,
  );

  it('--max-cost: a running codex solve is stopped once the batch reaches the cap, and never holds the key', async () => {
    // Every response costs $1 (20 input tokens at $50,000 a million); codex would go on calling.
    const { dir, server } = await home(
      Array.from({ length: 10 }, () => ({
        call: { name: 'run_command', arguments: { command: 'true', timeout_s: null } },
      })),
      'price_input_per_mtok = 50000\nprice_output_per_mtok = 0\n',
    );
    const result = await solve(dir, ['--max-cost', '2.5']);
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /FAIL\s+BUDGET_EXCEEDED\s+.*the batch has spent \$3\.0000, reaching its cost cap of \$2\.5/,
    );
    // The third response crossed the cap; codex was killed before a fourth went out.
    expect(server.requests).toHaveLength(3);
    // Codex logged in with the proxy's run token: the key went upstream from the proxy only.
    expect(server.requests.every((r) => r.headers['authorization'] === `Bearer ${KEY}`)).toBe(true);
    expect(result.seen).toEqual([]);
    expect(allBytes(dir).includes(KEY)).toBe(false);
    // Metered answer by answer, so the killed run's spend is known.
    const status = await proctor(['--home', dir, 'status', '1', '--json']);
    const { jobs } = JSON.parse(status.stdout) as { jobs: Array<{ result: unknown }> };
    expect(jobs[0]?.result).toMatchObject({ costUsd: 3, turns: 3 });
    expect(processesHolding('proctor-codex-')).toEqual([]);
    expect(await leftovers(dir)).toEqual([]);
  }, 180_000);

  it('kills codex at the deadline when the provider hangs', async () => {
    const { dir } = await home([{ hang: true }]);
    const started = Date.now();
    const result = await solve(dir, ['--timeout', '8']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/SOLVER_TIMEOUT/);
    expect(Date.now() - started).toBeLessThan(40_000);
    expect(processesHolding('proctor-codex-')).toEqual([]);
  }, 180_000);

  it('kills the codex process group within seconds of a cancel', async () => {
    const { dir, server } = await home([{ hang: true }]);
    const ended = await cancelWhileWaiting(
      dir,
      ['solve', TASK, '--solver', 'cx', '--wait'],
      { PROCTOR_CODEX_KEY: KEY },
      () => server.requests.length === 1,
    );
    expect(ended.cancelCode).toBe(0);
    expect(ended.msAfterCancel).toBeLessThan(10_000);
    expect(ended.code).toBe(1);
    expect(ended.stdout).toMatch(/shell-div-zero\s+FAIL\s+CANCELLED/);
    expect(processesHolding('proctor-codex-')).toEqual([]);
    expect(await leftovers(dir)).toEqual([]);
  }, 180_000);
});
