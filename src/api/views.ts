// How the API shows stored rows: the job view of every job answer.
import type { Job } from '../queue/index.js';
import type { Answer } from './schemas.js';

export function jobView(job: Job): Answer<'jobPage'>['items'][number] {
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
  };
}
