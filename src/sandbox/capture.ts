// Patch capture: the candidate is what git says changed in the workspace volume, never what
// the solver reports. The solver container is paused first; a separate capture container
// mounts the candidate volume read-only and runs git with
// - a fresh GIT_DIR on tmpfs whose object store borrows the image's immutable objects
//   (alternates) and takes new blobs in a temporary object directory, with a temporary index;
// - no system or global config, no hooks, no external diff and no textconv, and an
//   info/attributes file (which outranks every .gitattributes in the tree) resetting the
//   attributes that could rewrite content (text, eol, filter, ident, encoding, diff);
// so nothing inside the candidate's own .git (hooks, config, replaced objects) or its
// .gitattributes can change what is captured. Modes are checked (regular files only, unless
// symlinks are allowed; never gitlinks), the file count is bounded, and the patch is read
// through patch_bytes + 1 bytes: more is a rejection, not a truncation.
import { createHash } from 'node:crypto';
import { ProctorError } from '../errors.js';
import type { DockerClient } from './docker.js';
import type { Owner } from './labels.js';
import { runToCompletion } from './run.js';

const CANDIDATE = '/proctor-capture/candidate';

const CAPTURE_SCRIPT = String.raw`set -eu
repo=$1 base=$2 max_files=$3 max_bytes=$4 allow_symlinks=$5 setup=$6
work=/tmp/capture
mkdir -p "$work"
export HOME=/nonexistent/proctor-no-home XDG_CONFIG_HOME=/nonexistent/proctor-no-home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_EXTERNAL_DIFF GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES
# Git 2.20 or newer (template-scripts.ts says why each choice): an explicit GIT_DIR is never
# refused for its owner (-c safe.directory is not honoured by older git), and the common dir,
# which may be printed relative (--path-format=absolute is git 2.31), is made absolute by cd.
common=$(cd "$repo" 2>/dev/null && cd "$(GIT_DIR=.git git rev-parse --git-common-dir)" && pwd -P) ||
  { echo "no git repository at $repo in the image" >&2; exit 20; }
export GIT_DIR="$work/git" GIT_INDEX_FILE="$work/index"
git init -q --bare "$GIT_DIR"
rm -rf "$GIT_DIR/hooks"
echo "$common/objects" > "$GIT_DIR/objects/info/alternates"
printf '* !text !eol !filter !ident !working-tree-encoding !diff !merge\n' > "$GIT_DIR/info/attributes"
g() { git --work-tree=${CANDIDATE} -c safe.directory='*' -c core.hooksPath=/dev/null -c core.autocrlf=false -c core.safecrlf=false \
  -c core.fileMode=true -c core.symlinks=true -c core.bare=false -c diff.external= -c core.pager=cat "$@"; }
g cat-file -e "$base^{commit}" 2>/dev/null || { echo "base commit $base is not in the image at $repo" >&2; exit 20; }
# SWE-bench's layout (setup=1), read from the image, never from the candidate's volume: the
# candidate's changes are those on top of the image's one setup commit (template-scripts.ts
# checks it the same way), and the image's untracked files, which the workspace was given as
# build output, are none of them, whatever became of them.
image_git() { (cd "$repo" && unset GIT_INDEX_FILE && GIT_DIR=.git command git -c core.fsmonitor= "$@"); }
if [ "$setup" = 1 ]; then
  head=$(image_git rev-parse --verify HEAD) || { echo "no HEAD in the image at $repo" >&2; exit 20; }
  if [ "$head" != "$base" ]; then
    [ "$(image_git rev-list --parents -n 1 "$head")" = "$head $base" ] ||
      { echo "HEAD of $repo in the image is $head, neither the base commit $base nor one setup commit on it" >&2; exit 20; }
    base=$head
  fi
  image_git ls-files -z --others > "$work/untracked"
fi
g read-tree "$base"
g add -A
if [ "$setup" = 1 ] && [ -s "$work/untracked" ]; then
  g update-index -z --force-remove --stdin < "$work/untracked"
fi
g diff --cached --raw --no-renames -z "$base" > "$work/raw"
count=$(tr '\0' '\n' < "$work/raw" | grep -c '^:' || true)
[ "$count" -le "$max_files" ] || { echo "the candidate changes $count files, more than $max_files" >&2; exit 10; }
tr '\0' '\n' < "$work/raw" | while read -r meta; do
  case "$meta" in
    :*) set -- $meta; mode=$2
        case "$mode" in
          100644|100755|000000) ;;
          120000) [ "$allow_symlinks" = 1 ] || { read -r path; echo "symlink not allowed: $path" >&2; exit 11; } ;;
          160000) read -r path; echo "gitlink (nested repository) not allowed: $path" >&2; exit 11 ;;
          *) read -r path; echo "mode $mode not allowed: $path" >&2; exit 11 ;;
        esac ;;
  esac
done
g diff --cached --binary --full-index --no-renames --no-textconv --no-ext-diff --no-color "$base" > "$work/patch"
head -c "$((max_bytes + 1))" "$work/patch"
`;

export interface CaptureSpec {
  owner: Owner;
  /** Daemon-local image id: its repository holds the immutable base objects. */
  image: string;
  repoPath: string;
  baseCommit: string;
  /** The candidate workspace volume (mounted read-only). */
  volume: string;
  /** Paused before capture, when given. */
  solverContainerId?: string;
  uid: number;
  gid: number;
  patchBytes: number;
  candidateFiles: number;
  allowSymlinks?: boolean;
  /**
   * SWE-bench's layout: the changes are read against the image's one setup commit on
   * baseCommit, and the image's untracked files are left out (template.ts).
   */
  setupCommit?: boolean;
  runtime?: string;
  timeoutMs?: number;
}

export interface CapturedPatch {
  patch: Buffer;
  sha256: string;
  /** Files the patch touches. */
  files: number;
}

const REJECTIONS: Record<number, string> = {
  10: 'CANDIDATE_TOO_MANY_FILES',
  11: 'CANDIDATE_MODE_REJECTED',
};

export async function capturePatch(
  docker: DockerClient,
  spec: CaptureSpec,
): Promise<CapturedPatch> {
  if (spec.solverContainerId) {
    const solver = docker.getContainer(spec.solverContainerId);
    const state = (await solver.inspect()).State;
    if (state.Running && !state.Paused) await solver.pause();
  }
  // Room for the temporary objects of a patch at the limit, several times over.
  const tmpfsMb = Math.min(4096, Math.max(64, Math.ceil((spec.patchBytes * 4) / 2 ** 20) + 32));
  const result = await runToCompletion(
    docker,
    {
      owner: spec.owner,
      role: 'capture',
      image: spec.image,
      cmd: [
        'sh',
        '-c',
        CAPTURE_SCRIPT,
        'proctor-capture',
        spec.repoPath,
        spec.baseCommit,
        String(spec.candidateFiles),
        String(spec.patchBytes),
        spec.allowSymlinks ? '1' : '0',
        spec.setupCommit ? '1' : '0',
      ],
      uid: spec.uid,
      gid: spec.gid,
      workdir: '/tmp',
      mounts: [{ volume: spec.volume, target: CANDIDATE, readOnly: true }],
      tmpfs: [{ path: '/tmp', sizeMb: tmpfsMb }],
      limits: { cpus: 1, memoryMb: 1024, pids: 128 },
      ...(spec.runtime ? { runtime: spec.runtime } : {}),
    },
    { timeoutMs: spec.timeoutMs ?? 120_000, rawStdoutBytes: spec.patchBytes + 1 },
  );
  const reason = result.stderr.trim().split('\n').slice(-1)[0] ?? '';
  if (result.exitCode !== 0) {
    const code = result.exitCode === null ? undefined : REJECTIONS[result.exitCode];
    throw new ProctorError(
      code ? 'CANDIDATE_REJECTED' : 'DOCKER_ERROR',
      `patch capture failed: ${result.timedOut ? 'timed out' : reason || `exit ${String(result.exitCode)}`}`,
      {
        data: { reason: code ?? 'CAPTURE_FAILED' },
      },
    );
  }
  const patch = result.rawStdout ?? Buffer.alloc(0);
  if (result.stdoutBytes > spec.patchBytes) {
    throw new ProctorError(
      'CANDIDATE_REJECTED',
      `the candidate patch is larger than patch_bytes (${spec.patchBytes} bytes)`,
      {
        data: { reason: 'PATCH_TOO_LARGE' },
      },
    );
  }
  const files = (patch.toString('latin1').match(/^diff --git /gm) ?? []).length;
  return { patch, sha256: createHash('sha256').update(patch).digest('hex'), files };
}
