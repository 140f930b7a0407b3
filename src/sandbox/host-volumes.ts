// Filling fresh volumes before any container that runs task code mounts them: folders with
// their owner and mode, and evaluator assets (assets.ts). Where the engine's volume folders are
// this process's own (the engine runs on this host as root, with no user namespace remap, and
// this process is root), they are made directly in each volume's folder, the same owners, modes
// and mtimes an archive would give, with no container created and removed for it. Anywhere
// else (an engine on another host, rootless, remapped, or this process not root), and
// everywhere when PROCTOR_HOST_FILL=0 (for an engine whose folders this process must leave
// alone), one archive goes in through a loading container (container.ts: loadVolumes).
import { chmod, chown, lstat, mkdir, open, readdir, utimes, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';
import {
  ASSET_MTIME,
  assetArchive,
  assetMode,
  assetOwner,
  checkAssetName,
  type ArchiveDir,
  type AssetFile,
} from './assets.js';
import { loadVolumes } from './container.js';
import { isNotFound, type DockerClient } from './docker.js';
import type { Owner } from './labels.js';

/** Where a loading container mounts the volumes it fills, each at LOAD_ROOT/<its key>; never a
 * repository's path (workspace-start.ts refuses one). */
export const LOAD_ROOT = '/proctor-init';

/** Fresh volumes to fill, each named in `dirs` and `files` by its key. */
export interface VolumeFill {
  owner: Owner;
  /** The image of the loading container, where the engine fills them. */
  image: string;
  /** Key -> volume. */
  volumes: Readonly<Record<string, string>>;
  /** `KEY` (the volume's root) or `KEY/SUB`: made if missing, given the owner and mode. */
  dirs: readonly ArchiveDir[];
  /** Files written at the root of the volume `into`. */
  files?: { into: string; files: readonly AssetFile[] };
}

/** Fills the volumes: in their folders where they are this process's, else through the engine. */
export async function fillVolumes(docker: DockerClient, fill: VolumeFill): Promise<void> {
  if (await fillOnHost(docker, fill)) return;
  const archive = await assetArchive(fill.files?.files ?? [], {
    ...(fill.files ? { prefix: fill.files.into } : {}),
    dirs: fill.dirs,
  });
  const mounts = Object.entries(fill.volumes).map(([key, volume]) => ({
    volume,
    target: `${LOAD_ROOT}/${key}`,
  }));
  // A root's entry (`KEY`) sits on the mount's parent, outside any volume.
  await loadVolumes(docker, { owner: fill.owner, image: fill.image, mounts }, archive, LOAD_ROOT);
}

/** fillVolumes' work in the volumes' folders: true when done; false, nothing written, when not. */
async function fillOnHost(docker: DockerClient, fill: VolumeFill): Promise<boolean> {
  const keys = Object.keys(fill.volumes);
  const found = await Promise.all(
    keys.map((key) => hostVolumeFolder(docker, fill.volumes[key] as string)),
  );
  if (found.some((folder) => folder === undefined)) return false;
  const folders = new Map(keys.map((key, i) => [key, found[i] as string]));
  const folderOf = (key: string) => {
    const folder = folders.get(key);
    if (folder === undefined) throw new Error(`no volume is named ${key}`);
    return folder;
  };
  for (const dir of fill.dirs) {
    const [key = '', ...sub] = dir.name.split('/');
    await placeDir(join(folderOf(key), ...sub), dir);
  }
  if (fill.files) await placeAssets(folderOf(fill.files.into), fill.files.files);
  return true;
}

/** A volume's folder this process may fill, or undefined (see above). */
export async function hostVolumeFolder(
  docker: DockerClient,
  volume: string,
): Promise<string | undefined> {
  try {
    const path = await ownFolder(docker, volume);
    // The engine made it just now for this volume alone (its name is random): empty.
    if (path === undefined || (await readdir(path)).length > 0) return undefined;
    return path;
  } catch {
    return undefined;
  }
}

/** A plain local volume's folder, when it is on this host and root's, and this process root. */
async function ownFolder(docker: DockerClient, volume: string): Promise<string | undefined> {
  if (process.getuid?.() !== 0 || process.env['PROCTOR_HOST_FILL'] === '0') return undefined;
  const info = await docker.getVolume(volume).inspect();
  const path = info.Mountpoint;
  if (info.Driver !== 'local' || Object.keys(info.Options ?? {}).length > 0) return undefined;
  if (typeof path !== 'string' || !path.startsWith('/') || path.split('/').includes('..')) {
    return undefined;
  }
  // Another owner is a remapped or rootless engine's root.
  const stat = await lstat(path);
  if (!stat.isDirectory() || stat.uid !== 0 || stat.gid !== 0) return undefined;
  return path;
}

/**
 * The first `limit` bytes of the regular file `name` at a volume's root, read in its folder on
 * this host; `missing` when the volume or the file is not there (or is not a regular file);
 * undefined when the engine must be asked.
 */
export async function readHostVolumeFile(
  docker: DockerClient,
  volume: string,
  name: string,
  limit: number,
): Promise<Buffer | 'missing' | undefined> {
  let folder: string | undefined;
  try {
    folder = await ownFolder(docker, volume);
  } catch (error) {
    return isNotFound(error) ? 'missing' : undefined;
  }
  if (folder === undefined) return undefined;
  let file;
  try {
    // O_NOFOLLOW: a link is not the file.
    file = await open(join(folder, name), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ELOOP' ? 'missing' : undefined;
  }
  try {
    if (!(await file.stat()).isFile()) return 'missing';
    const buffer = Buffer.alloc(limit);
    const { bytesRead } = await file.read(buffer, 0, limit, 0);
    return buffer.subarray(0, bytesRead);
  } catch {
    return undefined;
  } finally {
    await file.close();
  }
}

/** Applies `dir`'s owner and mode to `path`, making it when it is not there. */
async function placeDir(path: string, dir: ArchiveDir): Promise<void> {
  await mkdir(path, { recursive: true });
  // A folder, never a link to one elsewhere (the volume was empty and no container has had it).
  if (!(await lstat(path)).isDirectory()) throw new Error(`${path} is not a folder`);
  // The mode asked for at mkdir passes through the umask: set it after.
  await chmod(path, dir.mode);
  await chown(path, dir.uid, dir.gid);
  await utimes(path, ASSET_MTIME, ASSET_MTIME);
}

/** Writes the assets into `folder` as assetArchive's entries would be extracted there. */
async function placeAssets(folder: string, files: readonly AssetFile[]): Promise<void> {
  for (const file of files) checkAssetName(file.name);
  for (const file of files) {
    const path = join(folder, file.name);
    // `wx`: a name given twice, or anything already there, fails rather than being replaced.
    await writeFile(path, file.bytes, { flag: 'wx', mode: 0o600 });
    const owner = assetOwner(file);
    await chown(path, owner, owner);
    await chmod(path, assetMode(file));
    await utimes(path, ASSET_MTIME, ASSET_MTIME);
  }
}

/**
 * The disk a volume's files take, in KiB (their blocks, a link not followed), counted in its
 * folder on this host; undefined where the engine's folders are not Proctor's.
 */
export async function hostVolumeUsageKb(
  docker: DockerClient,
  volume: string,
): Promise<number | undefined> {
  try {
    const root = await ownFolder(docker, volume);
    if (root === undefined) return undefined;
    let blocks = 0;
    const folders = [root];
    for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
      blocks += (await lstat(folder)).blocks;
      for (const entry of await readdir(folder, { withFileTypes: true })) {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) folders.push(path);
        else blocks += (await lstat(path)).blocks;
      }
    }
    // st_blocks counts 512-byte units.
    return Math.ceil(blocks / 2);
  } catch {
    return undefined;
  }
}
