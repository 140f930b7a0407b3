// `proctor status [JOB…] [--batch ID] [--json]`: counts by status, recent batches with rate
// and ETA, or the named jobs. Always bounded: at most MAX_PAGE jobs or batches. A named job or
// batch that does not exist is exit 2.
import { existsSync } from 'node:fs';
import { ProctorError } from '../errors.js';
import { JOB_STATUSES, OUTCOME_CLASSES } from '../queue/constants.js';
import type { Job, JobStore, OutcomeCounts, StatusCounts } from '../queue/index.js';
import { formatDuration, progressFigures } from '../queue/progress.js';
import { MAX_PAGE } from '../queue/store.js';
import type { CommandContext } from './context.js';
import { sourceOfResult, sourceText } from './source.js';
import { spendOf, spendText } from './spend.js';
import { formatTable, verdictText } from './table.js';
import { pullText, pullsOf } from '../results/pulls.js';
import type { PullProgressDocument } from '../pull-progress.js';
import {
  expandTestStatuses,
  readTestStatuses,
  summariseTestStatuses,
  testsSummaryLines,
  type StoredTestStatuses,
} from '../results/test-statuses.js';

export interface StatusOptions {
  batch?: string;
  json?: boolean;
  limit: number;
  /** With job ids: print each job's oracle log (bounded). */
  log?: boolean;
  /** With job ids: print each agent solve's trajectory (the model proxy's record). */
  trajectory?: boolean;
}

const MAX_LOG_BYTES = 1024 * 1024;

/** What status reads of the job store. */
type StatusStore = Pick<
  JobStore,
  | 'getJob'
  | 'listJobs'
  | 'listBatches'
  | 'batchProgress'
  | 'countByOutcome'
  | 'countByStatus'
  | 'finishedSince'
  | 'taskValidity'
  | 'listArtifacts'
  | 'testStatuses'
  | 'jobProgress'
  | 'close'
>;

const NO_COUNTS = { queued: 0, running: 0, done: 0, failed: 0, cancelled: 0 };

/**
 * A SQLite home whose database does not exist yet has no jobs: status says so as it would from
 * an empty database (test/cli/status-empty.test.ts compares the two), without creating one or
 * loading the store. Reading is not a reason to make a database.
 */
const NO_DATABASE: StatusStore = {
  getJob: () => Promise.resolve(undefined),
  listJobs: () => Promise.resolve({ items: [], nextCursor: null }),
  listBatches: () => Promise.resolve({ items: [], nextCursor: null }),
  batchProgress: (batchId) =>
    Promise.reject(new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`)),
  countByOutcome: (batchId) =>
    Promise.reject(new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`)),
  countByStatus: () => Promise.resolve({ ...NO_COUNTS }),
  finishedSince: () => Promise.resolve(0),
  taskValidity: () => Promise.resolve({ tasks: [], counts: { valid: 0, quarantined: 0 } }),
  listArtifacts: () => Promise.resolve([]),
  testStatuses: () => Promise.resolve(new Map()),
  jobProgress: () => Promise.resolve(new Map()),
  close: () => Promise.resolve(),
};

/** One artifact `status` prints per job: its name, what it is called, and how to show it. */
interface PrintedArtifact {
  name: string;
  /** What the header calls it (`oracle log`). */
  what: string;
  /** Said when a job has none. */
  missing: string;
  /** Its lines, when it can be shown better than as text; null to print it as text. */
  render?: (text: string) => string[] | null;
}

const ORACLE_LOG: PrintedArtifact = {
  name: 'oracle.log',
  what: 'oracle log',
  missing: 'no oracle log',
};

const TRAJECTORY: PrintedArtifact = {
  name: 'trajectory.json',
  what: 'trajectory',
  missing: 'no trajectory (only agent solves have one)',
};

async function printArtifacts(
  context: CommandContext,
  store: JobStore,
  ids: number[],
  printed: PrintedArtifact,
) {
  const [{ openArtifactStore }, { createRedactor }] = await Promise.all([
    import('../queue/open.js'),
    import('../store/index.js'),
  ]);
  const artifacts = openArtifactStore(context.config, store, {
    redactor: createRedactor(),
    clock: context.clock,
  });
  for (const id of ids) {
    const stored = (await store.listArtifacts(id)).find((a) => a.name === printed.name);
    if (!stored) {
      context.io.err(`proctor: job ${id} has ${printed.missing}`);
      continue;
    }
    const bytes = await artifacts.read(stored, { maxBytes: Math.max(stored.size, 1) });
    context.io.out(
      `--- ${printed.what} of job ${id} (artifact ${stored.id}, ${stored.size} bytes) ---`,
    );
    const lines = printed.render?.(bytes.toString('utf8')) ?? null;
    if (lines !== null) {
      for (const line of lines) context.io.out(line);
      continue;
    }
    context.io.out(bytes.subarray(0, MAX_LOG_BYTES).toString('utf8').trimEnd());
    if (bytes.length > MAX_LOG_BYTES)
      context.io.out(`…[${bytes.length - MAX_LOG_BYTES} more bytes]`);
  }
}

/** An agent solve's agent, how it ended and its trajectory's artifact, as one line. */
function agentLine(result: unknown): string | undefined {
  const r = result as {
    agent?: { name?: unknown; outcome?: unknown; exitCode?: unknown };
    trajectory?: unknown;
  } | null;
  if (!r?.agent || typeof r.agent.name !== 'string') return undefined;
  const exit = typeof r.agent.exitCode === 'number' ? `, exit ${r.agent.exitCode}` : '';
  const trajectory =
    typeof r.trajectory === 'string' ? `; trajectory ${r.trajectory} (--trajectory)` : '';
  return `${r.agent.name} (${String(r.agent.outcome)}${exit})${trajectory}`;
}

/**
 * One line for a job's outcome: its verdict (and validity for a baseline), a validate job's
 * validity with its image or first problem, or its error.
 */
export function outcomeText(job: Pick<Job, 'result' | 'lastError' | 'kind'>): string {
  const r = job.result as {
    verdict?: string;
    reason?: string;
    detail?: string;
    validity?: string;
  } | null;
  if (r && typeof r.verdict === 'string') {
    const head = job.kind === 'baseline' && r.validity ? r.validity : r.verdict;
    return verdictText(head, r.reason, r.detail).slice(0, 160);
  }
  if (r && job.kind === 'validate' && typeof r.validity === 'string') {
    // A problem names both commits: a cut one must not pass for a whole hash.
    const text = `${r.validity}: ${r.detail ?? ''}`;
    return text.length > 160 ? `${text.slice(0, 159)}…` : text;
  }
  if (job.lastError) return job.lastError.slice(0, 160);
  return r === null ? '' : JSON.stringify(r).slice(0, 160);
}

/** Hits of the screen of a grade's candidate (oracle/screen.ts); null when none was recorded. */
export function suspiciousOf(result: unknown): number | null {
  const screen = (result as { suspicious?: { count?: unknown } } | null)?.suspicious;
  const count = typeof screen === 'object' && screen !== null ? screen.count : undefined;
  return typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : null;
}

/** The [source].instance_id a job's result recorded, or `-`. */
function instanceOf(result: unknown): string {
  return sourceOfResult(result)?.instance_id ?? '-';
}

/** A job's status, with the reason of a cancel that was not asked for (BUDGET: --max-cost). */
function statusText(job: { status: string; errorCode: string | null }): string {
  return job.status === 'cancelled' && job.errorCode === 'BUDGET'
    ? 'cancelled (BUDGET)'
    : job.status;
}

function countsLine(counts: StatusCounts): string {
  return JOB_STATUSES.map((s) => `${counts[s]} ${s}`).join(', ');
}

function jobSummary(job: Job, pulls?: ReadonlyMap<number, PullProgressDocument>) {
  return {
    id: job.id,
    kind: job.kind,
    status: job.status,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    batchId: job.batchId,
    parentId: job.parentId,
    cancelRequested: job.cancelRequestedAt !== null,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    error: job.lastError,
    errorCode: job.errorCode,
    outcome: job.outcome,
    /** Hits of the screen of a grade's candidate; null when it was not screened. */
    suspicious: suspiciousOf(job.result),
    /** What was asked: bundle, solver, candidate, and sample, retryOf or prediction. */
    payload: job.payload,
    result: job.result,
    /** The image pull a running job is waiting on (bytes, total, rate, ETA); null without. */
    pull: pulls?.get(job.id) ?? null,
  };
}

/** A running job's DETAIL: the pull it waits on, if any, else its outcome so far. */
function detailText(job: Job, pulls: ReadonlyMap<number, PullProgressDocument>): string {
  const pull = pulls.get(job.id);
  return pull ? pullText(pull) : outcomeText(job);
}

async function batchSummary(store: StatusStore, batchId: string, now: number) {
  const progress = await store.batchProgress(batchId);
  const figures = progressFigures(progress, now);
  const outcomes = await store.countByOutcome(batchId);
  return {
    id: batchId,
    label: progress.batch.label,
    counts: progress.counts,
    outcomes,
    ...figures,
  };
}

/** `2 resolved, 1 unresolved, 0 error, 0 invalid_task`, and what is not classed yet. */
function outcomesLine(outcomes: OutcomeCounts, total: number): string {
  const classed = OUTCOME_CLASSES.reduce((sum, c) => sum + outcomes[c], 0);
  const parts = OUTCOME_CLASSES.map((c) => `${outcomes[c]} ${c}`);
  const current = total - outcomes.superseded;
  if (classed < current) parts.push(`${current - classed} not classed yet`);
  const retried = outcomes.superseded > 0 ? ` (${outcomes.superseded} retried, not counted)` : '';
  return `classes: ${parts.join(', ')}${retried}`;
}

export async function statusCommand(
  context: CommandContext,
  ids: number[],
  options: StatusOptions,
): Promise<number> {
  const { io, clock } = context;
  const { config } = context;
  const absent = config.dbUrl === undefined && !existsSync(config.dbPath);
  const opened = absent ? undefined : context.openStore();
  const store: StatusStore = opened ?? NO_DATABASE;
  try {
    const now = clock.now();
    if (ids.length > 0) {
      const jobs = await Promise.all(ids.slice(0, MAX_PAGE).map((id) => store.getJob(id)));
      const missing = ids.filter((_, i) => jobs[i] === undefined);
      const present = jobs.filter((j): j is Job => j !== undefined);
      const pulls = await pullsOf(store, present);
      const found = present.map((j) => jobSummary(j, pulls));
      const stored = await readTestStatuses(
        store,
        found.filter((j) => j.kind === 'grade' || j.kind === 'baseline').map((j) => j.id),
      );
      if (options.json) {
        // Every stored test in full; null for a job without (another kind, or stored before).
        const withTests = found.map((j) => {
          const doc = stored.get(j.id);
          return {
            ...j,
            tests:
              doc === undefined
                ? null
                : { summary: summariseTestStatuses(doc), tests: expandTestStatuses(doc) },
          };
        });
        io.out(JSON.stringify({ jobs: withTests, missing }, null, 2));
      } else {
        if (found.length > 0)
          io.out(
            formatTable(
              ['JOB', 'KIND', 'STATUS', 'ATTEMPT', 'BATCH', 'DETAIL'],
              found.map((j) => [
                String(j.id),
                j.kind,
                statusText(j) +
                  (j.cancelRequested && j.status === 'running' ? ' (cancel requested)' : ''),
                `${j.attempt}/${j.maxAttempts}`,
                j.batchId ?? '-',
                j.pull
                  ? pullText(j.pull)
                  : outcomeText({ kind: j.kind, result: j.result, lastError: j.error }),
              ]),
            ),
          );
        for (const j of found) {
          const line = sourceText(sourceOfResult(j.result));
          if (line !== undefined) io.out(`job ${j.id} source: ${line}`);
          const spend = j.kind === 'solve' ? spendOf(j.result) : undefined;
          if (spend !== undefined) io.out(`job ${j.id} spent: ${spendText(spend)}`);
          const agent = j.kind === 'solve' ? agentLine(j.result) : undefined;
          if (agent !== undefined) io.out(`job ${j.id} agent: ${agent}`);
          if (j.suspicious !== null && j.suspicious > 0) {
            const hits = `${j.suspicious} ${j.suspicious === 1 ? 'hit' : 'hits'}`;
            io.out(`job ${j.id} suspicious: ${hits} of the screen (listed in its oracle log)`);
          }
          const doc = stored.get(j.id);
          if (doc !== undefined) for (const line of testsText(j.id, doc)) io.out(line);
        }
        for (const id of missing) io.err(`proctor: no job ${id}`);
      }
      const foundIds = found.map((j) => j.id);
      if (options.log && opened) await printArtifacts(context, opened, foundIds, ORACLE_LOG);
      if (options.trajectory && opened) {
        const { trajectoryLines } = await import('./trajectory.js');
        await printArtifacts(context, opened, foundIds, {
          ...TRAJECTORY,
          render: trajectoryLines,
        });
      }
      // Like a missing batch: asking about a job that does not exist is the caller's mistake.
      return missing.length > 0 ? 2 : 0;
    }

    if (options.batch !== undefined) {
      const summary = await batchSummary(store, options.batch, now);
      const jobs = await store.listJobs(
        { batchId: options.batch },
        { limit: options.limit, order: 'asc' },
      );
      const pulls = await pullsOf(store, jobs.items);
      if (options.json) {
        io.out(
          JSON.stringify(
            {
              batch: summary,
              jobs: jobs.items.map((j) => jobSummary(j, pulls)),
              nextCursor: jobs.nextCursor,
            },
            null,
            2,
          ),
        );
      } else {
        io.out(
          `batch ${summary.id}${summary.label ? ` (${summary.label})` : ''}: ${summary.finished}/${summary.total} finished — ${countsLine(summary.counts)}`,
        );
        io.out(outcomesLine(summary.outcomes, summary.total));
        io.out(
          `rate ${rate(summary.ratePerMinute)}/min, ETA ${formatDuration(summary.etaSeconds)}`,
        );
        if (jobs.items.length > 0) {
          const instances = jobs.items.map((j) => instanceOf(j.result));
          const shown = instances.some((i) => i !== '-');
          // Like INSTANCE, only when some job has a value: most batches have no hits.
          const hits = jobs.items.map((j) => suspiciousOf(j.result));
          const flagged = hits.some((n) => n !== null && n > 0);
          io.out(
            formatTable(
              [
                'JOB',
                'KIND',
                'STATUS',
                'CLASS',
                'ATTEMPT',
                ...(shown ? ['INSTANCE'] : []),
                ...(flagged ? ['SUSPICIOUS'] : []),
                'DETAIL',
              ],
              jobs.items.map((j, i) => [
                String(j.id),
                j.kind,
                statusText(j),
                j.outcome ?? '-',
                `${j.attempt}/${j.maxAttempts}`,
                ...(shown ? [instances[i] ?? '-'] : []),
                ...(flagged ? [String(hits[i] ?? '-')] : []),
                detailText(j, pulls),
              ]),
            ),
          );
        }
        if (jobs.nextCursor)
          io.out(`(first ${jobs.items.length} jobs shown; --json pages with a cursor)`);
      }
      return 0;
    }

    const counts = await store.countByStatus();
    const lastMinute = await store.finishedSince(now - 60_000);
    const page = await store.listBatches({ limit: options.limit });
    const batches = await Promise.all(page.items.map((b) => batchSummary(store, b.id, now)));
    const tasks = await store.taskValidity(options.limit);
    // The pulls running jobs wait on, of every batch (bounded by the page).
    const running =
      counts.running > 0
        ? (await store.listJobs({ status: 'running' }, { limit: options.limit, order: 'asc' }))
            .items
        : [];
    const pullMap = await pullsOf(store, running);
    const pulls = [...pullMap].map(([job, pull]) => ({ job, ...pull }));
    if (options.json) {
      io.out(
        JSON.stringify({ counts, finishedLastMinute: lastMinute, batches, tasks, pulls }, null, 2),
      );
    } else {
      io.out(`jobs: ${countsLine(counts)}; ${lastMinute} finished in the last minute`);
      for (const p of pulls) io.out(`job ${p.job} ${pullText(p)}`);
      const judged = tasks.counts.valid + tasks.counts.quarantined;
      if (judged > 0) {
        io.out(
          `tasks: ${tasks.counts.valid} valid, ${tasks.counts.quarantined} quarantined (latest baseline of each)`,
        );
        const quarantined = tasks.tasks.filter((t) => t.validity === 'quarantined');
        if (quarantined.length > 0) {
          // The task table keeps no [source]; its latest baseline's result does (bounded by
          // the page: one read per quarantined task shown).
          const instances = await Promise.all(
            quarantined.map(async (t) =>
              t.jobId === null ? '-' : instanceOf((await store.getJob(t.jobId))?.result),
            ),
          );
          const shown = instances.some((i) => i !== '-');
          io.out(
            formatTable(
              ['TASK', ...(shown ? ['INSTANCE'] : []), 'REASON', 'DETAIL', 'JOB'],
              quarantined.map((t, i) => [
                t.taskId,
                ...(shown ? [instances[i] ?? '-'] : []),
                t.reason,
                t.detail.slice(0, 120),
                t.jobId === null ? '-' : String(t.jobId),
              ]),
            ),
          );
        }
      }
      if (batches.length > 0) {
        io.out(
          formatTable(
            [
              'BATCH',
              'LABEL',
              'FINISHED',
              'DONE',
              'FAILED',
              'CANCELLED',
              'RUNNING',
              'QUEUED',
              'RATE/MIN',
              'ETA',
            ],
            batches.map((b) => [
              b.id,
              b.label ?? '-',
              `${b.finished}/${b.total}`,
              String(b.counts.done),
              String(b.counts.failed),
              String(b.counts.cancelled),
              String(b.counts.running),
              String(b.counts.queued),
              rate(b.ratePerMinute),
              formatDuration(b.etaSeconds),
            ]),
          ),
        );
      }
    }
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * A job's per-test statuses for a terminal, bounded: the counts of each list, then the tests
 * not passed (at most MAX_LISTED_TESTS; `--json` lists every test).
 */
function testsText(id: number, doc: StoredTestStatuses): string[] {
  const summary = summariseTestStatuses(doc);
  const lines = testsSummaryLines(summary).map((line) => `job ${id} tests ${line}`);
  for (const t of summary.notPassed) {
    const swebench = t.swebench === undefined ? '' : ` (SWE-bench ${t.swebench})`;
    lines.push(`  ${t.list} ${t.outcome}${swebench}: ${t.id}`);
  }
  const more = summary.notPassedCount - summary.notPassed.length;
  if (more > 0) lines.push(`  … and ${more} more not passed (--json lists every test)`);
  return lines;
}

function rate(value: number | null): string {
  return value === null ? '-' : value >= 10 ? value.toFixed(0) : value.toFixed(1);
}
