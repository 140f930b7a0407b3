// `proctor solve PATH… --solver NAME [--agent NAME|FILE] [--model M] [--timeout S]
// [--attempts K] [--max-cost USD] [--wait]`:
// K independent solve jobs per bundle of the given bundles and suites (one batch; each carries
// its `sample`, 1..K, and its grade carries it too), each of which enqueues its grade. With
// --wait, every solve and then every grade is waited for; with one task, the grade's gate line
// is printed last (a solve ended by a limit or a rejection is a FAIL whose reason names it).
// --max-cost goes into every solve's payload; a solve that starts once the batch's spend has
// reached it ends, with the queued rest, as cancelled (BUDGET).
// --agent runs that CLI agent in the sandbox through the profile's provider (src/solvers/agent.ts),
// whatever the profile's adapter; a definition file is given to the workers by its absolute path.
// --model replaces the profile's model.
// Exit: 0 enqueued / PASS; 1 any FAIL; 2 usage errors (unknown profile, unset key variable,
// a bad --max-cost or one without prices in the profile).
import { resolve } from 'node:path';
import { resolveAgent } from '../agents/builtin.js';
import { solverKey, solverPrices, type SolverProfile } from '../config.js';
import { ProctorError } from '../errors.js';
import { createLogger } from '../logger.js';
import { gateLine, testsHash, type Bundle } from '../oracle/index.js';
import type { Job } from '../queue/index.js';
import { createRuntime, type GradeResult, type SolveResult } from '../workers/index.js';
import { loadBundles } from './bundles.js';
import { batchSpend, batchSpendText } from './spend.js';
import type { CommandContext } from './context.js';
import { formatTable } from './table.js';
import { waitForJobs } from './wait.js';

export interface SolveOptions {
  solver: string;
  timeout?: number;
  /** Independent solves per task, 1..100. Default 1. */
  attempts?: number;
  wait?: boolean;
  json?: boolean;
  /** USD, as typed: a decimal number > 0. */
  maxCost?: string;
  /** A built-in agent's name or a definition file. */
  agent?: string;
  model?: string;
}

const USD = /^(0|[1-9][0-9]{0,8})(\.[0-9]{1,6})?$/;

/** `--max-cost` as USD: plain decimal digits (at most 6 after the point), > 0, < 10^9. */
export function parseMaxCost(text: string): number {
  const value = USD.test(text) ? Number(text) : NaN;
  if (!(value > 0)) {
    const shown = JSON.stringify(text.slice(0, 40)).slice(1, -1);
    throw new ProctorError(
      'USAGE',
      `--max-cost: expected an amount of USD above 0 in decimal digits (e.g. 12.50), got \`${shown}\``,
    );
  }
  return value;
}

interface Row {
  task: string;
  sample: number;
  solve: number;
  grade: number | null;
  verdict: 'PASS' | 'FAIL' | 'error';
  reason: string;
  detail: string;
  testsHash: string;
}

export async function solveCommand(
  context: CommandContext,
  paths: string[],
  options: SolveOptions,
): Promise<number> {
  const { io, config } = context;
  const profile = config.solvers[options.solver];
  if (!profile) {
    const names = Object.keys(config.solvers);
    throw new ProctorError(
      'USAGE',
      `--solver ${options.solver}: no such profile in ${config.home}/proctor.toml (profiles: ${names.join(', ') || 'none'})`,
    );
  }
  if (solverKey(profile) === undefined) {
    throw new ProctorError(
      'USAGE',
      `--solver ${options.solver}: the variable ${profile.api_key_env} is not set`,
    );
  }
  const agent = agentOption(options.agent, profile, config.home);
  if (options.model !== undefined && !/^[^\s]{1,200}$/.test(options.model)) {
    throw new ProctorError(
      'USAGE',
      `--model: expected a model name of 1 to 200 characters without spaces, got \`${options.model.slice(0, 40)}\``,
    );
  }
  const maxCostUsd = options.maxCost === undefined ? undefined : parseMaxCost(options.maxCost);
  if (maxCostUsd !== undefined && solverPrices(profile) === null) {
    throw new ProctorError(
      'USAGE',
      `--max-cost: solver ${options.solver} has no prices (set price_input_per_mtok and price_output_per_mtok in its profile)`,
    );
  }
  const { bundles, suiteTasks } = await loadBundles(io, paths);
  if (bundles.length === 0) throw new ProctorError('USAGE', 'no valid bundle to solve');
  const runtime = createRuntime(config, context.clock, createLogger({ level: 'warn' }));
  try {
    const attempts = options.attempts ?? 1;
    const samples = Array.from({ length: attempts }, (_, i) => i + 1);
    const { batch } = await runtime.store.enqueueBatch({
      label: `solve ${options.solver} ${paths.join(' ')}`.slice(0, 200),
      // Task by task, each task's samples together. A single attempt names no sample (it is 1).
      jobs: bundles.flatMap((bundle) =>
        samples.map((sample) => ({
          kind: 'solve' as const,
          payload: {
            bundle: bundle.dir,
            solver: options.solver,
            ...(options.timeout === undefined ? {} : { timeoutSeconds: options.timeout }),
            ...(attempts > 1 ? { sample } : {}),
            ...(maxCostUsd === undefined ? {} : { maxCostUsd }),
            ...(agent === undefined ? {} : { agent }),
            ...(options.model === undefined ? {} : { model: options.model }),
          },
        })),
      ),
    });
    if (batch === null) throw new ProctorError('INTERNAL', 'the batch was not created');
    // What `proctor report` counts "not submitted" against (a bundle that did not load).
    await runtime.store.recordBatchSuite(batch.id, suiteTasks);
    if (!options.wait) {
      const each =
        attempts > 1 ? ` (${attempts} attempts for each of ${bundles.length} task(s))` : '';
      io.out(
        `batch ${batch.id}: ${bundles.length * attempts} solve job(s) enqueued with solver ${options.solver}${each}`,
      );
      return 0;
    }
    const progress = { progress: !options.json, isTty: process.stderr.isTTY === true };
    const solved = await waitForJobs(
      context,
      runtime,
      { batchId: batch.id, label: 'solve', verdictNames: { PASS: 'solved', FAIL: 'stopped' } },
      progress,
    );
    if (solved.interrupted) return 130;
    const rows: Row[] = [];
    for (const job of solved.jobs) rows.push(await finish(context, runtime, job, bundles));
    const spend = batchSpend(solved.jobs);
    if (options.json) io.out(JSON.stringify({ batch: batch.id, tasks: rows, spend }, null, 2));
    else {
      io.out(
        formatTable(
          [
            'TASK',
            ...(attempts > 1 ? ['SAMPLE'] : []),
            'VERDICT',
            'REASON',
            'DETAIL',
            'SOLVE',
            'GRADE',
          ],
          rows.map((r) => [
            r.task,
            ...(attempts > 1 ? [String(r.sample)] : []),
            r.verdict,
            r.reason,
            r.detail.slice(0, 100),
            String(r.solve),
            r.grade === null ? '-' : String(r.grade),
          ]),
        ),
      );
      const passed = rows.filter((r) => r.verdict === 'PASS').length;
      io.out(`${passed} PASS, ${rows.length - passed} FAIL (batch ${batch.id})`);
      io.out(batchSpendText(spend));
    }
    if (rows.length === 1 && rows[0]) io.out(gateLine(rows[0].testsHash));
    return rows.every((r) => r.verdict === 'PASS') ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

/**
 * `--agent` as the payload carries it (a built-in's name, or a definition file's absolute
 * path), checked here so that a bad definition is one line now rather than a failed job; with
 * none, the profile's own agent (adapter "agent") is checked the same way.
 */
function agentOption(
  option: string | undefined,
  profile: SolverProfile,
  home: string,
): string | undefined {
  const given = option ?? (profile.adapter === 'agent' ? profile.agent : undefined);
  if (given === undefined) return undefined;
  const isPath = given.includes('/') || given.endsWith('.toml');
  resolveAgent(isPath ? (option === undefined ? resolve(home, given) : resolve(given)) : given);
  return option === undefined ? undefined : isPath ? resolve(given) : given;
}

/** The outcome of one solve: its grade's verdict, or why it stopped. */
async function finish(
  context: CommandContext,
  runtime: ReturnType<typeof createRuntime>,
  job: Job,
  bundles: Bundle[],
): Promise<Row> {
  const payload = job.payload as { bundle: string; sample?: number };
  const task = bundles.find((b) => b.dir === payload.bundle)?.id ?? '?';
  const sample = payload.sample ?? 1;
  const empty = testsHash([]);
  if (job.status !== 'done') {
    return {
      task,
      sample,
      solve: job.id,
      grade: null,
      verdict: job.status === 'failed' ? 'error' : 'FAIL',
      reason:
        job.status !== 'cancelled' ? 'ERROR' : job.errorCode === 'BUDGET' ? 'BUDGET' : 'CANCELLED',
      detail: job.lastError ?? job.status,
      testsHash: empty,
    };
  }
  const solve = job.result as SolveResult;
  if (solve.verdict !== 'PASS') {
    return {
      task,
      sample,
      solve: job.id,
      grade: null,
      verdict: 'FAIL',
      reason: solve.reason,
      detail: solve.detail,
      testsHash: empty,
    };
  }
  const [child] = (await runtime.store.listJobs({ kind: 'grade', parentId: job.id })).items;
  if (!child)
    return {
      task,
      sample,
      solve: job.id,
      grade: null,
      verdict: 'error',
      reason: 'ERROR',
      detail: 'no grade job',
      testsHash: empty,
    };
  const graded = await waitForJobs(
    context,
    runtime,
    { jobId: child.id, label: 'grade', verdictNames: { PASS: 'PASS', FAIL: 'FAIL' } },
    { progress: false, isTty: false },
  );
  const grade = graded.jobs[0];
  if (!grade || grade.status !== 'done') {
    return {
      task,
      sample,
      solve: job.id,
      grade: child.id,
      verdict: 'error',
      reason: 'ERROR',
      detail: grade?.lastError ?? 'the grade did not finish',
      testsHash: empty,
    };
  }
  const result = grade.result as GradeResult;
  return {
    task,
    sample,
    solve: job.id,
    grade: grade.id,
    verdict: result.verdict,
    reason: result.reason,
    detail: result.detail,
    testsHash: result.testsHash,
  };
}
