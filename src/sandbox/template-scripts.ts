// The shell scripts of workspace templates: PREPARE runs as root (CHOWN, DAC_OVERRIDE, FOWNER
// only) in a networkless, read-only init container, once per template; USER_COPY as the
// sandbox user in every job's first container (workspace-start.ts).
//
// Every git command here (and in capture.ts, the HEAD probe, the oracle's apply script and the
// snapshot stage of derive and import) works with git 2.20 or newer (Debian buster and
// bullseye, Ubuntu 20.04 and 22.04): no option newer than that, no reliance on
// GIT_CONFIG_GLOBAL (2.32) or on `-c safe.directory` (the security updates of older git, such
// as bullseye's 2.30, check the owner but honour safe.directory only in the global or system
// config). Refs are deleted one by one with --no-deref before the remote is dropped: `git
// remote remove` of older git (2.30 here) leaves a single-branch clone's
// refs/remotes/origin/HEAD behind as a symref to nothing ("warning: ignoring broken ref",
// then "fatal: bad object" from every command that walks all refs).
//
// PREPARE makes what the init container used to make on every job, once: in the template volume,
// `tree/` holds the clean tracked tree and a .git with the base commit's history and nothing later
// (the objects of the commit's history alone, packed from the image's repository: no tags, no
// remote, no refs but HEAD, no reflog; SWE-bench shipped future commits to agents in its images'
// repositories), or, with history `none`, the base commit alone (as a depth-1 clone: its tree, its
// index, no parent). It is verified (no commit but the allowed ones reachable) and handed to the
// sandbox uid:gid; `ready` holds the template's key and the tree's size in KiB (`du -sk`: what a
// memory-backed workspace needs), and is written last, by a rename, so a template whose preparation
// crashed is never copied from. The script's last line of output is the same `ready` line, so the
// process that prepared a template knows its size without reading it. The tree is the image's work
// tree as built: the tracked files at the base commit, plus the files git ignores there (build
// output; see [environment] install), never other changes; in SWE-bench's layout (setup=1), the
// tree of its one setup commit and every untracked file.
//
// USER_COPY fills a job's fresh volume from a ready template mounted read-only (or, for an
// overlay workspace, only checks the template and the mount; overlay.ts): one `cp -a`,
// which measured faster here than Docker's own population of a volume from an image layer
// (about 0.6 s against 1.1-3.1 s for a 48 MB, 2,000-file tree, container start included).
// Into a memory-backed volume (workspace-start.ts) the same copy takes 0.2 s, and into a
// disk-backed one 1.2-3.4 s on this VM's disk.

/** A `ready` line: the template's key and its tree's size in KiB. */
export function parseReady(text: string): { key: string; sizeKb?: number } | undefined {
  const match = /^([0-9a-f]{64})(?: ([0-9]+))?\n?$/.exec(text);
  if (!match?.[1]) return undefined;
  return match[2] === undefined ? { key: match[1] } : { key: match[1], sizeKb: Number(match[2]) };
}

/** Exit status of COPY when the template's `ready` file is missing or names another key. */
export const NOT_READY_EXIT = 7;

// The parts both preparations share: git's environment and HEAD's check (with setup=1, the
// setup commit taken as the tree's), the template repository's clean-up, and its check.
const PREPARE_HEAD = String.raw`# A global config of one line: git before 2.32 reads $HOME/.gitconfig whatever GIT_CONFIG_GLOBAL
# says, and older git with the owner check (bullseye's) honours safe.directory only there.
mkdir -p /tmp/proctor-home && printf '[safe]\n\tdirectory = *\n' > /tmp/proctor-home/.gitconfig
export HOME=/tmp/proctor-home XDG_CONFIG_HOME=/nonexistent/proctor-no-config GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0
unset GIT_CONFIG_GLOBAL
git() { command git -c safe.directory='*' -c core.hooksPath=/dev/null -c advice.detachedHead=false "$@"; }
head=$(git -C "$src" rev-parse --verify HEAD) || { echo "no git work tree at $src" >&2; exit 3; }
# With setup=1 (SWE-bench's layout) HEAD may be one commit on top of the base commit, with no
# other parent: the commit SWE-bench's harness makes of its install's changes to tracked files.
# The tree is then that commit's, as SWE-bench grades on it.
if [ "$head" != "$commit" ]; then
  [ "$setup" = 1 ] || { echo "HEAD of $src is $head, not the base commit $commit" >&2; exit 4; }
  [ "$(git -C "$src" rev-list --parents -n 1 "$head")" = "$head $commit" ] ||
    { echo "HEAD of $src is $head, neither the base commit $commit nor one setup commit on it" >&2; exit 4; }
  commit=$head
fi
`;

// The repository at $gd gets the base commit's objects packed straight from the image's
// repository: with history `full`, every object of its history (a clone of HEAD's branch would
// bring the commits after it too, for a gc to prune); with `none`, the commit, its tree and its
// blobs, as a depth-1 clone would, its parents marked missing. One pack-objects reuses the
// image's compressed objects and deltas, where a clone's transfer re-hashed every object in
// index-pack and its gc packed them once more: for sympy's one-commit repository, 280 against
// 70 ms with `none`, and 410-450 (clone and gc) against 70-85 with `full`; for sympy's whole
// history (431,367 objects, 208 MB packed), 18.9 against 3.6 s on the host. The pack holds
// nothing but the commit's history, so nothing is left to prune. A shallow image repository (a
// `--depth` clone) keeps its boundary: the commits of the history it marks shallow are marked
// so here. pack-objects writes its temporary pack in the repository it runs in: it runs in the
// new one (the image's root is read-only), reading the image's objects through an alternates
// file that goes right after (a file, not the variable, whose list a path with ':' would
// split).
const HISTORY_PACK = String.raw`if [ "$history" = full ]; then walk=; else walk=--no-walk; fi
git -C "$src" rev-list --objects $walk "$commit" > /tmp/objects
(cd "$src" && cd "$(git rev-parse --git-path objects)" && pwd) > "$gd/objects/info/alternates"
git --git-dir="$gd" pack-objects -q --window=0 "$gd/objects/pack/pack" < /tmp/objects > /dev/null
rm -f /tmp/objects "$gd/objects/info/alternates"
if [ "$history" = full ]; then
  (cd "$src" && s=$(git rev-parse --git-path shallow) && if [ -s "$s" ]; then git rev-list "$commit" | grep -xF -f "$s" || true; fi) > "$gd/shallow"
  [ -s "$gd/shallow" ] || rm -f "$gd/shallow"
else
  printf '%s\n' "$commit" > "$gd/shallow"
fi
`;

const PREPARE_CLEAN = String.raw`git for-each-ref --format='%(refname)' | while read -r ref; do git update-ref --no-deref -d "$ref"; done
git config --remove-section remote.origin 2>/dev/null || true
git update-ref --no-deref HEAD "$commit"
git reflog expire --expire=now --all
`;

const PREPARE_VERIFY = String.raw`if [ "$history" = full ]; then git rev-list "$commit" > /tmp/allowed; else echo "$commit" > /tmp/allowed; fi
extra=$(git rev-list --all | grep -vxF -f /tmp/allowed || true)
[ -z "$extra" ] || { echo "history beyond the base commit survived: $extra" >&2; exit 5; }
[ "$(git rev-parse HEAD)" = "$commit" ] || { echo "the template's HEAD is not $commit" >&2; exit 5; }
`;

export const PREPARE_SCRIPT = String.raw`set -eu
src=$1 tpl=$2 commit=$3 owner=$4 history=$5 key=$6 setup=$7
dst=$tpl/tree
${PREPARE_HEAD}rm -rf "$dst" "$tpl/ready"
git init -q "$dst"
gd=$dst/.git
${HISTORY_PACK}cd "$dst"
${PREPARE_CLEAN}# The tracked files as the image has them, mtimes and all, so that a build the install ran in
# the tree (make, CMake, cargo, go) finds its outputs newer than their sources and rebuilds
# nothing; a checkout would give every file the time of this copy. The index comes from the
# commit, each file is hashed once against it, and the reset then rewrites only the files
# that differ from the commit (a change or a deletion in the image), leaving the rest as they
# are. A gitlink is a bare directory (--no-recursion), as a checkout makes it.
git read-tree "$commit"
git -C "$src" ls-files -z | tar -C "$src" --null --no-recursion -T - -cf - 2>/dev/null | tar -C "$dst" -xpf -
git update-index -q --refresh > /dev/null || true
git reset -q --hard "$commit"
# The image's work tree as built: its ignored files too (an [environment] install's output, an
# egg-info, a compiled extension, a generated version file), never an untracked file that is
# not ignored nor a change to a tracked one. Ignored by the tree's own .gitignore files only:
# the workspace's fresh .git has no info/exclude, and capture reads no other, so a file
# ignored by the image's .git/info/exclude would come back as the candidate's addition.
# Skipped, tar and all, when there are none.
# With setup=1, every untracked file of the image, ignored or not (SWE-bench's images leave
# build output that no .gitignore names): capture, told the same, leaves them all out.
if [ "$setup" = 1 ]; then
  git -C "$src" ls-files -z --others --directory > /tmp/ignored
else
  git -C "$src" ls-files -z --others --ignored --exclude-per-directory=.gitignore --directory > /tmp/ignored
fi
if [ -s /tmp/ignored ]; then
  tar -C "$src" --null -T /tmp/ignored -cf - | tar -C "$dst" -xpf -
fi
${PREPARE_VERIFY}chown -R "$owner" "$dst"
size=$(du -sk "$dst" | cut -f1)
printf '%s %s\n' "$key" "$size" > "$tpl/ready.new"
mv "$tpl/ready.new" "$tpl/ready"
cat "$tpl/ready"
`;

/** Exit status of LAYERED_PREPARE when the image's layers cannot make the template: copy instead. */
export const LAYERS_UNUSABLE_EXIT = 9;

// LAYERED_PREPARE makes a layered template (image-layers.ts): run as PREPARE is, with $8 the
// view, an overlay whose lower layers are the image's own below the work tree and whose upper
// layer is the template's `tree/` (with `metacopy=on`). The view must first show exactly the
// image's tree (.git aside): the same paths, of the same types; where it does not (a layer made
// the folder anew, which the host cannot see) or cannot be listed (no find with -printf), exit
// LAYERS_UNUSABLE_EXIT and the template is copied instead. Names and types are enough: the view
// and the image stack the same layer folders in the same order, so a path both show comes from
// the same topmost layer in both, and the one way they can differ (an opaque folder on the work
// tree's path, which the view's lower roots do not honour) is a layer below showing through,
// which adds paths. Sizes and link targets cost a stat of every file and could not differ.
// Then, in the view,
// what PREPARE makes in its copy: the image's .git goes and the template's repository takes its
// place (an empty folder made where one was removed is opaque: nothing of the image's shows
// through); the tracked files stay as the image has them, mtimes and all, and only those that
// differ from the commit are written; an untracked file the tree's .gitignore files do not
// ignore goes (with setup=1 every one stays); the tree is handed to the sandbox user, which
// copies each file's metadata alone into the upper layer. Installed packages (everything below
// `node_modules/<name>`; not node_modules itself, nor its dot-folders .bin, .cache, .vite,
// .pnpm) stay root's and read-only, as an installed Python package under site-packages does: a
// job may add packages beside them and write its caches, not change them. An axios image holds
// 38,981 such entries of 39,381; each chown copies an inode up, 0.5 s in all on a quiet disk
// and several seconds where the file system is slow to allocate inodes. An entry there is
// still handed over when the sandbox user could not otherwise read or run what its owner can
// (mode 0600, 0700, 0744), when it is setuid or setgid (a chown clears those bits), and when
// it is a tracked file (a test fixture under node_modules). `top` holds the tree's top-level
// names, which a job's overlay is checked against; `ready` has no size (nothing is ever copied
// from a layered template).
export const LAYERED_PREPARE_SCRIPT = String.raw`set -eu
src=$1 tpl=$2 commit=$3 owner=$4 history=$5 key=$6 setup=$7 view=$8
${PREPARE_HEAD}rm -f "$tpl/ready" "$tpl/top"
[ "$(cd / && find . -maxdepth 0 -printf x 2>/dev/null)" = x ] || { echo "find cannot list the tree (no -printf)" >&2; exit ${LAYERS_UNUSABLE_EXIT}; }
listing() { (cd "$1" && find . -path ./.git -prune -o -printf '%y %p\n') > /tmp/list.raw && LC_ALL=C sort /tmp/list.raw; }
listing "$src" > /tmp/image || { echo "cannot list the image's tree at $src" >&2; exit ${LAYERS_UNUSABLE_EXIT}; }
listing "$view" > /tmp/view || { echo "cannot list the image's layers" >&2; exit ${LAYERS_UNUSABLE_EXIT}; }
cmp -s /tmp/image /tmp/view || { echo "the image's layers do not add up to its tree at $src" >&2; exit ${LAYERS_UNUSABLE_EXIT}; }
rm -f /tmp/list.raw /tmp/image /tmp/view
rm -rf "$view/.git"
mkdir "$view/.git"
git init -q --bare "$view/.git"
gd=$view/.git
${HISTORY_PACK}cd "$view"
git config core.bare false
${PREPARE_CLEAN}git read-tree "$commit"
git update-index -q --refresh > /dev/null || true
git reset -q --hard "$commit"
if [ "$setup" != 1 ]; then
  git ls-files -z --others --exclude-per-directory=.gitignore > /tmp/untracked
  if [ -s /tmp/untracked ]; then xargs -0 rm -f -- < /tmp/untracked; fi
fi
# An entry the image already gave the sandbox user is left alone (a setuid or setgid one aside,
# whose bits the chown clears): a chown, even to the same owner, copies it up.
ouid=$(echo "$owner" | cut -d: -f1) ogid=$(echo "$owner" | cut -d: -f2)
${PREPARE_VERIFY}find "$view" \( ! -path '*/node_modules/[!.]*' -o -perm /6000 -o -perm -0400 ! -perm -0004 -o -perm -0100 ! -perm -0001 \) \( ! -uid "$ouid" -o ! -gid "$ogid" -o -perm /6000 \) -exec chown -h -- "$owner" {} +
git ls-files -z -- ':(glob)**/node_modules/**' > /tmp/tracked
if [ -s /tmp/tracked ]; then xargs -0 chown -h -- "$owner" < /tmp/tracked; fi
ls -A "$view" > "$tpl/top"
printf '%s\n' "$key" > "$tpl/ready.new"
mv "$tpl/ready.new" "$tpl/ready"
cat "$tpl/ready"
`;

/** Exit status of COPY, layer `overlay`, when the workspace does not show the template's tree. */
export const LAYER_UNUSABLE_EXIT = 8;

// $1 the template's mount, $2 the workspace (its root already the sandbox user's), $3 the key,
// $4 the layer: `copy` copies the tree; `overlay` (the workspace is an overlay on the tree,
// overlay.ts) copies nothing and checks that the container sees the tree through it, writable
// (a runtime may mount it and still fail to read it).
// Run as the sandbox uid:gid in the job's own container, before anything of the task.
export const USER_COPY_SCRIPT = String.raw`set -eu
tpl=$1 dst=$2 key=$3 layer=$4
case "$(cat "$tpl/ready" 2>/dev/null || true)" in
  "$key" | "$key "*) ;;
  *) echo "the template is not ready" >&2; exit ${NOT_READY_EXIT} ;;
esac
if [ "$layer" = overlay ]; then
  want=$(cat "$tpl/top" 2>/dev/null || ls -A "$tpl/tree") && got=$(ls -A "$dst" 2>&1) && [ "$want" = "$got" ] && [ -w "$dst" ] ||
    { [ -n "$got" ] || got=nothing; printf "the overlay does not show the template's tree (it shows: %s)\n" "$(echo $got | head -c 200)" >&2; exit ${LAYER_UNUSABLE_EXIT}; }
  exit 0
fi
# A layered template's tree holds only what it changed over the image's layers.
[ ! -e "$tpl/top" ] || { echo "a layered template cannot be copied" >&2; exit 1; }
cp -a "$tpl/tree/." "$dst/"
`;
