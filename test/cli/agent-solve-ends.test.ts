// `proctor solve --agent FILE` with a user's own definition whose agent is a small shell script
// on the host (install.binary): a crash, a hang past the deadline and an output flood each end
// the solve with its reason, the partial patch it left stored; and two concurrent solves of one
// batch with a cost cap, against the scripted provider with prices, stop together at the cap.
// One layer serves the file (the definitions differ only in how the agent is started).
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { allBytes, leftovers } from '../helpers/home.js';
import { startProtocolServer, type UpstreamStep } from '../helpers/protocol-server.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const KEY = 'sk-agentendsplanted0123456789abcdefKEY';

// What it does is in the task's description (on stdin), or its first argument. Each mode
// first leaves an edit in the work tree: the partial patch a failed solve still stores.
const AGENT = `#!/bin/sh
mode=$1
[ -n "$mode" ] || mode=$(cat | grep -o 'MODE-[a-z]*' | head -n 1)
echo partial > partial.txt
case $mode in
  MODE-crash) echo "fatal: the model is unreachable" >&2; exit 3 ;;
  MODE-hang) sleep 1000 ;;
  MODE-flood) yes "flood flood flood flood flood flood flood" ;;
  spend) exec /opt/proctor/node/bin/node -e '
    const ask = () => fetch(process.env.FAKE_BASE_URL + "/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer " + process.env.FAKE_API_KEY },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }] }),
    });
    (async () => {
      for (let i = 0; i < 20; i++) {
        const res = await ask();
        await res.text();
        console.log("answer", res.status);
        if (res.status !== 200) return;
      }
    })();' ;;
esac
`;

function definition(dir: string, command: string[]): string {
  const path = join(dir, 'fake.toml');
  writeFileSync(
    path,
    [
      'name = "fake-ends"',
      'protocol = "openai-chat"',
      'prompt = "stdin"',
      `command = ${JSON.stringify(command)}`,
      '[install]',
      'binary = "fake-agent"',
      '[env]',
      'FAKE_BASE_URL = "{{base_url}}"',
      'FAKE_API_KEY = "{{token}}"',
      '',
    ].join('\n'),
  );
  return path;
}

/** A home whose profile `byo` points at a scripted provider, with the fake agent beside it. */
async function home(profile: string[], otherwise?: () => UpstreamStep) {
  const server = await startProtocolServer([], otherwise ? { otherwise } : {});
  const dir = tempDir();
  writeFileSync(
    join(dir, 'proctor.toml'),
    [
      // Any adapter: --agent runs the agent through the profile's provider.
      '[solvers.byo]',
      'adapter = "flat"',
      `base_url = "${server.baseUrl}"`,
      'model = "scripted"',
      'api_key_env = "PROCTOR_AGENT_KEY"',
      ...profile,
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'fake-agent'), AGENT);
  chmodSync(join(dir, 'fake-agent'), 0o755);
  return { dir, server };
}

/** A suite of copies of the shell task, one per name, each description naming its mode. */
function suite(names: string[]): string {
  const dir = join(tempDir('proctor-suite-'), 'suite');
  for (const name of names) {
    const task = join(dir, name);
    mkdirSync(task, { recursive: true });
    cpSync(TASK, task, { recursive: true });
    const toml = join(task, 'task.toml');
    writeFileSync(
      toml,
      readFileSync(toml, 'utf8').replace('id = "shell-div-zero"', `id = "ends-${name}"`),
    );
    writeFileSync(join(task, 'description.md'), `Fix it. MODE-${name}\n`);
  }
  return dir;
}

interface Row {
  status: string;
  result: {
    task: { id: string };
    verdict: string;
    reason: string;
    detail: string;
    end: { reason: string };
    candidate: { files: number } | null;
    agent?: { outcome: string; exitCode: number | null };
    costUsd: number | null;
  } | null;
}

/** The batch's `count` solves (enqueued first: jobs 1 to count). */
async function solves(dir: string, count: number): Promise<Row[]> {
  const ids = Array.from({ length: count }, (_, i) => String(i + 1));
  const status = await proctor(['--home', dir, 'status', ...ids, '--json']);
  expect(status.code).toBe(0);
  const { jobs } = JSON.parse(status.stdout) as { jobs: Array<Row & { kind: string }> };
  return jobs.filter((j) => j.kind === 'solve');
}

describe('proctor solve --agent FILE: an agent that misbehaves', () => {
  it('ends a crash AGENT_CRASHED, a hang SOLVER_TIMEOUT and a flood AGENT_OUTPUT_FLOOD, each partial patch stored', async () => {
    const { dir, server } = await home(['[workers]', 'solve = 3']);
    const agent = definition(dir, ['fake-agent']);
    const result = await proctor(
      [
        '--home',
        dir,
        'solve',
        suite(['crash', 'hang', 'flood']),
        '--solver',
        'byo',
        '--agent',
        agent,
        '--timeout',
        '30',
        '--wait',
      ],
      { PROCTOR_AGENT_KEY: KEY },
    );
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/ends-crash\s+FAIL\s+AGENT_CRASHED\s/);
    expect(result.stdout).toMatch(/ends-hang\s+FAIL\s+SOLVER_TIMEOUT\s/);
    expect(result.stdout).toMatch(/ends-flood\s+FAIL\s+AGENT_OUTPUT_FLOOD\s/);
    const byTask = Object.fromEntries(
      (await solves(dir, 3)).map((j) => [j.result!.task.id, j.result!]),
    );
    expect(byTask['ends-crash']).toMatchObject({
      reason: 'AGENT_CRASHED',
      end: { reason: 'agent_crashed' },
      detail: 'the agent exit 3: fatal: the model is unreachable',
      agent: { outcome: 'crashed', exitCode: 3 },
    });
    expect(byTask['ends-hang']).toMatchObject({
      reason: 'SOLVER_TIMEOUT',
      end: { reason: 'deadline' },
    });
    expect(byTask['ends-flood']).toMatchObject({
      reason: 'AGENT_OUTPUT_FLOOD',
      end: { reason: 'output_flood' },
      agent: { outcome: 'output_flood' },
    });
    for (const id of ['ends-crash', 'ends-hang', 'ends-flood']) {
      expect(byTask[id]?.candidate, id).toMatchObject({ files: 1 });
    }
    // The agent never asked for a model; nothing reached the provider.
    expect(server.requests).toHaveLength(0);
    expect(allBytes(dir).includes(KEY)).toBe(false);
    expect(await leftovers(dir)).toEqual([]);
  }, 900_000);
});

describe('proctor solve --agent FILE --max-cost: concurrent solves of one batch', () => {
  it('stop together once their spend reaches the batch’s cap', async () => {
    // Both agents' first requests are held until both have arrived: the two solves surely run
    // at the same time, each started with the whole cap left.
    let release = () => {};
    const both = new Promise<void>((resolve) => (release = resolve));
    let first = 0;
    const { dir, server } = await home(
      [
        // 120 tokens an answer (the scripted default) at $1000 per million: $0.12.
        'price_input_per_mtok = 1000',
        'price_output_per_mtok = 1000',
        '[workers]',
        'solve = 2',
      ],
      () => {
        if (++first === 2) release();
        return first <= 2 ? { until: both, then: { text: 'ok' } } : { text: 'ok' };
      },
    );
    const agent = definition(dir, ['fake-agent', 'spend']);
    const result = await proctor(
      [
        '--home',
        dir,
        'solve',
        suite(['one', 'two']),
        '--solver',
        'byo',
        '--agent',
        agent,
        '--max-cost',
        '0.3',
        '--timeout',
        '120',
        '--wait',
      ],
      { PROCTOR_AGENT_KEY: KEY },
    );
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.stdout).toMatch(/ends-one\s+FAIL\s+BUDGET_EXCEEDED\s/);
    expect(result.stdout).toMatch(/ends-two\s+FAIL\s+BUDGET_EXCEEDED\s/);
    // Each alone would have gone on to $0.36 (three answers), $0.72 together. Drawing on one
    // ledger, a request is admitted only while the batch is under $0.30: two answers at once,
    // then at most one more each, in flight together.
    expect(server.requests.length).toBeGreaterThanOrEqual(3);
    expect(server.requests.length).toBeLessThanOrEqual(4);
    const rows = await solves(dir, 2);
    const spent = rows.reduce((sum, j) => sum + (j.result?.costUsd ?? 0), 0);
    expect(spent).toBeCloseTo(server.requests.length * 0.12, 6);
    for (const row of rows) {
      expect(row.result?.detail).toMatch(
        /^the batch has spent \$0\.\d{4}, reaching its cost cap of \$0\.3$/,
      );
    }
    expect(await leftovers(dir)).toEqual([]);
  }, 900_000);
});
