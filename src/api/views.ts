// How the API shows stored rows: the job view of every job answer.
import type { Job } from '../queue/index.js';
import type { PullProgressDocument } from '../pull-progress.js';
import type { Answer } from './schemas.js';

type PullView = NonNullable<Answer<'jobPage'>['items'][number]['pull']>;

function pullView(p: PullProgressDocument): PullView {
  return {
    image: p.image,
    bytes: p.bytes,
    totalBytes: p.totalBytes,
    layersDone: p.layersDone,
    layers: p.layers,
    bytesPerSecond: p.bytesPerSecond,
    etaSeconds: p.etaSeconds,
    startedAt: p.startedAt,
    updatedAt: p.updatedAt,
  };
}

/** `pulls`: the pulls running jobs wait on (src/results/pulls.ts), by job id. */
export function jobView(
  job: Job,
  pulls?: ReadonlyMap<number, PullProgressDocument>,
): Answer<'jobPage'>['items'][number] {
  const pull = pulls?.get(job.id);
  return {
    id: job.id,
    batchId: job.batchId,
    parentId: job.parentId,
    kind: job.kind,
    status: job.status,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    payload: job.payload,
    result: job.result,
    lastError: job.lastError,
    errorCode: job.errorCode,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    cancelRequested: job.cancelRequestedAt !== null,
    pull: pull ? pullView(pull) : null,
  };
}
