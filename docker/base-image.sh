#!/usr/bin/env bash
# Makes sure a Debian base image `debian:<suite>-slim` exists in the local engine.
#
#   bash docker/base-image.sh            debian:bookworm-slim (or $PROCTOR_BASE_IMAGE)
#   bash docker/base-image.sh bullseye   debian:bullseye-slim (Python 3.9, git 2.30)
#   bash docker/base-image.sh trixie     debian:trixie-slim
#
# Idempotent: when the image is present it returns at once. Otherwise it tries a pull, and
# when that fails (no registry reachable) it builds an equivalent minimal Debian root of that
# suite with `debootstrap --variant=minbase` from the machine's own apt mirror (the suite must
# be one the mirror serves: deb.debian.org serves oldstable, stable and testing; older suites
# live on archive.debian.org, given with PROCTOR_DEBIAN_MIRROR) and imports it with
# `docker import`, so that ordinary `FROM debian:<suite>-slim` Dockerfiles build here exactly
# as they would anywhere. The image's own apt sources name the same mirror and suite, so
# `apt-get install` works in Dockerfiles built on it.
set -euo pipefail

SUITE=${1:-bookworm}
case "$SUITE" in
  *[!a-z]* | "") printf 'base-image: a Debian suite is lowercase letters (bullseye, bookworm, trixie), got %q\n' "$SUITE" >&2; exit 2 ;;
esac
if [ $# -eq 0 ]; then IMAGE=${PROCTOR_BASE_IMAGE:-debian:bookworm-slim}; else IMAGE=debian:$SUITE-slim; fi
log() { printf 'base-image: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  exit 0
fi

# Two test runs starting at once on a fresh machine build it once: the second waits here.
exec 9>"/tmp/proctor-base-image-$SUITE.lock"
flock 9
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  exit 0
fi

if timeout 60 docker pull -q "$IMAGE" >/dev/null 2>&1; then
  log "pulled $IMAGE"
  exit 0
fi

# The mirror this machine's apt already uses (deb822 sources first, then sources.list).
mirror=${PROCTOR_DEBIAN_MIRROR:-}
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list.d/*.sources; do
  [ -z "$mirror" ] || break
  [ -f "$f" ] || continue
  mirror=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$f")
done
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' /etc/apt/sources.list)
fi
if [ -z "$mirror" ]; then
  log "cannot find a Debian mirror in the apt sources to debootstrap from (set PROCTOR_DEBIAN_MIRROR)"
  exit 2
fi

if ! command -v debootstrap >/dev/null 2>&1; then
  log "installing debootstrap"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq debootstrap >/dev/null
fi

root=$(mktemp -d /tmp/proctor-rootfs.XXXXXX)
trap 'as_root rm -rf "$root"' EXIT
log "building $IMAGE with debootstrap --variant=minbase $SUITE from $mirror (about a minute)"
logfile=/tmp/proctor-debootstrap-$SUITE.log
as_root debootstrap --variant=minbase "$SUITE" "$root" "$mirror" >"$logfile" 2>&1 || {
  reason=$(grep -E '^E:' "$logfile" | head -n 1 || true)
  case "$reason" in
    *"Failed getting release file"*) reason="$reason (the mirror does not serve $SUITE; an archived suite is on archive.debian.org: PROCTOR_DEBIAN_MIRROR=http://archive.debian.org/debian)" ;;
  esac
  log "debootstrap $SUITE from $mirror failed${reason:+: $reason}; last lines of $logfile:"
  tail -n 20 "$logfile" >&2
  exit 2
}
# Keep the image small and close to the official slim one.
as_root rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/*
as_root tar -C "$root" -c . | docker import \
  --change 'CMD ["bash"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  - "$IMAGE" >/dev/null
log "imported $IMAGE"
