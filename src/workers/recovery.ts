// Recovery of Docker resources at worker start: everything labelled for this home and this
// host whose job attempt is not running (its worker crashed, or it already finished) is
// removed. The job table decides what is live, so a restarted worker never touches the
// containers of jobs other live workers hold, and the host label keeps it off other hosts'
// (see ReapScope for resources made before host labels). Workspace templates whose image is
// gone from the engine go too, and half-made ones (a crash took their preparation) once no
// container uses them.
import type { Logger } from '../logger.js';
import type { JobStore } from '../queue/index.js';
import { reapOrphans, type ReapScope } from '../sandbox/cleanup.js';
import { reapTemplates } from '../sandbox/template.js';
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
