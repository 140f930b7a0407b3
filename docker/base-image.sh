#!/usr/bin/env bash
# Makes sure the base image `debian:bookworm-slim` exists in the local engine.
#
# Idempotent: when the image is present it returns at once. Otherwise it tries a pull, and
# when that fails (no registry reachable) it builds an equivalent minimal Debian bookworm
# root with `debootstrap --variant=minbase` from the machine's own apt mirror and imports it
# with `docker import`, so that ordinary `FROM debian:bookworm-slim` Dockerfiles build here
# exactly as they would anywhere.
set -euo pipefail

IMAGE=${PROCTOR_BASE_IMAGE:-debian:bookworm-slim}
log() { printf 'base-image: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  exit 0
fi

if timeout 60 docker pull -q "$IMAGE" >/dev/null 2>&1; then
  log "pulled $IMAGE"
  exit 0
fi

# The mirror this machine's apt already uses (deb822 sources first, then sources.list).
mirror=""
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  mirror=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
  [ -n "$mirror" ] && break
done
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' /etc/apt/sources.list)
fi
if [ -z "$mirror" ]; then
  log "cannot find a Debian mirror in the apt sources to debootstrap from"
  exit 2
fi

if ! command -v debootstrap >/dev/null 2>&1; then
  log "installing debootstrap"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq debootstrap >/dev/null
fi

root=$(mktemp -d /tmp/proctor-rootfs.XXXXXX)
trap 'as_root rm -rf "$root"' EXIT
log "building $IMAGE with debootstrap --variant=minbase bookworm (about a minute)"
as_root debootstrap --variant=minbase bookworm "$root" "$mirror" >/tmp/proctor-debootstrap.log 2>&1 || {
  log "debootstrap failed; last lines of /tmp/proctor-debootstrap.log:"
  tail -n 20 /tmp/proctor-debootstrap.log >&2
  exit 2
}
# Keep the image small and close to the official slim one.
as_root rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/*
as_root tar -C "$root" -c . | docker import \
  --change 'CMD ["bash"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  - "$IMAGE" >/dev/null
log "imported $IMAGE"
