// A long-lived sandbox container: started idle (its command only sleeps), then driven with
// execInContainer as the spec's uid:gid, and removed with everything in it. The solver and the
// evaluator use it.
//
// The idle process runs as another non-zero uid than the task (nobody, 65534), so that an
// exec of `kill -9 -1` as the task's uid ends every process the task left (daemons that
// escaped their session and cleared their environment included) without stopping the
// container: kill(-1) reaches every process the caller may signal but init, and the task's
// uid may not signal the idle process.
import type Docker from 'dockerode';
import { ProctorError, describeError } from '../errors.js';
import { isNotFound, type DockerClient } from './docker.js';
import { hardenedContainerOptions, type SandboxSpec, type VolumeMount } from './profile.js';
import type { Owner } from './labels.js';

/** Sleeps for 68 years: `sleep infinity` is GNU-only, and busybox accepts this too. */
const IDLE = ['sleep', '2147483647'];
const IDLE_UID = 65534;

/** The uid the idle process runs as: nobody, or one below when the task itself is nobody. */
export function idleUid(taskUid: number): number {
  return taskUid === IDLE_UID ? IDLE_UID - 1 : IDLE_UID;
}

/**
 * Creates and starts the spec's idle container. `beforeStart` runs between the two (what the
 * start needs that can be made while the engine creates the container: an overlay workspace's
 * layer); when it throws, the container is removed and its error rethrown as it is.
 */
export async function startIdleContainer(
  docker: DockerClient,
  spec: Omit<SandboxSpec, 'cmd'>,
  beforeStart?: () => Promise<void>,
): Promise<Docker.Container> {
  let container: Docker.Container;
  try {
    const options = hardenedContainerOptions({ ...spec, cmd: IDLE });
    const idle = idleUid(spec.uid);
    options.User = `${idle}:${idle}`;
    container = await docker.createContainer(options);
  } catch (error) {
    if (error instanceof ProctorError) throw error;
    throw new ProctorError(
      'DOCKER_ERROR',
      `cannot create the ${spec.role} container: ${describeError(error)}`,
      { cause: error },
    );
  }
  if (beforeStart) {
    try {
      await beforeStart();
    } catch (error) {
      await removeContainer(container);
      throw error;
    }
  }
  try {
    await container.start();
    return container;
  } catch (error) {
    await removeContainer(container);
    throw new ProctorError(
      'DOCKER_ERROR',
      `cannot start the ${spec.role} container: ${describeError(error)}`,
      { cause: error },
    );
  }
}

/** Force-removes a container (killing what runs in it); already gone is not an error. */
export async function removeContainer(container: Docker.Container): Promise<void> {
  try {
    await container.remove({ force: true, v: false });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/**
 * Extracts `archive` at `path` into `mounts` through a container of `image` that is created and
 * never started (the engine's archive API): no process ever runs or sees its root. The engine
 * extracts only into a writable root, so the root is writable; an entry may then sit on a
 * mount's parent, outside any volume, to give the mount's root its owner.
 */
export async function loadVolumes(
  docker: DockerClient,
  spec: { owner: Owner; image: string; mounts: VolumeMount[] },
  archive: Buffer,
  path: string,
): Promise<void> {
  const options = hardenedContainerOptions({
    owner: spec.owner,
    role: 'init',
    image: spec.image,
    cmd: ['true'],
    uid: 0,
    gid: 0,
    workdir: '/',
    mounts: spec.mounts,
  });
  options.HostConfig = { ...options.HostConfig, ReadonlyRootfs: false };
  const loader = await docker.createContainer(options);
  try {
    await loader.putArchive(archive, { path });
  } finally {
    await removeContainer(loader);
  }
}
