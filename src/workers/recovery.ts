// Recovery of Docker resources at worker start: everything labelled for this home and this
// host whose job attempt is not running (its worker crashed, or it already finished) is
// removed. The job table decides what is live, so a restarted worker never touches the
// containers of jobs other live workers hold, and the host label keeps it off other hosts'
// (see ReapScope for resources made before host labels). Workspace templates whose image is
// gone from the engine go too, and half-made ones (a crash took their preparation) once no
// container uses them. This host's templates of other homes whose folder is gone go with the
// worker's sweeps (reapGoneHomeTemplates), the first of them at start, beside the first jobs
// rather than before them: they are other homes' leftovers, and removing a few dozen held up
// a sweep's first claim by 0.7 s.
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { JobStore } from '../queue/index.js';
import { reapOrphans, type ReapScope } from '../sandbox/cleanup.js';
import { reapTemplates } from '../sandbox/template.js';
import { reapGoneHomes } from '../sandbox/template-prune.js';
import type { DockerClient } from '../sandbox/docker.js';

export function sandboxRecovery(
  docker: DockerClient,
  store: JobStore,
  scope: ReapScope,
  logger: Logger,
): () => Promise<void> {
  return async () => {
    await reapOrphans(
      docker,
      scope,
      async (job, attempt) => {
        if (!/^[1-9][0-9]*$/.test(job)) return false;
        const row = await store.getJob(Number(job));
        return row?.status === 'running' && row.attempt === attempt;
      },
      (message) => logger.warn(message),
    );
    const templates = await reapTemplates(docker, scope.home);
    if (templates.length > 0) {
      logger.warn(
        `removed ${templates.length} workspace template(s) whose image is gone or that a crash left half-made`,
      );
    }
  };
}

/**
 * Removes this host's workspace templates of homes whose folder is gone (a worker's sweep, the
 * first at its start; never a reason to stop a worker: a failure is logged), and says so at info
 * (a `proctor worker` shows it; the in-process workers of `grade --wait` and friends, at warn,
 * do not: other homes' housekeeping is not their user's business). One kept because a
 * container uses it is said at debug only: another home's job in flight is no fault.
 */
export async function reapGoneHomeTemplates(
  docker: DockerClient,
  scope: ReapScope,
  logger: Logger,
): Promise<void> {
  let outcomes;
  try {
    outcomes = await reapGoneHomes(docker, scope);
  } catch (error) {
    logger.warn(`could not reap templates of gone homes: ${describeError(error)}`);
    return;
  }
  const removed = outcomes.filter((o) => o.action === 'removed');
  const homes = new Set(removed.map((o) => o.home));
  if (removed.length > 0) {
    logger.info(
      `removed ${removed.length} workspace template(s) of ${homes.size} home(s) that are gone`,
    );
  }
  for (const o of outcomes.filter((o) => o.action === 'kept')) {
    logger.debug(`kept workspace template ${o.name} of gone home ${o.home}: ${o.detail}`);
  }
}
