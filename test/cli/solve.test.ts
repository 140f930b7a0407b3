// `proctor solve` end to end with the flat adapter: the real binary and `openai` SDK against a
// scripted OpenAI-compatible server on 127.0.0.1, the real Docker engine, and the shell
// fixture task; each solve is captured and graded.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cancelWhileWaiting, proctor } from '../helpers/cli.js';
import { allBytes, leftovers } from '../helpers/home.js';
import { startModelServer, type Step } from '../helpers/model-server.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const GOLD = readFileSync(join(TASK, 'solution/gold.patch'), 'utf8');
const KEY = 'sk-solvetestplanted0123456789abcdef';
const GATE = /^tests_hash=[0-9a-f]{64}$/;

async function home(script: Step[], limits = '') {
  const server = await startModelServer(script);
  const dir = tempDir();
  writeFileSync(
    join(dir, 'proctor.toml'),
    `[solvers.mini]\nadapter = "flat"\nbase_url = "${server.baseUrl}"\nmodel = "scripted"\napi_key_env = "PROCTOR_SOLVE_KEY"\n${limits}`,
  );
  return { dir, server };
}

function solve(dir: string, extra: string[] = []) {
  return proctor(['--home', dir, 'solve', TASK, '--solver', 'mini', '--wait', ...extra], {
    PROCTOR_SOLVE_KEY: KEY,
  });
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1) ?? '';

describe('proctor solve (flat adapter)', () => {
  it('solves with three tools, captures the fix, grades it PASS and prints the gate line last', async () => {
    const { dir, server } = await home([
      {
        toolCalls: [
          { name: 'read_file', arguments: { path: 'lib.sh', offset: null, limit: null } },
        ],
      },
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: 'env; sh tests/t_add.sh && echo ok', timeout_s: null },
          },
        ],
      },
      { toolCalls: [{ name: 'apply_patch', arguments: { patch: GOLD } }] },
      { message: 'Fixed div by zero.' },
    ]);
    const result = await solve(dir);
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/shell-div-zero\s+PASS\s+PASS\s/);
    expect(lastLine(result.stdout)).toMatch(GATE);

    // What the adapter sent: description.md alone, three strict tools, no parallel calls,
    // the key only in the Authorization header; and each tool result went back.
    const [first, second] = server.requests;
    expect(first?.body.messages).toEqual([
      { role: 'user', content: readFileSync(join(TASK, 'description.md'), 'utf8') },
    ]);
    expect(first?.body.tools).toHaveLength(3);
    expect(first?.body.parallel_tool_calls).toBe(false);
    expect(first?.headers.authorization).toBe(`Bearer ${KEY}`);
    const toolMessage = second?.body.messages.at(-1);
    expect(toolMessage?.role).toBe('tool');
    expect(String(toolMessage?.content)).toContain('div()');
    expect(server.requests).toHaveLength(4);
    // The container's environment (printed by `env` and sent back to the model) has no key.
    const bodies = JSON.stringify(server.requests.map((r) => r.body));
    expect(bodies).toContain('HOME=/tmp');
    expect(bodies).not.toContain(KEY);

    // The key is nowhere in the database or the artifacts (transcript, candidate, logs).
    expect(allBytes(dir).includes(KEY)).toBe(false);
    expect(await leftovers(dir)).toEqual([]);
  }, 120_000);

  it('runs K independent solves of a task with --attempts, each graded and numbered by its sample', async () => {
    const wrong = GOLD.replace('echo error', 'echo nope');
    // One solve at a time, so the scripted replies reach the attempts in order.
    const { dir, server } = await home(
      [
        { toolCalls: [{ name: 'apply_patch', arguments: { patch: GOLD } }] },
        { message: 'done' },
        { toolCalls: [{ name: 'apply_patch', arguments: { patch: wrong } }] },
        { message: 'done' },
      ],
      '\n[workers]\nsolve = 1\n',
    );
    const result = await solve(dir, ['--attempts', '2', '--json']);
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout.slice(0, result.stdout.lastIndexOf('}') + 1)) as {
      batch: string;
      tasks: Array<{
        task: string;
        sample: number;
        verdict: string;
        reason: string;
        grade: number;
      }>;
    };
    expect(summary.tasks.map((t) => [t.task, t.sample, t.verdict, t.reason])).toEqual([
      ['shell-div-zero', 1, 'PASS', 'PASS'],
      ['shell-div-zero', 2, 'FAIL', 'HIDDEN_FAILED'],
    ]);
    expect(server.requests).toHaveLength(4);
    const status = await proctor(['--home', dir, 'status', '--batch', summary.batch, '--json']);
    const listed = JSON.parse(status.stdout) as {
      batch: { total: number; outcomes: Record<string, number> };
      jobs: Array<{ kind: string; payload: { sample?: number } }>;
    };
    expect(listed.batch).toMatchObject({ total: 2, outcomes: { resolved: 1, unresolved: 1 } });
    expect(listed.jobs.map((j) => [j.kind, j.payload.sample])).toEqual([
      ['solve', 1],
      ['solve', 2],
    ]);
    const grades = await Promise.all(
      summary.tasks.map(async (t) => {
        const one = await proctor(['--home', dir, 'status', String(t.grade), '--json']);
        return (JSON.parse(one.stdout) as { jobs: Array<{ outcome: string }> }).jobs[0];
      }),
    );
    expect(grades.map((g) => g?.outcome)).toEqual(['resolved', 'unresolved']);
    expect(await leftovers(dir)).toEqual([]);
  }, 180_000);

  it('retries a solve the provider broke: it solves again and is graded', async () => {
    const { dir } = await home([
      { status: 503, body: '{"error": {"message": "overloaded"}}' },
      { toolCalls: [{ name: 'apply_patch', arguments: { patch: GOLD } }] },
      { message: 'done' },
    ]);
    const first = await solve(dir, ['--json']);
    expect(first.code).toBe(1);
    const { batch, tasks } = JSON.parse(
      first.stdout.slice(0, first.stdout.lastIndexOf('}') + 1),
    ) as { batch: string; tasks: Array<{ solve: number; reason: string }> };
    expect(tasks.map((t) => t.reason)).toEqual(['SOLVER_PROVIDER_ERROR']);
    const status = await proctor(['--home', dir, 'status', '--batch', batch, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ batch: { outcomes: { error: 1 } } });

    const retried = await proctor(['--home', dir, 'retry', '--batch', batch, '--wait', '--json'], {
      PROCTOR_SOLVE_KEY: KEY,
    });
    expect(retried.code).toBe(0);
    const rows = (JSON.parse(retried.stdout) as { retried: Array<Record<string, unknown>> })
      .retried;
    expect(rows).toMatchObject([{ job: tasks[0]?.solve, kind: 'solve', outcome: 'resolved' }]);
    const after = await proctor(['--home', dir, 'status', '--batch', batch, '--json']);
    expect(JSON.parse(after.stdout)).toMatchObject({
      batch: { total: 2, outcomes: { resolved: 1, error: 0, superseded: 1 } },
    });
    expect(await leftovers(dir)).toEqual([]);
  }, 180_000);

  it('grades a wrong fix FAIL, exit 1, with the hidden test named', async () => {
    const wrong = GOLD.replace('echo error', 'echo nope');
    const { dir } = await home([
      { toolCalls: [{ name: 'apply_patch', arguments: { patch: wrong } }] },
      { message: 'done' },
    ]);
    const result = await solve(dir);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/shell-div-zero\s+FAIL\s+HIDDEN_FAILED\s/);
    expect(lastLine(result.stdout)).toMatch(GATE);
  }, 120_000);

  it('rejects a candidate the capture refuses (a symlink), FAIL PATCH_REJECTED without a grade', async () => {
    const { dir } = await home([
      { toolCalls: [{ name: 'apply_patch', arguments: { patch: GOLD } }] },
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: 'ln -s /etc/passwd escape', timeout_s: null },
          },
        ],
      },
      { message: 'done' },
    ]);
    const result = await solve(dir);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/shell-div-zero\s+FAIL\s+PATCH_REJECTED\s+.*symlink/);
    expect(await leftovers(dir)).toEqual([]);
  }, 120_000);

  it.each<[string, Step[], string, RegExp]>([
    [
      'parallel tool calls',
      [
        {
          toolCalls: [
            { name: 'run_command', arguments: { command: 'true', timeout_s: null } },
            { name: 'run_command', arguments: { command: 'true', timeout_s: null } },
          ],
        },
      ],
      '',
      /SOLVER_PROTOCOL_ERROR\s+the model made 2 tool calls at once/,
    ],
    [
      'a repeated call id',
      [
        {
          toolCalls: [
            { id: 'same', name: 'run_command', arguments: { command: 'true', timeout_s: null } },
          ],
        },
        {
          toolCalls: [
            { id: 'same', name: 'run_command', arguments: { command: 'true', timeout_s: null } },
          ],
        },
      ],
      '',
      /SOLVER_PROTOCOL_ERROR\s+the model repeated the tool call id same/,
    ],
    [
      'malformed arguments',
      [{ toolCalls: [{ name: 'run_command', arguments: '{"command": 1' }] }],
      '',
      /SOLVER_PROTOCOL_ERROR\s+malformed arguments for run_command/,
    ],
    [
      'an unknown field',
      [
        {
          toolCalls: [
            { name: 'run_command', arguments: { command: 'true', timeout_s: null, shell: 'bash' } },
          ],
        },
      ],
      '',
      /SOLVER_PROTOCOL_ERROR\s+malformed arguments for run_command/,
    ],
    [
      'too many turns',
      Array.from({ length: 5 }, () => ({
        toolCalls: [{ name: 'run_command', arguments: { command: 'true', timeout_s: null } }],
      })),
      'max_turns = 2\n',
      /SOLVER_TURN_LIMIT\s+the model used all 2 turns/,
    ],
    [
      'too many tool calls',
      Array.from({ length: 5 }, () => ({
        toolCalls: [{ name: 'run_command', arguments: { command: 'true', timeout_s: null } }],
      })),
      'max_tool_calls = 1\n',
      /SOLVER_TOOL_CALL_LIMIT\s+the model made more than 1 tool calls/,
    ],
    [
      'too many tokens',
      [
        {
          toolCalls: [{ name: 'run_command', arguments: { command: 'true', timeout_s: null } }],
          usage: 5000,
        },
      ],
      'max_tokens = 1000\n',
      /SOLVER_TOKEN_LIMIT\s+the model used 5000 tokens/,
    ],
    [
      'a provider error',
      [{ status: 500 }],
      '',
      /SOLVER_PROVIDER_ERROR\s+the model provider failed \(HTTP 500\)/,
    ],
  ])(
    'ends the solve on %s: FAIL with the reason, no grade, exit 1',
    async (_, script, limits, reason) => {
      const { dir } = await home(script, limits);
      const result = await solve(dir);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(reason);
      expect(result.stdout).toMatch(/\s-\n/); // no grade job
      expect(lastLine(result.stdout)).toMatch(GATE);
      expect(await leftovers(dir)).toEqual([]);
    },
    120_000,
  );

  it('ends a solve whose provider hangs at the deadline (--timeout lowers solver_seconds)', async () => {
    const { dir } = await home([{ hang: true }]);
    const started = Date.now();
    const result = await solve(dir, ['--timeout', '3']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/SOLVER_TIMEOUT\s+the solver deadline/);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 120_000);

  it('stops the model loop within seconds of a cancel, and removes the solver container', async () => {
    const { dir, server } = await home([{ hang: true }]);
    const ended = await cancelWhileWaiting(
      dir,
      ['solve', TASK, '--solver', 'mini', '--wait'],
      { PROCTOR_SOLVE_KEY: KEY },
      () => server.requests.length === 1,
    );
    expect(ended.cancelCode).toBe(0);
    expect(ended.msAfterCancel).toBeLessThan(10_000);
    expect(ended.code).toBe(1);
    expect(ended.stdout).toMatch(/shell-div-zero\s+FAIL\s+CANCELLED/);
    expect(await leftovers(dir)).toEqual([]);
  }, 120_000);

  it('refuses an unknown profile and an unset key variable, exit 2', async () => {
    const { dir } = await home([]);
    const unknown = await proctor(['--home', dir, 'solve', TASK, '--solver', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--solver nope: no such profile .*\(profiles: mini\)/);
    const unset = await proctor(['--home', dir, 'solve', TASK, '--solver', 'mini'], {
      PROCTOR_SOLVE_KEY: '',
    });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/PROCTOR_SOLVE_KEY is not set/);
  }, 60_000);
});
