// `--wait`: until the command's own jobs have finished. Without a live worker for this home
// the jobs run in this process (a pool with the configured slots, stopped when they are
// done); with one, this process only polls the database, and checks every second that a
// worker still lives: when the last one has died, it takes over (its pool reclaims the dead
// worker's jobs and removes its containers, as any starting worker does), so it never waits
// on a worker that is gone. Long waits show a progress line on stderr: done/total, verdicts,
// rate and ETA (rewritten in place on a terminal, every 10 seconds otherwise), and a line when
// one of its jobs starts pulling its image (bytes of total, rate, ETA), new figures at most
// every 10 seconds, and one when the pull ends.
//
// Other batches. A pool run here (no worker at its start) takes every batch's jobs, as a
// worker would, so that nothing waits for a worker nobody started. But once a worker serves
// the home (it started later: a presence lock of this host, or on a shared database, jobs
// running under another host's owner, which then counts until the command ends), the pool
// claims only its own batch's jobs (or its own job) and their children, and says so in one
// line: another batch's job that it took would be handed back, and begun again, when this
// command ends. Jobs it already runs go on.
import {
  MAX_PAGE,
  formatDuration,
  progressFigures,
  type ClaimScope,
  type Job,
  type JobStore,
} from '../queue/index.js';
import { announceWorker, liveWorkers, type Runtime, type WorkerPool } from '../workers/index.js';
import type { CommandContext } from './context.js';
import { createPullLines } from './pulls.js';
import { pullsOf } from '../results/pulls.js';

const POLL_MS = 200;
/** How often a command that only polls checks that a worker still serves the home. */
const PRESENCE_MS = 1_000;
const PLAIN_EVERY_MS = 10_000;
/** How often the running jobs' pulls are read, for their lines (createPullLines). */
const PULL_EVERY_MS = 1_000;

/** The target's running jobs (a batch's, at most a page of them, or the one job). */
async function runningOf(store: JobStore, target: WaitTarget): Promise<Job[]> {
  if (target.batchId !== undefined) {
    const page = await store.listJobs(
      { batchId: target.batchId, status: 'running' },
      { limit: MAX_PAGE, order: 'asc' },
    );
    return page.items;
  }
  const job = target.jobId === undefined ? undefined : await store.getJob(target.jobId);
  return job?.status === 'running' ? [job] : [];
}

export interface WaitTarget {
  /** A batch (suites), or one job. */
  batchId?: string;
  jobId?: number;
  /** Shown before the figures: `baseline`, `grade`. */
  label: string;
  /** Names the two verdicts in the progress line, e.g. valid/quarantined. */
  verdictNames: { PASS: string; FAIL: string };
}

interface Snapshot {
  total: number;
  finished: number;
  failedJobs: number;
  cancelled: number;
  verdicts: Record<string, number>;
  ratePerMinute: number | null;
  etaSeconds: number | null;
}

/**
 * A batch's verdict counts as last read. They are a scan of its jobs' results (JSON read row by
 * row: 30 ms for 10,000 jobs here), so the 200 ms loop reads them again only when a job of the
 * batch ended (its status counts moved) or VERDICTS_EVERY_MS after the last read (a job run
 * again may end with the counts as they were), and not at all without a progress line.
 */
export interface VerdictCache {
  key: string;
  at: number;
  verdicts: Record<string, number>;
}

export const VERDICTS_EVERY_MS = 5_000;

export async function snapshot(
  store: JobStore,
  target: WaitTarget,
  now: number,
  cache: { verdicts: VerdictCache | null } | null,
): Promise<Snapshot> {
  if (target.batchId !== undefined) {
    const progress = await store.batchProgress(target.batchId);
    const figures = progressFigures(progress, now);
    const { counts } = progress;
    const key = [
      counts.queued,
      counts.running,
      counts.done,
      counts.failed,
      counts.cancelled,
    ].join();
    let verdicts: Record<string, number> = {};
    if (cache !== null) {
      const kept = cache.verdicts;
      if (kept !== null && kept.key === key && now - kept.at < VERDICTS_EVERY_MS) {
        verdicts = kept.verdicts;
      } else {
        verdicts = await store.countByVerdict({ batchId: target.batchId });
        cache.verdicts = { key, at: now, verdicts };
      }
    }
    return {
      total: figures.total,
      finished: figures.finished,
      failedJobs: counts.failed,
      cancelled: counts.cancelled,
      verdicts,
      ratePerMinute: figures.ratePerMinute,
      etaSeconds: figures.etaSeconds,
    };
  }
  const job = target.jobId === undefined ? undefined : await store.getJob(target.jobId);
  const finished = job !== undefined && ['done', 'failed', 'cancelled'].includes(job.status);
  const verdict = (job?.result as { verdict?: string } | null | undefined)?.verdict;
  return {
    total: 1,
    finished: finished ? 1 : 0,
    failedJobs: job?.status === 'failed' ? 1 : 0,
    cancelled: job?.status === 'cancelled' ? 1 : 0,
    verdicts: job?.status === 'done' && verdict ? { [verdict]: 1 } : {},
    ratePerMinute: null,
    etaSeconds: finished ? 0 : null,
  };
}

function progressLine(target: WaitTarget, s: Snapshot): string {
  const parts = [
    `${target.label}: ${s.finished}/${s.total} done`,
    `${s.verdicts['PASS'] ?? 0} ${target.verdictNames.PASS}`,
    `${s.verdicts['FAIL'] ?? 0} ${target.verdictNames.FAIL}`,
  ];
  if (s.failedJobs > 0) parts.push(`${s.failedJobs} errors`);
  if (s.cancelled > 0) parts.push(`${s.cancelled} cancelled`);
  if (s.total > 1) {
    parts.push(
      s.ratePerMinute === null ? 'rate ?' : `${s.ratePerMinute.toFixed(1)}/min`,
      `ETA ${formatDuration(s.etaSeconds)}`,
    );
  }
  return parts.join(', ');
}

/**
 * Waits until every job of the target has finished; returns them (oldest first). Runs a pool
 * in this process when no worker serves the home. SIGINT/SIGTERM stop waiting: in-process
 * jobs are handed back to the queue for the next worker, and the command exits 130.
 */
export async function waitForJobs(
  context: CommandContext,
  runtime: Runtime,
  target: WaitTarget,
  options: {
    progress: boolean;
    isTty: boolean;
    /** Lines on stderr about the image pulls its jobs wait on. Default: `progress`. */
    pulls?: boolean;
  },
): Promise<{ jobs: Job[]; interrupted: boolean }> {
  const { store } = runtime;
  const home = runtime.config.home;
  const host = runtime.config.host;
  let pool: WorkerPool | undefined;
  let withdraw: (() => void) | undefined;
  // Read by the pool before each claim: narrowed while a worker serves the home.
  const own: ClaimScope =
    target.batchId !== undefined ? { batchId: target.batchId } : { jobId: target.jobId as number };
  const ownName =
    target.batchId !== undefined ? `batch ${target.batchId}'s` : `job ${target.jobId}'s`;
  let scoped = false;
  // Another host's worker has no lock this host can read: its running jobs are the evidence,
  // and they come and go between its jobs, so once seen it counts for the rest of the wait
  // (the scope would flap, and say so, at each gap otherwise).
  let otherHostSeen = false;
  /** Whether a worker serves the home: one of this host, or one running jobs of another host. */
  const workerServes = async () => {
    if (liveWorkers(home, host).length > 0) return true;
    if (runtime.config.dbUrl === undefined || otherHostSeen) return otherHostSeen;
    const owners = await store.runningOwners();
    otherHostSeen = owners.some((owner) => !owner.startsWith(`${host}/`));
    return otherHostSeen;
  };
  const rescope = async () => {
    const serves = await workerServes();
    if (serves === scoped) return;
    scoped = serves;
    // The claim loops may be backing off; a wider scope may have work for them now.
    pool?.notify();
    context.io.err(
      serves
        ? `proctor: a worker serves this home; this command runs only ${ownName} jobs`
        : "proctor: no worker serves this home any more; this command runs every batch's jobs",
    );
  };
  const runHere = async () => {
    // This command's own jobs are queued before its pool starts, and a finished job's children
    // wake their kind: the polls only find retries coming due and other commands' jobs, so a
    // kind with nothing to claim backs off (each claim a query against the store).
    const created = await runtime.createPool({
      pollMs: 250,
      idleMaxMs: 2_000,
      claimScope: () => (scoped ? own : undefined),
    });
    // Its lock proves this pool's leases alive, or dead once this process is gone.
    const release = announceWorker(home, created.owner, 'pool');
    try {
      await created.start();
    } catch (error) {
      release();
      throw error;
    }
    pool = created;
    withdraw = release;
  };
  if (liveWorkers(home, host).length === 0) {
    // Before the first claim: a worker of another host may already serve a shared database.
    await rescope();
    await runHere();
  }
  let checked = context.clock.now();
  let interrupted = false;
  let wake: (() => void) | undefined;
  const onSignal = () => {
    interrupted = true;
    wake?.();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let lastPlain = 0;
  let lastLine = '';
  const verdictCache: { verdicts: VerdictCache | null } = { verdicts: null };
  const pullLines = createPullLines(PLAIN_EVERY_MS);
  let pullsRead = 0;
  try {
    for (;;) {
      const now = context.clock.now();
      const s = await snapshot(store, target, now, options.progress ? verdictCache : null);
      if ((options.pulls ?? options.progress) && now - pullsRead >= PULL_EVERY_MS) {
        pullsRead = now;
        const lines = pullLines(await pullsOf(store, await runningOf(store, target)), now);
        if (lines.length > 0) {
          // Above the line rewritten in place, which is then drawn again below them.
          if (options.isTty && lastLine !== '') process.stderr.write('\r\x1b[K');
          for (const line of lines) context.io.err(line);
          if (options.isTty && lastLine !== '') process.stderr.write(lastLine);
        }
      }
      const line = progressLine(target, s);
      if (options.progress && s.total > 1) {
        if (options.isTty) {
          if (line !== lastLine) process.stderr.write(`\r\x1b[K${line}`);
        } else if (now - lastPlain >= PLAIN_EVERY_MS || s.finished === s.total) {
          if (line !== lastLine) context.io.err(line);
          lastPlain = now;
        }
        lastLine = line;
      }
      if (s.finished === s.total || interrupted) break;
      if (now - checked >= PRESENCE_MS) {
        checked = now;
        if (pool !== undefined) await rescope();
        else if (liveWorkers(home, host).length === 0) {
          context.io.err(
            'proctor: no live worker serves this home any more; running the jobs here',
          );
          scoped = false;
          await runHere();
        }
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, POLL_MS);
      });
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (options.progress && options.isTty && lastLine !== '') process.stderr.write('\n');
    if (pool) {
      if (interrupted) context.io.err('proctor: interrupted; handing running jobs back');
      await pool.stop({ graceMs: interrupted ? 0 : 30_000 });
    }
    withdraw?.();
  }
  return { jobs: await jobsOf(store, target), interrupted };
}

async function jobsOf(store: JobStore, target: WaitTarget): Promise<Job[]> {
  if (target.jobId !== undefined) {
    const job = await store.getJob(target.jobId);
    return job ? [job] : [];
  }
  const jobs: Job[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listJobs(
      { batchId: target.batchId as string },
      { limit: 200, order: 'asc', ...(cursor ? { cursor } : {}) },
    );
    jobs.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return jobs;
}
