#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine, installing and starting one if needed.
#
# Idempotent and quick when an engine already answers: it then only checks and returns.
# Otherwise it installs Debian's docker.io (when dockerd is missing) and starts
#   dockerd --iptables=false --ip-forward=false --bridge=none
# in the background, then waits for the socket. Proctor's containers all run with network
# none, so the engine needs no bridge or NAT. When gVisor's `runsc` is installed, it is
# registered as the `runsc` runtime (for [sandbox] runtime = "runsc").
#
# Honours DOCKER_HOST: when it is set and answers, nothing is started.
set -euo pipefail

log() { printf 'setup-engine: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

engine_answers() { command -v docker >/dev/null 2>&1 && timeout 10 docker info >/dev/null 2>&1; }

if engine_answers; then
  if command -v runsc >/dev/null 2>&1 && ! docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; then
    log "note: runsc is installed but the running engine does not register it; restart dockerd to use it"
  fi
  exit 0
fi

if [ -n "${DOCKER_HOST:-}" ]; then
  log "DOCKER_HOST=$DOCKER_HOST is set but no engine answers there"
  exit 2
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
  log "installing Debian's docker.io"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq docker.io >/dev/null
fi

args=(--iptables=false --ip-forward=false --bridge=none)
# gVisor: registered with --network=none inside the sandbox. Without it runsc refuses
# Docker's networkless namespace here ("cannot run with network enabled in root network
# namespace"), and Proctor's containers never have a network anyway.
runsc_path=$(command -v runsc || true)
daemon_json=/etc/docker/daemon.json
if [ -n "$runsc_path" ]; then
  if [ ! -e "$daemon_json" ]; then
    as_root mkdir -p /etc/docker
    printf '{\n  "runtimes": {\n    "runsc": { "path": "%s", "runtimeArgs": ["--network=none"] }\n  }\n}\n' "$runsc_path" |
      as_root tee "$daemon_json" >/dev/null
    log "registered runsc in $daemon_json"
  elif ! grep -q '"runsc"' "$daemon_json"; then
    log "note: runsc is installed but $daemon_json does not register it; add it to use [sandbox] runtime = \"runsc\""
  fi
fi

log_file=${PROCTOR_DOCKERD_LOG:-/var/log/proctor-dockerd.log}
log "starting dockerd ${args[*]} (log: $log_file)"
as_root bash -c "nohup dockerd ${args[*]} >>'$log_file' 2>&1 </dev/null &"

for _ in $(seq 1 120); do
  if [ -S /var/run/docker.sock ] && engine_answers; then
    log "engine ready"
    exit 0
  fi
  sleep 0.5
done
log "dockerd did not answer within 60 s; last lines of $log_file:"
tail -n 20 "$log_file" >&2 || true
exit 2
