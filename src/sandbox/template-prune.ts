// Which workspace templates go, and why. `proctor prune` removes this home's templates but the
// N most recently made (half-made ones always), and every template of this host whose home is
// gone; the reaper (worker start, and every sweep) removes the templates of gone homes. A
// template is a full copy of a work tree, made once per image per home, and a home made in a
// temporary folder and deleted leaves its templates to no one else: without this they stayed
// on the engine for ever.
//
// Whose: a template labelled with another host is never touched: hosts may share an engine,
// and another host's home paths mean nothing on this one. One without a host label (made
// before templates carried one) counts as this host's only where ReapScope.unlabelled says so
// (a SQLite home, which one machine alone uses), as for jobs' leftovers.
//
// Gone: the home's path is missing here, or is not a directory. A directory there is a live
// home whatever it holds: a PostgreSQL-backed home, or a new one, may hold no file yet when
// its first template is made, and a template is a cache, so keeping one wrongly costs disk
// until the next prune while removing one wrongly costs a job a preparation. A home deleted
// and made again at the same path takes its old templates back, on purpose: a template's key
// holds everything its bytes depend on (image id, repository, commit, user, history), so they
// are exactly what the new home would prepare, and its LRU bound and `prune` cover them. A
// path this process cannot inspect (no permission, not absolute) is left: no one can tell.
//
// A template a container is using (a job's copy, a preparation) is never removed: the engine
// refuses, and the outcome names the container.
//
// An image's template (template.ts: templateScope) is no home's: `prune`, in any home, removes
// it when its image is gone from the engine or when a crash left it half-made, and keeps it
// otherwise; it goes with its image.
import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { machineHost } from '../config.js';
import { ProctorError, describeError } from '../errors.js';
import type { ReapScope } from './cleanup.js';
import type { DockerClient } from './docker.js';
import { hostVolumeUsageKb } from './host-volumes.js';
import {
  engineImages,
  HALF_MADE_AGE_MS,
  listAllTemplates,
  listImageTemplates,
  listTemplates,
  readReady,
  removeStaleLock,
  removeTemplate,
  type ReapOptions,
  type TemplateVolume,
} from './template.js';

export type TemplateReason =
  /** Removed: not ready at HALF_MADE_AGE_MS (a crash took its preparation). */
  | 'half-made'
  /** Removed: this home's, beyond the `keep` most recently made. */
  | 'beyond-keep'
  /** Removed: its home's folder is gone from this host. */
  | 'home-gone'
  /** Removed: an image's template whose image is gone from the engine. */
  | 'image-gone'
  /** Kept: an image's template, whose image is on the engine. */
  | 'image-kept'
  /** Kept: a container uses it. */
  | 'in-use'
  /** Kept: this home's, among the `keep` most recently made. */
  | 'most-recent'
  /** Kept: labelled with another host. */
  | 'other-host'
  /** Kept: no host label, on a shared queue where no one can tell whose it is. */
  | 'unlabelled'
  /** Kept: another home's, whose folder exists. */
  | 'home-exists'
  /** Kept: whether its home exists cannot be told here. */
  | 'home-unknown';

export interface TemplateOutcome {
  name: string;
  /** The daemon-local image id it was made from. */
  image: string;
  home: string;
  /** Its `proctor.host` label; null on a template made before templates carried one. */
  host: string | null;
  /** When its volume was made (ISO 8601); null when the engine does not say. */
  createdAt: string | null;
  /** Its tree's size in KiB from its `ready` file; null when not read or not known. */
  sizeKb: number | null;
  action: 'removed' | 'kept';
  reason: TemplateReason;
  /** The reason in words: `home gone`, `in use by container X`, `among the 2 most recent`… */
  detail: string;
  /** The container that uses it (reason `in-use`), when the engine names one. */
  container?: string;
}

export interface PruneResult {
  removed: string[];
  /** In use by a container (a copy, or another process's preparation): left. */
  busy: string[];
  /** Every template looked at, with what became of it and why. */
  templates: TemplateOutcome[];
}

export interface PruneOptions extends ReapOptions {
  /** Also the templates of other homes of this host whose folder is gone. Default false. */
  goneHomes?: boolean;
  /**
   * Also the images' templates (template.ts: templateScope), every home's: removed when their
   * image is gone or they are half-made, else listed as kept. Default false: an engine may hold
   * one per image, each read here.
   */
  images?: boolean;
}

/** Whether a home's folder is there on this host. */
export function homeState(path: string): { state: 'exists' | 'gone' | 'unknown'; detail: string } {
  if (!isAbsolute(path)) return { state: 'unknown', detail: `${path || '(none)'} is not absolute` };
  try {
    return statSync(path).isDirectory()
      ? { state: 'exists', detail: 'its home exists' }
      : { state: 'gone', detail: 'home gone (not a directory)' };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'gone', detail: 'home gone' };
    return { state: 'unknown', detail: `cannot inspect its home: ${code ?? String(error)}` };
  }
}

/** Whether a template is this host's, by its host label. */
function whose(t: TemplateVolume, scope: ReapScope): 'ours' | 'other-host' | 'unlabelled' {
  if (t.host === undefined) return scope.unlabelled ? 'ours' : 'unlabelled';
  return t.host === scope.host ? 'ours' : 'other-host';
}

function describe(
  t: TemplateVolume,
  sizeKb: number | undefined,
): Omit<TemplateOutcome, 'action' | 'reason' | 'detail'> {
  return {
    name: t.name,
    image: t.image,
    home: t.home,
    host: t.host ?? null,
    createdAt: t.createdAt > 0 ? new Date(t.createdAt).toISOString() : null,
    sizeKb: sizeKb ?? null,
  };
}

function kept(
  t: TemplateVolume,
  reason: TemplateReason,
  detail: string,
  sizeKb?: number,
): TemplateOutcome {
  return { ...describe(t, sizeKb), action: 'kept', reason, detail };
}

/** The name of a container that mounts the volume, if any. */
async function userOf(docker: DockerClient, volume: string): Promise<string | undefined> {
  const [user] = await docker.listContainers({ all: true, filters: { volume: [volume] } });
  if (!user) return undefined;
  return user.Names[0]?.replace(/^\//, '') ?? user.Id.slice(0, 12);
}

/** Removes the template, or keeps it when a container uses it (and names that container). */
async function removeOrKeep(
  docker: DockerClient,
  t: TemplateVolume,
  reason: TemplateReason,
  detail: string,
  sizeKb?: number,
): Promise<TemplateOutcome> {
  let gone: boolean;
  try {
    gone = await removeTemplate(docker, t.name);
  } catch (error) {
    throw new ProctorError(
      'DOCKER_ERROR',
      `cannot remove template ${t.name}: ${describeError(error)}`,
      { cause: error },
    );
  }
  if (gone) return { ...describe(t, sizeKb), action: 'removed', reason, detail };
  const container = await userOf(docker, t.name).catch(() => undefined);
  return {
    ...kept(t, 'in-use', container ? `in use by container ${container}` : 'in use', sizeKb),
    ...(container !== undefined ? { container } : {}),
  };
}

/**
 * A template's size: the one its `ready` file gives (a copied template's tree), else, for a
 * ready one that names none (a layered template, which holds only its changes over the
 * image's layers), the disk its volume takes where its folder is Proctor's; else undefined.
 */
async function sizeOf(
  docker: DockerClient,
  t: TemplateVolume,
  ready: Awaited<ReturnType<typeof readReady>>,
): Promise<number | undefined> {
  if (ready?.key !== t.key) return undefined;
  return ready.sizeKb ?? (await hostVolumeUsageKb(docker, t.name));
}

/**
 * What becomes of each template of another home: removed when this host's and its home is
 * gone (with its size, when `sizes`, read before it goes), kept otherwise.
 */
async function judgeOtherHome(
  docker: DockerClient,
  scope: ReapScope,
  t: TemplateVolume,
  sizes: boolean,
): Promise<TemplateOutcome> {
  const owner = whose(t, scope);
  if (owner === 'other-host') return kept(t, 'other-host', `another host's (${t.host ?? ''})`);
  if (owner === 'unlabelled') {
    return kept(t, 'unlabelled', 'no host label, and the queue is shared: whose is unknown');
  }
  const home = homeState(t.home);
  if (home.state === 'exists') return kept(t, 'home-exists', home.detail);
  if (home.state === 'unknown') return kept(t, 'home-unknown', home.detail);
  const sizeKb = sizes ? await sizeOf(docker, t, await readReady(docker, t.home, t)) : undefined;
  // A preparation container a crash left (stopped) would hold it for ever: no reaper of that
  // home will come. A running one is left, and holds it.
  await removeStaleLock(docker, t.key).catch(() => undefined);
  return removeOrKeep(docker, t, 'home-gone', home.detail, sizeKb);
}

/**
 * What becomes of an image's template: removed when its image is gone, or when it is half-made
 * (not ready, and made before `halfMadeBefore`); kept otherwise.
 */
async function judgeImageTemplate(
  docker: DockerClient,
  home: string,
  t: TemplateVolume,
  images: ReadonlySet<string>,
  halfMadeBefore: number,
): Promise<TemplateOutcome> {
  if (!images.has(t.image)) {
    return removeOrKeep(docker, t, 'image-gone', 'its image is gone');
  }
  const ready = await readReady(docker, home, t);
  const sizeKb = await sizeOf(docker, t, ready);
  if (ready === undefined && t.createdAt < halfMadeBefore) {
    await removeStaleLock(docker, t.key).catch(() => undefined);
    return removeOrKeep(docker, t, 'half-made', 'half-made', sizeKb);
  }
  return kept(t, 'image-kept', "its image's, kept while the image is on the engine", sizeKb);
}

/**
 * The reaper's share: removes this host's templates of other homes whose folder is gone.
 * Returns what it did with each such template (removed, or kept while a container uses it).
 */
export async function reapGoneHomes(
  docker: DockerClient,
  scope: ReapScope,
): Promise<TemplateOutcome[]> {
  const outcomes: TemplateOutcome[] = [];
  for (const t of await listAllTemplates(docker)) {
    if (t.scope === 'image' || t.home === scope.home || whose(t, scope) !== 'ours') continue;
    if (homeState(t.home).state !== 'gone') continue;
    outcomes.push(await judgeOtherHome(docker, scope, t, false));
  }
  return outcomes;
}

/**
 * Removes the templates of a home, but the `keep` most recently made; half-made ones (a crash
 * left them) are never kept, and go with their stale preparation container. Another host's
 * templates of the home are left. With `goneHomes`, this host's templates of homes that are
 * gone go too. A bare home stands for this machine's host, its unlabelled templates its own.
 */
export async function pruneTemplates(
  docker: DockerClient,
  target: ReapScope | string,
  keep = 0,
  options: PruneOptions = {},
): Promise<PruneResult> {
  const scope =
    typeof target === 'string' ? { home: target, host: machineHost(), unlabelled: true } : target;
  const age = options.halfMadeAgeMs ?? HALF_MADE_AGE_MS;
  const now = (options.now ?? Date.now)();
  const all = options.goneHomes
    ? await listAllTemplates(docker)
    : await listTemplates(docker, scope.home);
  const outcomes: TemplateOutcome[] = [];
  const whole: Array<{ t: TemplateVolume; sizeKb?: number }> = [];
  for (const t of all.filter((t) => t.home === scope.home)) {
    const owner = whose(t, scope);
    if (owner === 'other-host') {
      outcomes.push(kept(t, 'other-host', `another host's (${t.host ?? ''})`));
      continue;
    }
    if (owner === 'unlabelled') {
      outcomes.push(kept(t, 'unlabelled', 'no host label, and the queue is shared'));
      continue;
    }
    const ready = await readReady(docker, scope.home, t);
    const sizeKb = await sizeOf(docker, t, ready);
    if (ready === undefined && now - t.createdAt >= age) {
      await removeStaleLock(docker, t.key).catch(() => undefined);
      outcomes.push(await removeOrKeep(docker, t, 'half-made', 'half-made', sizeKb));
    } else {
      whole.push({ t, ...(sizeKb !== undefined ? { sizeKb } : {}) });
    }
  }
  for (const [i, { t, sizeKb }] of whole.entries()) {
    outcomes.push(
      i < keep
        ? kept(t, 'most-recent', `among the ${keep} most recent`, sizeKb)
        : await removeOrKeep(docker, t, 'beyond-keep', `beyond --keep ${keep}`, sizeKb),
    );
  }
  const others = all
    .filter((t) => t.scope === 'home' && t.home !== scope.home)
    .sort((a, b) => a.home.localeCompare(b.home));
  for (const t of others) outcomes.push(await judgeOtherHome(docker, scope, t, true));
  if (options.images) {
    const images = await engineImages(docker);
    for (const t of await listImageTemplates(docker)) {
      outcomes.push(await judgeImageTemplate(docker, scope.home, t, images, now - age));
    }
  }
  return {
    removed: outcomes.filter((o) => o.action === 'removed').map((o) => o.name),
    busy: outcomes.filter((o) => o.reason === 'in-use').map((o) => o.name),
    templates: outcomes,
  };
}
