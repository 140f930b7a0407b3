// Workspace volumes: a fresh named volume per job and role, copied from the workspace
// template of the image, repository, base commit, sandbox user and history (template.ts; the
// template is prepared on first use), owned by the sandbox uid:gid.
//
// A job's own containers make theirs with startWithWorkspace (workspace-start.ts), which
// copies in the job's first container. createWorkspace is the same path for a caller that
// wants the volume alone: a short-lived container of the given role (isolation profile, the
// sandbox uid) makes the copy and goes. It copies unless asked for an overlay (`layer`): the
// volume outlives that container, and an overlay's template is kept from removal only while a
// container mounts it (overlay.ts), which the caller's later containers do not.
//
// With history `full` the copy holds the clean tracked tree and a .git with base_commit's
// history and nothing later; with `none`, the base commit alone (its tree and index, no
// parent). Either way no commit later than the base is in it.
import type { DockerClient } from './docker.js';
import { removeContainer } from './container.js';
import { startWithWorkspace, type WorkspaceSpec } from './workspace-start.js';

export type { WorkspaceSpec } from './workspace-start.js';
export { removeVolume } from './volumes.js';

export async function createWorkspace(docker: DockerClient, spec: WorkspaceSpec): Promise<string> {
  const made = await startWithWorkspace(docker, {
    ...spec,
    layer: spec.layer ?? 'copy',
    container: {
      workdir: '/',
      tmpfs: [{ path: '/tmp', sizeMb: 16 }],
      // pids as for a preparation: under gVisor (runsc) the sandbox's own threads count
      // toward the limit, and 64 stopped a plain `cp -a` there, silently (exit 2).
      limits: { cpus: 1, memoryMb: 512, pids: 256 },
    },
  });
  await removeContainer(made.container);
  return made.workspace;
}
