// Asset volumes: evaluator-only files (the runner, the ID lists, the hidden test patch, the
// filtered candidate diff) written into a fresh named volume before any container that runs
// task code exists, owned by root and mode 0444/0555, and mounted read-only into the
// evaluator. The bytes go in as a tar archive through the engine's archive API into a
// container that is created and never started, so nothing from the host is bind-mounted and
// no image or build cache ever holds them.
import { randomBytes } from 'node:crypto';
import { pack } from 'tar-stream';
import { ProctorError, describeError } from '../errors.js';
import { isNotFound, type DockerClient } from './docker.js';
import { labelsFor, type Owner } from './labels.js';
import { hardenedContainerOptions } from './profile.js';
import { removeVolume } from './volumes.js';

export interface AssetFile {
  /** A plain file name: no `/`, no `..`. */
  name: string;
  bytes: Buffer;
  /** Mode 0555 instead of 0444. */
  executable?: boolean;
}

export interface AssetVolumeSpec {
  owner: Owner;
  /** Any daemon-local image id: the loading container is never started. */
  image: string;
  files: readonly AssetFile[];
}

/** Where the loading container mounts the volume; the evaluator may mount it anywhere. */
const LOAD_AT = '/proctor-assets';
/** A fixed mtime, so that nothing about the host's clock leaks into a run. */
const MTIME = new Date(0);

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
 * under `prefix` (root-owned, 0444 or 0555).
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
      mtime: MTIME,
    });
  }
  const prefix = options.prefix === undefined ? '' : `${options.prefix}/`;
  for (const file of files) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(file.name)) {
      throw new ProctorError(
        'SANDBOX_INVALID',
        `asset name ${JSON.stringify(file.name)} is not a plain file name`,
      );
    }
    archive.entry(
      {
        name: `${prefix}${file.name}`,
        type: 'file',
        size: file.bytes.length,
        mode: file.executable ? 0o555 : 0o444,
        uid: 0,
        gid: 0,
        mtime: MTIME,
      },
      file.bytes,
    );
  }
  archive.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** Makes a labelled volume holding `files`; removes it again if loading fails. */
export async function createAssetVolume(
  docker: DockerClient,
  spec: AssetVolumeSpec,
): Promise<string> {
  const archive = await assetArchive(spec.files);
  const name =
    `proctor-${spec.owner.job}-${spec.owner.attempt}-assets-${randomBytes(4).toString('hex')}`.replace(
      /[^a-zA-Z0-9_.-]/g,
      '_',
    );
  await docker.createVolume({ Name: name, Labels: labelsFor(spec.owner, 'init') });
  try {
    const loader = await docker.createContainer(
      hardenedContainerOptions({
        owner: spec.owner,
        role: 'init',
        image: spec.image,
        cmd: ['true'],
        uid: 0,
        gid: 0,
        workdir: '/',
        mounts: [{ volume: name, target: LOAD_AT }],
      }),
    );
    try {
      await loader.putArchive(archive, { path: LOAD_AT });
    } finally {
      await loader.remove({ force: true, v: false }).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    }
    return name;
  } catch (error) {
    await removeVolume(docker, name);
    throw new ProctorError(
      'DOCKER_ERROR',
      `cannot load the evaluator's assets: ${describeError(error)}`,
      {
        cause: error,
      },
    );
  }
}
