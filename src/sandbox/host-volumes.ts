// Filling a fresh volume from this process, where the engine's volume folders are its own: the
// engine runs on this host as root, with no user namespace remap, and this process is root.
// Then what an archive put through a loading container (container.ts: loadVolumes) would make
// is made directly in the volume's folder, the same owners, modes and mtimes, with no container
// created and removed for it. Anywhere else (an engine on another host, rootless, remapped, or
// this process not root) the caller loads through the engine as before, and everywhere when
// PROCTOR_HOST_FILL=0 (for an engine whose folders this process must leave alone).
import { chmod, chown, lstat, mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DockerClient } from './docker.js';
import {
  ASSET_MTIME,
  assetMode,
  assetOwner,
  checkAssetName,
  type ArchiveDir,
  type AssetFile,
} from './assets.js';

/** A volume's folder this process may fill, or undefined (see above). */
export async function hostVolumeFolder(
  docker: DockerClient,
  volume: string,
): Promise<string | undefined> {
  if (process.getuid?.() !== 0 || process.env['PROCTOR_HOST_FILL'] === '0') return undefined;
  try {
    const info = await docker.getVolume(volume).inspect();
    const path = info.Mountpoint;
    if (info.Driver !== 'local' || Object.keys(info.Options ?? {}).length > 0) return undefined;
    if (typeof path !== 'string' || !path.startsWith('/') || path.split('/').includes('..')) {
      return undefined;
    }
    // The engine made it just now for this volume alone (its name is random): a root-owned,
    // empty folder. Another owner is a remapped or rootless engine's root.
    const stat = await lstat(path);
    if (!stat.isDirectory() || stat.uid !== 0 || stat.gid !== 0) return undefined;
    if ((await readdir(path)).length > 0) return undefined;
    return path;
  } catch {
    return undefined;
  }
}

/** Applies `dir`'s owner and mode to `path`, making it when it is not there. */
export async function placeDir(path: string, dir: Omit<ArchiveDir, 'name'>): Promise<void> {
  await mkdir(path, { recursive: true });
  // The mode asked for at mkdir passes through the umask: set it after.
  await chmod(path, dir.mode);
  await chown(path, dir.uid, dir.gid);
  await utimes(path, ASSET_MTIME, ASSET_MTIME);
}

/** Writes the assets into `folder` as assetArchive's entries would be extracted there. */
export async function placeAssets(folder: string, files: readonly AssetFile[]): Promise<void> {
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
