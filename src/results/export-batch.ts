// The jobs a batch's debug export holds: every job of the batch, in every status, and the
// grades its solves enqueued (they carry no batch id). Bounded by MAX_EXPORT_JOBS: a larger
// batch is refused, never cut. Shared by `proctor export --batch` and the API's download.
import { ProctorError } from '../errors.js';
import { JOB_STATUSES } from '../queue/constants.js';
import { MAX_PAGE, type Job, type JobStore } from '../queue/store.js';
import { MAX_EXPORT_JOBS } from './export.js';

export async function exportBatchJobs(store: JobStore, batchId: string): Promise<Job[]> {
  if (!(await store.getBatch(batchId))) {
    throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
  }
  const jobs = new Map<number, Job>();
  const take = (job: Job) => {
    jobs.set(job.id, job);
    if (jobs.size > MAX_EXPORT_JOBS) {
      throw new ProctorError(
        'LIMIT_EXCEEDED',
        `batch ${batchId} has more than ${MAX_EXPORT_JOBS} jobs; export some of them by id`,
      );
    }
  };
  for (const status of JOB_STATUSES) {
    let cursor: string | undefined;
    do {
      const page = await store.listJobs(
        { batchId, status },
        { limit: MAX_PAGE, order: 'asc', ...(cursor === undefined ? {} : { cursor }) },
      );
      for (const job of page.items) take(job);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
  for (const job of [...jobs.values()]) {
    if (job.kind !== 'solve') continue;
    for (const child of (await store.listJobs({ parentId: job.id }, { limit: MAX_PAGE })).items) {
      take(child);
    }
  }
  return [...jobs.values()];
}
