// Cleanup: every container and volume of a job attempt goes, whatever happened (callers run
// removeOwned in `finally`); and at worker start the reaper removes what a crashed Proctor
// left for jobs that are not running any more. Both find resources by label only, and only
// those of this Proctor home.
import { describeError } from '../errors.js';
import { isNotFound, type DockerClient } from './docker.js';
import { LABEL, type Owner } from './labels.js';

export interface Removed {
  containers: string[];
  volumes: string[];
}

async function removeContainers(docker: DockerClient, filters: string[]): Promise<string[]> {
  const found = await docker.listContainers({ all: true, filters: { label: filters } });
  const removed: string[] = [];
  for (const info of found) {
    try {
      await docker.getContainer(info.Id).remove({ force: true, v: false });
      removed.push(info.Id);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  return removed;
}

async function removeVolumes(docker: DockerClient, filters: string[]): Promise<string[]> {
  const { Volumes } = await docker.listVolumes({ filters: { label: filters } });
  const removed: string[] = [];
  for (const volume of Volumes ?? []) {
    try {
      await docker.getVolume(volume.Name).remove({ force: true });
      removed.push(volume.Name);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  return removed;
}

/** Removes every container, then every volume, of one job attempt. */
export async function removeOwned(docker: DockerClient, owner: Owner): Promise<Removed> {
  const filters = [
    `${LABEL.home}=${owner.home}`,
    `${LABEL.job}=${owner.job}`,
    `${LABEL.attempt}=${owner.attempt}`,
  ];
  const containers = await removeContainers(docker, filters);
  const volumes = await removeVolumes(docker, filters);
  return { containers, volumes };
}

/**
 * Removes the containers and volumes of this home whose job attempt is not live. `isLive`
 * answers from the job table (a running job at that attempt, held by a live worker).
 */
export async function reapOrphans(
  docker: DockerClient,
  home: string,
  isLive: (job: string, attempt: number) => boolean | Promise<boolean>,
  log: (message: string) => void = () => {},
): Promise<Removed> {
  const removed: Removed = { containers: [], volumes: [] };
  const homeFilter = [`${LABEL.home}=${home}`];
  const containers = await docker.listContainers({ all: true, filters: { label: homeFilter } });
  const { Volumes } = await docker.listVolumes({ filters: { label: homeFilter } });
  const owners = new Map<string, Owner>();
  for (const labels of [
    ...containers.map((c) => c.Labels),
    ...(Volumes ?? []).map((v) => v.Labels ?? {}),
  ]) {
    const job = labels[LABEL.job];
    const attempt = Number(labels[LABEL.attempt]);
    if (job === undefined || !Number.isInteger(attempt)) continue;
    owners.set(`${job}\0${attempt}`, { job, attempt, home });
  }
  for (const owner of owners.values()) {
    if (await isLive(owner.job, owner.attempt)) continue;
    try {
      const r = await removeOwned(docker, owner);
      removed.containers.push(...r.containers);
      removed.volumes.push(...r.volumes);
      log(
        `removed ${r.containers.length} container(s) and ${r.volumes.length} volume(s) left by job ${owner.job} attempt ${owner.attempt}`,
      );
    } catch (error) {
      log(`could not remove what job ${owner.job} left: ${describeError(error)}`);
    }
  }
  return removed;
}
