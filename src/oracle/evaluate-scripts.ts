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
  /** Under SWE-bench's rules: hidden.txt then existing.txt, each ID once, for the one run. */
  tests: 'tests.txt',
  hiddenPatch: 'hidden.patch',
  candidate: 'candidate.diff',
} as const;

export const asset = (name: string) => `${EVALUATOR_PATHS.assets}/${name}`;

/**
 * Git with no system or global config, no hooks, and no repository (GIT_DIR points nowhere).
 * HOME and XDG_CONFIG_HOME point nowhere too: git before 2.32 ignores GIT_CONFIG_GLOBAL.
 */
const GIT_ENV = String.raw`export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0 GIT_DIR=/nonexistent/proctor-no-repository HOME=/nonexistent/proctor-no-home XDG_CONFIG_HOME=/nonexistent/proctor-no-home`;

// $1 is the patch. `--check` first, so that a diff that does not apply leaves the tree alone.
export const APPLY_SCRIPT = String.raw`${GIT_ENV}
git apply --check --whitespace=nowarn -- "$1" || exit 10
git apply --whitespace=nowarn -- "$1" || exit 11
`;

// $1 is the report path, $2 the most bytes read. Kills every process of this uid but itself
// (the idle process runs as another uid), then, if the report is a regular file no larger
// than $2, prints its size on stderr and its bytes in base64 on stdout: the host decodes the
// exact bytes (a report that is not UTF-8 must be refused, not repaired in transit).
export const COLLECT_SCRIPT = String.raw`kill -9 -1 2>/dev/null
r=$1
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

// $1 the phase's own output folder (fresh, random name), $2 the runner, $3 the ID list.
export const PHASE_SCRIPT = String.raw`mkdir -m 700 -- "$1" || exit 125
exec "$2" "$3" "$1/report"`;

// Protocol 2 (protocol.ts), the collector, one for every phase of an evaluation: as the idle
// uid, with an environment of PATH and the locale alone, so that nothing the task's
// environment names (PYTHONPATH, NODE_OPTIONS…) can bring the checkout's code into the one
// process that writes the reports. $1 the runner, then per phase its ID list and its folder
// (the collector makes it); the phases' requests arrive on stdin, a line each.
export const COLLECTOR_SCRIPT = String.raw`r=$1
shift
exec env -i PATH="$PATH" LC_ALL=C.UTF-8 PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 "$r" --proctor-collect "$@"`;

// Protocol 2, the test side, as the task uid: $1 the collector's folder, $2 the runner, $3 the
// ID list; the request on stdin. HOME is emptied first (a file an earlier phase's tests left
// there, a Python usercustomize say, must not run in this one), and the variables that can put
// the checkout ahead of a language's standard library are kept from the runner's own process
// under PROCTOR_KEEP_<name>: the runner gives them back to the tests.
export const CHANNEL_SCRIPT = String.raw`rm -rf -- "$HOME"/* "$HOME"/.[!.]* "$HOME"/..?* 2>/dev/null
for v in PYTHONPATH PYTHONSTARTUP NODE_OPTIONS NODE_PATH; do
  eval "if [ -n \"\${$v+x}\" ]; then export PROCTOR_KEEP_$v=\"\$$v\"; unset $v; fi"
done
exec "$2" --proctor-channel "$1/channel" "$3"`;

/** How many times COLLECT_SCRIPT looks again for a collector's report (10 ms apart). */
export const COLLECTOR_WAIT_ROUNDS = 500;

export const APPLY_TIMEOUT_MS = 120_000;
export const COLLECT_TIMEOUT_MS = 60_000;
export const SETUP_TIMEOUT_MS = 300_000;
