# ---- tripwires: vitest's expect (src/runners/core/vitest_expect.py in Proctor) ---------------
#
# The same bytes are in the vitest runner (Proctor writes this part into it when it writes the
# runner into a bundle); edit src/runners/core/vitest_expect.py, not the runner's copy.
#
# vitest runs each test file in a fork of its pool (--pool=forks), where vitest's expect is
# chai's expect with jest's matchers written onto chai's Assertion.prototype. A forgery that
# makes assertions pass (a matcher such as toBe made lenient through expect.extend or on the
# prototype, chai's assert or flag changed, the global expect replaced) lives in that fork. So
# every fork gets a preload (node's --import, through NODE_OPTIONS, which vitest hands its
# forks; in vitest's own process it does nothing) that, before vitest's worker or anything of
# the checkout loads, imports vitest itself (the same module instances the tests get) and
# records:
#   vitest's expect and each of its functions (extend, soft, poll, any, objectContaining, …),
#   chai's Assertion and every property of Assertion.prototype (chai's own assertions and
#   jest's matchers: toBe, toEqual, toThrow, …), chai's expect, assert (each of its
#   functions), should, use and util's functions, the matchers objects on the global, and the
#   global Object and Object.is;
# and, when vitest's runner starts collecting the fork's test files (before their setup files
# or imports), the global expect, which must be vitest's own or absent. It checks them after
# each test and after the fork's files, through vitest's test runner's own hooks (wrapped on
# its prototype before the runner is made, and watched too). What changed is written as one
# JSON line to a file in this runner's private temporary folder, which the fork opens for
# appending before any code of the checkout runs (its path in PROCTOR_VITEST_WATCH, taken out
# of the fork's environment); this runner reads it once vitest has ended and reports each line
# as a tamper message.
#
# Not watched at all under a node without --import in NODE_OPTIONS (before 18.18, and 19 to
# 20.5). Not watched: a forgery that finds the file and empties it, or closes the fork's descriptor
# of it, before it changes anything silences the fork's alarms (the file carries no per-file
# proof that the checks ran); a matcher added under a new name is not an alarm (only what
# existed when the record was taken is watched).

VITEST_WATCH_NAME = "proctor-vitest-watch.mjs"
VITEST_WATCH_ENV = "PROCTOR_VITEST_WATCH"

VITEST_WATCH_SOURCE = r'''import { openSync, writeSync } from "node:fs";
const VITEST = VITEST_FOLDER;
const file = process.env.PROCTOR_VITEST_WATCH;
// Only in a fork of vitest's pool (it has node's IPC channel), never in vitest's own process.
if (typeof process.send === "function" && typeof file === "string") {
  delete process.env.PROCTOR_VITEST_WATCH;
  try {
    await arm(openSync(file, "a"));
  } catch (error) {
    // Not an alarm: nothing of the checkout has run yet. The log says why there is no watch.
    writeSync(2, `proctor: vitest's expect is not watched in this fork: ${String(error && error.message)}\n`);
  }
}

async function arm(fd) {
  const getOwn = Object.getOwnPropertyDescriptor;
  const namesOf = Object.getOwnPropertyNames;
  const is = Object.is;
  const stringify = JSON.stringify;
  // vitest's modules make their expect when they load, which reads the environment's name
  // from the worker's state: a stand-in, taken away again, lets them load now.
  const STATE = "__vitest_worker__";
  Object.defineProperty(globalThis, STATE, { value: { environment: { name: "node" } }, configurable: true, writable: true });
  let vitest;
  let VitestTestRunner;
  try {
    vitest = await import(`file://${VITEST}/dist/index.js`);
    ({ VitestTestRunner } = await import(`file://${VITEST}/dist/runners.js`));
  } finally {
    delete globalThis[STATE];
  }
  const watched = [];
  const reported = new Set();
  const send = (what) => {
    try {
      writeSync(fd, stringify({ what: String(what).slice(0, 300) }) + "\n");
    } catch {}
  };
  const descriptor = (owner, key) => {
    try {
      const d = owner !== null && (typeof owner === "object" || typeof owner === "function") ? getOwn(owner, key) : undefined;
      return d ? [d.value, d.get, d.set] : [undefined, undefined, undefined];
    } catch (error) {
      return [error, undefined, undefined];
    }
  };
  const watch = (label, owner, key) => watched.push([label, owner, key, descriptor(owner, key)]);
  const functions = (label, owner) => {
    if (owner === null || (typeof owner !== "object" && typeof owner !== "function")) return;
    for (const name of namesOf(owner)) {
      if (typeof descriptor(owner, name)[0] === "function") watch(`${label}.${name}`, owner, name);
    }
  };
  const check = (when) => {
    for (let i = 0; i < watched.length; i += 1) {
      const [label, owner, key, first] = watched[i];
      const now = descriptor(owner, key);
      if ((!is(now[0], first[0]) || !is(now[1], first[1]) || !is(now[2], first[2])) && !reported.has(label)) {
        reported.add(label);
        send(`${label} was replaced (${when})`);
      }
    }
  };
  const { expect, chai } = vitest;
  functions("expect", expect);
  watch("chai.Assertion", chai, "Assertion");
  const prototype = chai.Assertion.prototype;
  for (const name of namesOf(prototype)) watch(`chai.Assertion.prototype.${name}`, prototype, name);
  for (const name of ["expect", "assert", "should", "use", "util", "AssertionError"]) watch(`chai.${name}`, chai, name);
  functions("chai.assert", chai.assert);
  functions("chai.util", chai.util);
  for (const key of ["$$jest-matchers-object", "matchers-object"]) {
    const symbol = Symbol.for(key);
    watch(`the global ${key}`, globalThis, symbol);
    const holder = descriptor(globalThis, symbol)[0];
    if (holder !== null && typeof holder === "object") {
      watch(`${key}.matchers`, holder, "matchers");
      const matchers = descriptor(holder, "matchers")[0];
      if (matchers !== null && typeof matchers === "object") {
        for (const name of namesOf(matchers)) watch(`${key} ${name}`, matchers, name);
      }
    }
  }
  watch("Object", globalThis, "Object");
  watch("Object.is", Object, "is");
  // vitest's runner: each hook checks, then does what vitest's own did.
  const runner = VitestTestRunner.prototype;
  const hook = (name, when, before) => {
    const own = runner[name];
    runner[name] = function () {
      if (before) before();
      else check(when(arguments[0]));
      return own === undefined ? undefined : own.apply(this, arguments);
    };
    watch(`vitest's runner ${name}`, runner, name);
  };
  hook("onBeforeCollect", null, () => {
    const global = descriptor(globalThis, "expect")[0];
    if (global !== undefined && !is(global, expect)) send("the global expect is not vitest's own (before the test files loaded)");
    watch("the global expect", globalThis, "expect");
  });
  hook("onAfterRunTask", (test) => `after ${test && typeof test.name === "string" ? test.name : "a test"}`);
  hook("onAfterRunFiles", () => "after the fork's test files");
}
'''


def vitest_watch(scratch, program, env):
    """Writes the preload and adds it to `env` (NODE_OPTIONS, before the project's own) with the
    alarms' file; returns the file's path, or None when vitest's own files are not where the
    preload looks."""
    folder = os.path.dirname(program)
    if not (os.path.isfile(os.path.join(folder, "dist", "index.js"))
            and os.path.isfile(os.path.join(folder, "dist", "runners.js")) and _node_imports()):
        return None
    path = os.path.join(scratch, VITEST_WATCH_NAME)
    with open(path, "w", encoding="utf-8") as f:
        f.write(VITEST_WATCH_SOURCE.replace("VITEST_FOLDER", json.dumps(folder), 1))
    alarms = os.path.join(scratch, "watch")
    open(alarms, "x").close()
    own = env.get("NODE_OPTIONS")
    env["NODE_OPTIONS"] = "--import %s%s" % (json.dumps("file://" + path), " " + own if own else "")
    env[VITEST_WATCH_ENV] = alarms
    return alarms


def _node_imports():
    """Whether the image's node takes --import in NODE_OPTIONS (18.18 and later 18s, 20.6 on):
    an older one would refuse to start."""
    try:
        out = subprocess.run(["node", "-p", "process.versions.node"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
        major, minor = (int(p) for p in out.stdout.decode("ascii", "replace").split(".")[:2])
    except (OSError, subprocess.SubprocessError, ValueError):
        return False
    return (major, minor) >= (21, 0) or (20, 6) <= (major, minor) < (21, 0) or (18, 18) <= (major, minor) < (19, 0)


def vitest_watch_alarms(path):
    """The alarms the forks wrote (at most 100, each cut at 300 characters)."""
    alarms = []
    try:
        with open(path, "rb") as f:
            data = f.read(100 * MAX_MESSAGE)
    except OSError:
        return ["the watch's file of alarms is gone"]
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            what = json.loads(line.decode("utf-8", "replace")).get("what")
        except (ValueError, AttributeError):
            what = None
        alarms.append(what[:300] if isinstance(what, str) else "a malformed line in the watch's file")
    return alarms[:100]
