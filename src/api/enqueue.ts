// How the API enqueues: the checks that need no file first, then each distinct bundle of the
// request read once, then the candidate patches stored by content and registered in the
// enqueue's own transaction, so that a replay stores nothing new and a refused or failed
// enqueue leaves nothing behind. The work runs under a signal that aborts when the client
// goes away or the server shuts down, and a batch is bounded before any of it starts.
import type { Context } from 'hono';
import type { ProctorConfig } from '../config.js';
import { ProctorError } from '../errors.js';
import type { Logger } from '../logger.js';
import { loadBundle } from '../oracle/index.js';
import {
  enqueueWithCandidates,
  type EnqueueInputs,
  type EnqueueRequest,
  type JobStore,
} from '../queue/index.js';
import { containsSecret, type ArtifactStore } from '../store/index.js';
import { MAX_BATCH_JOBS, type JobRequest } from './schemas.js';

export interface EnqueuerDeps {
  store: JobStore;
  artifacts: ArtifactStore;
  config: ProctorConfig;
  secrets: readonly string[];
  /** Aborted when the server shuts down. */
  signal?: AbortSignal;
  logger: Logger;
  /** A request's bundle path as a path under tasks_root. */
  underTasksRoot: (path: string) => string;
}

/** Refuses (413 LIMIT_EXCEEDED) a batch body of more than MAX_BATCH_JOBS jobs, before parsing it. */
export function checkBatchSize(body: unknown): void {
  const jobs = (body as { jobs?: unknown } | null)?.jobs;
  if (Array.isArray(jobs) && jobs.length > MAX_BATCH_JOBS) {
    throw new ProctorError(
      'LIMIT_EXCEEDED',
      `body.jobs: ${jobs.length} jobs; a batch holds at most ${MAX_BATCH_JOBS}`,
      { data: { path: 'body.jobs', limit: MAX_BATCH_JOBS } },
    );
  }
}

export function createEnqueuer(deps: EnqueuerDeps) {
  const { store, artifacts, config, secrets, logger, underTasksRoot } = deps;

  /**
   * Turns API job requests into queue requests and enqueues them with `enqueue`: every check
   * that needs no file first, then each distinct bundle read once, then the candidate patches
   * stored by content and registered in the enqueue's transaction (so a refused or failed
   * enqueue leaves none behind). `signal` stops the work between steps.
   */
  async function enqueuePrepared<T>(
    requests: readonly JobRequest[],
    signal: AbortSignal,
    enqueue: (prepared: EnqueueRequest[], inputs: EnqueueInputs) => Promise<T>,
  ): Promise<T> {
    const patches: Buffer[] = [];
    for (const [i, request] of requests.entries()) {
      if (request.kind === 'solve' && !Object.hasOwn(config.solvers, request.solver)) {
        throw new ProctorError(
          'PAYLOAD_INVALID',
          `jobs[${i}].solver: no solver profile named ${request.solver}`,
        );
      }
      if (request.kind === 'grade') {
        const patch = Buffer.from(request.patch, 'utf8');
        if (containsSecret(patch, secrets)) {
          throw new ProctorError(
            'PAYLOAD_INVALID',
            `jobs[${i}].patch: contains a provider key; refusing to store it`,
          );
        }
        patches.push(patch);
      }
    }
    const bundles = new Map<string, string>();
    for (const request of requests) {
      const path = underTasksRoot(request.bundle);
      if (bundles.has(path)) continue;
      signal.throwIfAborted();
      bundles.set(path, (await loadBundle(path, { tasksRoot: config.tasksRoot })).dir);
    }
    return enqueueWithCandidates(
      { store, artifacts },
      patches,
      (candidates, inputs) => {
        let next = 0;
        const prepared = requests.map((request): EnqueueRequest => {
          const bundle = bundles.get(underTasksRoot(request.bundle)) as string;
          const key =
            request.idempotencyKey === undefined ? {} : { idempotencyKey: request.idempotencyKey };
          if (request.kind === 'baseline') {
            return {
              kind: 'baseline',
              payload: { bundle, gold: request.gold, repeat: request.repeat },
              ...key,
            };
          }
          if (request.kind === 'solve') {
            const timeout =
              request.timeoutSeconds === undefined
                ? {}
                : { timeoutSeconds: request.timeoutSeconds };
            return {
              kind: 'solve',
              payload: { bundle, solver: request.solver, ...timeout },
              ...key,
            };
          }
          return { kind: 'grade', payload: { bundle, candidate: candidates[next++] }, ...key };
        });
        return enqueue(prepared, inputs);
      },
      signal,
    );
  }

  /**
   * Runs a route's work under a signal that aborts when the client goes away or the server
   * shuts down: the work stops at its next step instead of running on for nobody.
   */
  async function abandonable<T>(c: Context, work: (signal: AbortSignal) => Promise<T>) {
    const signal = deps.signal
      ? AbortSignal.any([c.req.raw.signal, deps.signal])
      : c.req.raw.signal;
    try {
      return await work(signal);
    } catch (error) {
      if (!signal.aborted) throw error;
      logger.info('request abandoned; its work stopped', {
        method: c.req.method,
        path: c.req.path,
        reason: String(signal.reason),
      });
      throw new ProctorError('CANCELLED', 'the request was abandoned before it finished', {
        cause: error,
      });
    }
  }

  return { enqueuePrepared, abandonable };
}
