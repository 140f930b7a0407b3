// Overlay workspaces: a job's work tree as an overlay mount whose lower layer is the template's
// tree (read-only, shared by every job of the template) and whose upper layer, where every
// write of the job lands, is a fresh volume of the job's own. Nothing is copied: a file is
// copied up only when the job writes to it, so a big ignored tree (node_modules, target/,
// build/) costs nothing until something changes it.
//
// The engine mounts it: a volume of its `local` driver with type `overlay`, whose options name
// the template volume's and the layer volume's Mountpoints. The mount happens in the engine's
// own process (root on its host) when a container using the volume starts, so the job's
// container keeps its profile: no capability, read-only root, no-new-privileges. The kernel
// writes the upper layer (copy-ups, whiteouts for deletions) with the engine's credentials,
// so a job needs no privilege to delete a file of the template.
//
// The guarantees hold as for a copy: the lower layer is never written (an overlay writes only
// its upper layer, and the template is also mounted read-only in the job's container, which
// keeps the engine from removing it while the job lives); each job has its own upper layer, so
// nothing one writes is seen by another; capture reads the merged work tree (the volume), as
// it reads a copied one. The layer volume holds `upper/` (the sandbox user's: it gives the
// work tree's root its owner) and `work/` (the kernel's scratch directory, which must be on the
// upper layer's file system); both go with the job's other labelled volumes.
//
// Where it cannot work the copy is used instead (workspace-start.ts): under another runtime
// than runc (gVisor's runsc 2022-12 reads an overlay volume wrong: a stat of its directories
// fails with EINVAL, though files read), with a template not on the `local` driver or without
// a Mountpoint (an engine of another kind), with a Mountpoint the mount options cannot carry,
// when the engine fails the mount (rootless engines, kernels without overlayfs), and when
// the job's container does not see the template's tree through it.
import { ProctorError, describeError } from '../errors.js';
import type { DockerClient } from './docker.js';

/** How a job's work tree is made from the template: mounted over it, or copied. */
export type WorkspaceLayer = 'overlay' | 'copy';

/** Per process and engine: set when the engine refused an overlay mount, with the reason. */
export interface LayerMemo {
  refused?: string;
}

/** The options an overlay volume is made with; a path with one of `,:=\` or a space breaks them. */
const SAFE_PATH = /^\/[A-Za-z0-9_./-]+$/;

/** Why an overlay cannot be used with this runtime, or undefined when it can be tried. */
export function runtimeRefusal(runtime: string | undefined): string | undefined {
  if (runtime === undefined || runtime === 'runc') return undefined;
  return `the ${runtime} runtime does not read overlay volumes (copied instead)`;
}

/** A volume's engine-side path, or why an overlay cannot name it. */
export type VolumePath = { path: string } | { refused: string };

/** The engine-side path of a plain local volume's files, checked to be one the overlay options can carry. */
export async function volumePath(docker: DockerClient, name: string): Promise<VolumePath> {
  let info;
  try {
    info = await docker.getVolume(name).inspect();
  } catch (error) {
    throw new ProctorError(
      'DOCKER_ERROR',
      `cannot inspect volume ${name}: ${describeError(error)}`,
      {
        cause: error,
      },
    );
  }
  if (info.Driver !== 'local' || Object.keys(info.Options ?? {}).length > 0) {
    return { refused: `volume ${name} is not a plain volume of the local driver` };
  }
  const path = info.Mountpoint;
  if (typeof path !== 'string' || !safePath(path)) {
    return {
      refused: `volume ${name} has no Mountpoint an overlay can name (${JSON.stringify(path ?? null)})`,
    };
  }
  return { path };
}

function safePath(path: string): boolean {
  return SAFE_PATH.test(path) && !path.split('/').includes('..');
}

/**
 * The driver options of an overlay volume over `lowers` (top first), writing to the layer
 * volume at `layer` (its `upper/`, or `upper` named, and `work/`). `metacopy`: a copy-up of a
 * change of owner or mode copies the metadata alone, and a lower layer made that way (a
 * layered template's, image-layers.ts) is read as such.
 */
export function overlayOptions(
  lowers: string | readonly string[],
  layer: string,
  options: { upper?: string; metacopy?: boolean } = {},
): Record<string, string> {
  const stack = typeof lowers === 'string' ? [lowers] : lowers;
  for (const path of [...stack, layer]) {
    if (!safePath(path)) {
      throw new ProctorError(
        'SANDBOX_INVALID',
        `an overlay cannot name the path ${JSON.stringify(path)}`,
      );
    }
  }
  const upper = options.upper ?? 'upper';
  if (!/^[a-z]+$/.test(upper)) throw new TypeError(`Expected a plain upper folder, got ${upper}`);
  return {
    type: 'overlay',
    device: 'overlay',
    o: `lowerdir=${stack.join(':')},upperdir=${layer}/${upper},workdir=${layer}/work,${options.metacopy ? 'metacopy=on,' : ''}nosuid,nodev`,
  };
}

/** True for an engine error that says a volume could not be mounted. */
export function isMountFailure(error: unknown): boolean {
  return /mount/i.test(describeError(error));
}
