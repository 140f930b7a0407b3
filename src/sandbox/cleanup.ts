// Cleanup: every container and volume of a job attempt goes, whatever happened (callers run
// removeOwned in `finally`); and at worker start the reaper removes what a crashed Proctor
// left for jobs that are not running any more. Both find resources by label only, and only
// those of this Proctor home made by this host (the `proctor.host` label): hosts that share
// an engine, or one queue, never remove each other's.
import { describeError } from '../errors.js';
import { isNotFound, type DockerClient } from './docker.js';
import { LABEL, ownerHost, type Owner } from './labels.js';

export interface Removed {
  containers: string[];
  volumes: string[];
}

/** Whose leftovers a reaper may remove. */
export interface ReapScope {
  /** The Proctor home (the `proctor.home` label). */
  home: string;
  /** This host's identity (the `proctor.host` label). */
  host: string;
  /**
   * Whether resources without a host label (made before host labels existed) count as this
   * host's. True for a SQLite home, which one machine alone uses; false for a shared
   * PostgreSQL queue, where nothing can tell which host made them.
   */
  unlabelled: boolean;
}

async function removeContainer(docker: DockerClient, id: string): Promise<boolean> {
  try {
    await docker.getContainer(id).remove({ force: true, v: false });
    return true;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    return false;
  }
}

async function removeVolume(docker: DockerClient, name: string): Promise<boolean> {
  try {
    await docker.getVolume(name).remove({ force: true });
    return true;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    return false;
  }
}

async function removeAll(
  docker: DockerClient,
  containers: readonly string[],
  volumes: readonly string[],
): Promise<Removed> {
  const removed: Removed = { containers: [], volumes: [] };
  for (const id of containers) if (await removeContainer(docker, id)) removed.containers.push(id);
  for (const name of volumes) if (await removeVolume(docker, name)) removed.volumes.push(name);
  return removed;
}

/**
 * Removes every container, then every volume, of one job attempt: those labelled with the
 * owner's host, and those with no host label (made before host labels); never another host's.
 */
export async function removeOwned(docker: DockerClient, owner: Owner): Promise<Removed> {
  const filters = [
    `${LABEL.home}=${owner.home}`,
    `${LABEL.job}=${owner.job}`,
    `${LABEL.attempt}=${owner.attempt}`,
  ];
  const host = ownerHost(owner);
  const ours = (labels: Record<string, string> | undefined) => {
    const label = labels?.[LABEL.host];
    return label === undefined || label === host;
  };
  const containers = await docker.listContainers({ all: true, filters: { label: filters } });
  const { Volumes } = await docker.listVolumes({ filters: { label: filters } });
  return removeAll(
    docker,
    containers.filter((c) => ours(c.Labels)).map((c) => c.Id),
    (Volumes ?? []).filter((v) => ours(v.Labels ?? undefined)).map((v) => v.Name),
  );
}

interface Leftovers {
  job: string;
  attempt: number;
  containers: string[];
  volumes: string[];
}

/**
 * Removes the containers and volumes of this home and host whose job attempt is not live.
 * `isLive` answers from the job table (a running job at that attempt, held by a live worker).
 * Resources of other hosts are never touched, whatever the job table says.
 */
export async function reapOrphans(
  docker: DockerClient,
  scope: ReapScope,
  isLive: (job: string, attempt: number) => boolean | Promise<boolean>,
  log: (message: string) => void = () => {},
): Promise<Removed> {
  const removed: Removed = { containers: [], volumes: [] };
  const homeFilter = [`${LABEL.home}=${scope.home}`];
  const containers = await docker.listContainers({ all: true, filters: { label: homeFilter } });
  const { Volumes } = await docker.listVolumes({ filters: { label: homeFilter } });
  const byAttempt = new Map<string, Leftovers>();
  const add = (labels: Record<string, string>, push: (l: Leftovers) => void) => {
    const host = labels[LABEL.host];
    if (host === undefined ? !scope.unlabelled : host !== scope.host) return;
    const job = labels[LABEL.job];
    const attempt = Number(labels[LABEL.attempt]);
    if (job === undefined || !Number.isInteger(attempt)) return;
    const key = `${job}\0${attempt}`;
    let entry = byAttempt.get(key);
    if (!entry) byAttempt.set(key, (entry = { job, attempt, containers: [], volumes: [] }));
    push(entry);
  };
  for (const c of containers) add(c.Labels, (l) => l.containers.push(c.Id));
  for (const v of Volumes ?? []) add(v.Labels ?? {}, (l) => l.volumes.push(v.Name));
  for (const left of byAttempt.values()) {
    if (await isLive(left.job, left.attempt)) continue;
    try {
      const r = await removeAll(docker, left.containers, left.volumes);
      removed.containers.push(...r.containers);
      removed.volumes.push(...r.volumes);
      log(
        `removed ${r.containers.length} container(s) and ${r.volumes.length} volume(s) left by job ${left.job} attempt ${left.attempt}`,
      );
    } catch (error) {
      log(`could not remove what job ${left.job} left: ${describeError(error)}`);
    }
  }
  return removed;
}
