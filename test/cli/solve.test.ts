// `proctor solve` end to end with the flat adapter: the real binary and `openai` SDK against a
// scripted OpenAI-compatible server on 127.0.0.1, the real Docker engine, and the shell
// fixture task; each solve is captured and graded.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { openSqliteJobStore } from '../../src/queue/index.js';
import { cancelWhileWaiting, proctor, resultOf } from '../helpers/cli.js';
import { copyBundle } from '../helpers/bundles.js';
import { allBytes, leftovers } from '../helpers/home.js';
import { startModelServer, type Step } from '../helpers/model-server.js';
import { ROOT, spawnTs } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

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

const PRICES =
  'price_input_per_mtok = 2\nprice_cached_input_per_mtok = 0.5\nprice_output_per_mtok = 8\n';

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

  it("records the solve's tokens from each answer's usage, its turns, tool calls and cost", async () => {
    const { dir } = await home(
      [
        {
          toolCalls: [
            { name: 'read_file', arguments: { path: 'lib.sh', offset: null, limit: null } },
          ],
          usage: { prompt: 1000, cached: 400, completion: 50 },
        },
        {
          toolCalls: [{ name: 'apply_patch', arguments: { patch: GOLD } }],
          usage: { prompt: 2000, cached: 1500, completion: 100 },
        },
        { message: 'Fixed.', usage: { prompt: 3000, cached: 2500, completion: 20 } },
      ],
      PRICES,
    );
    const result = await solve(dir);
    expect(result.code).toBe(0);
    const solved = await resultOf(dir, 1);
    // prompt_tokens include the cached ones: 1600 uncached × $2, 4400 cached × $0.50 and
    // 170 output × $8 per million tokens.
    expect(solved).toMatchObject({
      usage: { inputTokens: 6000, cachedInputTokens: 4400, outputTokens: 170 },
      turns: 3,
      toolCalls: 2,
    });
    expect(solved['costUsd']).toBeCloseTo((1600 * 2 + 4400 * 0.5 + 170 * 8) / 1e6, 12);
    expect(solved['solveMs']).toBeGreaterThan(0);
    expect(result.stdout).toContain(
      'spent $0.0068 on 1 solve(s): 6000 input tokens (4400 cached), 170 output\n',
    );
    const shown = await proctor(['--home', dir, 'status', '1']);
    expect(shown.stdout).toContain(
      'job 1 spent: 6000 input tokens (4400 cached), 170 output, 3 turns, 2 tool calls, $0.0068\n',
    );
  }, 120_000);

  it('records usage and cost as null (not zeros) when the provider sends no usage', async () => {
    const { dir } = await home(
      [
        {
          toolCalls: [{ name: 'run_command', arguments: { command: 'true', timeout_s: null } }],
          usage: null,
        },
        { message: 'done', usage: null },
      ],
      PRICES,
    );
    const result = await solve(dir);
    expect(result.stdout).toContain('spent $0.0000 on 1 solve(s) (1 without a cost)');
    const shown = await proctor(['--home', dir, 'status', '1']);
    expect(shown.stdout).toMatch(
      /job 1 spent: tokens unknown \(no usage from the provider\), 2 turns, 1 tool calls, no cost/,
    );
    expect(await resultOf(dir, 1)).toMatchObject({
      usage: null,
      costUsd: null,
      turns: 2,
      toolCalls: 1,
    });
  }, 120_000);

  it('records usage but no cost without prices in the profile', async () => {
    const { dir } = await home([{ message: 'done', usage: { prompt: 7, completion: 3 } }]);
    await solve(dir);
    expect(await resultOf(dir, 1)).toMatchObject({
      usage: { inputTokens: 7, cachedInputTokens: 0, outputTokens: 3 },
      costUsd: null,
      turns: 1,
      toolCalls: 0,
    });
  }, 120_000);

  it('--max-cost: once the batch has spent the cap no solve starts; the rest end cancelled BUDGET', async () => {
    // Each solve's one answer costs $1 (a million input tokens at $1) and ends it at once on
    // max_tokens, so no grade runs; one solve slot runs them in order.
    const answer: Step = { message: 'done', usage: { prompt: 1_000_000, completion: 0 } };
    const server = await startModelServer([answer, answer, answer, answer]);
    const dir = tempDir();
    writeFileSync(
      join(dir, 'proctor.toml'),
      `[workers]\nsolve = 1\n[solvers.mini]\nadapter = "flat"\nbase_url = "${server.baseUrl}"\nmodel = "scripted"\napi_key_env = "PROCTOR_SOLVE_KEY"\nmax_tokens = 10\nprice_input_per_mtok = 1\nprice_output_per_mtok = 1\n`,
    );
    const tasks = [1, 2, 3, 4].map((n) =>
      copyBundle({ editToml: (toml) => toml.replace('"shell-div-zero"', `"budget-${n}"`) }),
    );
    const result = await proctor(
      ['--home', dir, 'solve', ...tasks, '--solver', 'mini', '--max-cost', '1.5', '--wait'],
      { PROCTOR_SOLVE_KEY: KEY },
    );
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/budget-1\s+FAIL\s+SOLVER_TOKEN_LIMIT\s/);
    expect(result.stdout).toMatch(/budget-2\s+FAIL\s+SOLVER_TOKEN_LIMIT\s/);
    // Solve 3 started at $2 spent and was stopped before it ran; solve 4 never left the queue.
    expect(result.stdout).toMatch(
      /budget-3\s+FAIL\s+BUDGET\s+BUDGET: the batch has spent \$2\.0000/,
    );
    expect(result.stdout).toMatch(/budget-4\s+FAIL\s+BUDGET\s/);
    expect(server.requests).toHaveLength(2);
    expect(result.stdout).toContain(
      'spent $2.0000 on 2 solve(s): 2000000 input tokens (0 cached), 0 output',
    );

    const status = await proctor([
      '--home',
      dir,
      'status',
      '--batch',
      batchOf(result.stdout),
      '--json',
    ]);
    const { jobs } = JSON.parse(status.stdout) as {
      jobs: Array<{
        status: string;
        errorCode: string | null;
        result: { costUsd?: number } | null;
      }>;
    };
    expect(jobs.map((j) => [j.status, j.errorCode, j.result?.costUsd ?? null])).toEqual([
      ['done', null, 1],
      ['done', null, 1],
      ['cancelled', 'BUDGET', null],
      ['cancelled', 'BUDGET', null],
    ]);
    const table = await proctor(['--home', dir, 'status', '--batch', batchOf(result.stdout)]);
    expect(table.stdout).toMatch(/cancelled \(BUDGET\)/);
    expect(await leftovers(dir)).toEqual([]);
  }, 180_000);

  /** A flat profile whose every answer costs $1 (1000 input tokens at $1000 a million). */
  const dollarAnswers = (baseUrl: string, workers: number) =>
    `[workers]\nsolve = ${workers}\n[solvers.mini]\nadapter = "flat"\nbase_url = "${baseUrl}"\nmodel = "scripted"\napi_key_env = "PROCTOR_SOLVE_KEY"\nprice_input_per_mtok = 1000\nprice_output_per_mtok = 0\n`;
  const busyWork = (n: number): Step[] =>
    Array.from({ length: n }, () => ({
      toolCalls: [{ name: 'run_command', arguments: { command: 'true', timeout_s: null } }],
      usage: { prompt: 1000, completion: 0 },
    }));

  it('--max-cost: a running flat solve stops at its next model request once the batch reaches the cap', async () => {
    const server = await startModelServer(busyWork(12));
    const dir = tempDir();
    writeFileSync(join(dir, 'proctor.toml'), dollarAnswers(server.baseUrl, 1));
    const result = await proctor(
      ['--home', dir, 'solve', TASK, '--solver', 'mini', '--max-cost', '2.5', '--wait'],
      { PROCTOR_SOLVE_KEY: KEY },
    );
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.stdout).toMatch(
      /FAIL\s+BUDGET_EXCEEDED\s+.*the batch has spent \$3\.0000, reaching its cost cap of \$2\.5/,
    );
    // The third answer crossed the cap and was still used; the fourth request was never sent.
    expect(server.requests).toHaveLength(3);
    const store = openSqliteJobStore(join(dir, 'proctor.db'), { clock: systemClock });
    try {
      expect(await store.batchSpent(batchOf(result.stdout))).toBe(3);
    } finally {
      await store.close();
    }
    expect(await resultOf(dir, 1)).toMatchObject({ costUsd: 3, turns: 3, toolCalls: 3 });
    expect(await leftovers(dir)).toEqual([]);
  }, 180_000);

  it('--max-cost: two running flat solves of one batch stop together, over the cap by the answers in flight', async () => {
    const server = await startModelServer(busyWork(30));
    const dir = tempDir();
    writeFileSync(join(dir, 'proctor.toml'), dollarAnswers(server.baseUrl, 2));
    const tasks = [1, 2].map((n) =>
      copyBundle({ editToml: (toml) => toml.replace('"shell-div-zero"', `"capped-${n}"`) }),
    );
    const result = await proctor(
      ['--home', dir, 'solve', ...tasks, '--solver', 'mini', '--max-cost', '4.5', '--wait'],
      { PROCTOR_SOLVE_KEY: KEY },
    );
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.stdout).toMatch(/capped-1\s+FAIL\s+BUDGET_EXCEEDED\s/);
    expect(result.stdout).toMatch(/capped-2\s+FAIL\s+BUDGET_EXCEEDED\s/);
    // $5 reaches the cap; one answer of the other solve may have been in flight then.
    const sent = server.requests.length;
    expect(sent).toBeGreaterThanOrEqual(5);
    expect(sent).toBeLessThanOrEqual(6);
    const store = openSqliteJobStore(join(dir, 'proctor.db'), { clock: systemClock });
    try {
      expect(await store.batchSpent(batchOf(result.stdout))).toBe(sent);
    } finally {
      await store.close();
    }
    expect(await leftovers(dir)).toEqual([]);
  }, 180_000);

  it.each([
    ['0', /--max-cost: expected an amount of USD above 0/],
    [
      '-1',
      /--max-cost: expected an amount of USD above 0 in decimal digits \(e\.g\. 12\.50\), got `-1`/,
    ],
    ['1e3', /got `1e3`/],
    ['Infinity', /got `Infinity`/],
    ['0.0000001', /got `0\.0000001`/],
    ['', /got ``/],
  ])(
    'refuses --max-cost %j, exit 2',
    async (value, message) => {
      const { dir } = await home([], PRICES);
      const refused = await proctor(
        ['--home', dir, 'solve', TASK, '--solver', 'mini', '--max-cost', value],
        { PROCTOR_SOLVE_KEY: KEY },
      );
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(message);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    },
    60_000,
  );

  it('refuses --max-cost for a profile without prices, exit 2, and enqueues nothing', async () => {
    const { dir } = await home([]);
    const refused = await proctor(
      ['--home', dir, 'solve', TASK, '--solver', 'mini', '--max-cost', '5'],
      { PROCTOR_SOLVE_KEY: KEY },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /--max-cost: solver mini has no prices \(set price_input_per_mtok/,
    );
    const status = await proctor(['--home', dir, 'status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ batches: [] });
  }, 60_000);

  it("fails a capped solve CONFIG_INVALID when the worker's profile has no prices, calling no model", async () => {
    const { dir, server } = await home([{ message: 'done' }], PRICES);
    const queued = await proctor(
      ['--home', dir, 'solve', TASK, '--solver', 'mini', '--max-cost', '1'],
      { PROCTOR_SOLVE_KEY: KEY },
    );
    expect(queued.code).toBe(0);
    const toml = join(dir, 'proctor.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8').replace(PRICES, ''));
    const worker = spawnTs(join(ROOT, 'bin', 'proctor.js'), ['--home', dir, 'worker'], {
      PROCTOR_SOLVE_KEY: KEY,
      PROCTOR_HOME: '',
    });
    const job = await waitFor(
      async () => {
        const status = await proctor(['--home', dir, 'status', '1', '--json']);
        const [found] = (JSON.parse(status.stdout) as { jobs: Array<Record<string, unknown>> })
          .jobs;
        return found?.['status'] === 'failed' ? found : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'the solve to fail' },
    );
    expect(job).toMatchObject({ errorCode: 'CONFIG_INVALID', result: null });
    expect(job['error']).toMatch(
      /solver mini: the batch has a cost cap but the profile sets no prices/,
    );
    expect(server.requests).toHaveLength(0);
    worker.process.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
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

/** The batch id of `proctor solve --wait`'s summary line. */
function batchOf(stdout: string): string {
  const id = /\(batch ([^)]+)\)/.exec(stdout)?.[1];
  if (id === undefined) throw new Error(`no batch in ${stdout}`);
  return id;
}
