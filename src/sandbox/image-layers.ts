// An image's own layers as the lower layers of its workspace template (template.ts, layered):
// the work tree of each layer that holds one, top first, read from the engine's overlay2
// storage. A template made on them copies nothing of the image's tree: its preparation mounts
// these layers as one overlay (the view), makes the template's own repository and hands the
// tree to the sandbox user there, and only what that changes (the new .git, the files the base
// commit differs in, whiteouts for what goes, and each file's new owner, metadata only with
// `metacopy=on`) lands in the template's volume. A job's overlay then stacks the template's
// changes on the same layers.
//
// The stack is read on the host: the layers' folders are the engine's (`GraphDriver` of the
// image), and each is checked with lstat along the work tree's path. A layer without the path
// adds nothing and is left out; one where a folder on the path is a whiteout (a character
// device 0/0, the layer deleted it) or is not a folder ends the stack: nothing below it shows
// through. A layer whose folder is opaque (it was made anew) also ends what shows below it,
// but that mark is an xattr of the `trusted` namespace, which only the engine's root can read;
// the preparation therefore checks that the view shows exactly the image's own tree, and a
// template whose layers do not add up is made by a copy instead.
//
// Where the stack cannot be read the copy is used: an engine with another storage driver (the
// containerd image store, vfs, btrfs), one on another host, a Proctor that may not read the
// engine's folders (it is not root), or a stack too long for the mount's options.
import { lstat } from 'node:fs/promises';
import { describeError } from '../errors.js';
import type { DockerClient } from './docker.js';
import { isNotFound } from './docker.js';

/** The lower layers of a layered template, top first, joined for `lowerdir`; or why not. */
export type LayerStack = { lowers: string } | { refused: string };

/** The mount's options go to the kernel in one page, with the upper layer and the job's own. */
export const MAX_LOWERS_LENGTH = 3000;

const LAYER_DIR = /^\/[A-Za-z0-9_./-]+\/diff$/;
const PATH_PART = /^[A-Za-z0-9_.@+-]+$/;

/** What one layer holds at the work tree's path. */
export type LayerState = 'tree' | 'absent' | 'ends';

/** What `dir` (a layer's root) holds at `parts`: the tree, nothing, or an end of the stack. */
export async function layerState(dir: string, parts: readonly string[]): Promise<LayerState> {
  let path = dir;
  for (const part of parts) {
    path = `${path}/${part}`;
    let info;
    try {
      info = await lstat(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
      throw error;
    }
    // A whiteout (character device 0/0) deletes what lies below; so does anything not a folder.
    if (!info.isDirectory()) return 'ends';
  }
  return 'tree';
}

/**
 * Whether every folder of a stack read before is still there: a layer's folder goes with its
 * image, and an image pulled again gets new ones (its id stays). lstat alone, no engine call.
 */
export async function lowersPresent(lowers: string): Promise<boolean> {
  const found = await Promise.all(
    lowers.split(':').map((dir) =>
      lstat(dir).then(
        (info) => info.isDirectory(),
        () => false,
      ),
    ),
  );
  return found.every(Boolean);
}

/** The layers of `image` that hold `repoPath`, top first, as a template's lower layers. */
export async function layerStack(
  docker: DockerClient,
  image: string,
  repoPath: string,
): Promise<LayerStack> {
  const parts = repoPath.split('/').filter((p) => p !== '');
  if (parts.length === 0 || !parts.every((p) => PATH_PART.test(p) && p !== '.' && p !== '..')) {
    return {
      refused: `the work tree's path ${JSON.stringify(repoPath)} cannot name a layer's folder`,
    };
  }
  let info;
  try {
    info = await docker.getImage(image).inspect();
  } catch (error) {
    if (isNotFound(error)) return { refused: `image ${image} is not on the engine` };
    throw error;
  }
  const driver = info.GraphDriver as { Name?: string; Data?: Record<string, string> } | undefined;
  if (driver?.Name !== 'overlay2') {
    return {
      refused: `the engine stores images with ${driver?.Name ?? 'an unknown driver'}, not overlay2`,
    };
  }
  const data = driver.Data ?? {};
  const dirs = [data['UpperDir'], ...(data['LowerDir'] ?? '').split(':')].filter(
    (d): d is string => d !== undefined && d !== '',
  );
  if (dirs.length === 0 || !dirs.every((d) => LAYER_DIR.test(d) && !d.split('/').includes('..'))) {
    return { refused: `the image's layers have folders an overlay cannot name` };
  }
  return stackOfLayers(dirs, parts);
}

/** The stack of the layer folders `dirs` (top first) at the work tree's path `parts`. */
export async function stackOfLayers(
  dirs: readonly string[],
  parts: readonly string[],
): Promise<LayerStack> {
  const repoPath = `/${parts.join('/')}`;
  const lowers: string[] = [];
  try {
    for (const dir of dirs) {
      // A layer's own folder missing: the engine keeps its storage on another host.
      if (!(await lstat(dir)).isDirectory()) throw new Error(`${dir} is not a folder`);
      const state = await layerState(dir, parts);
      if (state === 'tree') lowers.push(`${dir}${repoPath}`);
      if (state === 'ends') break;
    }
  } catch (error) {
    return { refused: `the engine's image layers cannot be read here (${describeError(error)})` };
  }
  if (lowers.length === 0) return { refused: `no layer of the image holds ${repoPath}` };
  const joined = lowers.join(':');
  if (joined.length > MAX_LOWERS_LENGTH) {
    return { refused: `the image's ${lowers.length} layers are too many for one overlay mount` };
  }
  return { lowers: joined };
}
