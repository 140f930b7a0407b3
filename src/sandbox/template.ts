// Workspace templates: one prepared, verified copy of a repository per (daemon-local image id,
// repository path, base commit, sandbox uid:gid, history), from which every job's fresh
// workspace volume is copied (template-scripts.ts). The cost of history (clone, gc, chown) is
// paid once per image instead of on every job.
//
// A template is a named volume labelled with its home, the template key and its image; it
// carries no job label, so a job's cleanup and the reaper of dead jobs never take it, and it
// is mounted read-only by every copy: no job ever writes to it. Templates go when their image
// is gone from the engine, when a newer template replaces one whose image lost its tags (a
// rebuilt context), beyond an LRU bound (`limit`), when their home is gone, and with
// `proctor prune`. The engine
// refuses to remove a volume a container is using, so a template being copied from, or being
// prepared by another process, survives a prune.
//
// An evaluator's layered template (history `none`, over the image's own layers) is its image's
// rather than a home's (templateScope): every home on the engine takes the same one, and it
// stays as long as its image does, outside the LRU bound. It holds little (the base commit's
// objects and the metadata of what the sandbox user was handed), and it is what every grade of
// the image needs, so a sweep after the first, in any home, makes none: a home's bound of 8
// made a 500-task sweep prepare every template again. It goes when its image is gone (the
// reaper, `proctor prune`), and when half-made (the next acquire of its key, or `proctor
// prune`).
//
// Within a process, jobs that need the same missing template at once wait for one
// preparation. Between processes on one engine, the preparation container's name is the lock:
// it is derived from the template key, so a second process's create fails, and that process
// waits for the first one's container to end, then takes its template. A preparation whose
// process died goes on in its container and leaves a ready template (the next process to need
// it takes it; the reaper removes the container by its job's labels); one whose container died
// too leaves a volume without `ready`: it is never copied from, the next preparation takes
// over its stale lock, and the reaper and `proctor prune` remove it once it is older than
// HALF_MADE_AGE_MS and no container uses it. The templates of a home that is gone from this
// host go with the reaper and `proctor prune` too (template-prune.ts).
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProctorError, describeError, isProctorError } from '../errors.js';
import { isConflict, isNotFound, type DockerClient } from './docker.js';
import { LABEL, labelsFor, ownerHost, type Owner } from './labels.js';
import { hardenedContainerOptions } from './profile.js';
import { runToCompletion } from './run.js';
import type { ContainerInspectInfo, VolumeInspectInfo } from 'dockerode';
import { extract } from 'tar-stream';
import { fillVolumes, readHostVolumeFile } from './host-volumes.js';
import { layerStack, lowersPresent, type LayerStack } from './image-layers.js';
import { isMountFailure, overlayOptions, volumePath, type LayerMemo } from './overlay.js';
import type { VolumeMount } from './profile.js';
import {
  LAYERED_PREPARE_SCRIPT,
  LAYERS_UNUSABLE_EXIT,
  PREPARE_SCRIPT,
  parseReady,
} from './template-scripts.js';
import { dropIfUnlabelled, removeVolume } from './volumes.js';

export type History = 'full' | 'none';

/** Where a preparation, and each job container that copies one, mounts a template. */
export const TEMPLATE_MOUNT = '/proctor-init/template';
/** Where a layered template's preparation mounts its view: the image's layers and `tree/`. */
const VIEW_MOUNT = '/proctor-init/view';

export interface TemplateSpec {
  /** Labels the preparation container (a crash leaves it to the reaper) and names the home. */
  owner: Owner;
  /** Daemon-local image id. */
  image: string;
  repoPath: string;
  baseCommit: string;
  uid: number;
  gid: number;
  history: History;
  /**
   * SWE-bench's layout: HEAD may be one setup commit on baseCommit (the tree is then its), and
   * the tree carries every untracked file of the image, not only the ignored ones.
   */
  setupCommit?: boolean;
  /**
   * Made over the image's own layers (image-layers.ts) rather than copied, where the engine
   * allows: for jobs whose work tree is an overlay, never for a copy.
   */
  layered?: boolean;
  /**
   * With `layered`: a layered template or none (a ProctorError where the image's layers cannot
   * make one), never a copy: for a template made ahead of any job (validate's).
   */
  layeredOnly?: boolean;
  runtime?: string;
  timeoutMs?: number;
}

export interface TemplateOptions {
  /** Most templates kept per home; the least recently used beyond it are removed. Default 8. */
  limit?: number;
  now?: () => number;
}

export interface AcquiredTemplate {
  volume: string;
  key: string;
  /** Wall time of this call's own preparation, ms; 0 when a ready template was found. */
  preparedMs: number;
  /**
   * The tree's size in KiB, from its `ready` file; absent when it could not be read (a
   * template of an earlier Proctor, or one not ready yet: the copy then checks again).
   */
  sizeKb?: number;
  /**
   * A layered template's lower layers below its `tree/` (image-layers.ts), joined for
   * `lowerdir`: a job's overlay stacks `tree/` on them, with `metacopy=on`.
   */
  lowers?: string;
}

export interface TemplateStore {
  /**
   * A ready template for the spec: a known one, one found on the engine, or a new one.
   * `avoid`: volumes that proved not ready (another process's, or a crashed preparation).
   */
  acquire(
    docker: DockerClient,
    spec: TemplateSpec,
    avoid?: ReadonlySet<string>,
  ): Promise<AcquiredTemplate>;
  /** Forgets a template that proved not ready or gone, so the next acquire prepares anew. */
  forget(volume: string): void;
  /** Marks a template used now (the LRU order) and in use until `done` is called. */
  use(volume: string): () => void;
  /** Whether this process's engine refused an overlay workspace (overlay.ts): asked once. */
  readonly layers: LayerMemo;
  /** Why templates of this image and work tree are copied though a layered one was asked. */
  layerRefusal(image: string, repoPath: string): string | undefined;
}

export const DEFAULT_TEMPLATE_LIMIT = 8;

/**
 * The layout of a template's files, part of its key: 2 since its `ready` file holds the tree's
 * size (a memory-backed workspace is sized by it), 3 since the tree carries the image's
 * ignored files (build output), 4 since its tracked files keep the image's mtimes (a build's
 * outputs stay newer than their sources). A template of another layout is never
 * found, so an upgraded Proctor prepares each template once more, and then removes the
 * older-layout template of the same image (tidy), rather than copying into disk volumes for
 * ever from templates whose size it cannot know.
 */
export const TEMPLATE_LAYOUT = '4';

/**
 * Whose a template is: its image's (shared by every home on the engine, kept while the image
 * is) for an evaluator's layered one, which holds only the base commit's objects and the
 * metadata of the tree's hand-over; else its home's (LRU-bound). A copied template is a whole
 * work tree, and one with history `full` a whole history: those stay a home's.
 */
export function templateScope(spec: Pick<TemplateSpec, 'history'>, lowers?: string): TemplateScope {
  return lowers !== undefined && spec.history === 'none' ? 'image' : 'home';
}

export type TemplateScope = 'home' | 'image';

/** The template key: everything a template's bytes depend on (a layered one's, its layers). */
export function templateKey(spec: TemplateSpec, lowers?: string): string {
  const parts = [
    `layout ${TEMPLATE_LAYOUT}`,
    // A home's path is absolute: no home is named so.
    templateScope(spec, lowers) === 'image' ? 'scope image' : spec.owner.home,
    spec.image,
    spec.repoPath,
    spec.baseCommit,
    `${spec.uid}:${spec.gid}`,
    spec.history,
    // Only when set, so that every other template keeps its key.
    ...(spec.setupCommit ? ['setup commit'] : []),
    ...(lowers === undefined ? [] : [`layers ${lowers}`]),
  ];
  return createHash('sha256').update(parts.join('\0')).digest('hex');
}

export interface TemplateVolume {
  name: string;
  key: string;
  image: string;
  /** TEMPLATE_LAYOUT when it was made; '1' for a template from before layouts. */
  layout: string;
  createdAt: number;
  /** The home it was made for (its `proctor.home` label); '' for an image's template. */
  home: string;
  scope: TemplateScope;
  /** The host that made it; absent on templates made before templates carried one. */
  host?: string;
}

function templateVolume(v: VolumeInspectInfo): TemplateVolume {
  const labels = v.Labels ?? {};
  const created = Date.parse((v as { CreatedAt?: string }).CreatedAt ?? '');
  const host = labels[LABEL.host];
  return {
    name: v.Name,
    key: labels[LABEL.template] ?? '',
    image: labels[LABEL.templateImage] ?? '',
    layout: labels[LABEL.templateLayout] ?? '1',
    createdAt: Number.isFinite(created) ? created : 0,
    home: labels[LABEL.home] ?? '',
    scope: labels[LABEL.templateScope] === 'image' ? 'image' : 'home',
    ...(host !== undefined ? { host } : {}),
  };
}

const newestFirst = (a: TemplateVolume, b: TemplateVolume) =>
  b.createdAt - a.createdAt || a.name.localeCompare(b.name);

/** The template volumes carrying every one of `labels` (`key` or `key=value`), newest first. */
async function templatesLabelled(
  docker: DockerClient,
  labels: string[],
): Promise<TemplateVolume[]> {
  const { Volumes } = await docker.listVolumes({ filters: { label: [LABEL.template, ...labels] } });
  return (Volumes ?? []).map(templateVolume).sort(newestFirst);
}

/** Every template volume of a home, newest first. */
export function listTemplates(docker: DockerClient, home: string): Promise<TemplateVolume[]> {
  return templatesLabelled(docker, [`${LABEL.home}=${home}`]);
}

/** Every template volume on the engine, of every home and host and the images', newest first. */
export function listAllTemplates(docker: DockerClient): Promise<TemplateVolume[]> {
  return templatesLabelled(docker, []);
}

/** Every image's template on the engine (templateScope), or `image`'s alone, newest first. */
export function listImageTemplates(
  docker: DockerClient,
  image?: string,
): Promise<TemplateVolume[]> {
  const of = image === undefined ? [] : [`${LABEL.templateImage}=${image}`];
  return templatesLabelled(docker, [`${LABEL.templateScope}=image`, ...of]);
}

/** The template volumes of a key (its home's, or its image's: the key names which), newest first. */
function keyedTemplates(docker: DockerClient, key: string): Promise<TemplateVolume[]> {
  return templatesLabelled(docker, [`${LABEL.template}=${key}`]);
}

/** A template volume and, when known, its tree's size in KiB. */
interface Ready {
  name: string;
  sizeKb?: number;
  lowers?: string;
}

/** The volume, with the size its `ready` line (text, or parsed) gives when it names `key`. */
function readyVolume(
  name: string,
  key: string,
  ready: string | ReturnType<typeof parseReady>,
): Ready {
  const parsed = typeof ready === 'string' ? parseReady(ready) : ready;
  return parsed?.key === key && parsed.sizeKb !== undefined
    ? { name, sizeKb: parsed.sizeKb }
    : { name };
}

function acquired(ready: Ready, key: string, preparedMs: number): AcquiredTemplate {
  return {
    volume: ready.name,
    key,
    preparedMs,
    ...(ready.sizeKb !== undefined ? { sizeKb: ready.sizeKb } : {}),
    ...(ready.lowers !== undefined ? { lowers: ready.lowers } : {}),
  };
}

/** The first file of a tar stream, at most `limit` bytes of it; the stream is read to its end. */
async function firstFile(archive: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  const entries = extract();
  let first: Buffer | undefined;
  const done = new Promise<void>((resolve, reject) => {
    entries.on('entry', (_header, stream, next) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: unknown) => {
        const bytes = chunk as Buffer;
        if (first === undefined && size < limit) chunks.push(bytes);
        size += bytes.length;
      });
      stream.on('end', () => {
        first ??= Buffer.concat(chunks).subarray(0, limit);
        next();
      });
      stream.on('error', reject);
    });
    entries.on('finish', resolve);
    entries.on('error', reject);
    archive.on('error', reject);
  });
  archive.pipe(entries);
  await done;
  return first ?? Buffer.alloc(0);
}

/** Removes a volume unless a container uses it; true when it is gone. */
export async function removeTemplate(docker: DockerClient, name: string): Promise<boolean> {
  try {
    await docker.getVolume(name).remove();
    return true;
  } catch (error) {
    if (isNotFound(error)) return true;
    if (isConflict(error)) return false;
    throw error;
  }
}

/** The ids of every image on the engine, intermediate ones too: one call, however many. */
export async function engineImages(docker: DockerClient): Promise<Set<string>> {
  return new Set((await docker.listImages({ all: true })).map((i) => i.Id));
}

async function imageState(
  docker: DockerClient,
  id: string,
): Promise<'gone' | 'untagged' | 'tagged'> {
  try {
    const info = await docker.getImage(id).inspect();
    // An image pulled by digest has no tag and is still named: by its digest.
    const named = (info.RepoTags ?? []).length > 0 || (info.RepoDigests ?? []).length > 0;
    return named ? 'tagged' : 'untagged';
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    throw error;
  }
}

/** The name of a template's preparation container: the lock between processes. */
export function preparationName(key: string): string {
  return `proctor-template-prepare-${key.slice(0, 32)}`;
}

/**
 * How long a preparation container may stand created and not started before it is stale: its
 * process creates it, then starts it, and under load the start can come seconds later.
 */
const CREATED_GRACE_MS = 30_000;

/**
 * Whether a preparation container is one its process has created and is about to start: not
 * stale, though not running (removed, its process's start would fail).
 */
function starting(info: ContainerInspectInfo): boolean {
  return (
    info.State.Status === 'created' && Date.now() - Date.parse(info.Created) < CREATED_GRACE_MS
  );
}

/** A template volume this old that is not ready, and that no container uses, is half-made. */
export const HALF_MADE_AGE_MS = 60_000;

/**
 * Waits while another process's preparation of `key` runs: `none` when there is no
 * preparation container, `waited` when this call waited for it to end, `ended` when it had
 * ended before (its process died, or is about to remove it).
 */
async function settlePreparation(
  docker: DockerClient,
  key: string,
  timeoutMs: number,
): Promise<'none' | 'waited' | 'ended'> {
  const lock = docker.getContainer(preparationName(key));
  let timer: NodeJS.Timeout | undefined;
  try {
    let info = await lock.inspect();
    while (starting(info)) {
      await sleep(100);
      info = await lock.inspect();
    }
    if (info.State.Running) {
      const expired = new Promise<'expired'>((resolve) => {
        timer = setTimeout(() => resolve('expired'), timeoutMs);
      });
      const waited = (lock.wait() as Promise<unknown>).then(() => 'ended' as const);
      if ((await Promise.race([waited, expired])) === 'expired') {
        throw new ProctorError(
          'DOCKER_ERROR',
          `another process's preparation of template ${key.slice(0, 16)} ran over ${timeoutMs} ms`,
        );
      }
      return 'waited';
    }
    return 'ended';
  } catch (error) {
    if (isNotFound(error)) return 'none';
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Removes a preparation container that is not running (its process died, or it failed). One
 * whose own process is removing it already (the engine answers 409) is waited for, up to
 * STALE_LOCK_WAIT_MS: the lock is going, and its name is taken until it has gone.
 */
export async function removeStaleLock(docker: DockerClient, key: string): Promise<void> {
  const lock = docker.getContainer(preparationName(key));
  try {
    const info = await lock.inspect();
    if (info.State.Running || starting(info)) return;
    await lock.remove({ force: true, v: false });
  } catch (error) {
    if (isNotFound(error)) return;
    if (!isConflict(error)) throw error;
    const until = Date.now() + STALE_LOCK_WAIT_MS;
    while (Date.now() < until) {
      const gone = await lock.inspect().then(
        () => false,
        (inspected: unknown) => {
          if (isNotFound(inspected)) return true;
          throw inspected;
        },
      );
      if (gone) return;
      await sleep(50);
    }
  }
}

/** How long an acquire waits for a young, unready template's preparation container. */
const YOUNG_TEMPLATE_WAIT_MS = 10_000;

/** How long removeStaleLock waits for a lock its own process is removing. */
const STALE_LOCK_WAIT_MS = 10_000;

/** A layered preparation whose image's layers cannot make the template: it is copied instead. */
class LayersUnusable extends Error {}

/**
 * A layered template's view: `tree/` (the upper layer) and `work/` (the kernel's) made in the
 * template volume (host-volumes.ts), then an overlay volume over the image's layers writing to
 * them. The view is the preparation's
 * alone, and goes after it; it carries the job's labels, so a crash leaves it to the reaper.
 */
async function layeredView(
  docker: DockerClient,
  spec: TemplateSpec,
  template: string,
  lowers: string,
): Promise<string> {
  const path = await volumePath(docker, template);
  if ('refused' in path) throw new LayersUnusable(path.refused);
  await fillVolumes(docker, {
    owner: spec.owner,
    image: spec.image,
    volumes: { template },
    dirs: [
      { name: 'template/tree', uid: 0, gid: 0, mode: 0o755 },
      { name: 'template/work', uid: 0, gid: 0, mode: 0o700 },
    ],
  });
  const name = `${template}-view`;
  await docker.createVolume({
    Name: name,
    Labels: labelsFor(spec.owner, 'init'),
    Driver: 'local',
    DriverOpts: overlayOptions(lowers.split(':'), path.path, { upper: 'tree', metacopy: true }),
  });
  return name;
}

/**
 * A new template, or null when another process holds the preparation lock or removed the
 * volume before the preparation's container named it (prepare again): a copy of the
 * image's work tree, or, with `lowers`, a layered one over the image's layers (LayersUnusable
 * when they cannot make it).
 */
async function prepare(
  docker: DockerClient,
  spec: TemplateSpec,
  key: string,
  lowers?: string,
): Promise<Ready | null> {
  const name = `proctor-template-${key.slice(0, 16)}-${randomBytes(4).toString('hex')}`;
  await docker.createVolume({
    Name: name,
    Labels: {
      ...(templateScope(spec, lowers) === 'image'
        ? { [LABEL.templateScope]: 'image' }
        : { [LABEL.home]: spec.owner.home }),
      [LABEL.host]: ownerHost(spec.owner),
      [LABEL.role]: 'template',
      [LABEL.template]: key,
      [LABEL.templateImage]: spec.image,
      [LABEL.templateLayout]: TEMPLATE_LAYOUT,
    },
  });
  const timeoutMs = spec.timeoutMs ?? 600_000;
  let view: string | undefined;
  try {
    const mounts: VolumeMount[] = [];
    if (lowers !== undefined) {
      view = await layeredView(docker, spec, name, lowers);
      mounts.push({ volume: view, target: VIEW_MOUNT });
    }
    const result = await runToCompletion(
      docker,
      {
        owner: spec.owner,
        role: 'init',
        image: spec.image,
        cmd: [
          'sh',
          '-c',
          lowers === undefined ? PREPARE_SCRIPT : LAYERED_PREPARE_SCRIPT,
          'proctor-template',
          spec.repoPath,
          TEMPLATE_MOUNT,
          spec.baseCommit,
          `${spec.uid}:${spec.gid}`,
          spec.history,
          key,
          spec.setupCommit ? '1' : '0',
          ...(lowers === undefined ? [] : [VIEW_MOUNT]),
        ],
        uid: 0,
        gid: 0,
        workdir: '/',
        workspace: { volume: name, target: TEMPLATE_MOUNT },
        mounts,
        // A layered preparation lists the tree twice there.
        tmpfs: [{ path: '/tmp', sizeMb: lowers === undefined ? 64 : 256 }],
        limits: { cpus: 1, memoryMb: 1024, pids: 256 },
        ...(spec.runtime ? { runtime: spec.runtime } : {}),
      },
      { timeoutMs, name: preparationName(key) },
    );
    const reason = () =>
      result.timedOut
        ? `timed out after ${timeoutMs} ms`
        : result.stderr.trim().split('\n').slice(-3).join('; ') ||
          `exit code ${String(result.exitCode)}`;
    if (lowers !== undefined && result.exitCode === LAYERS_UNUSABLE_EXIT) {
      throw new LayersUnusable(reason());
    }
    if (result.exitCode !== 0) {
      throw new ProctorError(
        'SANDBOX_INVALID',
        `cannot initialise the workspace from ${spec.repoPath}: ${reason()}`,
      );
    }
    // Another process's prune or reaper may have removed the volume before the container named
    // it: the engine then made the name again, unlabelled, and the preparation filled that
    // one, which no lookup finds and no prune removes. It goes, and the caller prepares again.
    if (await dropIfUnlabelled(docker, name)) return null;
    // The script's last line is the `ready` file it wrote.
    const ready = readyVolume(name, key, result.stdout.trim().split('\n').at(-1) ?? '');
    return lowers === undefined ? ready : { ...ready, lowers };
  } catch (error) {
    await removeTemplate(docker, name).catch(() => false);
    if (isProctorError(error) && error.data?.['nameTaken'] !== undefined) return null;
    if (lowers !== undefined && !(error instanceof LayersUnusable) && isMountFailure(error)) {
      throw new LayersUnusable(
        `the engine cannot mount the image's layers: ${describeError(error)}`,
      );
    }
    throw error;
  } finally {
    if (view !== undefined) await removeVolume(docker, view).catch(() => undefined);
  }
}

export function createTemplateStore(options: TemplateOptions = {}): TemplateStore {
  const limit = options.limit ?? DEFAULT_TEMPLATE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new TypeError(`Expected \`limit\` to be an integer >= 1, got \`${String(limit)}\``);
  }
  const now = options.now ?? Date.now;
  /** key -> the template volume this process knows to be ready. */
  const known = new Map<string, Ready>();
  const preparing = new Map<string, Promise<Ready>>();
  const lastUsed = new Map<string, number>();
  const inUse = new Map<string, number>();
  const layers: LayerMemo = {};
  /**
   * Per image and work tree: why its templates are copied though a layered one was asked, or
   * the stack read last. A stack is kept while its folders are all there (lstat, no engine
   * call on a job's path): an image removed and pulled again keeps its id but not its layers'
   * folders, and is read again.
   */
  const refusals = new Map<string, string>();
  const stacks = new Map<string, string>();
  const stackKey = (spec: TemplateSpec) => `${spec.image}\0${spec.repoPath}`;
  const stackOf = async (docker: DockerClient, spec: TemplateSpec): Promise<LayerStack> => {
    const refused = refusals.get(stackKey(spec));
    if (refused !== undefined) return { refused };
    const kept = stacks.get(stackKey(spec));
    if (kept !== undefined && (await lowersPresent(kept))) return { lowers: kept };
    let found: LayerStack;
    try {
      found = await layerStack(docker, spec.image, spec.repoPath);
    } catch (error) {
      // The engine failed the inspect: copied this time, asked again next time.
      return { refused: describeError(error) };
    }
    if ('refused' in found) refusals.set(stackKey(spec), found.refused);
    else stacks.set(stackKey(spec), found.lowers);
    return found;
  };

  /**
   * The LRU bound and the image rule, over every template of the home; for an image's template,
   * over its image's others alone (no bound: each goes with its image, and an engine may hold
   * thousands, whose images a rule over all would inspect on every preparation).
   */
  async function tidy(docker: DockerClient, fresh: TemplateVolume) {
    const images = fresh.scope === 'image';
    const all = images
      ? await listImageTemplates(docker, fresh.image)
      : await listTemplates(docker, fresh.home);
    const states = new Map<string, Promise<'gone' | 'untagged' | 'tagged'>>();
    const stateOf = (id: string) => {
      let state = states.get(id);
      if (!state) states.set(id, (state = imageState(docker, id)));
      return state;
    };
    const drop: TemplateVolume[] = [];
    const kept: TemplateVolume[] = [];
    for (const t of all) {
      if (t.name === fresh.name || inUse.has(t.name)) {
        kept.push(t);
        continue;
      }
      const state = await stateOf(t.image);
      // Same repository, commit and user as the fresh one, from an image that lost its tags:
      // the image was rebuilt, and this template will not be asked for again.
      const replaced = state === 'untagged' && t.image !== fresh.image;
      // Of the same image, an older layout's: never found again (its key differs).
      const outdated = t.image === fresh.image && t.layout !== TEMPLATE_LAYOUT;
      if (state === 'gone' || replaced || outdated || t.key === fresh.key) drop.push(t);
      else kept.push(t);
    }
    const order = (t: TemplateVolume) => lastUsed.get(t.name) ?? t.createdAt;
    kept.sort((a, b) => order(b) - order(a));
    if (!images) {
      drop.push(...kept.slice(limit).filter((t) => t.name !== fresh.name && !inUse.has(t.name)));
    }
    for (const t of drop) {
      if (await removeTemplate(docker, t.name)) {
        lastUsed.delete(t.name);
        for (const [k, v] of known) if (v.name === t.name) known.delete(k);
      }
    }
  }

  /**
   * A layered template where the spec asks for one and the image's layers make it; else (and
   * from then on for that image) a copied one.
   */
  async function acquire(
    docker: DockerClient,
    spec: TemplateSpec,
    avoid: ReadonlySet<string>,
  ): Promise<AcquiredTemplate> {
    if (!spec.layered) return acquireKeyed(docker, spec, avoid);
    const stack = await stackOf(docker, spec).catch((error: unknown): LayerStack => ({
      refused: describeError(error),
    }));
    const copied = { ...spec, layered: false };
    const copy = (why: string) => {
      if (!spec.layeredOnly) return acquireKeyed(docker, copied, avoid);
      throw new ProctorError('SANDBOX_INVALID', `no layered template of ${spec.image}: ${why}`);
    };
    if ('refused' in stack) return copy(stack.refused);
    try {
      return await acquireKeyed(docker, spec, avoid, stack.lowers);
    } catch (error) {
      if (!(error instanceof LayersUnusable)) throw error;
      refusals.set(stackKey(spec), error.message);
      return copy(error.message);
    }
  }

  async function acquireKeyed(
    docker: DockerClient,
    spec: TemplateSpec,
    avoid: ReadonlySet<string>,
    lowers?: string,
  ): Promise<AcquiredTemplate> {
    const key = templateKey(spec, lowers);
    const mine = known.get(key);
    if (mine !== undefined && !avoid.has(mine.name)) return acquired(mine, key, 0);
    let pending = preparing.get(key);
    let preparedMs = 0;
    if (!pending) {
      const started = now();
      pending = (async () => {
        const timeoutMs = spec.timeoutMs ?? 600_000;
        let made: Ready | null = null;
        // When a young template of the key that is not ready stands without a preparation
        // container, its process is between the volume and the container (or died there):
        // wait for it a while before preparing another.
        let youngUntil: number | undefined;
        let staleRounds = 0;
        let prepared = 0;
        while (made === null) {
          // Another process preparing this template: wait for it, then take what it made.
          const lock = await settlePreparation(docker, key, timeoutMs);
          // One that proved not ready before this call waited may be ready now.
          const skip = lock === 'waited' ? new Set<string>() : avoid;
          const found = (await keyedTemplates(docker, key)).filter((t) => !skip.has(t.name));
          // A template of another process is taken only once its `ready` file names the key
          // (the copy checks it again); the newest is the likeliest to be ready. Its size is
          // read once, here (a memory-backed workspace is sized by it).
          let young = false;
          for (const t of found) {
            const ready = await readReady(docker, spec.owner.home, t);
            if (ready?.key === key) {
              // Its key names its layers: they are `lowers`.
              const volume = readyVolume(t.name, key, ready);
              return lowers === undefined ? volume : { ...volume, lowers };
            }
            if (now() - t.createdAt < HALF_MADE_AGE_MS) young = true;
            // A half-made image's template goes here: no home's reaper reads every image's.
            else if (t.scope === 'image' && lock !== 'waited') {
              await removeTemplate(docker, t.name).catch(() => false);
            }
          }
          // Its preparation ended and left nothing ready: its lock is stale. Once it is gone,
          // look again: a preparation that had just ended may have left its template by now.
          if (lock === 'ended') {
            await removeStaleLock(docker, key);
            if (++staleRounds < 5) continue;
          }
          if (lock === 'none' && young) {
            youngUntil ??= Date.now() + YOUNG_TEMPLATE_WAIT_MS;
            if (Date.now() < youngUntil) {
              await sleep(200);
              continue;
            }
          }
          made = await prepare(docker, spec, key, lowers);
          if (made === null && ++prepared >= 5) {
            throw new ProctorError(
              'DOCKER_ERROR',
              `template ${key.slice(0, 16)}: another process holds its preparation lock`,
            );
          }
        }
        preparedMs = now() - started;
        lastUsed.set(made.name, now());
        const scope = templateScope(spec, lowers);
        await tidy(docker, {
          name: made.name,
          key,
          image: spec.image,
          layout: TEMPLATE_LAYOUT,
          createdAt: now(),
          home: scope === 'image' ? '' : spec.owner.home,
          scope,
        }).catch(() => undefined);
        return made;
      })();
      preparing.set(key, pending);
    }
    try {
      const ready = await pending;
      known.set(key, ready);
      return acquired(ready, key, preparedMs);
    } finally {
      if (preparing.get(key) === pending) preparing.delete(key);
    }
  }

  return {
    layers,
    acquire: (docker, spec, avoid = new Set()) => acquire(docker, spec, avoid),
    layerRefusal: (image, repoPath) => refusals.get(`${image}\0${repoPath}`),
    forget(volume) {
      for (const [k, v] of known) if (v.name === volume) known.delete(k);
    },
    use(volume) {
      lastUsed.set(volume, now());
      inUse.set(volume, (inUse.get(volume) ?? 0) + 1);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        const n = (inUse.get(volume) ?? 1) - 1;
        if (n <= 0) inUse.delete(volume);
        else inUse.set(volume, n);
      };
    },
  };
}

export interface ReapOptions {
  /** A template not ready at this age (ms since its volume was made) is half-made. Default HALF_MADE_AGE_MS. */
  halfMadeAgeMs?: number;
  now?: () => number;
}

/**
 * The template's `ready` line, read through a container of its image that is created and
 * never started (the engine's archive API); undefined when there is none yet. A template
 * whose image is gone is of no use: undefined. The copy still checks the key it holds.
 */
export async function readReady(
  docker: DockerClient,
  home: string,
  t: TemplateVolume,
): Promise<ReturnType<typeof parseReady>> {
  const onHost = await readHostVolumeFile(docker, t.name, 'ready', 4096);
  if (onHost === 'missing') return undefined;
  if (onHost !== undefined) return parseReady(onHost.toString('utf8'));
  let checker;
  try {
    checker = await docker.createContainer(
      hardenedContainerOptions({
        owner: { job: `template-check-${randomBytes(4).toString('hex')}`, attempt: 1, home },
        role: 'init',
        image: t.image,
        cmd: ['true'],
        uid: 0,
        gid: 0,
        workdir: '/',
        mounts: [{ volume: t.name, target: TEMPLATE_MOUNT, readOnly: true }],
      }),
    );
  } catch (error) {
    if (isNotFound(error) || (isProctorError(error) && error.code === 'SANDBOX_INVALID')) {
      return undefined;
    }
    throw error;
  }
  try {
    // Read to the end: a HEAD (infoArchive) left its socket open, and a CLI that made one
    // never exited.
    const archive = await checker.getArchive({ path: `${TEMPLATE_MOUNT}/ready` });
    return parseReady((await firstFile(archive, 4096)).toString('utf8'));
  } catch (error) {
    if (!isNotFound(error)) throw error;
  } finally {
    await checker.remove({ force: true, v: false }).catch(() => undefined);
  }
  // Pruned before the checker named it, the engine made the name again, empty: it goes.
  await dropIfUnlabelled(docker, t.name).catch(() => undefined);
  return undefined;
}

/** The templates of a home that are half-made: older than the age, and not ready. */
async function halfMade(
  docker: DockerClient,
  home: string,
  templates: readonly TemplateVolume[],
  options: ReapOptions,
): Promise<TemplateVolume[]> {
  const age = options.halfMadeAgeMs ?? HALF_MADE_AGE_MS;
  const now = (options.now ?? Date.now)();
  const found: TemplateVolume[] = [];
  for (const t of templates) {
    if (now - t.createdAt < age) continue;
    if ((await readReady(docker, home, t)) === undefined) found.push(t);
  }
  return found;
}

/**
 * At worker start (after the reaper of dead jobs): removes the templates of a home, and the
 * images' templates, whose image is gone from the engine, and the home's half-made ones a
 * crash left (with their stale preparation container, if any). An image's half-made template
 * goes with the next acquire of its key, or `proctor prune`: reading every image's `ready`
 * here could take a container per image.
 */
export async function reapTemplates(
  docker: DockerClient,
  home: string,
  options: ReapOptions = {},
): Promise<string[]> {
  const removed: string[] = [];
  const all = [...(await listTemplates(docker, home)), ...(await listImageTemplates(docker))];
  const left: TemplateVolume[] = [];
  // One listing of the engine's images, not an inspect per template: an engine may hold a
  // template per image.
  const images = all.length > 0 ? await engineImages(docker) : new Set<string>();
  for (const t of all) {
    if (images.has(t.image)) {
      if (t.scope === 'home') left.push(t);
    } else if (await removeTemplate(docker, t.name)) removed.push(t.name);
  }
  for (const t of await halfMade(docker, home, left, options)) {
    await removeStaleLock(docker, t.key);
    if (await removeTemplate(docker, t.name)) removed.push(t.name);
  }
  return removed;
}
