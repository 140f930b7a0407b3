// `proctor solve --agent` end to end with the agents installed from PyPI: mini-SWE-agent
// (agents/mini-swe-agent.toml) and aider (agents/aider.toml), each in its agent layer (its own
// Python, built from debian:bookworm-slim) on the shell fixture task, in the solver's sandbox,
// its only route to a model the per-solve proxy on the host, in front of a scripted Chat
// Completions server on 127.0.0.1.
//
// mini-SWE-agent offers one `bash` tool: the server asks it to run a command that edits the
// work tree and prints what the container holds (every process's environment and argv, HOME's
// files, the socket folder), then, once that result is back, to submit with
// `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`. aider offers no tool: the server answers with a
// SEARCH/REPLACE block for lib.sh, a file not in aider's chat, which aider adds (--yes-always)
// and asks again about, and then applies. The planted key must be in no request, artifact or row.
//
// The layers are slow to build (aider pulls some hundred wheels), so each agent's first test
// has a long deadline; a layer is found again by its labels, so a second run builds nothing.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHOW, hunk } from '../helpers/agent-scripts.js';
import { proctor, resultOf } from '../helpers/cli.js';
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
const KEY = 'sk-agentsolvepypiplanted0123456789abcdefKEY';
const GATE = /^tests_hash=[0-9a-f]{64}$/;
/** The first build of a layer: apt-get and pip over a loaded machine. */
const BUILD_MS = 2_400_000;
const SUBMIT = 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT';

/** The conversation's tool results (Chat Completions `role: tool` messages). */
const toolResults = (request: UpstreamRequest): number =>
  ((request.body['messages'] as Array<{ role?: string }> | undefined) ?? []).filter(
    (m) => m.role === 'tool',
  ).length;

/** mini-SWE-agent: show the container and apply `patch` through `bash`, then submit. */
function miniPolicy(patch: string) {
  const edit = [SHOW, `git apply <<'PATCH'\n${patch}PATCH`, 'echo applied'].join('\n');
  return (request: UpstreamRequest): UpstreamStep => {
    const command = toolResults(request) === 0 ? edit : SUBMIT;
    return { toolCall: { name: 'bash', arguments: { command } } };
  };
}

/** aider: the edit as a SEARCH/REPLACE block of lib.sh, on each request. */
function aiderPolicy(patch: string) {
  const { old: search, new: replace } = hunk(patch);
  const block = [
    'Make div print error when dividing by zero.',
    '',
    'lib.sh',
    '```',
    '<<<<<<< SEARCH',
    search,
    '=======',
    replace,
    '>>>>>>> REPLACE',
    '```',
  ].join('\n');
  return (): UpstreamStep => ({ text: block });
}

async function home(patch: string, agent: 'mini-swe-agent' | 'aider') {
  const server = await startProtocolServer([], {
    otherwise: agent === 'aider' ? aiderPolicy(patch) : miniPolicy(patch),
  });
  const dir = tempDir();
  writeFileSync(
    join(dir, 'proctor.toml'),
    [
      '[solvers.byo]',
      'adapter = "agent"',
      `agent = "${agent}"`,
      `base_url = "${server.baseUrl}"`,
      'model = "scripted"',
      'api_key_env = "PROCTOR_AGENT_KEY"',
      '',
    ].join('\n'),
  );
  return { dir, server };
}

/** The shell task with room for a Python agent beside it. */
const task = () => copyBundle({ limits: { memory_mb: 2048, pids: 256 } });

const solve = (dir: string, bundle: string) =>
  proctor(['--home', dir, 'solve', bundle, '--solver', 'byo', '--wait'], {
    PROCTOR_AGENT_KEY: KEY,
  });

/** What the scripted provider was asked, one line per request, for a failing test's message. */
const asked = (server: { requests: UpstreamRequest[] }) =>
  server.requests
    .map((r) => {
      const messages = (r.body['messages'] as unknown[] | undefined) ?? [];
      const tools = (r.body['tools'] as unknown[] | undefined)?.length ?? 0;
      return `${r.path} stream=${String(r.body['stream'])} tools=${tools} messages=${messages.length}`;
    })
    .join('\n');

/** The files of the solve's exported artifacts (its logs among them). */
async function exported(dir: string): Promise<string> {
  const out = join(tempDir(), 'export.tar.gz');
  expect((await proctor(['--home', dir, 'export', '1', '--out', out])).code).toBe(0);
  return execFileSync('tar', ['-tzf', out], { encoding: 'utf8' });
}

/** A wrong edit: graded FAIL, though the agent did edit (its candidate holds the one file). */
async function wrongEditFails(agent: 'mini-swe-agent' | 'aider') {
  const { dir } = await home(WRONG, agent);
  const result = await solve(dir, task());
  expect(result.stdout).toMatch(/shell-div-zero\s+FAIL\s+HIDDEN_FAILED\s/);
  expect(result.code).toBe(1);
  expect(await resultOf(dir, 1)).toMatchObject({ reason: 'SOLVED', candidate: { files: 1 } });
  expect(allBytes(dir).includes(KEY)).toBe(false);
  expect(await leftovers(dir)).toEqual([]);
}

describe('proctor solve --agent mini-swe-agent (PyPI, Chat Completions)', () => {
  it(
    'runs mini-SWE-agent in the sandbox, captures its edit and grades it PASS; the key stays on the host',
    async () => {
      const { dir, server } = await home(GOLD, 'mini-swe-agent');
      const result = await solve(dir, task());
      const shown = await proctor(['--home', dir, 'status', '1', '--trajectory']);
      const why = `${result.stdout}\n${result.stderr}\n${shown.stdout}\n${asked(server)}`;
      expect(result.stderr, why).not.toMatch(/proctor: /);
      expect(result.stdout, why).toMatch(/shell-div-zero\s+PASS\s+PASS\s/);
      expect(result.code).toBe(0);
      expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(GATE);
      // Two requests, each with the one bash tool, the run token replaced by the real key: the
      // edit, then the submission once the edit's result is back. Nothing else.
      expect(server.requests, why).toHaveLength(2);
      for (const request of server.requests) {
        expect(request.path).toBe('/v1/chat/completions');
        expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
        expect(request.body['model']).toBe('scripted');
        expect(request.body['stream'] ?? false).toBe(false);
        expect(
          (request.body['tools'] as Array<{ function: { name: string } }>).map(
            (t) => t.function.name,
          ),
        ).toEqual(['bash']);
      }
      expect(shown.stdout).toMatch(/^2 request\(s\), 2 turn\(s\)/m);
      // What the container held came back as the tool's output: the run token, never the key.
      const bodies = JSON.stringify(server.requests.map((r) => r.body));
      expect(bodies).toContain('applied');
      expect(bodies).toContain('OPENAI_API_KEY=');
      expect(bodies).toContain('model.sock');
      expect(bodies).not.toContain(KEY);
      expect(await resultOf(dir, 1)).toMatchObject({
        reason: 'SOLVED',
        agent: { name: 'mini-swe-agent', outcome: 'completed', exitCode: 0 },
        candidate: { files: 1 },
      });
      // Its trajectory (the definition's `logs`) is kept with the solve.
      expect(await exported(dir)).toMatch(/agent-logs\.json/);
      expect(allBytes(dir).includes(KEY)).toBe(false);
      expect(await leftovers(dir)).toEqual([]);
    },
    BUILD_MS,
  );

  it('grades a wrong mini-SWE-agent edit FAIL', () => wrongEditFails('mini-swe-agent'), 900_000);
});

describe('proctor solve --agent aider (PyPI, Chat Completions)', () => {
  it(
    'runs aider in the sandbox, applies its SEARCH/REPLACE block and grades it PASS; the key stays on the host',
    async () => {
      const { dir, server } = await home(GOLD, 'aider');
      const result = await solve(dir, task());
      const shown = await proctor(['--home', dir, 'status', '1', '--trajectory']);
      const why = `${result.stdout}\n${result.stderr}\n${shown.stdout}\n${asked(server)}`;
      expect(result.stderr, why).not.toMatch(/proctor: /);
      expect(result.stdout, why).toMatch(/shell-div-zero\s+PASS\s+PASS\s/);
      expect(result.code).toBe(0);
      expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(GATE);
      // Two requests: the block names lib.sh, which aider adds to its chat and asks again
      // about; the second block it applies. Plain (not streamed), no tools.
      expect(server.requests, why).toHaveLength(2);
      for (const request of server.requests) {
        expect(request.path).toBe('/v1/chat/completions');
        expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
        expect(request.body['tools']).toBeUndefined();
        expect(request.body['stream'] ?? false).toBe(false);
      }
      expect(JSON.stringify(server.requests[1]!.body['messages'])).toContain(
        'I added these files to the chat: lib.sh',
      );
      expect(server.requests.map((r) => JSON.stringify(r.body)).join('\n')).not.toContain(KEY);
      expect(await resultOf(dir, 1)).toMatchObject({
        reason: 'SOLVED',
        agent: { name: 'aider', outcome: 'completed', exitCode: 0 },
        // lib.sh alone: aider's histories went to HOME, no tag cache or .gitignore in the tree.
        candidate: { files: 1 },
      });
      expect(await exported(dir)).toMatch(/agent-logs\.json/);
      expect(allBytes(dir).includes(KEY)).toBe(false);
      expect(await leftovers(dir)).toEqual([]);
    },
    BUILD_MS,
  );

  it('grades a wrong aider edit FAIL', () => wrongEditFails('aider'), 900_000);
});
