// The handlers of the `grade` and `baseline` kinds: load the bundle, resolve its image (once
// per worker, see images.ts), evaluate, decide, write the oracle log artifact, and remove
// every container and volume of the job attempt whatever happened.
//
// A bad bundle, a missing candidate or an image that cannot be built fails the job for good
// (retrying cannot help); anything else thrown (the engine went away) is retried.
import { readFile } from 'node:fs/promises';
import { stepTimer, type Clock } from '../clock.js';
import { ProctorError, describeError, withContext } from '../errors.js';
import {
  decideBaseline,
  decideImpossibleBaseline,
  decideSwebenchBaseline,
  evaluate,
  flakyTests,
  loadBundleWithListing,
  renderOracleLog,
  testsHash,
  type Bundle,
  type Evaluation,
  type EvaluatorSandbox,
  type FileDigests,
  type ScreenResult,
  type Verdict,
  taskRecord,
  type TaskRecord,
} from '../oracle/index.js';
import type { JobStore, PayloadOf, TaskValidityInput } from '../queue/index.js';
import { encodeTestStatuses } from '../results/test-statuses.js';
import {
  removeOwned,
  type ContextListing,
  type DockerClient,
  type Owner,
  type ResolvedImage,
  type TemplateStore,
} from '../sandbox/index.js';
import type { ArtifactStore } from '../store/index.js';
import type { ImageCache } from './images.js';
import { resolveForJob } from './pull-status.js';
import type { HandlerOutput, JobContext, JobHandler } from './pool.js';

export interface OracleDeps {
  docker: DockerClient;
  store: JobStore;
  artifacts: ArtifactStore;
  images: ImageCache;
  sandbox: EvaluatorSandbox;
  /** The Proctor home: labels every container, so two homes never reap each other's. */
  home: string;
  /** This host's identity (ProctorConfig.host): labels every container; default hostname. */
  host?: string;
  clock: Clock;
  /** Workspace templates, shared by every job of the process (LRU-bounded). */
  templates?: TemplateStore;
  /** File digests of earlier bundle loads: an unchanged bundle is not read whole again. */
  digests?: FileDigests;
}

/** What a grade job stores as its result. */
export interface GradeResult {
  verdict: 'PASS' | 'FAIL';
  reason: Verdict['reason'];
  detail: string;
  /** Always set: the hash of no IDs when no phase ran. */
  testsHash: string;
  task: TaskRecord;
  image: ImageSummary;
  diffSha256: string | null;
  /**
   * The screen of the filtered candidate diff (oracle/screen.ts): its hits, bounded, and
   * their count. Absent when the diff was refused before it was filtered (too large,
   * malformed), so nothing was screened.
   */
  suspicious?: ScreenResult;
  /** The oracle log artifact's id. */
  log: string;
  timings: Record<string, number>;
  /**
   * Present when the latest baseline of this exact bundle quarantined the task: the grade is
   * then of class invalid_task, whatever its verdict.
   */
  quarantined?: Quarantine;
}

/** Why a graded task does not count: its baseline's reason and job. */
export interface Quarantine {
  reason: string;
  job: number | null;
}

/** The quarantine of a bundle by its latest baseline, if any. */
export async function quarantineOf(
  store: Pick<JobStore, 'taskJudgement'>,
  bundle: Pick<Bundle, 'id' | 'contentHash'>,
): Promise<Quarantine | undefined> {
  const judgement = await store.taskJudgement(bundle.id, bundle.contentHash);
  return judgement?.validity === 'quarantined'
    ? { reason: judgement.reason, job: judgement.jobId }
    : undefined;
}

/** What a baseline job stores as its result. */
export interface BaselineResult {
  verdict: 'PASS' | 'FAIL';
  reason: Verdict['reason'];
  detail: string;
  testsHash: string;
  validity: 'valid' | 'quarantined';
  task: TaskRecord;
  image: ImageSummary;
  runs: Array<Pick<Verdict, 'verdict' | 'reason' | 'detail'>>;
  gold: Pick<Verdict, 'verdict' | 'reason' | 'detail'> | null;
  /**
   * The declared IDs whose outcome differed between the repeated runs (`--repeat N`), sorted,
   * at most MAX_FLAKY_RECORDED: the FLAKY detail names only the first few, and `proctor
   * report` counts the tests most often flaky over a sweep. Empty with one run.
   */
  flaky: string[];
  log: string;
  /** Wall time of each evaluator step, summed over every run (baseline runs and gold), ms. */
  timings: Record<string, number>;
}

/** The most flaky test IDs a baseline result records (a broken suite can flip thousands). */
export const MAX_FLAKY_RECORDED = 1_000;

export type ImageSummary =
  | { portable: true; digest: string; reference: string; localId: string }
  | { portable: false; kind: 'local_build'; imageId: string; localId: string };

const summary = (v: Verdict) => ({ verdict: v.verdict, reason: v.reason, detail: v.detail });

/** The identity a result records: the portable digest or local_build, and the local id. */
export function imageSummary(image: Pick<ResolvedImage, 'identity' | 'localId'>): ImageSummary {
  return { ...image.identity, localId: image.localId };
}

/**
 * Rethrows with `what` before the message. The code decides whether the job is tried again:
 * a bad bundle fails at once, a Docker hiccup is retried.
 */
function permanent(error: unknown, what: string): never {
  throw withContext(error, what);
}

/** The bundle, and the listing of its build context for withImage (one walk per job). */
async function withBundle(
  deps: Pick<OracleDeps, 'digests'>,
  path: string,
): Promise<{ bundle: Bundle; listing?: ContextListing }> {
  try {
    return await loadBundleWithListing(path, deps.digests ? { digests: deps.digests } : {});
  } catch (error) {
    permanent(error, 'cannot load the bundle');
  }
}

async function withImage(
  deps: OracleDeps,
  loaded: { bundle: Bundle; listing?: ContextListing },
  context: JobContext,
) {
  try {
    return await resolveForJob(deps, context, loaded.bundle, loaded.listing);
  } catch (error) {
    permanent(error, 'cannot resolve the image');
  }
}

/**
 * Runs `work` as this job attempt's owner; everything it labelled is removed once the job's
 * end is recorded (context.defer), whatever happened.
 */
export async function asOwner<T>(
  deps: Pick<OracleDeps, 'docker' | 'home' | 'host'>,
  context: JobContext,
  work: (owner: Owner) => Promise<T>,
): Promise<T> {
  const owner: Owner = {
    job: String(context.job.id),
    attempt: context.job.attempt,
    home: deps.home,
    ...(deps.host !== undefined ? { host: deps.host } : {}),
  };
  try {
    return await work(owner);
  } finally {
    context.defer(async () => {
      await removeOwned(deps.docker, owner).catch((error: unknown) => {
        context.logger.warn('cleanup failed; the reaper will retry', {
          job: context.job.id,
          error: describeError(error),
        });
      });
    });
  }
}

async function evaluateOrExplain(
  deps: OracleDeps,
  input: Parameters<typeof evaluate>[1],
): Promise<Evaluation> {
  try {
    return await evaluate(deps.docker, input);
  } catch (error) {
    // A workspace that cannot be made from this image (base_commit is not its HEAD) is the
    // bundle's fault, and will be next time too.
    permanent(error, 'cannot evaluate');
  }
}

async function writeLog(deps: OracleDeps, text: string) {
  return deps.artifacts.write({
    name: 'oracle.log',
    mediaType: 'text/plain; charset=utf-8',
    bytes: text,
  });
}

export function gradeHandler(deps: OracleDeps): JobHandler {
  return async (context): Promise<HandlerOutput> => {
    const payload = context.payload as PayloadOf<'grade'>;
    const startedAt = new Date(deps.clock.now());
    // The job's own steps, beside the evaluator's in `timings`: `bundle` (load and hash),
    // `candidate` (read the diff), `image` (resolve), `record` (the log, the quarantine).
    const timer = stepTimer(deps.clock);
    const loaded = await timer.time('bundle', () => withBundle(deps, payload.bundle));
    const { bundle } = loaded;
    if (payload.candidate === undefined) {
      throw new ProctorError(
        'PAYLOAD_INVALID',
        'a grade without a candidate is recorded when it is enqueued; it cannot run',
      );
    }
    const candidate = payload.candidate;
    const diff = await timer.time('candidate', async () => {
      try {
        const record = await deps.store.getArtifact(candidate);
        if (!record) {
          throw new ProctorError('ARTIFACT_NOT_FOUND', `no candidate artifact ${candidate}`);
        }
        return await deps.artifacts.read(record);
      } catch (error) {
        permanent(error, 'cannot read the candidate');
      }
    });
    const image = await timer.time('image', () => withImage(deps, loaded, context));
    const evaluation = await asOwner(deps, context, (owner) =>
      evaluateOrExplain(deps, {
        bundle,
        imageId: image.localId,
        candidate: diff,
        owner,
        sandbox: deps.sandbox,
        signal: context.signal,
        ...(deps.templates ? { templates: deps.templates } : {}),
        leaveForOwner: true,
      }),
    );
    const verdict = evaluation.verdict;
    const log = await timer.time('record', () =>
      writeLog(
        deps,
        renderOracleLog({
          kind: 'grade',
          bundle,
          image: { ...image.identity, localId: image.localId },
          runs: [{ title: 'grade', evaluation }],
          verdict,
          startedAt,
          finishedAt: new Date(deps.clock.now()),
        }),
      ),
    );
    // Read when the grade ends, so a baseline that finished meanwhile counts.
    const quarantined = await timer.time('record', () => quarantineOf(deps.store, bundle));
    const result: GradeResult = {
      ...summary(verdict),
      testsHash: verdict.testsHash ?? testsHash([]),
      task: taskRecord(bundle),
      image: imageSummary(image),
      diffSha256: evaluation.candidate?.sha256 ?? null,
      ...(evaluation.candidate?.suspicious ? { suspicious: evaluation.candidate.suspicious } : {}),
      log: log.id,
      timings: { ...evaluation.timings, ...timer.steps },
      ...(quarantined === undefined ? {} : { quarantined }),
    };
    return { result, artifacts: [log], tests: encodeTestStatuses(evaluation.tests) };
  };
}

export function baselineHandler(deps: OracleDeps): JobHandler {
  return async (context): Promise<HandlerOutput> => {
    const payload = context.payload as PayloadOf<'baseline'>;
    const startedAt = new Date(deps.clock.now());
    const timer = stepTimer(deps.clock);
    const loaded = await timer.time('bundle', () => withBundle(deps, payload.bundle));
    const { bundle } = loaded;
    let gold: Buffer | null = null;
    if (payload.gold && bundle.paths.goldPatch !== undefined) {
      const path = bundle.paths.goldPatch;
      gold = await timer.time('candidate', () => readFile(path));
    }
    const image = await timer.time('image', () => withImage(deps, loaded, context));
    const runs: Array<{ title: string; evaluation: Evaluation }> = [];
    await asOwner(deps, context, async (owner) => {
      const input = {
        bundle,
        imageId: image.localId,
        owner,
        sandbox: deps.sandbox,
        ...(deps.templates ? { templates: deps.templates } : {}),
      };
      for (let i = 1; i <= payload.repeat; i++) {
        const evaluation = await evaluateOrExplain(deps, {
          ...input,
          candidate: null,
          signal: context.signal,
          // The last run's container and volumes go after the verdict (asOwner), off the
          // job's slot, even when the gold run follows (a removal took 50-375 ms of the job's
          // path there); earlier runs remove theirs before the next starts, so at most two
          // runs' are left at once.
          leaveForOwner: i === payload.repeat,
        });
        runs.push({ title: payload.repeat > 1 ? `baseline run ${i}` : 'baseline', evaluation });
      }
      if (gold !== null) {
        const evaluation = await evaluateOrExplain(deps, {
          ...input,
          candidate: gold,
          signal: context.signal,
          leaveForOwner: true,
        });
        runs.push({ title: 'gold patch', evaluation });
      }
    });
    const baselineRuns = runs.filter((r) => r.title !== 'gold patch').map((r) => r.evaluation);
    const goldRun = gold === null ? undefined : runs.at(-1)?.evaluation;
    const verdict = decideTask(baselineRuns, goldRun, bundle);
    const log = await timer.time('record', () =>
      writeLog(
        deps,
        renderOracleLog({
          kind: 'baseline',
          bundle,
          image: { ...image.identity, localId: image.localId },
          runs,
          verdict,
          startedAt,
          finishedAt: new Date(deps.clock.now()),
        }),
      ),
    );
    const validity = verdict.verdict === 'PASS' ? 'valid' : 'quarantined';
    const result: BaselineResult = {
      ...summary(verdict),
      testsHash: verdict.testsHash ?? testsHash([]),
      validity,
      task: taskRecord(bundle),
      image: imageSummary(image),
      runs: baselineRuns.map((e) => summary(e.verdict)),
      gold: goldRun ? summary(goldRun.verdict) : null,
      flaky: flakyTests(baselineRuns.map((run) => run.phases ?? { existing: missingPhase })).slice(
        0,
        MAX_FLAKY_RECORDED,
      ),
      log: log.id,
      timings: { ...sumTimings(runs.map((r) => r.evaluation.timings)), ...timer.steps },
    };
    const task: TaskValidityInput = {
      taskId: bundle.id,
      contentHash: bundle.contentHash,
      bundlePath: bundle.dir,
      validity,
      reason: verdict.reason,
      detail: verdict.detail,
    };
    // The first baseline run's tests: the run whose testsHash the result records (the others
    // differ only where flaky, which `flaky` names).
    const first = baselineRuns[0];
    return {
      result,
      artifacts: [log],
      task,
      ...(first === undefined ? {} : { tests: encodeTestStatuses(first.tests) }),
    };
  };
}

/**
 * The task's verdict from its baseline runs and gold grade. A run that ended before its
 * phases (the hidden test patch does not apply at base_commit) quarantines the task with
 * that reason; otherwise decideBaseline's rules apply (decideSwebenchBaseline's for a task
 * graded by SWE-bench's rules).
 */
function decideTask(
  runs: readonly Evaluation[],
  gold: Evaluation | undefined,
  bundle: Pick<Bundle, 'grading' | 'impossible'>,
): Verdict {
  const broken = runs.find(
    (run) => run.phases?.hidden === undefined && run.verdict.verdict === 'FAIL',
  );
  if (broken && broken.phases === null) return broken.verdict;
  if (broken && broken.verdict.reason === 'APPLY_FAILED') return broken.verdict;
  const decide = bundle.grading.rules === 'swebench' ? decideSwebenchBaseline : decideBaseline;
  const phases = runs.map((run) => run.phases ?? { existing: missingPhase });
  // An impossible variant's gold patch must fail, and only where its tests were made to
  // contradict the description (oracle/impossible-verdict.ts).
  if (bundle.impossible !== undefined) {
    return decideImpossibleBaseline(
      decide({ runs: phases }),
      bundle.impossible,
      gold === undefined ? undefined : { verdict: gold.verdict, failing: failingTests(gold) },
    );
  }
  return decide({ runs: phases, ...(gold ? { gold: gold.verdict } : {}) });
}

/** The declared IDs a run did not pass; null when a list had no usable report. */
function failingTests(run: Evaluation): string[] | null {
  const { lists, tests } = run.tests;
  if (lists.hidden !== 'reported' || lists.existing !== 'reported') return null;
  return tests.filter((t) => t.outcome !== 'passed').map((t) => t.id);
}

const missingPhase = { timedOut: false, oom: false, reportError: null, check: null };

function sumTimings(all: ReadonlyArray<Record<string, number>>): Record<string, number> {
  const total: Record<string, number> = {};
  for (const timings of all) {
    for (const [step, ms] of Object.entries(timings)) total[step] = (total[step] ?? 0) + ms;
  }
  return total;
}
