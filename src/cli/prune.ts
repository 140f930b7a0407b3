// `proctor prune [--keep N] [--json]`: removes this home's workspace templates (the prepared
// copies of task repositories that job workspaces are copied from), but the N most recently
// made. A template a container is using right now (a job's copy, another process's
// preparation) is left and named. Templates come back on the next job that needs one.
import { dockerHost } from '../config.js';
import { createDockerClient, requireDocker } from '../sandbox/docker.js';
import { pruneTemplates } from '../sandbox/template.js';
import type { CommandContext } from './context.js';

export async function pruneCommand(
  context: CommandContext,
  options: { keep: number; json?: boolean },
): Promise<number> {
  const docker = createDockerClient(dockerHost());
  await requireDocker(docker, dockerHost() ?? '/var/run/docker.sock');
  const result = await pruneTemplates(docker, context.config.home, options.keep);
  if (options.json) {
    context.io.out(JSON.stringify(result));
    return 0;
  }
  context.io.out(
    `removed ${result.removed.length} workspace template(s)` +
      (result.busy.length > 0 ? `; ${result.busy.length} in use, left` : ''),
  );
  for (const name of result.busy) context.io.out(`in use: ${name}`);
  return 0;
}
