// The batch cost cap (`--max-cost`) with agents that keep asking the model (the fake agent's
// `spend` mode, test/helpers/fake-agent.ts), against the scripted provider with prices: the
// solves of one batch stop together at the cap, whether they run in one worker process, in two
// `proctor worker` processes on one SQLite home, or on two hosts (two homes, two host
// identities) sharing a PostgreSQL job table. The spend is the store's (batches.spent_usd), so
// what a solve in one process spends stops the solves of the other.
//
// Each answer costs $0.12 (120 tokens at $1000 per million) and the cap is $0.30. Both agents'
// first requests are held at the provider until both have arrived, so the two solves surely run
// at the same time (with one solve slot per worker, in two processes), each started with the
// whole cap left. Each alone would go on to $0.36 (three answers), $0.72 together; drawing on
// one spend, a request is admitted only while the batch is under $0.30: the two first answers,
// then at most one more each (in flight together), so 3 or 4 answers and never more than the
// cap plus the two answers in flight.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { openPgJobStore } from '../../src/queue/pg/store.js';
import { openSqliteJobStore, type JobStore } from '../../src/queue/index.js';
import { proctor } from '../helpers/cli.js';
import {
  fakeAgentDefinition,
  fakeAgentHome,
  fakeAgentSetup,
  fakeAgentSolves,
  fakeAgentSuite,
  type SolveRow,
} from '../helpers/fake-agent.js';
import { leftovers } from '../helpers/home.js';
import { emptyPgDatabase } from '../helpers/postgres.js';
import { ROOT, spawnTs, type Child } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const KEY = 'sk-agentcapplanted0123456789abcdefKEY';
const BIN = join(ROOT, 'bin', 'proctor.js');
const ANSWER_USD = 0.12;
const CAP_USD = 0.3;

/** A home whose provider holds the first two requests until both have arrived. */
async function cappedSetup(slots: number) {
  let release = () => {};
  const both = new Promise<void>((resolve) => (release = resolve));
  let first = 0;
  const setup = await fakeAgentSetup(
    [
      'price_input_per_mtok = 1000',
      'price_output_per_mtok = 1000',
      '[workers]',
      `solve = ${slots}`,
      'baseline = 1',
      'grade = 1',
    ],
    () => {
      if (++first === 2) release();
      return first <= 2 ? { until: both, then: { text: 'ok' } } : { text: 'ok' };
    },
  );
  return { ...setup, agent: fakeAgentDefinition(setup.dir, ['fake-agent', 'spend']) };
}

const solveArgs = (agent: string) => [
  'solve',
  fakeAgentSuite(['one', 'two']),
  '--solver',
  'byo',
  '--agent',
  agent,
  '--max-cost',
  String(CAP_USD),
  '--timeout',
  '120',
];

/** What the two solves ended with, and what the batch spent by the store's own account. */
async function expectStoppedTogether(
  rows: SolveRow[],
  requests: number,
  batchSpentUsd: number,
): Promise<void> {
  expect(rows.map((r) => [r.status, r.result?.reason])).toEqual([
    ['done', 'BUDGET_EXCEEDED'],
    ['done', 'BUDGET_EXCEEDED'],
  ]);
  for (const row of rows) {
    expect(row.result?.detail).toMatch(
      /^the batch has spent \$0\.\d{4}, reaching its cost cap of \$0\.3$/,
    );
  }
  expect(requests).toBeGreaterThanOrEqual(3);
  expect(requests).toBeLessThanOrEqual(4);
  const spent = rows.reduce((sum, r) => sum + (r.result?.costUsd ?? 0), 0);
  expect(spent).toBeCloseTo(requests * ANSWER_USD, 6);
  expect(batchSpentUsd).toBeCloseTo(requests * ANSWER_USD, 6);
  // The cap plus one answer in flight per running solve.
  expect(batchSpentUsd).toBeLessThanOrEqual(CAP_USD + 2 * ANSWER_USD + 1e-9);
}

/** The spend the job store holds for the home's (only) batch. */
async function storedSpend(home: string, db?: string): Promise<number> {
  const store: JobStore =
    db === undefined
      ? openSqliteJobStore(join(home, 'proctor.db'), { clock: systemClock })
      : openPgJobStore(db);
  try {
    const { items } = await store.listBatches();
    expect(items).toHaveLength(1);
    return await store.batchSpent(items[0]!.id);
  } finally {
    await store.close();
  }
}

/** Waits until both solves have finished, then stops the workers (each must drain, exit 0). */
async function finish(home: string, workers: Child[], db: string[] = []): Promise<SolveRow[]> {
  const rows = await waitFor(
    async () => {
      const found = await fakeAgentSolves(home, 2, db);
      return found.every((r) => r.status !== 'queued' && r.status !== 'running')
        ? found
        : undefined;
    },
    { what: 'both solves to end', timeoutMs: 600_000, intervalMs: 500 },
  );
  for (const worker of workers) worker.process.kill('SIGTERM');
  for (const worker of workers) {
    const { code } = await worker.exited;
    expect(code, worker.stderr()).toBe(0);
  }
  return rows;
}

describe('proctor solve --agent FILE --max-cost: the solves of one batch', () => {
  it('stop together at the cap in one worker process', async () => {
    const { dir, server, agent } = await cappedSetup(2);
    const result = await proctor(['--home', dir, ...solveArgs(agent), '--wait'], {
      PROCTOR_AGENT_KEY: KEY,
    });
    expect(result.stderr).not.toMatch(/proctor: /);
    expect(result.stdout).toMatch(/ends-one\s+FAIL\s+BUDGET_EXCEEDED\s/);
    expect(result.stdout).toMatch(/ends-two\s+FAIL\s+BUDGET_EXCEEDED\s/);
    await expectStoppedTogether(
      await fakeAgentSolves(dir, 2),
      server.requests.length,
      await storedSpend(dir),
    );
    expect(await leftovers(dir)).toEqual([]);
  }, 900_000);

  it('stop together at the cap in two `proctor worker` processes on one SQLite home', async () => {
    const { dir, server, agent } = await cappedSetup(1);
    const queued = await proctor(['--home', dir, ...solveArgs(agent)], {
      PROCTOR_AGENT_KEY: KEY,
    });
    expect(queued.stderr).toBe('');
    expect(queued.code).toBe(0);
    // One solve slot each: the two solves, held at the provider together, run one per process.
    const env = { PROCTOR_AGENT_KEY: KEY, PROCTOR_HOME: '' };
    const workers = [1, 2].map(() => spawnTs(BIN, ['--home', dir, 'worker'], env));
    const rows = await finish(dir, workers);
    await expectStoppedTogether(rows, server.requests.length, await storedSpend(dir));
    expect(await leftovers(dir)).toEqual([]);
  }, 900_000);

  it('stop together at the cap on two hosts sharing a PostgreSQL job table', async () => {
    const url = await emptyPgDatabase();
    const { dir, server, agent, toml } = await cappedSetup(1);
    const db = ['--db', url];
    const queued = await proctor(['--home', dir, ...db, ...solveArgs(agent)], {
      PROCTOR_AGENT_KEY: KEY,
    });
    expect(queued.stderr).toBe('');
    expect(queued.code).toBe(0);
    // A second host: its own home (the same profile) and host identity, the same database.
    const other = fakeAgentHome(toml);
    const workers = [
      { home: dir, host: 'cap-h1' },
      { home: other, host: 'cap-h2' },
    ].map(({ home, host }) =>
      spawnTs(BIN, ['--home', home, ...db, 'worker'], {
        PROCTOR_AGENT_KEY: KEY,
        PROCTOR_HOME: '',
        PROCTOR_HOST: host,
      }),
    );
    const rows = await finish(dir, workers, db);
    await expectStoppedTogether(rows, server.requests.length, await storedSpend(dir, url));
    expect(await leftovers(dir, 'cap-h1')).toEqual([]);
    expect(await leftovers(other, 'cap-h2')).toEqual([]);
  }, 900_000);
});
