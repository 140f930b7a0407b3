#!/usr/bin/env bash
# The baseline of grading: the minimal raw Docker steps that grade one task bundle, with no
# Proctor code. Used as the baseline of the grading benchmark, and by hand to check a bundle.
#
#   bench/oracle-baseline.sh BUNDLE_DIR [PATCH_FILE]
#
# 1. build the image from BUNDLE_DIR/environment (the layer cache makes a rebuild a reuse), or
#    take the image id in $ORACLE_BASELINE_IMAGE, built before (bench:sweep does so, so that its
#    raw loop does not pay a build check per task where Proctor's image cache does not);
# 2. fill a fresh named volume with a copy of the work tree at [environment].workdir as the
#    image holds it, as a Proctor workspace is (.git, and what the Dockerfile or the install
#    built and git ignores, node_modules or a build folder, with its times, so that the
#    runner's build reuses it), checking that HEAD is base_commit, owned by 1000:1000;
# 3. apply PATCH_FILE (without its changes to the [grading].deny globs) with `git apply`, as
#    1000:1000;
# 4. run tests/run for tests/existing.txt, with the checkout as working directory and the
#    sandbox flags Proctor uses (no network, read-only root, tmpfs /tmp and HOME, /tmp
#    executable and half the memory, as a task container's: test suites build and run programs
#    there; uid 1000:1000, no capabilities, the deterministic environment);
# 5. apply tests/hidden.patch, then run tests/run for tests/hidden.txt the same way (the order
#    of Proctor's evaluator: the existing suite runs before the hidden tests are added);
# 6. print each report to stdout, as `existing: <report>` and `hidden: <report>`.
# A task graded by SWE-bench's rules ([grading] rules = "swebench") runs as Proctor's evaluator
# runs it: the hidden tests applied after the candidate, then one run of the runner on both
# lists together (sorted, each ID once), printed as `tests: <report>`. Such a task's image (an
# imported row's) holds its work tree ready, with what its install built and left untracked
# (node_modules, a make or cargo build): the raw run is then SWE-bench's harness's, one
# container of the image, as root in the image's own work tree, with the same limits and no
# network (steps 2 to 5 in that one container, no volume, no clone).
#
# The evaluator assets (tests/) and the patch reach the containers through a volume filled
# with `docker cp`, never a bind mount. Every container and volume it creates carries the
# label proctor.bench=1 (and proctor.bench.run=<this run>) and is removed on exit, whatever
# happens; the image is kept for the next run. Runner output and step timings go to stderr.
# Exits 0 when both reports were printed (whatever they say), non-zero when the bundle is
# broken, a patch does not apply, or Docker fails.
set -euo pipefail

usage() {
  echo "usage: $0 BUNDLE_DIR [PATCH_FILE]" >&2
  exit 2
}
if [ "$#" -lt 1 ] || [ "$#" -gt 2 ]; then usage; fi
bundle=$(cd "$1" && pwd)
patch=""
if [ "$#" -eq 2 ]; then
  patch=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
  [ -f "$patch" ] || {
    echo "$0: no such patch file: $2" >&2
    exit 2
  }
fi
task="$bundle/task.toml"
[ -f "$task" ] || {
  echo "$0: $bundle has no task.toml" >&2
  exit 2
}

# The few task.toml values needed, read naively (one `key = "value"` per line; format 1).
toml_string() { sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p" "$task" | head -n 1; }
toml_int() { sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\\([0-9][0-9]*\\).*/\\1/p" "$task" | head -n 1; }
id=$(toml_string id)
dockerfile=$(toml_string dockerfile)
workdir=$(toml_string workdir)
base_commit=$(toml_string base_commit)
test_seconds=$(toml_int test_seconds)
rules=$(toml_string rules)
: "${dockerfile:=environment/Dockerfile}" "${workdir:=/repo}" "${test_seconds:=600}"
if [ -z "$id" ] || [ -z "$base_commit" ]; then
  echo "$0: $task needs id and environment.base_commit" >&2
  exit 2
fi
# [grading].deny = ["a/**", ...] on one line -> git apply --exclude patterns. git apply matches
# with wildmatch without FNM_PATHNAME, so a single `*` already crosses `/`.
excludes=()
deny=$(sed -n 's/^[[:space:]]*deny[[:space:]]*=[[:space:]]*\[\(.*\)\].*/\1/p' "$task" | head -n 1)
while IFS= read -r glob; do
  [ -n "$glob" ] && excludes+=("--exclude=${glob//\*\*/*}")
done < <(printf '%s\n' "$deny" | grep -o '"[^"]*"' | tr -d '"' || true)

run="$$-$(date +%s)-${RANDOM}"
labels=(--label proctor.bench=1 --label "proctor.bench.run=$run")
work="proctor-bench-$run-work"    # the checkout
assets="proctor-bench-$run-assets" # tests/ and the candidate patch, read-only to the runs

cleanup() {
  local ids
  ids=$(docker ps -aq --filter "label=proctor.bench.run=$run" 2>/dev/null || true)
  if [ -n "$ids" ]; then
    # shellcheck disable=SC2086 # one id per word
    docker rm -f $ids >/dev/null 2>&1 || true
  fi
  docker volume rm -f "$work" "$assets" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

started=$(date +%s%N)
step_started=$started
step() {
  local now
  now=$(date +%s%N)
  printf 'oracle-baseline: %-8s %6d ms\n' "$1" $(((now - step_started) / 1000000)) >&2
  step_started=$now
}

# 1. The image (its id, not the tag, from here on).
if [ -n "${ORACLE_BASELINE_IMAGE:-}" ]; then
  image=$ORACLE_BASELINE_IMAGE
else
  image=$(docker build -q --force-rm --network host -t "proctor-bench:$id" -f "$bundle/$dockerfile" "$bundle/environment")
fi
step build

# 2. Volumes: the assets through docker cp into a created (never started) container.
docker volume create "${labels[@]}" "$assets" >/dev/null
holder=$(docker container create "${labels[@]}" --network none -v "$assets:/proctor" "$image" true)
docker cp -q "$bundle/tests" "$holder:/proctor/tests"
if [ -n "$patch" ]; then docker cp -q "$patch" "$holder:/proctor/candidate.patch"; fi
docker rm "$holder" >/dev/null
step assets

limits=(--cpus 1 --memory 2048m --memory-swap 2048m --pids-limit 256)
env=(-e TZ=UTC -e LC_ALL=C.UTF-8 -e PYTHONHASHSEED=0 -e SOURCE_DATE_EPOCH=1704067200)

# The runner on both lists (each ID once) under test_seconds: its output to stderr, its report
# to stdout. $1 test_seconds, $2 the checkout.
RUN_TESTS='sort -u /proctor/tests/existing.txt /proctor/tests/hidden.txt > /tmp/tests.txt
timeout -k 5 "$1" /proctor/tests/run /tmp/tests.txt /tmp/report.out 1>&2
echo "oracle-baseline: runner exited $?" >&2
if [ -f /tmp/report.out ]; then cat /tmp/report.out; else echo "(no report)"; fi'

if [ "$rules" = swebench ]; then
  # SWE-bench's way: the image's own work tree, in one container, as root.
  report=$(docker run --rm "${labels[@]}" --init --network none "${limits[@]}" \
    --tmpfs "/tmp:rw,nosuid,size=256m" -e HOME=/tmp "${env[@]}" \
    -v "$assets:/proctor:ro" -w "$workdir" "$image" sh -u -c '
      export GIT_CONFIG_GLOBAL=/tmp/gitconfig
      git config --global safe.directory "*"
      head=$(git rev-parse --verify HEAD)
      [ "$head" = "$2" ] || { echo "HEAD of $PWD is $head, not base_commit $2" >&2; exit 4; }
      t=$1
      shift 2
      if [ -f /proctor/candidate.patch ]; then
        git apply --whitespace=nowarn "$@" /proctor/candidate.patch || exit 5
      fi
      git apply --whitespace=nowarn /proctor/tests/hidden.patch || exit 6
      set -- "$t"
      '"$RUN_TESTS" sh "$test_seconds" "$base_commit" "${excludes[@]}")
  step tests
  printf 'tests: %s\n' "$report"
  printf 'oracle-baseline: total    %6d ms\n' $((($(date +%s%N) - started) / 1000000)) >&2
  exit 0
fi

# The work tree as the image holds it, checked against base_commit, handed to 1000:1000.
docker volume create "${labels[@]}" "$work" >/dev/null
docker run --rm "${labels[@]}" --network none --read-only --tmpfs /tmp \
  --cap-drop ALL --cap-add CHOWN --cap-add DAC_OVERRIDE --cap-add FOWNER \
  --security-opt no-new-privileges -e HOME=/tmp \
  -v "$work:/proctor-init/workspace" "$image" sh -eu -c '
    src=$1 dst=$2 commit=$3
    export GIT_CONFIG_GLOBAL=/tmp/gitconfig # whoever owns the repository in the image
    git config --global safe.directory "*"
    head=$(git -C "$src" rev-parse --verify HEAD)
    [ "$head" = "$commit" ] || { echo "HEAD of $src is $head, not base_commit $commit" >&2; exit 4; }
    cp -a "$src/." "$dst"
    chown -R 1000:1000 "$dst"' sh "$workdir" /proctor-init/workspace "$base_commit"
step checkout

# Everything below runs as 1000:1000 with Proctor's isolation flags.
sandbox=(--rm "${labels[@]}" --init --network none --read-only --user 1000:1000
  --cap-drop ALL --security-opt no-new-privileges "${limits[@]}"
  --tmpfs "/tmp:rw,exec,nosuid,nodev,size=1024m"
  --tmpfs "/proctor-home:rw,noexec,nosuid,size=64m" -e HOME=/proctor-home "${env[@]}"
  -v "$work:$workdir" -v "$assets:/proctor:ro" -w "$workdir")

# 3. The candidate, without its changes to denied paths.
if [ -n "$patch" ]; then
  docker run "${sandbox[@]}" "$image" \
    git apply --whitespace=nowarn "${excludes[@]}" /proctor/candidate.patch
  step apply
fi

# The runner for one list: its output to stderr, its report to stdout.
run_phase() {
  local report
  report=$(docker run "${sandbox[@]}" "$image" sh -u -c '
      l=/proctor/tests/$2.txt
      timeout -k 5 "$1" /proctor/tests/run "$l" /tmp/report.out 1>&2
      echo "oracle-baseline: runner exited $?" >&2
      if [ -f /tmp/report.out ]; then cat /tmp/report.out; else echo "(no report)"; fi' \
    sh "$test_seconds" "$1")
  step "$1"
  printf '%s: %s\n' "$1" "$report"
}

# 4 to 6. The existing suite, then the hidden tests added and run.
run_phase existing
docker run "${sandbox[@]}" "$image" git apply --whitespace=nowarn /proctor/tests/hidden.patch
step hidden.patch
run_phase hidden

printf 'oracle-baseline: total    %6d ms\n' $((($(date +%s%N) - started) / 1000000)) >&2
