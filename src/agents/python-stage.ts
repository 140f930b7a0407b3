// The Python of an agent installed with `install.pip`: built in a stage of its own, from a
// Debian image (apt-get's python3 and python3-venv), never in the task's image, so that the
// task's python, pip and site-packages stay exactly as the task's tests know them.
//
// The stage copies its interpreter, standard library and every shared library of its /usr/lib
// into /opt/proctor/python, makes a venv for the agent under /opt/proctor/agents/NAME/venv and
// pip-installs the pins there (with the build's network, trusting the host's extra CA). Only
// those two folders are copied into the layer. The task image may have another glibc, or none
// (musl), so the interpreter is never started by its own ELF interpreter: each of the pinned
// packages' console scripts becomes a shell wrapper in /opt/proctor/agents/NAME/bin that runs
// the stage's dynamic loader with the stage's library folder (`ld.so --library-path`). That
// path holds for every library the process loads (extension modules included) and for no child:
// a command the agent runs gets the task's own libraries and the task's own python.
//
// Layout in the image:
//   /opt/proctor/python/bin/python3.X        the stage's interpreter (statically linked libpython)
//   /opt/proctor/python/lib/python3.X/       its standard library
//   /opt/proctor/python/libs/                its shared libraries and the loader (ld-linux*.so*)
//   /opt/proctor/python/loader               the loader's file name
//   /opt/proctor/agents/NAME/venv/           the venv (pyvenv.cfg home = /opt/proctor/python/bin)
//   /opt/proctor/agents/NAME/bin/SCRIPT      a wrapper per console script of the pinned projects
//   /opt/proctor/agents/NAME/python          a wrapper of the venv's python (not on any PATH)
import { AGENTS_ROOT, BUILD_ROOT, REFUSED } from './layer-script.js';

export const PYTHON_ROOT = '/opt/proctor/python';
/** The layout of a pip install's files; a change here is a new digest for pip agents alone. */
export const PYTHON_LAYOUT = 1;
/** The image the Python stage is built from, unless the build options name another. */
export const DEFAULT_PYTHON_IMAGE = 'debian:bookworm-slim';

const PRELUDE = String.raw`set -u
P=${PYTHON_ROOT}
refuse() { printf '${REFUSED}%s\n' "$@"; exit 1; }
`;

/**
 * The stage's first RUN, the same for every agent (so the engine's build cache shares it):
 * Debian's python3 and python3-venv, copied with their libraries into /opt/proctor/python.
 */
export const PYTHON_SETUP_SCRIPT = String.raw`${PRELUDE}export DEBIAN_FRONTEND=noninteractive
{ apt-get update -q && apt-get install -y -q --no-install-recommends python3 python3-venv; } >/tmp/proctor-apt.log 2>&1 || { cat /tmp/proctor-apt.log; refuse "apt-get could not install python3 and python3-venv in the Python stage: $(grep -E '^E: ' /tmp/proctor-apt.log | head -n 1)"; }
py=$(readlink -f /usr/bin/python3)
ver=$(basename "$py")
triplet=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("MULTIARCH") or "")')
[ -n "$triplet" ] && [ -d "/usr/lib/$triplet" ] || refuse "the Python stage has no library folder for its architecture ($triplet)"
mkdir -p "$P/bin" "$P/lib" "$P/libs"
cp "$py" "$P/bin/$ver" && ln -s "$ver" "$P/bin/python3"
cp -a "/usr/lib/$ver" "$P/lib/$ver"
cp -a "/usr/lib/$triplet"/*.so* "$P/libs/"
loader=$(cd "$P/libs" && ls ld-linux*.so* 2>/dev/null | head -n 1)
[ -n "$loader" ] || refuse "the Python stage has no dynamic loader in /usr/lib/$triplet"
printf '%s\n' "$loader" >"$P/loader"
rm -f /tmp/proctor-apt.log
echo "proctor-agent: $("$P/bin/python3" --version) in $P"
`;

/**
 * The stage's second RUN ($1 the agent's name, then the pins): the agent's venv, its pins, and
 * a wrapper per console script.
 */
export const PYTHON_AGENT_SCRIPT = String.raw`${PRELUDE}name=$1; shift
agent=${AGENTS_ROOT}/$name
# pip's reason in one line: its ERROR lines (a missing version, a conflict).
why() { grep -E '^ERROR: ' "$1" | sed 's/^ERROR: //' | head -n 2 | tr '\n' '|' | sed 's/|$//; s/|/ | /g'; }
"$P/bin/python3" -m venv "$agent/venv" >/tmp/proctor-venv.log 2>&1 || { cat /tmp/proctor-venv.log; refuse "cannot make the agent's venv: $(tail -n 1 /tmp/proctor-venv.log)"; }
if [ -f ${BUILD_ROOT}/ca.crt ]; then export PIP_CERT=${BUILD_ROOT}/ca.crt SSL_CERT_FILE=${BUILD_ROOT}/ca.crt; fi
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1 PIP_ROOT_USER_ACTION=ignore
"$agent/venv/bin/python" -m pip install --no-input -- "$@" >/tmp/proctor-pip.log 2>&1 || { cat /tmp/proctor-pip.log; refuse "pip could not install $*: $(why /tmp/proctor-pip.log)"; }
tail -n 3 /tmp/proctor-pip.log
mkdir -p "$agent/bin"
run="$P/libs/$(cat "$P/loader") --library-path $P/libs $agent/venv/bin/python"
printf '#!/bin/sh\nexec %s "$@"\n' "$run" >"$agent/python"
chmod 0755 "$agent/python"
# The console scripts of the pinned projects alone: their dependencies' scripts (and the venv's
# python and pip) stay off the agent's PATH, where they could shadow the task's own commands.
scripts=$("$agent/venv/bin/python" - "$@" <<'PY'
import sys
from importlib.metadata import distribution
for pin in sys.argv[1:]:
    for entry in distribution(pin.split("==")[0]).entry_points:
        if entry.group == "console_scripts":
            print(entry.name)
PY
) || refuse "cannot read the console scripts of $*"
for script in $scripts; do
  case $script in */*|.*) continue ;; esac
  [ -f "$agent/venv/bin/$script" ] || continue
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$run" "$agent/venv/bin/$script" >"$agent/bin/$script"
  chmod 0755 "$agent/bin/$script"
  echo "proctor-agent: $script"
done
[ -n "$(ls "$agent/bin")" ] || refuse "$* installed no console script"
rm -f /tmp/proctor-venv.log /tmp/proctor-pip.log
echo "proctor-agent: installed $* into $agent"
`;
