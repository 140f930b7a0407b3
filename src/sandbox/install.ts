// [environment] install: the repository's own build (`pip install -e .`, a C extension built in
// place, a generated version file) as one more image layer on top of the task's image, so
// that every workspace starts from the work tree as that build leaves it.
//
// The layer is a generated build of its own: `FROM <the task image's id>`, then one RUN (exec
// form, the script and the command as arguments, so no file is added to the image) that runs
// the command with `sh -c` in the work tree and then checks what it left. The engine's build
// cache keys that RUN by its parent image and its arguments, so an unchanged task image and
// command are built once; the caller labels the result like any built image (images.ts).
//
// It runs as root, as every other build step does, not as the sandbox uid: `pip install` into
// the image's Python must write outside the tree (site-packages; a non-root pip falls back to
// ~/.local of a HOME no job has), and the layer must not depend on a host's [sandbox] uid.
// Jobs still run as the sandbox uid: the template hands the whole tree to it, but for what
// the image already gave the default sandbox user (DEFAULT_SANDBOX_ID), which this layer's
// last step does for the work tree: its tracked files and what the command left. The tree
// stays root's while the command runs, as in SWE-bench's images: npm runs a package's scripts
// as the owner of its folder, and git refuses a repository another user owns.
//
// Refused, each with one line: a command that fails (its exit status and last lines of
// output), a HEAD that moved off the base commit, and a tree git does not see as clean (a
// tracked file changed, or an untracked file that is not ignored: each named). What it leaves
// must be ignored by git or outside the tree; workspace templates carry the ignored files.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SANDBOX_ID } from '../config.js';
import { ProctorError, describeError } from '../errors.js';
import { buildDockerfile } from './build.js';
import type { DockerClient } from './docker.js';
import type { ResolvedImage, ResolveImageOptions } from './image.js';

export interface InstallSpec {
  /** The shell command, run with `sh -c` in `workdir`. */
  command: string;
  workdir: string;
  /** HEAD must still be this commit after the command. */
  baseCommit: string;
}

/** Lines of the command's output kept in the refusal. */
export const INSTALL_TAIL_LINES = 15;
/** Lines that say error, from before the last lines, kept in the refusal. */
export const INSTALL_ERROR_LINES = 3;
const MARK = 'proctor-install-refused: ';

// $1 the base commit, $2 the command. Git as in template-scripts.ts (2.20+): an explicit
// GIT_DIR (never refused for its owner by any git), no system or global config.
const INSTALL_SCRIPT = String.raw`set -u
commit=$1 install=$2
log=/tmp/proctor-install.log
echo "proctor-install: sh -c $install"
status=0
sh -c "$install" >"$log" 2>&1 </dev/null || status=$?
cat "$log"
refuse() { printf '${MARK}%s\n' "$@"; exit 1; }
if [ "$status" -ne 0 ]; then
  # An error printed before the last lines (a step that failed, then a long traceback or a
  # clean-up) is named too: its first lines that say error, before the last lines.
  total=$(wc -l < "$log")
  early=
  if [ "$total" -gt ${INSTALL_TAIL_LINES} ]; then
    early=$(head -n $((total - ${INSTALL_TAIL_LINES})) "$log" | grep -m ${INSTALL_ERROR_LINES} -E '[Ee]rror|ERROR|[Ff]atal|FATAL|No module named' || true)
  fi
  if [ -n "$early" ]; then
    printf '${MARK}the install command failed (exit %s); its first error lines:\n' "$status"
    printf '%s\n' "$early" | sed 's/^/${MARK}  /'
    printf '${MARK}  … its last lines:\n'
  else
    printf '${MARK}the install command failed (exit %s); its last lines:\n' "$status"
  fi
  tail -n ${INSTALL_TAIL_LINES} "$log" | sed 's/^/${MARK}  /'
  exit 1
fi
rm -f "$log"
g() { HOME=/nonexistent/proctor-no-home XDG_CONFIG_HOME=/nonexistent/proctor-no-home GIT_CONFIG_NOSYSTEM=1 GIT_DIR=.git command git --no-optional-locks -c core.quotePath=false "$@"; }
head=$(g rev-parse --verify HEAD) || refuse "no git work tree at $PWD after the install"
[ "$head" = "$commit" ] || refuse "the install moved HEAD to $head; it must stay at the base commit $commit"
# Untracked files are judged by the tree's .gitignore files alone, as workspace templates
# copy them (template-scripts.ts): .git/info/exclude does not reach a workspace.
changed=$(g status --porcelain --untracked-files=no) || refuse "git status failed in $PWD after the install"
untracked=$(g ls-files --others --exclude-per-directory=.gitignore | sed 's/^/?? /') || refuse "git ls-files failed in $PWD after the install"
dirty=$(printf '%s\n%s\n' "$changed" "$untracked" | grep -v '^$' || true)
if [ -n "$dirty" ]; then
  count=$(printf '%s\n' "$dirty" | wc -l)
  names=$(printf '%s\n' "$dirty" | head -n 20 | sed 's/^?? /untracked /; s/^ *M /modified /; s/^ *D /deleted /; s/^ *A /added /' | tr '\n' ',' | sed 's/,$//; s/,/, /g')
  refuse "the install left $count file(s) that git does not ignore (its output must be ignored by git or outside the tree): $names"
fi
# The work tree but .git (which a template makes anew) is given to the default sandbox user in
# this layer: what the install left at no cost (it is new in this layer), the tracked files for
# a second copy of each in it (sympy's tree: 33 MB). Every workspace template of the image is
# then spared their chown, which copies each entry up through its overlay (0.8 s of a sympy
# template's 1.3 s). Installed packages under node_modules stay root's, and a setuid or setgid
# file is left to the template.
find . -path ./.git -prune -o ! -path "*/node_modules/[!.]*" ! -perm /6000 \( ! -user ${DEFAULT_SANDBOX_ID} -o ! -group ${DEFAULT_SANDBOX_ID} \) -exec chown -h ${DEFAULT_SANDBOX_ID}:${DEFAULT_SANDBOX_ID} {} + 2>/dev/null || true
echo "proctor-install: HEAD is the base commit and the work tree is clean"
`;

/** The generated Dockerfile of the install layer on `image` (a daemon-local id). */
export function installDockerfile(image: string, spec: InstallSpec): string {
  const run = ['/bin/sh', '-c', INSTALL_SCRIPT, 'proctor-install', spec.baseCommit, spec.command];
  return [
    `FROM ${image}`,
    'USER root',
    `WORKDIR ${JSON.stringify(spec.workdir).slice(1, -1)}`,
    `RUN ${JSON.stringify(run)}`,
    '',
  ].join('\n');
}

/** The refusal's lines from a failed install build's output, when it got that far. */
function refusalOf(buildLog: string): string | undefined {
  const lines = buildLog
    .split('\n')
    .filter((line) => line.startsWith(MARK))
    .map((line) => line.slice(MARK.length));
  return lines.length > 0 ? lines.join('\n') : undefined;
}

/** Builds the install layer on `base`; its own output is appended to the base's build log. */
export async function buildInstallLayer(
  docker: DockerClient,
  base: ResolvedImage,
  spec: InstallSpec,
  options: ResolveImageOptions,
): Promise<ResolvedImage> {
  const context = mkdtempSync(join(tmpdir(), 'proctor-install-'));
  try {
    writeFileSync(join(context, 'Dockerfile'), installDockerfile(base.localId, spec));
    const built = await buildDockerfile(
      docker,
      { contextDir: context, dockerfile: 'Dockerfile' },
      options,
    ).catch((error: unknown) => {
      const log = (error as { data?: { buildLog?: unknown } }).data?.buildLog;
      const refusal = typeof log === 'string' ? refusalOf(log) : undefined;
      if (refusal === undefined) throw error;
      const [first = '', ...rest] = refusal.split('\n');
      const tail = rest.map((line) => line.trim()).filter((line) => line !== '');
      throw new ProctorError(
        'IMAGE_INVALID',
        `[environment] install: ${first}${tail.length > 0 ? ` ${tail.join(' | ')}` : ''}`,
        { cause: error, data: { buildLog: log, refusal } },
      );
    });
    return {
      ...built,
      buildLog: [base.buildLog, built.buildLog].filter((l) => l !== undefined).join('\n'),
    };
  } catch (error) {
    if (error instanceof ProctorError) throw error;
    throw new ProctorError('DOCKER_ERROR', `building the install layer: ${describeError(error)}`, {
      cause: error,
    });
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}
