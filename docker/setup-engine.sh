#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine, installing and starting one if needed,
# with gVisor's `runsc` registered as the `runsc` runtime (for [sandbox] runtime = "runsc").
#
# Idempotent and quick when an engine already answers with runsc registered: it then only
# checks (one `docker info`) and returns. Otherwise:
#   1. installs Debian's runsc when it is missing, before any engine starts, so that the
#      engine is started with it (local engines only: not when DOCKER_HOST names another; a
#      failure to install it is a note, since only [sandbox] runtime = "runsc" needs it);
#   2. installs Debian's docker.io when dockerd is missing, and starts
#        dockerd --iptables=false --ip-forward=false --bridge=none
#      in the background, then waits for the socket. Proctor's containers all run with
#      network none, so the engine needs no bridge or NAT;
#   3. registers runsc in daemon.json when the running engine lacks it, and makes the engine
#      reload it (SIGHUP reloads the runtimes); when it still lacks it and it is the dockerd
#      this script starts, restarts it. Verified with `docker info`.
#
# Honours DOCKER_HOST: when it is set and answers, nothing is started, and runsc is registered
# only when PROCTOR_DOCKERD_CONFIG and PROCTOR_DOCKERD_PIDFILE name that engine's daemon.json
# and pid file (the defaults, /etc/docker/daemon.json and /var/run/docker.pid, are the local
# engine's). Any failure is one line `setup-engine: …` on stderr and exit status 2.
set -euo pipefail

log() { printf 'setup-engine: %s\n' "$*" >&2; }
fail() { log "$*"; exit 2; }
# Root for installs and the engine: ourselves, or password-less sudo (never a prompt).
if [ "$(id -u)" -eq 0 ]; then root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then root=(sudo -n)
else root=(false)
fi
need_root() {
  [ "${root[0]:-}" != false ] || fail "needs root to $* (run as root, or give this user password-less sudo)"
}
as_root() { "${root[@]}" "$@"; }
apt_install() {
  need_root "install Debian's $*"
  log "installing Debian's $*"
  { as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@"; } \
    >/tmp/proctor-apt.log 2>&1 ||
    fail "could not install $* with apt-get: $(grep -E '^E:' /tmp/proctor-apt.log | head -n 1 || tail -n 1 /tmp/proctor-apt.log)"
}

default_socket=unix:///var/run/docker.sock
local_engine=false
if [ -z "${DOCKER_HOST:-}" ] || [ "$DOCKER_HOST" = "$default_socket" ]; then local_engine=true; fi
daemon_json=${PROCTOR_DOCKERD_CONFIG:-/etc/docker/daemon.json}
pid_file=${PROCTOR_DOCKERD_PIDFILE:-/var/run/docker.pid}
# Registration needs to know the engine's daemon.json and pid: the local engine's, or given.
can_register=$local_engine
if [ -n "${PROCTOR_DOCKERD_CONFIG:-}" ] && [ -n "${PROCTOR_DOCKERD_PIDFILE:-}" ]; then can_register=true; fi
ARGS=(--iptables=false --ip-forward=false --bridge=none)

# The runtimes of the engine (JSON), or nothing when no engine answers.
runtimes() { command -v docker >/dev/null 2>&1 && timeout 10 docker info --format '{{json .Runtimes}}' 2>/dev/null; }
registered() { runtimes | grep -q '"runsc"'; }

# runsc is optional for Proctor (only [sandbox] runtime = "runsc" needs it): a machine whose
# apt has no runsc package still gets an engine, with a note. (.ci/test-tools requires it.)
if [ "$local_engine" = true ] && ! command -v runsc >/dev/null 2>&1; then
  (apt_install runsc) || log "note: continuing without runsc; [sandbox] runtime = \"runsc\" will not be available"
fi
runsc_path=$(command -v runsc || true)

# gVisor: registered with --network=none inside the sandbox. Without it runsc refuses
# Docker's networkless namespace here ("cannot run with network enabled in root network
# namespace"), and Proctor's containers never have a network anyway. Other keys of an
# existing daemon.json are kept.
write_daemon_json() {
  local merged
  merged=$(RUNSC="$runsc_path" FILE="$daemon_json" node -e '
    const fs = require("node:fs");
    const file = process.env.FILE;
    let config = {};
    if (fs.existsSync(file)) {
      const text = fs.readFileSync(file, "utf8");
      try { config = text.trim() === "" ? {} : JSON.parse(text); } catch (e) {
        console.error(`${file} is not valid JSON: ${e.message}`); process.exit(1);
      }
    }
    config.runtimes = { ...config.runtimes, runsc: { path: process.env.RUNSC, runtimeArgs: ["--network=none"] } };
    process.stdout.write(JSON.stringify(config, null, 2) + "\n");
  ' 2>&1) || fail "cannot register runsc: $merged"
  need_root "write $daemon_json"
  as_root mkdir -p "$(dirname "$daemon_json")"
  printf '%s' "$merged" | as_root tee "$daemon_json" >/dev/null
  log "registered runsc in $daemon_json"
}

wait_for_engine() {
  for _ in $(seq 1 120); do
    if runtimes >/dev/null; then return 0; fi
    sleep 0.5
  done
  return 1
}

log_file=${PROCTOR_DOCKERD_LOG:-/var/log/proctor-dockerd.log}
start_dockerd() {
  need_root "start dockerd"
  log "starting dockerd ${ARGS[*]} (log: $log_file)"
  as_root bash -c "nohup dockerd ${ARGS[*]} >>'$log_file' 2>&1 </dev/null &"
  wait_for_engine || fail "dockerd did not answer within 60 s; see the end of $log_file"
  log "engine ready"
}

if current=$(runtimes); then
  if [ -z "$runsc_path" ] || grep -q '"runsc"' <<<"$current"; then exit 0; fi
  if [ "$can_register" != true ]; then
    log "note: the engine at DOCKER_HOST=$DOCKER_HOST does not register runsc; add it to that engine's daemon.json to use [sandbox] runtime = \"runsc\""
    exit 0
  fi
  grep -q '"runsc"' "$daemon_json" 2>/dev/null || write_daemon_json
  pid=$(cat "$pid_file" 2>/dev/null || true)
  [ -n "$pid" ] || fail "runsc is in $daemon_json but the engine lacks it, and $pid_file names no dockerd to reload"
  need_root "reload dockerd (pid $pid)"
  log "reloading dockerd (pid $pid) for the runsc runtime"
  as_root kill -HUP "$pid" || fail "cannot signal dockerd (pid $pid) to reload $daemon_json"
  for _ in $(seq 1 20); do
    if registered; then log "runsc registered"; exit 0; fi
    sleep 0.25
  done
  # Not reloaded (e.g. the engine reads another config file): restart it only if it is ours.
  if [ "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" = "dockerd ${ARGS[*]} " ]; then
    log "restarting dockerd (pid $pid), which setup-engine started, to load runsc"
    as_root kill -TERM "$pid"
    for _ in $(seq 1 120); do
      [ -e "/proc/$pid" ] || break
      sleep 0.25
    done
    [ ! -e "/proc/$pid" ] || fail "dockerd (pid $pid) did not stop within 30 s"
    start_dockerd
    registered && exit 0
  fi
  fail "the engine does not register runsc after reloading $daemon_json; restart dockerd with it"
fi

if [ -n "${DOCKER_HOST:-}" ] && [ "$local_engine" != true ]; then
  fail "DOCKER_HOST=$DOCKER_HOST is set but no engine answers there"
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
  apt_install docker.io
fi

if [ -n "$runsc_path" ] && ! grep -q '"runsc"' "$daemon_json" 2>/dev/null; then write_daemon_json; fi
start_dockerd
if [ -n "$runsc_path" ] && ! registered; then
  fail "dockerd started without the runsc runtime; check $daemon_json"
fi
