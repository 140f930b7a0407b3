// A job's first container with its workspace: by default an overlay on the workspace template's
// tree (overlay.ts: the engine mounts it, nothing is copied, the job's writes go to a layer
// volume of its own), and a copy made by the container itself where the overlay cannot be used
// or the spec asks for a copy. No init container on a job's path either way. The steps below
// are the copy's; an overlay's differ in step 1 (a layer volume gets `upper/`, the sandbox
// user's, and `work/`, and the overlay volume is made over the template's tree once the
// template is known), in step 2 (the archive must be in between the container's create and its
// start, which mounts the overlay) and in step 3 (the exec copies nothing: it checks the template's
// `ready` file and that the container sees the tree through the overlay, writable; where this
// process can read the engine's folders under runc, it reads the same on this host instead, and
// no exec is made: overlay-check.ts).
//
//  1. load: the fresh workspace volume (and, when asked, an asset volume) is made, and one
//     archive is extracted into both through a container that is created and never started
//     (the engine's archive API, as asset volumes were always loaded): the workspace's root
//     directory gets the sandbox uid:gid (an archive's directory entry applies its owner to
//     a directory that exists, and the volume's root is the mount point, so the entry names
//     it from the mount's parent), and the assets their root-owned 0444/0555 files. No
//     process runs; the engine does the chown, so no container needs CHOWN or root. The
//     archive goes in while the container of step 2 is created and started;
//  2. the container: created through the isolation profile as the spec asks (it is the
//     solver's or the evaluator's own, with nothing added but the template, mounted
//     read-only at TEMPLATE_MOUNT, a Proctor path);
//  3. the copy: one exec as the sandbox uid:gid, before anything of the task runs, checks the
//     template's `ready` file and copies its tree into the workspace. The template's files
//     are the sandbox user's already, so the copy needs no privilege, and nothing can write
//     to the template: its mount is read-only, and no container has the capability to
//     remount it.
//
// A template that proves not ready (another process's half-made one, or one pruned under us:
// the engine then made an empty, unlabelled volume of that name) is avoided: the container
// goes, and a new one is made with another template, the workspace still empty.
//
// The workspace is a named volume on the engine's disk, or, with medium `memory`, a named
// volume of the engine's local driver backed by tmpfs: its content lives while a container
// mounts it, which is the evaluator's whole run (one container from the copy to the last
// phase), and goes with it. On this VM's disk a 37 MB, 2,000-file copy took 1.2-3.4 s and
// the volume's removal 0.4 s; into memory, 0.2 s and 20 ms. Its size is the template's tree
// plus room for what the task writes (half its memory, at least 64 MiB); the tree's pages are
// charged to the container, so its size is added to the memory limit (profile.ts), and what
// the task writes there counts against its memory, as /tmp does. A template whose size is
// unknown (made by an earlier Proctor), or a tree over MEMORY_TREE_MAX_MB, gets a disk-backed
// workspace instead.
import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { ProctorError, describeError } from '../errors.js';
import type { AssetFile } from './assets.js';
import { removeContainer, startIdleContainer } from './container.js';
import { LOAD_ROOT, fillVolumes } from './host-volumes.js';
import { isNotFound, type DockerClient } from './docker.js';
import { execInContainer } from './exec.js';
import { overlaySeenOnHost } from './overlay-check.js';
import { labelsFor, type Owner, type Role } from './labels.js';
import type { SandboxSpec, VolumeMount } from './profile.js';
import {
  isMountFailure,
  overlayOptions,
  runtimeRefusal,
  volumePath,
  type WorkspaceLayer,
} from './overlay.js';
import { LAYER_UNUSABLE_EXIT, NOT_READY_EXIT, USER_COPY_SCRIPT } from './template-scripts.js';
import { dropIfUnlabelled, removeVolume } from './volumes.js';
import {
  TEMPLATE_MOUNT,
  createTemplateStore,
  type History,
  type TemplateStore,
} from './template.js';

const COPY_TIMEOUT_MS = 300_000;
/** Attempts at a ready template before giving up. */
const NOT_READY_ATTEMPTS = 3;
/** The largest tree a memory-backed workspace takes; a larger one goes on disk. */
export const MEMORY_TREE_MAX_MB = 2048;

/** Where a job's workspace lives: the engine's disk, or memory (a tmpfs volume). */
export type WorkspaceMedium = 'disk' | 'memory';

export interface WorkspaceSpec {
  owner: Owner;
  role: Extract<Role, 'solver' | 'evaluator'>;
  /** Daemon-local image id. */
  image: string;
  /** The repository inside the image ([environment].workdir): where the workspace is mounted. */
  repoPath: string;
  baseCommit: string;
  uid: number;
  gid: number;
  /** Default `full`: the base commit's history. The evaluator asks for `none`. */
  history?: History;
  /** SWE-bench's layout: a setup commit on baseCommit, untracked build output (template.ts). */
  setupCommit?: boolean;
  /**
   * Default `disk`. `memory`: a tmpfs volume, for a workspace that lives only as long as this
   * call's container (the evaluator's); disk when the template's size is unknown or too big.
   */
  medium?: WorkspaceMedium;
  /**
   * Default `overlay`: the work tree is an overlay on the template's tree (overlay.ts), copied
   * into `medium` only where the engine or the runtime cannot; `copy` always copies.
   */
  layer?: WorkspaceLayer;
  runtime?: string;
  /** For a preparation; the copy itself has its own bound. Default 600_000. */
  timeoutMs?: number;
  /** The process's templates; default a store of this call's own (no sharing, no LRU). */
  templates?: TemplateStore;
  /** Told the wall time of a first-use preparation this call waited for, ms. */
  onPrepared?: (ms: number) => void;
}

export interface WorkspaceContainerSpec extends WorkspaceSpec {
  /** The container's own settings; its workspace is the new volume at repoPath. */
  container: Omit<
    SandboxSpec,
    'owner' | 'role' | 'image' | 'uid' | 'gid' | 'cmd' | 'workspace' | 'runtime'
  >;
  /** Files for an asset volume, loaded with the workspace and mounted read-only at `target`. */
  assets?: { files: readonly AssetFile[]; target: string };
  signal?: AbortSignal;
  /** Wall times, ms: `load` (volumes and archive), `container` (create and start), `copy`. */
  /** With an overlay, `copy` is the exec that checks the template and the mount. */
  onStep?: (step: 'load' | 'container' | 'copy', ms: number) => void;
}

export interface WorkspaceContainer {
  container: Docker.Container;
  workspace: string;
  assets?: string;
  /**
   * Where the workspace is: an overlay on the template (its writes in `layerVolume`, on disk),
   * or a copy on disk or in memory (then `treeMb`, the MiB of its tree added to the memory limit).
   */
  medium: WorkspaceMedium | 'overlay';
  treeMb?: number;
  /** An overlay's upper layer: a volume of the job's, to be removed after `workspace`. */
  layerVolume?: string;
  /** Why an overlay was allowed and a copy made instead. */
  fallback?: string;
}

/** How a job's workspace volume is made. */
interface Plan {
  medium: WorkspaceMedium;
  /** memory: the tree's MiB (added to the memory limit) and the volume's whole size. */
  treeMb?: number;
  sizeMb?: number;
}

/**
 * The workspace of the spec with a template of `sizeKb`: in memory when asked and the size is
 * known and small enough, with slack over `du -sk` (tmpfs rounds each file up to a page, as
 * a disk does, but per-file metadata differs) and room for what the task writes.
 */
export function workspacePlan(
  spec: { medium?: WorkspaceMedium; container: { limits?: { memoryMb?: number } } },
  sizeKb: number | undefined,
): Plan {
  if (spec.medium !== 'memory' || sizeKb === undefined) return { medium: 'disk' };
  const treeMb = Math.ceil((sizeKb * 1.05) / 1024) + 16;
  if (treeMb > MEMORY_TREE_MAX_MB) return { medium: 'disk' };
  const memoryMb = spec.container.limits?.memoryMb ?? 2048;
  return { medium: 'memory', treeMb, sizeMb: treeMb + Math.max(64, Math.floor(memoryMb / 2)) };
}

export function checkWorkspaceSpec(spec: Pick<WorkspaceSpec, 'baseCommit' | 'repoPath'>): void {
  if (!/^[0-9a-f]{40}$/.test(spec.baseCommit)) {
    throw new ProctorError(
      'SANDBOX_INVALID',
      `base commit must be 40 hex digits, got ${JSON.stringify(spec.baseCommit)}`,
    );
  }
  if (spec.repoPath === LOAD_ROOT || spec.repoPath.startsWith(`${LOAD_ROOT}/`)) {
    throw new ProctorError(
      'SANDBOX_INVALID',
      `workdir ${spec.repoPath} collides with Proctor's staging path`,
    );
  }
}

function volumeName(owner: Owner, what: string): string {
  return `proctor-${owner.job}-${owner.attempt}-${what}-${randomBytes(4).toString('hex')}`.replace(
    /[^a-zA-Z0-9_.-]/g,
    '_',
  );
}

/** Makes a volume of the job's, on the local driver with `options` if given; recorded in `made` once it exists. */
async function makeVolume(
  docker: DockerClient,
  name: string,
  labels: Record<string, string>,
  made: string[],
  options?: Record<string, string>,
): Promise<string> {
  await docker.createVolume({
    Name: name,
    Labels: labels,
    ...(options ? { Driver: 'local', DriverOpts: options } : {}),
  });
  made.push(name);
  return name;
}

/** Makes the workspace volume as planned, recorded in `made` once it exists. */
function createWorkspace(
  docker: DockerClient,
  spec: WorkspaceContainerSpec,
  plan: Plan,
  made: string[],
): Promise<string> {
  return makeVolume(
    docker,
    volumeName(spec.owner, spec.role),
    labelsFor(spec.owner, spec.role),
    made,
    plan.medium === 'memory'
      ? // Owned by the sandbox user from the start: no archive entry, no chown.
        {
          type: 'tmpfs',
          device: 'tmpfs',
          o: `size=${String(plan.sizeMb)}m,uid=${spec.uid},gid=${spec.gid},mode=0755,nosuid,nodev`,
        }
      : undefined,
  );
}

/** Makes a plain volume of the job's (the assets, or an overlay's layer), recorded in `made`. */
function createPlain(
  docker: DockerClient,
  spec: WorkspaceContainerSpec,
  what: 'assets' | 'layer',
  made: string[],
): Promise<string> {
  return makeVolume(
    docker,
    volumeName(spec.owner, what),
    labelsFor(spec.owner, what === 'assets' ? 'init' : spec.role),
    made,
  );
}

/**
 * Makes the overlay workspace over the template's tree, writing to the layer volume: a layered
 * template's tree over the image's layers it names (`lowers`), with `metacopy=on`.
 */
function createOverlay(
  docker: DockerClient,
  spec: WorkspaceContainerSpec,
  paths: { template: string; layer: string; lowers?: string },
  made: string[],
): Promise<string> {
  const tree = `${paths.template}/tree`;
  return makeVolume(
    docker,
    volumeName(spec.owner, spec.role),
    labelsFor(spec.owner, spec.role),
    made,
    paths.lowers === undefined
      ? overlayOptions(tree, paths.layer)
      : overlayOptions([tree, ...paths.lowers.split(':')], paths.layer, { metacopy: true }),
  );
}

/** What one archive loads: a copy's workspace root, an overlay's layer, the assets. */
interface Loads {
  /** A disk-backed copy's workspace: its root gets the sandbox user (a tmpfs one has it). */
  workspace?: string;
  /** An overlay's layer volume: `upper/` (the sandbox user's) and `work/` (the kernel's). */
  layer?: string;
  assets?: string;
}

/** Fills the job's fresh volumes (host-volumes.ts), before any container mounts them. */
async function fill(
  docker: DockerClient,
  spec: WorkspaceContainerSpec,
  { workspace, layer, assets }: Loads,
): Promise<void> {
  if (workspace === undefined && layer === undefined && assets === undefined) return;
  const user = { uid: spec.uid, gid: spec.gid, mode: 0o755 };
  try {
    await fillVolumes(docker, {
      owner: spec.owner,
      image: spec.image,
      volumes: {
        ...(workspace === undefined ? {} : { workspace }),
        ...(layer === undefined ? {} : { layer }),
        ...(assets === undefined ? {} : { assets }),
      },
      dirs: [
        ...(workspace === undefined ? [] : [{ name: 'workspace', ...user }]),
        ...(layer === undefined
          ? []
          : [
              { name: 'layer/upper', ...user },
              { name: 'layer/work', uid: 0, gid: 0, mode: 0o700 },
            ]),
      ],
      ...(assets === undefined
        ? {}
        : { files: { into: 'assets', files: spec.assets?.files ?? [] } }),
    });
  } catch (error) {
    throw new ProctorError(
      'DOCKER_ERROR',
      `cannot load the ${spec.role}'s volumes: ${describeError(error)}`,
      { cause: error },
    );
  }
}

type Filling = Promise<{ error: unknown } | undefined>;

const settle = (work: Promise<void>): Filling =>
  work.then(
    () => undefined,
    (error: unknown) => ({ error }),
  );

/**
 * Starts the spec's idle container with a fresh workspace: an overlay on the template's tree
 * where the engine and runtime allow it (overlay.ts), else a copy of the tree (the template is
 * made on first use). On failure, everything this call made is removed again.
 */
export async function startWithWorkspace(
  docker: DockerClient,
  spec: WorkspaceContainerSpec,
): Promise<WorkspaceContainer> {
  checkWorkspaceSpec(spec);
  const templates = spec.templates ?? createTemplateStore();
  const history = spec.history ?? 'full';
  const made: string[] = [];
  let container: Docker.Container | undefined;
  let filling: Filling | undefined;
  const timed = async <T>(step: 'load' | 'container' | 'copy', work: () => Promise<T>) => {
    const started = Date.now();
    try {
      return await work();
    } finally {
      spec.onStep?.(step, Date.now() - started);
    }
  };
  // Why an overlay was not used though the spec allowed one; unset while it is (or was not asked).
  let fallback =
    spec.layer === 'copy' ? undefined : (runtimeRefusal(spec.runtime) ?? templates.layers.refused);
  let layer: WorkspaceLayer = spec.layer === 'copy' || fallback !== undefined ? 'copy' : 'overlay';
  // An overlay's template is made over the image's own layers where they allow (template.ts).
  let templateSpec = { ...spec, history, layered: layer === 'overlay' };
  try {
    // The first use of an image prepares its template meanwhile. A disk-backed workspace, or
    // an overlay's layer, is made meanwhile too; a memory-backed one is sized by the template.
    const avoid = new Set<string>();
    const early =
      layer === 'overlay' || spec.medium === 'memory' ? undefined : workspacePlan(spec, undefined);
    // Settled all, so that no volume is still being made when a failure cleans up.
    const [assetsMade, earlyWorkspace, layerMade, acquired] = await Promise.allSettled([
      spec.assets ? timed('load', () => createPlain(docker, spec, 'assets', made)) : undefined,
      early ? timed('load', () => createWorkspace(docker, spec, early, made)) : undefined,
      layer === 'overlay'
        ? timed('load', () => createPlain(docker, spec, 'layer', made))
        : undefined,
      templates.acquire(docker, templateSpec, avoid),
    ]);
    for (const settled of [acquired, assetsMade, earlyWorkspace, layerMade]) {
      if (settled.status === 'rejected') throw settled.reason;
    }
    if (acquired.status !== 'fulfilled') throw new Error('unreachable');
    let template = acquired.value;
    const assets = assetsMade.status === 'fulfilled' ? assetsMade.value : undefined;
    let layerVolume = layerMade.status === 'fulfilled' ? layerMade.value : undefined;
    let plan = early ?? workspacePlan(spec, template.sizeKb);
    let workspace = earlyWorkspace.status === 'fulfilled' ? earlyWorkspace.value : undefined;
    const forget = async (volume: string | undefined) => {
      if (volume === undefined) return;
      await removeVolume(docker, volume);
      made.splice(made.indexOf(volume), 1);
    };
    /** The copy instead of the overlay: the layer and overlay go, a copy's workspace comes. */
    const toCopy = async (reason: string) => {
      fallback = reason;
      layer = 'copy';
      await filling;
      await forget(workspace);
      await forget(layerVolume);
      workspace = layerVolume = undefined;
      if (template.lowers !== undefined) {
        // A layered template holds only its changes over the image's layers: copy a whole one.
        templateSpec = { ...templateSpec, layered: false };
        template = await templates.acquire(docker, templateSpec, avoid);
      }
      plan = workspacePlan(spec, template.sizeKb);
      workspace = await timed('load', () => createWorkspace(docker, spec, plan, made));
      // The assets are in; a disk-backed workspace still needs its root's owner.
      filling = settle(fill(docker, spec, plan.medium === 'disk' ? { workspace } : {}));
    };
    /** The current template's engine-side path; a template removed under the store (a prune
     * by another process) is forgotten and another acquired, as a copy's NOT_READY does. */
    const templatePath = async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await volumePath(docker, template.volume);
        } catch (error) {
          const gone = error instanceof Error && isNotFound(error.cause);
          if (!gone || attempt >= NOT_READY_ATTEMPTS) throw error;
          templates.forget(template.volume);
          avoid.add(template.volume);
          template = await templates.acquire(docker, templateSpec, avoid);
        }
      }
    };
    // The engine-side folder of the template the overlay is on (overlay-check.ts).
    let templateFolder: string | undefined;
    /** The overlay on the current template, or the copy when the engine cannot name it. */
    const overlay = async () => {
      const [lower, upper] = await Promise.all([
        templatePath(),
        volumePath(docker, layerVolume ?? ''),
      ]);
      const refused = 'refused' in lower ? lower.refused : 'refused' in upper ? upper.refused : '';
      if ('path' in lower && 'path' in upper) {
        templateFolder = lower.path;
        workspace = await timed('load', () =>
          createOverlay(
            docker,
            spec,
            {
              template: lower.path,
              layer: upper.path,
              ...(template.lowers === undefined ? {} : { lowers: template.lowers }),
            },
            made,
          ),
        );
      } else {
        templates.layers.refused = refused;
        await toCopy(refused);
      }
    };
    /** What the call returns, once the workspace is checked. */
    const startedWith = (
      started: Docker.Container,
      volume: string | undefined,
    ): WorkspaceContainer => {
      if (volume === undefined) throw new Error('no workspace volume was made');
      return {
        container: started,
        workspace: volume,
        ...(assets === undefined ? {} : { assets }),
        ...(layer === 'overlay'
          ? { medium: 'overlay' as const, ...(layerVolume === undefined ? {} : { layerVolume }) }
          : { medium: plan.medium, ...(plan.treeMb === undefined ? {} : { treeMb: plan.treeMb }) }),
        ...(fallback === undefined ? {} : { fallback }),
      };
    };
    if (layer === 'copy') {
      workspace ??= await timed('load', () => createWorkspace(docker, spec, plan, made));
    }
    // The archive goes in while the container is created and started: a copy waits for it;
    // an overlay's layer must be there before its mount, at the start.
    filling = settle(
      timed('load', () =>
        fill(docker, spec, {
          ...(layer === 'copy' && plan.medium === 'disk' ? { workspace } : {}),
          ...(layerVolume === undefined ? {} : { layer: layerVolume }),
          ...(assets === undefined ? {} : { assets }),
        }),
      ),
    );
    if (layer === 'overlay') await overlay();
    // An overlay's layer must hold `upper/` and `work/` when the start mounts it: loaded while
    // the engine creates the container.
    const overlayLoaded = async () => {
      const failed = await filling;
      if (failed) throw failed.error;
    };
    for (let attempt = 1; ;) {
      if (template.preparedMs > 0) spec.onPrepared?.(template.preparedMs);
      const done = templates.use(template.volume);
      let copied;
      try {
        const mounts: VolumeMount[] = [
          ...(spec.container.mounts ?? []),
          { volume: template.volume, target: TEMPLATE_MOUNT, readOnly: true },
        ];
        if (assets !== undefined && spec.assets) {
          mounts.push({ volume: assets, target: spec.assets.target, readOnly: true });
        }
        const memoryMb = layer === 'copy' ? plan.treeMb : undefined;
        const volume = workspace;
        if (volume === undefined) throw new Error('no workspace volume was made');
        try {
          container = await timed('container', () =>
            startIdleContainer(
              docker,
              {
                ...spec.container,
                owner: spec.owner,
                role: spec.role,
                image: spec.image,
                uid: spec.uid,
                gid: spec.gid,
                workspace: {
                  volume,
                  target: spec.repoPath,
                  ...(memoryMb === undefined ? {} : { memoryMb }),
                },
                mounts,
                ...(spec.runtime ? { runtime: spec.runtime } : {}),
              },
              layer === 'overlay' ? overlayLoaded : undefined,
            ),
          );
        } catch (error) {
          if (layer !== 'overlay' || !isMountFailure(error)) throw error;
          // The engine cannot mount it (a rootless engine, a kernel without overlayfs): this
          // process copies from now on.
          templates.layers.refused = `the engine cannot mount an overlay: ${describeError(error)}`;
          await toCopy(templates.layers.refused);
          continue;
        }
        const id = container.id;
        const failed = await filling;
        if (failed) throw failed.error;
        const seen =
          layer === 'overlay' &&
          templateFolder !== undefined &&
          (await timed('copy', () =>
            overlaySeenOnHost(docker, {
              template: templateFolder ?? '',
              overlay: volume,
              key: template.key,
              uid: spec.uid,
              ...(spec.runtime ? { runtime: spec.runtime } : {}),
            }),
          ));
        copied = seen
          ? undefined
          : await timed('copy', () =>
              execInContainer(docker, id, {
                cmd: [
                  'sh',
                  '-c',
                  USER_COPY_SCRIPT,
                  'proctor-copy',
                  TEMPLATE_MOUNT,
                  spec.repoPath,
                  template.key,
                  layer,
                ],
                user: `${spec.uid}:${spec.gid}`,
                workdir: '/',
                timeoutMs: COPY_TIMEOUT_MS,
                outputBytes: 16 * 1024,
                ...(spec.signal ? { signal: spec.signal } : {}),
              }),
            );
      } finally {
        done();
      }
      if (copied === undefined) return startedWith(container, workspace);
      if (copied.aborted) {
        throw new ProctorError('CANCELLED', 'cancelled while copying the workspace');
      }
      if (copied.exitCode === LAYER_UNUSABLE_EXIT && layer === 'overlay') {
        await removeContainer(container);
        container = undefined;
        templates.layers.refused = `the container does not see the template through an overlay (${copied.stderr.trim().slice(0, 200)})`;
        await toCopy(templates.layers.refused);
        continue;
      }
      if (copied.exitCode === NOT_READY_EXIT && attempt < NOT_READY_ATTEMPTS) {
        attempt++;
        templates.forget(template.volume);
        avoid.add(template.volume);
        await removeContainer(container);
        container = undefined;
        await dropIfUnlabelled(docker, template.volume);
        template = await templates.acquire(docker, templateSpec, avoid);
        if (layer === 'overlay') {
          // The overlay names the old template's tree; its layer holds nothing yet.
          await forget(workspace);
          workspace = undefined;
          await overlay();
          workspace ??= await createWorkspace(docker, spec, plan, made);
          continue;
        }
        const next = workspacePlan(spec, template.sizeKb);
        if (plan.medium === 'memory' && next.sizeMb !== plan.sizeMb) {
          // A tmpfs volume's size is fixed when it is made, and it holds nothing yet.
          await forget(workspace);
          plan = next;
          workspace = await createWorkspace(docker, spec, plan, made);
        }
        continue;
      }
      if (copied.exitCode !== 0) {
        const reason = copied.timedOut
          ? `timed out after ${COPY_TIMEOUT_MS} ms`
          : copied.stderr.trim().split('\n').slice(-3).join('; ') ||
            `exit code ${String(copied.exitCode)}`;
        throw new ProctorError(
          'SANDBOX_INVALID',
          `cannot copy the workspace template of ${spec.repoPath}: ${reason}`,
        );
      }
      return startedWith(container, workspace);
    }
  } catch (error) {
    await filling;
    if (container) await removeContainer(container).catch(() => undefined);
    await Promise.all(made.map((v) => removeVolume(docker, v).catch(() => undefined)));
    throw error;
  }
}
