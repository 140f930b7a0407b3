// Workspace templates: one prepared, verified copy of a repository per (daemon-local image id,
// repository path, base commit, sandbox uid:gid, history), from which every job's fresh
// workspace volume is copied (template-scripts.ts). The cost of history (clone, gc, chown) is
// paid once per image instead of on every job.
//
// A template is a named volume labelled with its home, the template key and its image; it
// carries no job label, so a job's cleanup and the reaper of dead jobs never take it, and it
// is mounted read-only by every copy: no job ever writes to it. Templates go when their image
// is gone from the engine, when a newer template replaces one whose image lost its tags (a
// rebuilt context), beyond an LRU bound (`limit`), and with `proctor prune`. The engine
// refuses to remove a volume a container is using, so a template being copied from, or being
// prepared by another process, survives a prune.
//
// Within a process, jobs that need the same missing template at once wait for one
// preparation. Two processes may each prepare one; both are valid, and the LRU removes the
// spare. A preparation that crashed leaves a volume without `ready`: it is never copied from,
// and goes with the LRU or a prune.
import { createHash, randomBytes } from 'node:crypto';
import { ProctorError, describeError } from '../errors.js';
import { isNotFound, type DockerClient } from './docker.js';
import { LABEL, ownerHost, type Owner } from './labels.js';
import { runToCompletion } from './run.js';
import { PREPARE_SCRIPT } from './template-scripts.js';

export type History = 'full' | 'none';

/** Where preparation and copy containers mount a template; never a repository's path. */
export const TEMPLATE_MOUNT = '/proctor-init/template';

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
}

export const DEFAULT_TEMPLATE_LIMIT = 8;

/** The template key: everything a template's bytes depend on. */
export function templateKey(spec: TemplateSpec): string {
  const parts = [
    spec.owner.home,
    spec.image,
    spec.repoPath,
    spec.baseCommit,
    `${spec.uid}:${spec.gid}`,
    spec.history,
  ];
  return createHash('sha256').update(parts.join('\0')).digest('hex');
}

interface TemplateVolume {
  name: string;
  key: string;
  image: string;
  createdAt: number;
}

/** Every template volume of a home, newest first. */
export async function listTemplates(docker: DockerClient, home: string): Promise<TemplateVolume[]> {
  const { Volumes } = await docker.listVolumes({
    filters: { label: [`${LABEL.home}=${home}`, LABEL.template] },
  });
  return (Volumes ?? [])
    .map((v) => {
      const labels = v.Labels ?? {};
      const created = Date.parse((v as { CreatedAt?: string }).CreatedAt ?? '');
      return {
        name: v.Name,
        key: labels[LABEL.template] ?? '',
        image: labels[LABEL.templateImage] ?? '',
        createdAt: Number.isFinite(created) ? created : 0,
      };
    })
    .sort((a, b) => b.createdAt - a.createdAt || a.name.localeCompare(b.name));
}

/** Removes a volume unless a container uses it; true when it is gone. */
export async function removeTemplate(docker: DockerClient, name: string): Promise<boolean> {
  try {
    await docker.getVolume(name).remove();
    return true;
  } catch (error) {
    if (isNotFound(error)) return true;
    if ((error as { statusCode?: number }).statusCode === 409) return false;
    throw error;
  }
}

async function imageState(
  docker: DockerClient,
  id: string,
): Promise<'gone' | 'untagged' | 'tagged'> {
  try {
    const info = await docker.getImage(id).inspect();
    return (info.RepoTags ?? []).length > 0 ? 'tagged' : 'untagged';
  } catch (error) {
    if (isNotFound(error)) return 'gone';
    throw error;
  }
}

async function prepare(docker: DockerClient, spec: TemplateSpec, key: string): Promise<string> {
  const name = `proctor-template-${key.slice(0, 16)}-${randomBytes(4).toString('hex')}`;
  await docker.createVolume({
    Name: name,
    Labels: {
      [LABEL.home]: spec.owner.home,
      [LABEL.host]: ownerHost(spec.owner),
      [LABEL.role]: 'template',
      [LABEL.template]: key,
      [LABEL.templateImage]: spec.image,
    },
  });
  const timeoutMs = spec.timeoutMs ?? 600_000;
  try {
    const result = await runToCompletion(
      docker,
      {
        owner: spec.owner,
        role: 'init',
        image: spec.image,
        cmd: [
          'sh',
          '-c',
          PREPARE_SCRIPT,
          'proctor-template',
          spec.repoPath,
          TEMPLATE_MOUNT,
          spec.baseCommit,
          `${spec.uid}:${spec.gid}`,
          spec.history,
          key,
        ],
        uid: 0,
        gid: 0,
        workdir: '/',
        workspace: { volume: name, target: TEMPLATE_MOUNT },
        tmpfs: [{ path: '/tmp', sizeMb: 64 }],
        limits: { cpus: 1, memoryMb: 1024, pids: 256 },
        ...(spec.runtime ? { runtime: spec.runtime } : {}),
      },
      { timeoutMs },
    );
    if (result.exitCode !== 0) {
      const reason = result.timedOut
        ? `timed out after ${timeoutMs} ms`
        : result.stderr.trim().split('\n').slice(-3).join('; ') ||
          `exit code ${String(result.exitCode)}`;
      throw new ProctorError(
        'SANDBOX_INVALID',
        `cannot initialise the workspace from ${spec.repoPath}: ${reason}`,
      );
    }
    return name;
  } catch (error) {
    await removeTemplate(docker, name).catch(() => false);
    throw error;
  }
}

export function createTemplateStore(options: TemplateOptions = {}): TemplateStore {
  const limit = options.limit ?? DEFAULT_TEMPLATE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new TypeError(`Expected \`limit\` to be an integer >= 1, got \`${String(limit)}\``);
  }
  const now = options.now ?? Date.now;
  /** key -> the template volume this process knows to be ready. */
  const known = new Map<string, string>();
  const preparing = new Map<string, Promise<string>>();
  const lastUsed = new Map<string, number>();
  const inUse = new Map<string, number>();

  /** The LRU bound and the image rule, over every template of the home. */
  async function tidy(docker: DockerClient, home: string, fresh: TemplateVolume) {
    const all = await listTemplates(docker, home);
    const images = new Map<string, Promise<'gone' | 'untagged' | 'tagged'>>();
    const stateOf = (id: string) => {
      let state = images.get(id);
      if (!state) images.set(id, (state = imageState(docker, id)));
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
      if (state === 'gone' || replaced || t.key === fresh.key) drop.push(t);
      else kept.push(t);
    }
    const order = (t: TemplateVolume) => lastUsed.get(t.name) ?? t.createdAt;
    kept.sort((a, b) => order(b) - order(a));
    drop.push(...kept.slice(limit).filter((t) => t.name !== fresh.name && !inUse.has(t.name)));
    for (const t of drop) {
      if (await removeTemplate(docker, t.name)) {
        lastUsed.delete(t.name);
        for (const [k, v] of known) if (v === t.name) known.delete(k);
      }
    }
  }

  return {
    async acquire(docker, spec, avoid = new Set()) {
      const key = templateKey(spec);
      const mine = known.get(key);
      if (mine !== undefined && !avoid.has(mine)) return { volume: mine, key, preparedMs: 0 };
      let pending = preparing.get(key);
      let preparedMs = 0;
      if (!pending) {
        const started = now();
        pending = (async () => {
          const found = (await listTemplates(docker, spec.owner.home)).filter(
            (t) => t.key === key && !avoid.has(t.name),
          );
          // A template of another process is trusted only through its `ready` file, which the
          // copy checks; the newest is the likeliest to be ready.
          if (found[0]) return found[0].name;
          const name = await prepare(docker, spec, key);
          preparedMs = now() - started;
          lastUsed.set(name, now());
          await tidy(docker, spec.owner.home, {
            name,
            key,
            image: spec.image,
            createdAt: now(),
          }).catch(() => undefined);
          return name;
        })();
        preparing.set(key, pending);
      }
      try {
        const volume = await pending;
        known.set(key, volume);
        return { volume, key, preparedMs };
      } finally {
        if (preparing.get(key) === pending) preparing.delete(key);
      }
    },
    forget(volume) {
      for (const [k, v] of known) if (v === volume) known.delete(k);
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

/** At worker start: removes the templates of a home whose image is gone from the engine. */
export async function reapTemplates(docker: DockerClient, home: string): Promise<string[]> {
  const removed: string[] = [];
  for (const t of await listTemplates(docker, home)) {
    if ((await imageState(docker, t.image)) !== 'gone') continue;
    if (await removeTemplate(docker, t.name)) removed.push(t.name);
  }
  return removed;
}

export interface PruneResult {
  removed: string[];
  /** In use by a container (a copy, or another process's preparation): left. */
  busy: string[];
}

/** Removes the templates of a home, but the `keep` most recently made. */
export async function pruneTemplates(
  docker: DockerClient,
  home: string,
  keep = 0,
): Promise<PruneResult> {
  const result: PruneResult = { removed: [], busy: [] };
  for (const t of (await listTemplates(docker, home)).slice(keep)) {
    try {
      if (await removeTemplate(docker, t.name)) result.removed.push(t.name);
      else result.busy.push(t.name);
    } catch (error) {
      throw new ProctorError(
        'DOCKER_ERROR',
        `cannot remove template ${t.name}: ${describeError(error)}`,
        {
          cause: error,
        },
      );
    }
  }
  return result;
}
