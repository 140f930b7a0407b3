// `proctor solve --agent` end to end: the real Codex CLI from npm (agents/codex.toml, the
// quickest built-in to install here: one native binary), opencode and Qwen Code (Chat
// Completions), Claude Code (Anthropic Messages) and Gemini CLI (Google's generateContent), in
// their agent layers on the shell fixture task, in the solver's sandbox, its only route to a
// model the per-solve proxy on the host, in front of a scripted model server on 127.0.0.1. The
// server answers from each request: the first asks for a shell command through whichever shell
// tool the agent offered, and once a tool result has come back it says it is done. The command
// edits the work tree and prints what the container holds (every process's environment and
// argv, HOME's files, the socket folder), which the agent sends back to the model: the planted
// key must be in none of it.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHOW, hunk } from '../helpers/agent-scripts.js';
import { proctor } from '../helpers/cli.js';
import { copyBundle } from '../helpers/bundles.js';
import { allBytes, leftovers } from '../helpers/home.js';
import {
  startProtocolServer,
  type UpstreamRequest,
  type UpstreamStep,
} from '../helpers/protocol-server.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const GOLD = readFileSync(join(TASK, 'solution/gold.patch'), 'utf8');
const WRONG = GOLD.replace('echo error', 'echo nope');
const KEY = 'sk-agentsolveplanted0123456789abcdefKEY';
const GATE = /^tests_hash=[0-9a-f]{64}$/;

/** Shows the container from inside, then applies `patch` to the work tree. */
const edit = (patch: string) =>
  [SHOW, `git apply <<'PATCH'\n${patch}PATCH`, 'echo applied'].join('\n');

interface OfferedTool {
  name?: string;
  function?: { name?: string };
  functionDeclarations?: Array<{ name?: string }>;
}

/**
 * The names of the tools a request offered (Responses and Messages: `name`; Chat:
 * `function.name`; Gemini: each of a tool's `functionDeclarations`).
 */
const toolNames = (request: UpstreamRequest): string[] =>
  ((request.body['tools'] as OfferedTool[] | undefined) ?? []).flatMap((t) =>
    t.functionDeclarations
      ? t.functionDeclarations.map((d) => d.name ?? '')
      : [t.name ?? t.function?.name ?? ''],
  );

/** Whether the conversation holds a tool's result, in any of the four protocols. */
const hasToolResult = (request: UpstreamRequest): boolean =>
  /"function_call_output"|"role":"tool"|"tool_result"|"functionResponse"/.test(
    JSON.stringify(
      request.body['input'] ?? request.body['messages'] ?? request.body['contents'] ?? [],
    ),
  );

/**
 * Runs `command` through the agent's shell tool, whichever it offered, then finishes once a
 * result came back; a request with no shell tool (a title, a check) gets a short text.
 */
function policy(command: string) {
  return (request: UpstreamRequest): UpstreamStep => {
    if (hasToolResult(request)) return { text: 'Fixed div by zero.' };
    const tools = toolNames(request);
    const call = (name: string, args: unknown): UpstreamStep => ({
      toolCall: { name, arguments: args },
    });
    if (tools.includes('exec_command')) return call('exec_command', { cmd: command });
    if (tools.includes('shell_command')) return call('shell_command', { command });
    if (tools.includes('shell')) return call('shell', { command: ['bash', '-lc', command] });
    // opencode's
    if (tools.includes('bash')) return call('bash', { command, description: 'Fix div' });
    // Gemini CLI's, and Qwen Code's (its fork)
    if (tools.includes('run_shell_command')) {
      return call('run_shell_command', { command, description: 'Fix div', is_background: false });
    }
    // Claude Code's
    if (tools.includes('Bash')) return call('Bash', { command, description: 'Fix div' });
    return { text: 'Fix div by zero' };
  };
}

/**
 * Gemini CLI's shell tool refuses a command holding `$(` anywhere (its injection check reads
 * even a quoted here-document), and the patch has `$((…))`. So the container is shown by one
 * shell call, and the edit made by a second call, to its own edit tool, `replace`.
 */
function geminiPolicy(patch: string) {
  const { old: oldString, new: newString } = hunk(patch);
  return (request: UpstreamRequest): UpstreamStep => {
    const results = JSON.stringify(request.body['contents'] ?? []).split('"functionResponse"');
    if (!toolNames(request).includes('replace')) return { text: 'Fix div by zero' };
    if (results.length === 1) {
      return { toolCall: { name: 'run_shell_command', arguments: { command: SHOW } } };
    }
    if (results.length === 2) {
      return {
        toolCall: {
          name: 'replace',
          arguments: {
            file_path: 'lib.sh',
            instruction: 'Make div print error when dividing by zero.',
            old_string: oldString,
            new_string: newString,
          },
        },
      };
    }
    return { text: 'Fixed div by zero.' };
  };
}

async function home(patch: string, profile = '', agent = 'codex') {
  const server = await startProtocolServer([], {
    otherwise: agent === 'gemini-cli' ? geminiPolicy(patch) : policy(edit(patch)),
  });
  const dir = tempDir();
  // A Gemini profile's base URL ends in Google's API version, as OpenAI's and Anthropic's in v1.
  const baseUrl =
    agent === 'gemini-cli' ? server.baseUrl.replace(/\/v1$/, '/v1beta') : server.baseUrl;
  writeFileSync(
    join(dir, 'proctor.toml'),
    [
      '[solvers.byo]',
      'adapter = "agent"',
      `agent = "${agent}"`,
      `base_url = "${baseUrl}"`,
      'model = "scripted"',
      'api_key_env = "PROCTOR_AGENT_KEY"',
      profile,
      '',
    ].join('\n'),
  );
  return { dir, server };
}

const solve = (dir: string, extra: string[] = [], task = TASK) =>
  proctor(['--home', dir, 'solve', task, '--solver', 'byo', '--wait', ...extra], {
    PROCTOR_AGENT_KEY: KEY,
  });

async function resultOf(dir: string, id: number): Promise<Record<string, unknown>> {
  const status = await proctor(['--home', dir, 'status', String(id), '--json']);
  expect(status.code).toBe(0);
  const { jobs } = JSON.parse(status.stdout) as {
    jobs: Array<{ result: Record<string, unknown> }>;
  };
  return jobs[0]!.result;
}

describe('proctor solve --agent: bad input', () => {
  it.each([
    [
      ['--agent', 'nosuch'],
      'proctor: no built-in agent named "nosuch"; the built-ins are aider, claude-code, codex, gemini-cli, mini-swe-agent, opencode, qwen-code (or give the path of a definition file)',
    ],
    [['--agent', './nowhere/mine.toml'], 'mine.toml'],
    [['--agent', 'codex', '--model', 'two words'], 'proctor: --model: expected a model name'],
  ])('refuses %j in one line and enqueues nothing', async (extra, message) => {
    const { dir, server } = await home(GOLD);
    const result = await proctor(['--home', dir, 'solve', TASK, '--solver', 'byo', ...extra], {
      PROCTOR_AGENT_KEY: KEY,
    });
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
    expect(server.requests).toHaveLength(0);
    const status = await proctor(['--home', dir, 'status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ counts: { queued: 0 } });
  });
});

describe('proctor solve --agent (a real agent behind the model proxy)', () => {
  it('runs Codex in the sandbox, captures its edit and grades it PASS; the key stays on the host', async () => {
    const { dir, server } = await home(GOLD);
    const result = await solve(dir, ['--agent', 'codex']);
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.stdout).toMatch(/shell-div-zero\s+PASS\s+PASS\s/);
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(GATE);

    // Codex reached the provider only through the proxy, which put the real key on.
    expect(server.requests.length).toBeGreaterThanOrEqual(2);
    for (const request of server.requests) {
      expect(request.path).toBe('/v1/responses');
      expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    }
    // What the container held came back as the tool's output: the run token, never the key.
    const bodies = JSON.stringify(server.requests.map((r) => r.body));
    expect(bodies).toContain('applied');
    expect(bodies).toContain('OPENAI_API_KEY=');
    expect(bodies).toContain('model.sock');
    expect(bodies).not.toContain(KEY);

    // The solve's result names the agent and its trajectory; the trajectory has the steps.
    const solveResult = await resultOf(dir, 1);
    expect(solveResult).toMatchObject({
      reason: 'SOLVED',
      agent: { name: 'codex', outcome: 'completed', exitCode: 0 },
    });
    expect(typeof solveResult['trajectory']).toBe('string');
    const shown = await proctor(['--home', dir, 'status', '1', '--trajectory']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^--- trajectory of job 1 /m);
    expect(shown.stdout).toContain('exec_command');

    // Nowhere in the database or the artifacts (transcript, trajectory, candidate).
    expect(allBytes(dir).includes(KEY)).toBe(false);
    expect(await leftovers(dir)).toEqual([]);
  }, 600_000);

  it('grades a wrong edit FAIL', async () => {
    const { dir } = await home(WRONG);
    const result = await solve(dir);
    expect(result.stdout).toMatch(/shell-div-zero\s+FAIL\s+HIDDEN_FAILED\s/);
    expect(result.code).toBe(1);
    expect(await leftovers(dir)).toEqual([]);
  }, 600_000);

  it('ends BUDGET_EXCEEDED when the proxy refuses past the turn limit, its partial patch kept', async () => {
    const { dir, server } = await home(GOLD, 'max_turns = 1');
    const result = await solve(dir);
    expect(result.stdout).toMatch(/shell-div-zero\s+FAIL\s+BUDGET_EXCEEDED\s/);
    expect(result.code).toBe(1);
    // The second request (after the edit) was refused by the proxy, never forwarded.
    expect(server.requests).toHaveLength(1);
    const solveResult = await resultOf(dir, 1);
    expect(solveResult).toMatchObject({
      verdict: 'FAIL',
      reason: 'BUDGET_EXCEEDED',
      end: { reason: 'budget_exceeded' },
    });
    const candidate = solveResult['candidate'] as { files: number } | null;
    expect(candidate?.files).toBe(1);
    expect(allBytes(dir).includes(KEY)).toBe(false);
    expect(await leftovers(dir)).toEqual([]);
  }, 600_000);
});

describe('proctor solve --agent opencode (Chat Completions)', () => {
  it('runs opencode in the sandbox, captures its edit and grades it PASS; the key stays on the host', async () => {
    const { dir, server } = await home(GOLD, '', 'opencode');
    // The fixture's 256 MiB are too few for opencode's 185 MB binary (it ends AGENT_CRASHED,
    // killed by the memory limit): the agent lives within the task's limits.
    const task = copyBundle({ limits: { memory_mb: 2048, pids: 256 } });
    const result = await solve(dir, [], task);
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.stdout).toMatch(/shell-div-zero\s+PASS\s+PASS\s/);
    expect(result.code).toBe(0);
    for (const request of server.requests) {
      expect(request.path).toBe('/v1/chat/completions');
      expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    }
    const bodies = JSON.stringify(server.requests.map((r) => r.body));
    // (opencode clips a long tool output, so the dump of every process is not all there.)
    expect(bodies).toContain('applied');
    expect(bodies).not.toContain(KEY);
    // Its own log (the definition's `logs`) is kept with the solve.
    const exported = join(tempDir(), 'export.tar.gz');
    expect((await proctor(['--home', dir, 'export', '1', '--out', exported])).code).toBe(0);
    const listing = execFileSync('tar', ['-tzf', exported], { encoding: 'utf8' });
    expect(listing).toMatch(/agent-logs\.json/);
    expect(listing).toMatch(/trajectory\.json/);
    expect(allBytes(dir).includes(KEY)).toBe(false);
    expect(await leftovers(dir)).toEqual([]);
  }, 600_000);
});

/** What the scripted provider was asked, one line per request, for a failing test's message. */
const asked = (server: { requests: UpstreamRequest[] }) =>
  server.requests
    .map((r) => {
      const tools = (r.body['tools'] as unknown[] | undefined)?.length ?? 0;
      return `${r.path} stream=${String(r.body['stream'])} tools=${tools}`;
    })
    .join('\n');

describe('proctor solve --agent qwen-code (Chat Completions)', () => {
  it('runs Qwen Code in the sandbox, captures its edit and grades it PASS; the key stays on the host', async () => {
    const { dir, server } = await home(GOLD, '', 'qwen-code');
    const task = copyBundle({ limits: { memory_mb: 2048, pids: 256 } });
    const result = await solve(dir, [], task);
    const shown = await proctor(['--home', dir, 'status', '1', '--trajectory']);
    const why = `${result.stdout}\n${result.stderr}\n${shown.stdout}\n${asked(server)}`;
    expect(result.stdout, why).toMatch(/shell-div-zero\s+PASS\s+PASS\s/);
    expect(result.code).toBe(0);
    // Two requests, both streamed (the proxy asks for usage in the stream): the tool call,
    // then the answer once the tool's result is back. No model list, no side requests.
    expect(server.requests).toHaveLength(2);
    for (const request of server.requests) {
      expect(request.path).toBe('/v1/chat/completions');
      expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(request.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    }
    expect(shown.stdout).toContain('run_shell_command');
    // Nothing was refused either (a path the proxy does not serve would be a step).
    expect(shown.stdout).toMatch(/^2 request\(s\), 2 turn\(s\)/m);
    const bodies = JSON.stringify(server.requests.map((r) => r.body));
    expect(bodies).toContain('applied');
    expect(bodies).toContain('OPENAI_API_KEY=');
    expect(bodies).not.toContain(KEY);
    expect(await resultOf(dir, 1)).toMatchObject({
      reason: 'SOLVED',
      agent: { name: 'qwen-code', outcome: 'completed', exitCode: 0 },
    });
    expect(allBytes(dir).includes(KEY)).toBe(false);
    expect(await leftovers(dir)).toEqual([]);
  }, 600_000);
});

describe('proctor solve --agent claude-code (Anthropic Messages)', () => {
  it('runs Claude Code in the sandbox, captures its edit and grades it PASS; the key stays on the host', async () => {
    const { dir, server } = await home(GOLD, '', 'claude-code');
    const task = copyBundle({ limits: { memory_mb: 2048, pids: 256 } });
    const result = await solve(dir, [], task);
    const shown = await proctor(['--home', dir, 'status', '1', '--trajectory']);
    const why = `${result.stdout}\n${result.stderr}\n${shown.stdout}\n${asked(server)}`;
    expect(result.stdout, why).toMatch(/shell-div-zero\s+PASS\s+PASS\s/);
    expect(result.code).toBe(0);
    // Two requests, both streamed: the tool_use, then the answer once the tool_result is back.
    // With CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC nothing else (no quota check, no title).
    expect(server.requests).toHaveLength(2);
    for (const request of server.requests) {
      expect(request.path).toBe('/v1/messages');
      expect(request.headers['x-api-key']).toBe(KEY);
      expect(request.headers.authorization).toBeUndefined();
      expect(request.headers['anthropic-version']).toBe('2023-06-01');
      expect(request.headers['anthropic-beta']).toContain('claude-code-');
      expect(request.body['stream']).toBe(true);
    }
    expect(shown.stdout).toContain('Bash');
    expect(shown.stdout).toMatch(/^2 request\(s\), 2 turn\(s\)/m);
    const bodies = JSON.stringify(server.requests.map((r) => r.body));
    expect(bodies).toContain('applied');
    expect(bodies).toContain('ANTHROPIC_API_KEY=');
    expect(bodies).not.toContain(KEY);
    expect(await resultOf(dir, 1)).toMatchObject({
      reason: 'SOLVED',
      agent: { name: 'claude-code', outcome: 'completed', exitCode: 0 },
    });
    expect(allBytes(dir).includes(KEY)).toBe(false);
    expect(await leftovers(dir)).toEqual([]);
  }, 600_000);

  it('grades a wrong Claude Code edit FAIL', async () => {
    const { dir } = await home(WRONG, '', 'claude-code');
    const task = copyBundle({ limits: { memory_mb: 2048, pids: 256 } });
    const result = await solve(dir, [], task);
    expect(result.stdout).toMatch(/shell-div-zero\s+FAIL\s+HIDDEN_FAILED\s/);
    expect(result.code).toBe(1);
    expect(await leftovers(dir)).toEqual([]);
  }, 600_000);
});

describe('proctor solve --agent gemini-cli (Gemini generateContent)', () => {
  it('runs Gemini CLI in the sandbox, captures its edit and grades it PASS; the key stays on the host', async () => {
    // Prices, so that the trajectory shows the proxy metered Gemini's usageMetadata into a cost.
    const prices = 'price_input_per_mtok = 2\nprice_output_per_mtok = 8';
    const { dir, server } = await home(GOLD, prices, 'gemini-cli');
    const task = copyBundle({ limits: { memory_mb: 2048, pids: 256 } });
    const result = await solve(dir, [], task);
    const shown = await proctor(['--home', dir, 'status', '1', '--trajectory']);
    // The tool's result as Gemini CLI sent it back (what the shell command did).
    const lastTurn = JSON.stringify(server.requests.at(-1)?.body['contents']).slice(-3000);
    const why = `${result.stdout}\n${result.stderr}\n${shown.stdout}\n${asked(server)}\n${lastTurn}`;
    expect(result.stderr, why).not.toMatch(/proctor: /);
    expect(result.stdout, why).toMatch(/shell-div-zero\s+PASS\s+PASS\s/);
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(GATE);
    // Three requests, each streamed with Google's key header on the profile's model, the run
    // token replaced by the real key (and no ?key= upstream): the shell call, the edit once the
    // shell's result is back, then the answer. No side request (a token count, a router).
    expect(server.requests, why).toHaveLength(3);
    for (const request of server.requests) {
      expect(request.path).toBe('/v1beta/models/scripted:streamGenerateContent');
      expect(request.query).toBe('alt=sse');
      expect(request.headers['x-goog-api-key']).toBe(KEY);
      expect(request.headers.authorization).toBeUndefined();
    }
    expect(toolNames(server.requests[0]!)).toEqual(
      expect.arrayContaining(['run_shell_command', 'replace', 'write_file']),
    );
    // The proxy read each step in Gemini's dialect: its calls, and usageMetadata metered
    // (100 in and 20 out a step, at $2 and $8 per million).
    expect(shown.stdout).toMatch(
      /^step 1: gemini-generate-content scripted ok 200 \(100 in, 20 out/m,
    );
    expect(shown.stdout).toContain('run_shell_command');
    expect(shown.stdout).toContain('replace');
    expect(shown.stdout).toMatch(/^3 request\(s\), 3 turn\(s\) \(300 in, 60 out, \$0\.0011\)/m);
    // What the container held came back as the shell's output: the run token, never the key.
    const bodies = JSON.stringify(server.requests.map((r) => r.body));
    expect(bodies).toContain('Successfully modified file');
    expect(bodies).toContain('GEMINI_API_KEY=');
    expect(bodies).toContain('model.sock');
    expect(bodies).not.toContain(KEY);
    expect(await resultOf(dir, 1)).toMatchObject({
      reason: 'SOLVED',
      agent: { name: 'gemini-cli', outcome: 'completed', exitCode: 0 },
    });
    expect(allBytes(dir).includes(KEY)).toBe(false);
    expect(await leftovers(dir)).toEqual([]);
  }, 600_000);

  it('grades a wrong Gemini CLI edit FAIL', async () => {
    const { dir } = await home(WRONG, '', 'gemini-cli');
    const task = copyBundle({ limits: { memory_mb: 2048, pids: 256 } });
    const result = await solve(dir, [], task);
    expect(result.stdout).toMatch(/shell-div-zero\s+FAIL\s+HIDDEN_FAILED\s/);
    expect(result.code).toBe(1);
    // The agent did edit (the wrong edit is what failed): its candidate holds the file.
    expect(await resultOf(dir, 1)).toMatchObject({ reason: 'SOLVED', candidate: { files: 1 } });
    expect(await leftovers(dir)).toEqual([]);
  }, 600_000);
});
