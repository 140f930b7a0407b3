// Removing a named volume: already gone is not an error.
import { isNotFound, type DockerClient } from './docker.js';

export async function removeVolume(docker: DockerClient, name: string): Promise<void> {
  try {
    await docker.getVolume(name).remove({ force: true });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
