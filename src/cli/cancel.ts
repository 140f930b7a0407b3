// `proctor cancel JOB… | --batch ID`: cooperative cancel. Queued jobs are cancelled at once;
// running ones are asked to stop, and their workers tear them down within seconds.
import { ProctorError } from '../errors.js';
import type { CancelOutcome } from '../queue/index.js';
import type { CommandContext } from './context.js';

const WORDS: Record<CancelOutcome, string> = {
  cancelled: 'cancelled',
  cancel_requested: 'cancel requested (running; it stops within seconds)',
  already_requested: 'cancel already requested',
  already_finished: 'already finished',
  not_found: 'no such job',
};

export async function cancelCommand(
  context: CommandContext,
  ids: number[],
  options: { batch?: string },
): Promise<number> {
  if ((ids.length === 0) === (options.batch === undefined)) {
    throw new ProctorError('USAGE', 'cancel takes job ids or --batch ID (one of the two)');
  }
  const store = context.openStore();
  try {
    const outcomes =
      options.batch !== undefined
        ? await store.cancelBatch(options.batch)
        : await store.cancel(ids);
    for (const [id, outcome] of outcomes) {
      if (outcome === 'not_found') context.io.err(`proctor: no job ${id}`);
      else context.io.out(`job ${id}: ${WORDS[outcome]}`);
    }
    if (options.batch !== undefined && outcomes.size === 0) {
      context.io.out(`batch ${options.batch}: nothing left to cancel`);
    }
    return 0;
  } finally {
    await store.close();
  }
}
