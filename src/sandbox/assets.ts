// Asset archives: evaluator-only files (the runner, the ID lists, the filtered candidate
// diff), owned by root and mode 0444/0555 (or one uid's, 0400), as the tar archive that
// startWithWorkspace (workspace-start.ts) puts through the engine's archive API into a fresh
// volume, by a container that is created and never started, before any container that runs
// task code exists: nothing from the host is bind-mounted and no image or build cache ever
// holds them. The evaluator mounts that volume read-only.
import { pack } from 'tar-stream';
import { ProctorError } from '../errors.js';

export interface AssetFile {
  /** A plain file name: no `/`, no `..`. */
  name: string;
  bytes: Buffer;
  /** Mode 0555 instead of 0444. */
  executable?: boolean;
  /**
   * Owned by this uid (and gid) and mode 0400 instead of root's 0444: readable by that uid
   * alone (the evaluator's ID lists, which only its collector reads; never the task uid).
   */
  privateTo?: number;
}

/** A fixed mtime, so that nothing about the host's clock leaks into a run. */
export const ASSET_MTIME = new Date(0);

/** Refuses an asset name that is not a plain file name. */
export function checkAssetName(name: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) {
    throw new ProctorError(
      'SANDBOX_INVALID',
      `asset name ${JSON.stringify(name)} is not a plain file name`,
    );
  }
}

/** An asset's mode: 0400 for one uid's, else 0555 or 0444. */
export const assetMode = (file: AssetFile): number =>
  file.privateTo !== undefined ? 0o400 : file.executable ? 0o555 : 0o444;

/** An asset's owner (uid and gid): privateTo's, else root. */
export const assetOwner = (file: AssetFile): number => file.privateTo ?? 0;

/** A directory entry of a loading archive: its ownership is applied to what is there. */
export interface ArchiveDir {
  /** Relative to the archive's root; no `..`. */
  name: string;
  uid: number;
  gid: number;
  mode: number;
}

/**
 * The archive the engine extracts into a loading container: `dirs` first (their owner and
 * mode, applied to directories that already exist, a volume's root included), then `files`
 * under `prefix` (root-owned, 0444 or 0555; or privateTo's, 0400).
 */
export async function assetArchive(
  files: readonly AssetFile[],
  options: { prefix?: string; dirs?: readonly ArchiveDir[] } = {},
): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    archive.on('end', resolve);
    archive.on('error', reject);
  });
  for (const dir of options.dirs ?? []) {
    archive.entry({
      name: `${dir.name}/`,
      type: 'directory',
      mode: dir.mode,
      uid: dir.uid,
      gid: dir.gid,
      mtime: ASSET_MTIME,
    });
  }
  const prefix = options.prefix === undefined ? '' : `${options.prefix}/`;
  for (const file of files) {
    checkAssetName(file.name);
    archive.entry(
      {
        name: `${prefix}${file.name}`,
        type: 'file',
        size: file.bytes.length,
        mode: assetMode(file),
        uid: assetOwner(file),
        gid: assetOwner(file),
        mtime: ASSET_MTIME,
      },
      file.bytes,
    );
  }
  archive.finalize();
  await done;
  return Buffer.concat(chunks);
}
