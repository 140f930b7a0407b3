// The image pulls running jobs are waiting on, as `status`, `--wait` and the API (the page)
// show them: read from the job store (JobStore.jobProgress), where the worker that pulls
// writes them, so a reader in another process, or on another host of a shared queue, sees the
// same figures. What a worker wrote is read as data: a malformed document shows as no pull.
import type { Job, JobStore } from '../queue/index.js';
import { MAX_PAGE } from '../queue/store.js';
import {
  formatPullProgress,
  readProgressDocument,
  type PullProgressDocument,
} from '../pull-progress.js';

/** The pull progress of those of `jobs` that are running and pulling, by job id. */
export async function pullsOf(
  store: Pick<JobStore, 'jobProgress'>,
  jobs: readonly Pick<Job, 'id' | 'status'>[],
): Promise<Map<number, PullProgressDocument>> {
  const running = jobs.filter((j) => j.status === 'running').map((j) => j.id);
  const found = new Map<number, PullProgressDocument>();
  for (let i = 0; i < running.length; i += MAX_PAGE) {
    const texts = await store.jobProgress(running.slice(i, i + MAX_PAGE));
    for (const [id, text] of texts) {
      const doc = readProgressDocument(text);
      if (doc) found.set(id, doc);
    }
  }
  return found;
}

/** `pulling r/x@sha256:…: 12.3 MB of 40.0 MB, 5.1 MB/s, ETA 6s (layers 1/2)`. */
export function pullText(p: PullProgressDocument): string {
  return `pulling ${p.image}: ${formatPullProgress(p)}`;
}
