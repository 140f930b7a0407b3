// Workspace volumes: a fresh named volume per job and role, initialised from the image's
// repository at the base commit by the init container (the only phase with any privilege:
// root with CHOWN, DAC_OVERRIDE and FOWNER, still networkless and read-only), then handed to
// the sandbox uid:gid.
//
// The copy holds the clean tracked tree and a .git with base_commit's history and nothing
// later: a fresh clone of HEAD's branch only, no tags, no remote, no other refs, no reflog,
// unreachable objects pruned — SWE-bench shipped future commits to agents this way.
import { randomBytes } from 'node:crypto';
import { ProctorError } from '../errors.js';
import { isNotFound, type DockerClient } from './docker.js';
import { labelsFor, type Owner, type Role } from './labels.js';
import { runToCompletion } from './run.js';

/** Where the init container mounts the new volume; never the repository's own path. */
const STAGING = '/proctor-init/workspace';

const INIT_SCRIPT = String.raw`set -eu
src=$1 dst=$2 commit=$3 owner=$4
export HOME=/tmp GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
git() { command git -c safe.directory='*' -c core.hooksPath=/dev/null -c advice.detachedHead=false "$@"; }
head=$(git -C "$src" rev-parse --verify HEAD) || { echo "no git work tree at $src" >&2; exit 3; }
[ "$head" = "$commit" ] || { echo "HEAD of $src is $head, not the base commit $commit" >&2; exit 4; }
git clone -q --no-local --no-hardlinks --no-tags --single-branch --no-checkout "$src" "$dst"
cd "$dst"
git remote remove origin
git for-each-ref --format='%(refname)' | while read -r ref; do git update-ref -d "$ref"; done
git update-ref --no-deref HEAD "$commit"
git reflog expire --expire=now --all
git gc -q --prune=now
git reset -q --hard "$commit"
git rev-list "$commit" > /tmp/allowed
extra=$(git rev-list --all | grep -vxF -f /tmp/allowed || true)
[ -z "$extra" ] || { echo "history beyond the base commit survived: $extra" >&2; exit 5; }
chown -R "$owner" "$dst"
`;

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
  runtime?: string;
  timeoutMs?: number;
}

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
          INIT_SCRIPT,
          'proctor-init',
          spec.repoPath,
          STAGING,
          spec.baseCommit,
          `${spec.uid}:${spec.gid}`,
        ],
        uid: 0,
        gid: 0,
        workdir: '/',
        workspace: { volume: name, target: STAGING },
        tmpfs: [{ path: '/tmp', sizeMb: 64 }],
        limits: { cpus: 1, memoryMb: 1024, pids: 256 },
        ...(spec.runtime ? { runtime: spec.runtime } : {}),
      },
      { timeoutMs: spec.timeoutMs ?? 300_000 },
    );
    if (result.exitCode !== 0) {
      const reason = result.timedOut
        ? `timed out after ${spec.timeoutMs ?? 300_000} ms`
        : result.stderr.trim().split('\n').slice(-3).join('; ') ||
          `exit code ${String(result.exitCode)}`;
      throw new ProctorError(
        'SANDBOX_INVALID',
        `cannot initialise the workspace from ${spec.repoPath}: ${reason}`,
      );
    }
    return name;
  } catch (error) {
    await removeVolume(docker, name);
    throw error;
  }
}

export async function removeVolume(docker: DockerClient, name: string): Promise<void> {
  try {
    await docker.getVolume(name).remove({ force: true });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
