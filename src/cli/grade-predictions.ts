// `proctor grade SUITE --predictions FILE [--wait] [--json]`: SWE-bench predictions graded as
// one batch labelled with the model's name, one grade per prediction, matched to the suite's
// tasks by [source].instance_id, else by task id (src/cli/predictions.ts).
//
// - A null or empty model_patch is recorded at once as a finished grade, FAIL EMPTY_PATCH
//   (class unresolved), without running anything; a patch larger than the task's patch_bytes
//   likewise as PATCH_TOO_LARGE. The other patches pass the checks of `grade --patch` (a
//   provider key from this environment is refused, the line skipped) and are stored as input
//   artifacts by content, registered in the transaction that enqueues the batch.
// - An unknown instance_id, a duplicate or a malformed line is listed with its line number on
//   stderr and skipped; the rest still run. Tasks without a prediction are "not submitted".
// Exit: 0 when every prediction was enqueued (with --wait: graded, none of class error); 1 when
// any line was skipped or, with --wait, any grade ended in error; 130 when interrupted.
import { createHash } from 'node:crypto';
import { constants, open } from 'node:fs/promises';
import { ProctorError } from '../errors.js';
import { createLogger } from '../logger.js';
import { taskRecord, testsHash, type Bundle } from '../oracle/index.js';
import {
  OUTCOME_CLASSES,
  enqueueWithCandidates,
  type EnqueueRequest,
  type Job,
} from '../queue/index.js';
import { outcomeOf } from '../results/outcome.js';
import { containsSecret } from '../store/index.js';
import { createRuntime, quarantineOf } from '../workers/index.js';
import { loadBundles } from './bundles.js';
import type { CommandContext } from './context.js';
import {
  MAX_PREDICTIONS_BYTES,
  matchPredictions,
  parsePredictions,
  type Prediction,
  type Skipped,
} from './predictions.js';
import { formatTable } from './table.js';
import { waitForJobs } from './wait.js';

export interface PredictionsOptions {
  predictions: string;
  wait?: boolean;
  json?: boolean;
}

/** What a grade recorded at enqueue stores as its result (a GradeResult without a run). */
export interface UnrunGradeResult {
  verdict: 'FAIL';
  reason: 'EMPTY_PATCH' | 'PATCH_TOO_LARGE';
  detail: string;
  testsHash: string;
  task: ReturnType<typeof taskRecord>;
  image: null;
  diffSha256: string | null;
  log: null;
  timings: Record<string, number>;
  /** SWE-bench's patch_is_None: model_patch was null (not merely empty). */
  patchIsNone: boolean;
  quarantined?: { reason: string; job: number | null };
}

const refuse = (file: string, what: string) =>
  new ProctorError('USAGE', `--predictions ${file}: ${what}`);

async function readPredictions(file: string): Promise<string> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw refuse(file, (error as NodeJS.ErrnoException).code ?? 'cannot read');
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw refuse(file, 'not a regular file');
    if (info.size > MAX_PREDICTIONS_BYTES) {
      throw refuse(file, `larger than ${MAX_PREDICTIONS_BYTES} bytes`);
    }
    const bytes = await handle.readFile();
    if (bytes.length > MAX_PREDICTIONS_BYTES) throw refuse(file, 'grew while it was read');
    return bytes.toString('utf8');
  } finally {
    await handle.close();
  }
}

interface Row {
  line: number;
  instanceId: string;
  task: string;
  job: number;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export async function gradePredictionsCommand(
  context: CommandContext,
  suitePath: string,
  options: PredictionsOptions,
): Promise<number> {
  const { io, config } = context;
  const file = options.predictions;
  const parsed = parsePredictions(await readPredictions(file));
  if (typeof parsed === 'string') throw refuse(file, parsed);
  const { bundles, suiteTasks } = await loadBundles(io, [suitePath]);
  if (bundles.length === 0) throw new ProctorError('USAGE', `${suitePath}: no valid bundle`);
  const tasks = bundles.map((bundle) => ({
    id: bundle.id,
    instanceId: bundle.source?.instance_id,
    bundle,
  }));
  const { matched, skipped, notSubmitted } = matchPredictions(parsed.predictions, tasks);
  const problems: Skipped[] = [...parsed.skipped, ...skipped];
  const runtime = createRuntime(config, context.clock, createLogger({ level: 'warn' }));
  try {
    const toStore: Array<{ prediction: Prediction; bundle: Bundle; patch: Buffer }> = [];
    const unrun: Array<{ prediction: Prediction; bundle: Bundle; result: UnrunGradeResult }> = [];
    for (const { prediction, task } of matched) {
      const { bundle } = task;
      const patch = prediction.patch === null ? null : Buffer.from(prediction.patch, 'utf8');
      const base = {
        verdict: 'FAIL' as const,
        testsHash: testsHash([]),
        task: taskRecord(bundle),
        image: null,
        log: null,
        timings: {},
        patchIsNone: patch === null,
      };
      const quarantined = await quarantineOf(runtime.store, bundle);
      const extra = quarantined === undefined ? {} : { quarantined };
      if (patch === null || prediction.patch?.trim() === '') {
        const detail = patch === null ? 'model_patch is null' : 'model_patch is empty';
        unrun.push({
          prediction,
          bundle,
          result: { ...base, reason: 'EMPTY_PATCH', detail, diffSha256: null, ...extra },
        });
      } else if (patch.length > bundle.limits.patchBytes) {
        const detail = `the patch is ${patch.length} bytes, larger than the task's patch_bytes (${bundle.limits.patchBytes})`;
        unrun.push({
          prediction,
          bundle,
          result: {
            ...base,
            reason: 'PATCH_TOO_LARGE',
            detail,
            diffSha256: sha256(patch),
            ...extra,
          },
        });
      } else if (containsSecret(patch, runtime.secrets)) {
        problems.push({
          line: prediction.line,
          instanceId: prediction.instanceId,
          problem:
            'model_patch contains a provider key from this environment; refusing to store it',
        });
      } else {
        toStore.push({ prediction, bundle, patch });
      }
    }
    problems.sort((a, b) => a.line - b.line);
    for (const p of problems) io.err(`proctor: ${file}:${p.line}: skipped: ${p.problem}`);
    const model = (toStore[0] ?? unrun[0])?.prediction.model;
    if (model === undefined) {
      io.err(`proctor: ${file}: no prediction to grade`);
      return 1;
    }
    const predictionOf = (p: Prediction) => ({ instanceId: p.instanceId, model: p.model });
    const enqueued = await enqueueWithCandidates(
      runtime,
      toStore.map((e) => e.patch),
      (ids, inputs) => {
        const jobs: EnqueueRequest[] = [
          ...toStore.map((e, i) => ({
            kind: 'grade' as const,
            payload: {
              bundle: e.bundle.dir,
              candidate: ids[i],
              prediction: predictionOf(e.prediction),
            },
          })),
          ...unrun.map((e) => ({
            kind: 'grade' as const,
            payload: { bundle: e.bundle.dir, prediction: predictionOf(e.prediction) },
            finished: {
              result: e.result,
              outcome: outcomeOf({
                kind: 'grade',
                status: 'done',
                result: e.result,
                errorCode: null,
              }),
            },
          })),
        ];
        return runtime.store.enqueueBatch({ label: model, jobs }, inputs);
      },
    );
    const batch = enqueued.batch;
    if (batch === null) throw new ProctorError('INTERNAL', 'the batch was not created');
    // What `proctor report` counts "not submitted" against: tasks without a prediction.
    await runtime.store.recordBatchSuite(batch.id, suiteTasks);
    const rows: Row[] = [...toStore, ...unrun].map((e, i) => ({
      line: e.prediction.line,
      instanceId: e.prediction.instanceId,
      task: e.bundle.id,
      job: enqueued.jobIds[i] as number,
    }));
    rows.sort((a, b) => a.line - b.line);
    const missing = notSubmitted.map((t) => t.id);
    if (!options.wait) {
      if (options.json) {
        io.out(
          JSON.stringify(
            { batch: batch.id, model, jobs: rows, skipped: problems, notSubmitted: missing },
            null,
            2,
          ),
        );
      } else {
        io.out(
          `batch ${batch.id}: ${rows.length} grade(s) of ${model} enqueued (${unrun.length} recorded without a run); ${problems.length} skipped, ${missing.length} task(s) not submitted`,
        );
      }
      return problems.length > 0 ? 1 : 0;
    }
    const waited = await waitForJobs(
      context,
      runtime,
      { batchId: batch.id, label: 'grade', verdictNames: { PASS: 'PASS', FAIL: 'FAIL' } },
      { progress: !options.json, isTty: process.stderr.isTTY === true },
    );
    if (waited.interrupted) return 130;
    const byId = new Map<number, Job>(waited.jobs.map((j) => [j.id, j]));
    const graded = rows.map((r) => {
      const job = byId.get(r.job);
      const result = job?.result as { verdict?: string; reason?: string; detail?: string } | null;
      return {
        ...r,
        status: job?.status ?? 'missing',
        outcome: job?.outcome ?? null,
        verdict: result?.verdict ?? null,
        reason: result?.reason ?? job?.errorCode ?? null,
        detail: result?.detail ?? job?.lastError ?? '',
      };
    });
    const counts = Object.fromEntries(
      OUTCOME_CLASSES.map((c) => [c, graded.filter((g) => g.outcome === c).length]),
    );
    const errored = graded.filter((g) => g.outcome === 'error' || g.outcome === null).length;
    if (options.json) {
      io.out(
        JSON.stringify(
          {
            batch: batch.id,
            model,
            jobs: graded,
            counts,
            skipped: problems,
            notSubmitted: missing,
          },
          null,
          2,
        ),
      );
    } else {
      io.out(
        formatTable(
          ['LINE', 'INSTANCE', 'TASK', 'JOB', 'CLASS', 'VERDICT', 'REASON', 'DETAIL'],
          graded.map((g) => [
            String(g.line),
            g.instanceId,
            g.task,
            String(g.job),
            g.outcome ?? g.status,
            g.verdict ?? '-',
            g.reason ?? '-',
            g.detail.slice(0, 100),
          ]),
        ),
      );
      const classes = OUTCOME_CLASSES.map((c) => `${counts[c]} ${c}`).join(', ');
      io.out(
        `${model}: ${graded.length} graded (${classes}); ${problems.length} skipped; ${missing.length} task(s) not submitted (batch ${batch.id})`,
      );
      if (missing.length > 0) {
        const shown = missing.slice(0, 20).join(', ');
        io.out(
          `not submitted: ${shown}${missing.length > 20 ? `, … (${missing.length - 20} more)` : ''}`,
        );
      }
    }
    return problems.length > 0 || errored > 0 ? 1 : 0;
  } finally {
    await runtime.close();
  }
}
