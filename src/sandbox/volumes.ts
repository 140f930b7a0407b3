// Removing a named volume: already gone is not an error.
import { isNotFound, type DockerClient } from './docker.js';
import { LABEL } from './labels.js';

export async function removeVolume(docker: DockerClient, name: string): Promise<void> {
  try {
    await docker.getVolume(name).remove({ force: true });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/**
 * A template's name the engine made again as an unlabelled volume (a container named it after
 * the template was pruned) goes again. Returns whether the labelled template is gone: true when
 * the volume was unlabelled or is missing.
 */
export async function dropIfUnlabelled(docker: DockerClient, volume: string): Promise<boolean> {
  try {
    const info = await docker.getVolume(volume).inspect();
    if (info.Labels?.[LABEL.template] !== undefined) return false;
    await removeVolume(docker, volume);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  return true;
}
