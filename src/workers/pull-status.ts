// A job's image, resolved with its pull's progress written to the job store while it goes
// (JobStore.setProgress), so that `status`, `--wait` and the page show bytes, rate and ETA
// while the job waits on the pull. At most one write is in flight: a figure that arrives
// meanwhile replaces the one waiting, so a slow store never queues a backlog, and the pull
// itself tells at most once a second. The row is cleared when the resolve ends, whatever
// happened; after the job, the image cache keeps the recorded images within the disk budget.
import type { Bundle } from '../oracle/index.js';
import type { JobStore } from '../queue/index.js';
import type { ContextListing, ResolvedImage } from '../sandbox/index.js';
import { progressDocument, type PullProgress } from '../pull-progress.js';
import type { ImageCache } from './images.js';
import type { JobContext } from './pool.js';

export async function resolveForJob(
  deps: { images: ImageCache; store: Pick<JobStore, 'setProgress'> },
  context: Pick<JobContext, 'lease' | 'signal' | 'logger' | 'defer'>,
  bundle: Pick<Bundle, 'id' | 'contentHash' | 'environment'> & Partial<Pick<Bundle, 'dir'>>,
  listing?: ContextListing,
): Promise<ResolvedImage> {
  let waiting: string | undefined;
  let writing: Promise<void> | undefined;
  let wrote = false;
  const write = (text: string | null) =>
    deps.store.setProgress(context.lease, text).then(
      () => undefined,
      (error: unknown) => context.logger.debug('pull progress not written', { error }),
    );
  const drain = async () => {
    while (waiting !== undefined) {
      const text = waiting;
      waiting = undefined;
      wrote = true;
      await write(text);
    }
    writing = undefined;
  };
  const onPull = (progress: PullProgress) => {
    waiting = JSON.stringify(progressDocument(progress));
    writing ??= drain();
  };
  context.defer(() => deps.images.settle());
  try {
    return await deps.images.resolve(bundle, context.signal, listing, onPull);
  } finally {
    waiting = undefined;
    await writing;
    if (wrote) await write(null);
  }
}
