// An overlay workspace's check, made on this host where it can be. A job's first exec
// (USER_COPY_SCRIPT, layer `overlay`) checks, as the sandbox user in the job's container, that
// the template is ready for its key, that the work tree shows the template's top-level names
// through the overlay, and that it is writable. Under runc the container's work tree is a bind
// of the overlay the engine mounted at the volume's Mountpoint, on this host, so where this
// process can read the engine's folders (it is root, and the engine runs here, unremapped) the
// same three facts are read there, without an exec: about 60 ms and a process in the container
// less on every job's path. Only a check that saw all three is taken; anything else (not root,
// an engine elsewhere, a runtime other than runc, a mount this process does not see, a
// template not ready) leaves the exec to check, and to say why, as before.
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DockerClient } from './docker.js';
import { parseReady } from './template-scripts.js';

export interface OverlayCheck {
  /** The template volume's folder (the engine's path the overlay's lower layer names). */
  template: string;
  /** The overlay volume, mounted by the started container. */
  overlay: string;
  /** The template's key, which its `ready` file must name. */
  key: string;
  /** The sandbox uid, which must own the work tree's root and may write it. */
  uid: number;
  /** The container's runtime, when the spec names one. */
  runtime?: string;
}

const defaultRuntimes = new WeakMap<DockerClient, Promise<string | undefined>>();

/** The engine's default runtime, asked once per client. */
function defaultRuntime(docker: DockerClient): Promise<string | undefined> {
  let known = defaultRuntimes.get(docker);
  if (known === undefined) {
    known = docker.info().then(
      (info: { DefaultRuntime?: unknown }) =>
        typeof info.DefaultRuntime === 'string' ? info.DefaultRuntime : undefined,
      () => undefined,
    );
    defaultRuntimes.set(docker, known);
  }
  return known;
}

/**
 * True when this host saw what USER_COPY_SCRIPT's overlay check would: then no exec is needed.
 * False when it cannot tell or saw anything else; never throws.
 */
export async function overlaySeenOnHost(
  docker: DockerClient,
  check: OverlayCheck,
): Promise<boolean> {
  if (process.getuid?.() !== 0) return false;
  try {
    const runtime = check.runtime ?? (await defaultRuntime(docker));
    if (runtime !== 'runc') return false;
    const [ready, want, mountpoint] = await Promise.all([
      readFile(join(check.template, 'ready'), 'utf8'),
      topNames(check.template),
      docker
        .getVolume(check.overlay)
        .inspect()
        .then((info: { Mountpoint?: unknown }) => info.Mountpoint),
    ]);
    if (parseReady(ready)?.key !== check.key) return false;
    if (typeof mountpoint !== 'string' || !mountpoint.startsWith('/')) return false;
    const [root, got] = await Promise.all([stat(mountpoint), readdir(mountpoint)]);
    if (!root.isDirectory() || root.uid !== check.uid || (root.mode & 0o200) === 0) return false;
    return sameNames(want, got);
  } catch {
    return false;
  }
}

/** The template's top-level names: its `top` file (a layered template's), else its tree's. */
async function topNames(template: string): Promise<string[]> {
  try {
    return (await readFile(join(template, 'top'), 'utf8')).split('\n').filter((n) => n !== '');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return readdir(join(template, 'tree'));
  }
}

/** The same names, in any order; a name with a line break (which `top` cannot hold) is not. */
function sameNames(want: readonly string[], got: readonly string[]): boolean {
  if (want.length === 0 || want.length !== got.length) return false;
  if (got.some((name) => name.includes('\n'))) return false;
  const sorted = (names: readonly string[]) => [...names].sort().join('\n');
  return sorted(want) === sorted(got);
}
