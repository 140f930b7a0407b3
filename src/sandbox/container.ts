// A long-lived sandbox container: started idle (its command only sleeps), then driven with
// execInContainer, and removed with everything in it. The solver and the evaluator use it.
import type Docker from 'dockerode';
import { ProctorError, describeError } from '../errors.js';
import { isNotFound, type DockerClient } from './docker.js';
import { hardenedContainerOptions, type SandboxSpec } from './profile.js';

/** Sleeps for 68 years: `sleep infinity` is GNU-only, and busybox accepts this too. */
const IDLE = ['sleep', '2147483647'];

export async function startIdleContainer(
  docker: DockerClient,
  spec: Omit<SandboxSpec, 'cmd'>,
): Promise<Docker.Container> {
  let container: Docker.Container;
  try {
    container = await docker.createContainer(hardenedContainerOptions({ ...spec, cmd: IDLE }));
  } catch (error) {
    if (error instanceof ProctorError) throw error;
    throw new ProctorError(
      'DOCKER_ERROR',
      `cannot create the ${spec.role} container: ${describeError(error)}`,
      { cause: error },
    );
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
