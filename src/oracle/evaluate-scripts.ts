// The evaluator's fixed parts: where it mounts what it brings, the environment every runner
// gets, and the shell scripts it runs by exec in the evaluator container (as the task uid).

/** Where the evaluator mounts what it brings; bundles may not use these paths as workdir. */
export const EVALUATOR_PATHS = {
  assets: '/proctor/assets',
  out: '/proctor/out',
  home: '/proctor/home',
} as const;

/** 1980-01-01T00:00:00Z, the earliest time ZIP files can hold: a common fixed build epoch. */
export const SOURCE_DATE_EPOCH = '315532800';

/** Proctor's part of every runner's environment; bundles cannot override these names. */
export const DETERMINISTIC_ENV: Readonly<Record<string, string>> = {
  TZ: 'UTC',
  LC_ALL: 'C.UTF-8',
  PYTHONHASHSEED: '0',
  SOURCE_DATE_EPOCH,
  HOME: EVALUATOR_PATHS.home,
};

export const ASSET = {
  runner: 'run',
  existing: 'existing.txt',
  hidden: 'hidden.txt',
  /** Under SWE-bench's rules: the IDs of both lists, each once, sorted, for the one run. */
  tests: 'tests.txt',
  /** The hidden test patch's headers alone (patch-headers.ts), never its hunks. */
  hiddenPatch: 'hidden.patch',
  candidate: 'candidate.diff',
} as const;

export const asset = (name: string) => `${EVALUATOR_PATHS.assets}/${name}`;

/**
 * Git with no system or global config, no hooks, and no repository (GIT_DIR points nowhere).
 * HOME and XDG_CONFIG_HOME point nowhere too: git before 2.32 ignores GIT_CONFIG_GLOBAL.
 */
const GIT_ENV = String.raw`export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0 GIT_DIR=/nonexistent/proctor-no-repository HOME=/nonexistent/proctor-no-home XDG_CONFIG_HOME=/nonexistent/proctor-no-home`;

// $1 is the patch, or `-`: the patch on stdin (the hidden test patch, which is never a file the
// task uid can read: it goes into a private folder for the apply alone, while no process of the
// task runs). `--check` first, so that a diff that does not apply leaves the tree alone.
export const APPLY_SCRIPT = String.raw`${GIT_ENV}
p=$1
if [ "$p" = - ]; then
  d=$(mktemp -d) || exit 12
  trap 'rm -rf -- "$d"' EXIT
  p=$d/patch
  cat > "$p" || exit 12
fi
git apply --check --whitespace=nowarn -- "$p" || exit 10
git apply --whitespace=nowarn -- "$p" || exit 11
`;

// The work tree's git for the run with the hidden tests (evaluate-tree.ts): as
// the task uid, while no process of the task runs. $1 the candidate diff as applied (empty for
// none), $2 the workspace template's mount (its tree/.git seeds the objects, below). The
// repository is made anew: the old one (the base commit, and whatever an earlier phase's tests
// wrote into it) goes, after its index has named the files its ignore rules match
// but that it tracks (and its gitlinks), which a fresh `git add -A` would leave out. Its one
// commit, without a parent, holds the tree as it is, the hidden tests as much as the existing
// ones, less the candidate's changes (its diff applied in reverse to the index): HEAD is the
// base commit's tree with the hidden tests, `git diff HEAD` and `git status` show the
// candidate's own changes, and `git log -p` shows every file added at once. When the diff no
// longer applies in reverse (a later change touched its lines), the commit keeps it, and a
// file it cannot read (one an earlier phase's tests made unreadable) stays untracked: the
// script says so on stderr. Nothing of the old repository's config or hooks runs (core.fsmonitor
// is off for the one read of its index). Exit 20-26: a step failed.
//
// The objects: hashing and compressing every file anew took 1.2-6 s of a grade on a sympy
// tree (2,000 files, 33 MB), most of it zlib. So git works on a scratch object folder (in the
// script's private folder on the memory-backed /tmp, or, when the copy does not fit there,
// inside the new .git; never the repository's own store), seeded with a copy of the workspace
// template's packs (its repository is mounted read-only, made by Proctor, out of the task's
// reach, and holds the base commit alone): `git add` then only hashes a file whose blob is
// there already, and writes the rest (the hidden tests, the candidate's files, whatever the
// earlier phase wrote). The scratch folder also holds what the commit does not reach: the base
// version of each file the hidden patch changes, the base trees of its folders, the blobs the
// candidate's diff made. Those would tell the hidden tests apart, so the repository's own store
// receives one pack of what the commit and the index reach (pack-objects copies the seeded
// objects' compressed bytes as they are) and nothing else: no loose object, no second pack, so
// neither where an object is kept nor its pack tells new from old. The scratch folder goes
// before HEAD is set, and the step fails rather than leave it. Copying the packs costs a file
// copy (in memory) where writing a seed pack cost a pass of pack-objects over the base tree
// and a write to the workspace's disk, and the store is written once, where a seed pack and a
// repack wrote it twice. Without a template
// repository (no packs there) nothing is seeded and every object is made anew, in the
// repository's own store, as before.
//
// The index: with the template's objects seeded, the template's own index (Proctor's, made by
// its preparation for the base commit's tree, read-only to the task) is the new repository's
// first index, so `git add -A` reads only the files whose size or whole-second mtime differ
// from what that index recorded, instead of reading and hashing every file of the tree (on a
// sympy tree, 275-390 ms of the step down to about 20). Only those two fields are compared
// (core.checkStat=minimal, no ctime): the workspace's files are the template's through an
// overlay or a copy that keeps mtimes, but not its inode numbers, owner or ctime. Every file a
// step of the job writes gets a new mtime, so the candidate's diff, the hidden test patch and
// the canaries are read; the index is copied with its own mtime (cp -p), so that a file
// written in the same second as the template's index is racily clean to git and read too. A
// file whose bytes changed with its size and mtime put back (only on purpose: an earlier
// phase's tests) keeps its base blob in HEAD, where a fresh index would commit its new bytes:
// HEAD is then nearer the base commit, which is what it stands for.
export const TREE_SCRIPT = String.raw`export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0 HOME=/nonexistent/proctor-no-home XDG_CONFIG_HOME=/nonexistent/proctor-no-home
unset GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES GIT_NAMESPACE GIT_REPLACE_REF_BASE GIT_CEILING_DIRECTORIES GIT_COMMON_DIR
w=$PWD
t=$(mktemp -d) || exit 20
trap 'rm -rf -- "$t" "$w/.git/proctor-scratch"' EXIT
g() { command git -c core.fsmonitor=false -c core.hooksPath=/dev/null -c core.logAllRefUpdates=false "$@"; }
export GIT_DIR="$w/.git" GIT_WORK_TREE="$w"
g ls-files -z -c -i --exclude-standard > "$t/ignored" 2>/dev/null || : > "$t/ignored"
g ls-files -z -s 2>/dev/null | grep -z '^160000 ' > "$t/links" || :
rm -rf -- "$w/.git" 2>/dev/null || { chmod -R u+rwx -- "$w/.git"; rm -rf -- "$w/.git"; } || exit 21
(unset GIT_DIR GIT_WORK_TREE; g init -q --template= "$w") || exit 21
seed=
b=$2/tree/.git/objects
if ls -- "$b"/pack/pack-*.pack > /dev/null 2>&1; then
  for o in "$t/objects" "$w/.git/proctor-scratch"; do
    if mkdir -p -- "$o/pack" && cp -- "$b"/pack/pack-*.pack "$b"/pack/pack-*.idx "$o/pack/" 2> /dev/null; then
      seed=1
      export GIT_OBJECT_DIRECTORY="$o" GIT_ALTERNATE_OBJECT_DIRECTORIES="$b"
      break
    fi
    rm -rf -- "$o" || exit 22
  done
fi
if [ -n "$seed" ] && [ -f "$2/tree/.git/index" ]; then
  cp -p -- "$2/tree/.git/index" "$w/.git/index" 2> /dev/null || rm -f -- "$w/.git/index"
fi
g -c core.checkStat=minimal -c core.trustctime=false add -A --ignore-errors || echo "proctor-tree: some files could not be read: they stay untracked" >&2
if [ -s "$t/ignored" ]; then
  g update-index --add --remove -z --stdin < "$t/ignored" || echo "proctor-tree: some tracked ignored files stay untracked" >&2
fi
if [ -s "$t/links" ]; then g update-index -z --index-info < "$t/links" || exit 23; fi
if [ -n "$1" ] && ! g apply --cached -R --whitespace=nowarn -- "$1" 2> "$t/reverse"; then
  echo "proctor-tree: the candidate's diff stays in the commit: $(tail -n 1 "$t/reverse")" >&2
fi
tree=$(g write-tree) || exit 24
commit=$(GIT_AUTHOR_NAME=Proctor GIT_AUTHOR_EMAIL=proctor@localhost GIT_AUTHOR_DATE='315532800 +0000' GIT_COMMITTER_NAME=Proctor GIT_COMMITTER_EMAIL=proctor@localhost GIT_COMMITTER_DATE='315532800 +0000' g commit-tree "$tree" -m checkout < /dev/null) || exit 25
if [ -n "$seed" ]; then
  unset GIT_OBJECT_DIRECTORY
  export GIT_ALTERNATE_OBJECT_DIRECTORIES="$o"
  g rev-list --objects --indexed-objects "$commit" > "$t/reached" || exit 26
  g pack-objects -q --window=0 "$w/.git/objects/pack/pack" < "$t/reached" > /dev/null || exit 26
  unset GIT_ALTERNATE_OBJECT_DIRECTORIES
  rm -rf -- "$o" || exit 26
fi
g update-ref --no-deref HEAD "$commit" || exit 25
`;

export const TREE_TIMEOUT_MS = 300_000;

/**
 * Kills every process of the task uid but the shell that runs it (the idle process runs as
 * another uid): the first line of an exec that collects a phase's report. Not a step of its
 * own: a shell's children are of its uid, so a step's kill would end the exec's own shell.
 */
export const KILL_TASK = 'kill -9 -1 2>/dev/null';

// $1 is the report path, $2 the most bytes read. Run once every process of the task is killed
// (KILL_TASK): if the report is a regular file no larger than $2, prints its size on stderr
// and its bytes in base64 on stdout: the host decodes the exact bytes (a report that is not
// UTF-8 must be refused, not repaired in transit).
export const COLLECT_SCRIPT = String.raw`r=$1
# $3, for a protocol-2 runner: how many times to look again (10 ms apart) for the report its
# collector writes once the tests' channel closes (the kill above closes it at the latest).
i=0
while [ -n "$3" ] && [ ! -e "$r" ] && [ "$i" -lt "$3" ]; do sleep 0.01; i=$((i + 1)); done
if [ -L "$r" ]; then echo "the report is a symlink, not a file" >&2; exit 3; fi
if [ ! -e "$r" ]; then echo "the runner wrote no report" >&2; exit 4; fi
if [ ! -f "$r" ]; then echo "the report is not a regular file" >&2; exit 5; fi
size=$(wc -c < "$r") || exit 7
echo "proctor-report-size $size" >&2
[ "$size" -le "$2" ] || exit 6
exec base64 -- "$r"
`;

// What a run's runner gets from the host, on the exec's stdin: its ID list ($3 bytes), then the
// hidden test patch's headers ($4 bytes; patch-headers.ts), which the built-in runners read
// beside themselves to choose what to run. Before the runner starts they go into a fresh
// private folder (random name) under the evaluator's output tmpfs, with a link to the runner:
// the runner, started through the link, finds hidden.patch beside it and takes LIST from there.
// The assets of those names are the collector's uid's alone, so no test process finds the
// lists or the hidden test patch at a fixed path.
const HANDOVER = String.raw`l=$(mktemp -d ${EVALUATOR_PATHS.out}/XXXXXXXXXXXX) || exit 125
head -c "$3" > "$l/ids" || exit 125
head -c "$4" > "$l/hidden.patch" || exit 125
ln -s -- "$2" "$l/run" || exit 125`;

// $1 the phase's own output folder (fresh, random name), $2 the runner, $3 and $4 the lengths
// of what stdin holds (HANDOVER).
export const PHASE_SCRIPT = String.raw`mkdir -m 700 -- "$1" || exit 125
${HANDOVER}
exec "$l/run" "$l/ids" "$1/report" < /dev/null`;

// Protocol 2 (protocol.ts), the collector, one for every phase of an evaluation: as the idle
// uid, with an environment of PATH and the locale alone, so that nothing the task's
// environment names (PYTHONPATH, NODE_OPTIONS…) can bring the checkout's code into the one
// process that writes the reports. $1 the runner, $2 and $3 the code cache's loader and its
// PROCTOR_CODE_CACHE (CODE_CACHE_NOTE; both empty for none), then per phase its ID list and its
// folder (the collector makes it); the phases' requests arrive on stdin, a line each.
export const COLLECTOR_SCRIPT = String.raw`r=$1 c=$2 k=$3
shift 3
if [ -n "$k" ]; then
  exec env -i PATH="$PATH" LC_ALL=C.UTF-8 PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 PROCTOR_CODE_CACHE="$k" python3 -c "$c" "$r" --proctor-collect "$@"
fi
exec env -i PATH="$PATH" LC_ALL=C.UTF-8 PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 "$r" --proctor-collect "$@"`;

/** A grade's code cache (CODE_CACHE_NOTE): core/loader.py's text, and PROCTOR_CODE_CACHE. */
export interface CodeCache {
  loader: string;
  cache: string;
}

/** A script's two arguments for `code`: empty strings for none. */
export function codeCacheArgs(code: CodeCache | undefined): [string, string] {
  return code === undefined ? ['', ''] : [code.loader, code.cache];
}

// CODE_CACHE_NOTE. A Python runner that says `# proctor-code-cache: 1` (runnerCachesCode) is
// started by the scripts of its grade through core/loader.py (`python3 -c LOADER RUNNER …`,
// which runs it as `python3 RUNNER …` would) with PROCTOR_CODE_CACHE=UID:FOLDER: the collector,
// whose uid is UID, compiles the runner once and leaves its code in FOLDER (a fresh name under
// the evaluator's output folder); the canary step and the test side, as the task uid, take it
// from there only when UID owns it and nobody else can write it, and compile the runner
// themselves otherwise. The runner starts its own test process the same way.

// Protocol 2, the test side, as the task uid: $1 the collector's folder, $2 the runner, $3 and
// $4 the lengths of what stdin holds first (HANDOVER), then the request; $5 and $6 the code
// cache's loader and its PROCTOR_CODE_CACHE (CODE_CACHE_NOTE), or empty. HOME is emptied first
// (a file an earlier phase's tests left there, a Python usercustomize say, must not run in this
// one), and the variables that can put the checkout ahead of a language's standard library are
// kept from the runner's own process under PROCTOR_KEEP_<name>: the runner gives them back to
// the tests. When the runner ends, every other process of the task goes (KILL_TASK; the shell
// itself is spared by kill(2)), so that the tests' channel closes and the collector writes the
// report at once, not when a process the tests left behind lets go of the socket: a run's end
// is then the report's (COLLECTOR_REPORT). A process that escapes this (one that stopped the
// shell first) only holds the channel open: the report is then read by KILL_TASK and
// COLLECT_SCRIPT in an exec of their own, as before.
export const CHANNEL_SCRIPT = String.raw`rm -rf -- "$HOME"/* "$HOME"/.[!.]* "$HOME"/..?* 2>/dev/null
${HANDOVER}
for v in PYTHONPATH PYTHONSTARTUP NODE_OPTIONS NODE_PATH; do
  eval "if [ -n \"\${$v+x}\" ]; then export PROCTOR_KEEP_$v=\"\$$v\"; unset $v; fi"
done
if [ -n "$6" ]; then
  export PROCTOR_CODE_CACHE="$6"
  python3 -c "$5" "$l/run" --proctor-channel "$1/channel" "$l/ids"
else
  "$l/run" --proctor-channel "$1/channel" "$l/ids"
fi
s=$?
${KILL_TASK}
exit $s`;

/** STEPS_THEN_PHASE_SCRIPT's first line on stderr, once its steps are done: the run's own
 * test_seconds start there (the exec's clockFrom). */
export const STEPS_DONE = 'proctor-steps-done';

// A phase's run after trusted steps (prepare-steps.ts) in the same exec, a round trip to the
// engine less: the JavaScript canaries' write and the work tree's git (evaluate-prepare.ts).
// $1 PREPARE_SCRIPT, $2 the phase's script (PHASE_SCRIPT or CHANNEL_SCRIPT), $3-$8 its
// arguments (those it does not take empty), then the steps' arguments. Stdin holds a line with
// the length of the phase's own bytes, those bytes, then the steps' input. The phase's bytes go
// to a private file, open as its stdin and removed at once; the steps take the rest of stdin and
// print their frames first; the phase's script runs only when every step has run and none that
// stops the exec failed (its output then follows the frames, its stderr STEPS_DONE's line),
// with nothing of the task running.
export const STEPS_THEN_PHASE_SCRIPT = String.raw`q=$1 p=$2 a=$3 b=$4 c=$5 e=$6 f=$7 g=$8
shift 8
IFS= read -r n || exit 125
case $n in '' | *[!0-9]*) exit 125 ;; esac
s=$(mktemp -d ${EVALUATOR_PATHS.out}/XXXXXXXXXXXX) || exit 125
head -c "$n" > "$s/in" || exit 125
exec 3< "$s/in" || exit 125
rm -rf -- "$s"
sh -c "$q" proctor-prepare - "$@" 3<&- || exit 125
echo ${STEPS_DONE} >&2
exec sh -c "$p" proctor-phase "$a" "$b" "$c" "$e" "$f" "$g" <&3 3<&-`;

/** How many times COLLECT_SCRIPT looks again for a collector's report (10 ms apart). */
export const COLLECTOR_WAIT_ROUNDS = 500;

// COLLECTOR_REPORT. A built-in runner's collector prints the evaluation's last report on its
// stdout as well, once written (core/protocol.py's print_report, core/protocol.cjs' and the
// node runner's printReport): `proctor-report SIZE`, the bytes in base64 on one line,
// `proctor-report-end`, the last thing it prints, and only for a report of at most
// PRINTED_REPORT_MAX bytes. When the last run ends in time, the host waits up to
// COLLECTOR_REPORT_WAIT_MS for the collector to end with that frame and takes the report from
// it: the same bytes COLLECT_SCRIPT would print, from the one process that writes them, whose
// output no process of the task can reach (another uid). Otherwise (no frame: a runner of a
// bundle's own, an older copy, a longer report; a collector still waiting on a channel held
// open) the report is read as before, by KILL_TASK and COLLECT_SCRIPT in an exec of their own.
// That exec costs 70 ms of CPU and 75-200 ms of the job's path.
export const COLLECTOR_REPORT_WAIT_MS = 5_000;
/** The collector's output limit: its own messages and a framed report of PRINTED_REPORT_MAX. */
export const COLLECTOR_OUTPUT_BYTES = 2 * 1024 * 1024;

export const APPLY_TIMEOUT_MS = 120_000;
export const COLLECT_TIMEOUT_MS = 60_000;
export const SETUP_TIMEOUT_MS = 300_000;
