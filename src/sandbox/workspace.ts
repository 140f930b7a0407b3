// Workspace volumes: a fresh named volume per job and role, copied from the workspace
// template of the image, repository, base commit, sandbox user and history (template.ts; the
// template is prepared on first use) by an init container: the only phase with any
// privilege (root with CHOWN, DAC_OVERRIDE and FOWNER, still networkless and read-only), with
// the template mounted read-only. The copy is owned by the sandbox uid:gid.
//
// With history `full` the copy holds the clean tracked tree and a .git with base_commit's
// history and nothing later; with `none`, the base commit alone (its tree and index, no
// parent). Either way no commit later than the base is in it.
import { randomBytes } from 'node:crypto';
import { ProctorError } from '../errors.js';
import { isNotFound, type DockerClient } from './docker.js';
import { LABEL, labelsFor, type Owner, type Role } from './labels.js';
import { runToCompletion } from './run.js';
import { COPY_SCRIPT, NOT_READY_EXIT } from './template-scripts.js';
import {
  TEMPLATE_MOUNT,
  createTemplateStore,
  type History,
  type TemplateStore,
} from './template.js';

/** Where the init container mounts the new volume; never the repository's own path. */
const STAGING = '/proctor-init/workspace';

export interface WorkspaceSpec {
  owner: Owner;
  role: Extract<Role, 'solver' | 'evaluator'>;
  /** Daemon-local image id. */
  image: string;
  /** The repository inside the image ([environment].workdir). */
  repoPath: string;
  baseCommit: string;
  uid: number;
  gid: number;
  /** Default `full`: the base commit's history. The evaluator asks for `none`. */
  history?: History;
  runtime?: string;
  /** For a preparation; the copy itself has its own bound. Default 600_000. */
  timeoutMs?: number;
  /** The process's templates; default a store of this call's own (no sharing, no LRU). */
  templates?: TemplateStore;
  /** Told the wall time of a first-use preparation this call waited for, ms. */
  onPrepared?: (ms: number) => void;
}

const COPY_TIMEOUT_MS = 300_000;

export async function createWorkspace(docker: DockerClient, spec: WorkspaceSpec): Promise<string> {
  if (!/^[0-9a-f]{40}$/.test(spec.baseCommit)) {
    throw new ProctorError(
      'SANDBOX_INVALID',
      `base commit must be 40 hex digits, got ${JSON.stringify(spec.baseCommit)}`,
    );
  }
  if (spec.repoPath === STAGING || spec.repoPath.startsWith('/proctor-init')) {
    throw new ProctorError(
      'SANDBOX_INVALID',
      `workdir ${spec.repoPath} collides with Proctor's staging path`,
    );
  }
  const name =
    `proctor-${spec.owner.job}-${spec.owner.attempt}-${spec.role}-${randomBytes(4).toString('hex')}`.replace(
      /[^a-zA-Z0-9_.-]/g,
      '_',
    );
  await docker.createVolume({ Name: name, Labels: labelsFor(spec.owner, spec.role) });
  const templates = spec.templates ?? createTemplateStore();
  const history = spec.history ?? 'full';
  try {
    const avoid = new Set<string>();
    for (;;) {
      const template = await templates.acquire(docker, { ...spec, history }, avoid);
      if (template.preparedMs > 0) spec.onPrepared?.(template.preparedMs);
      const done = templates.use(template.volume);
      let result;
      try {
        result = await runToCompletion(
          docker,
          {
            owner: spec.owner,
            role: 'init',
            image: spec.image,
            cmd: [
              'sh',
              '-c',
              COPY_SCRIPT,
              'proctor-copy',
              TEMPLATE_MOUNT,
              STAGING,
              template.key,
              `${spec.uid}:${spec.gid}`,
            ],
            uid: 0,
            gid: 0,
            workdir: '/',
            workspace: { volume: name, target: STAGING },
            mounts: [{ volume: template.volume, target: TEMPLATE_MOUNT, readOnly: true }],
            tmpfs: [{ path: '/tmp', sizeMb: 16 }],
            // pids as for the preparation: under gVisor (runsc) the sandbox's own threads
            // count toward the limit, and 64 stopped a plain `cp -a` there, silently (exit 2).
            limits: { cpus: 1, memoryMb: 512, pids: 256 },
            ...(spec.runtime ? { runtime: spec.runtime } : {}),
          },
          { timeoutMs: COPY_TIMEOUT_MS },
        );
      } finally {
        done();
      }
      if (result.exitCode === NOT_READY_EXIT && avoid.size < 3) {
        // Another process's template still being made, a crashed preparation, or one pruned
        // under us (the engine then made an empty, unlabelled volume of that name).
        templates.forget(template.volume);
        avoid.add(template.volume);
        await dropIfUnlabelled(docker, template.volume);
        continue;
      }
      if (result.exitCode !== 0) {
        const reason = result.timedOut
          ? `timed out after ${COPY_TIMEOUT_MS} ms`
          : result.stderr.trim().split('\n').slice(-3).join('; ') ||
            `exit code ${String(result.exitCode)}`;
        throw new ProctorError(
          'SANDBOX_INVALID',
          `cannot copy the workspace template of ${spec.repoPath}: ${reason}`,
        );
      }
      return name;
    }
  } catch (error) {
    await removeVolume(docker, name);
    throw error;
  }
}

async function dropIfUnlabelled(docker: DockerClient, volume: string): Promise<void> {
  try {
    const info = await docker.getVolume(volume).inspect();
    if (info.Labels?.[LABEL.template] === undefined) await removeVolume(docker, volume);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

export async function removeVolume(docker: DockerClient, name: string): Promise<void> {
  try {
    await docker.getVolume(name).remove({ force: true });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
