# ---- tripwires: jest's expect (src/runners/core/jest_expect.py in Proctor) --------------------
#
# The same bytes are in the jest runner (Proctor writes this part into it when it writes the
# runner into a bundle); edit src/runners/core/jest_expect.py, not the runner's copy.
#
# jest runs each test file in a context of its own (node's vm), inside a worker process, and
# loads `expect` there afresh for every file. A forgery that makes assertions pass (expect
# replaced on the file's global, a matcher such as toBe made lenient through expect.extend or
# by writing into the matchers object, Object.is changed) lives in that context. So the watch
# is armed from outside it: jest loads this part's testRunner (--testRunner) in the worker, not
# in the context; it runs jest-circus's own runner (jest's default since jest 27, resolved from
# jest's own jest-config), and once jest-circus has set up the file's globals, before the
# project's setupFilesAfterEnv and the test file load, it records:
#   the file's global `expect` (which must be jest's own, from jest's internal registry, that
#   the test files cannot reach), every function of expect (extend, any, objectContaining,
#   assertions, …), the matchers object and each matcher in it, the global Object and
#   Object.is, and the globals test, it and describe,
# each by its property descriptor (value, getter and setter). It checks them after each test
# (a jest-circus event handler the test files cannot remove) and after the file's tests; what
# changed goes into the file's result, which jest's worker hands to jest's own process after
# the context is done with, as `proctorTripwires`; the runner's reporter passes it on and the
# runner reports each as a tamper message. New matchers (jest-extended, jest-dom) are not
# alarms: only what existed when the record was taken is watched.
#
# Not watched: code of the project's setupFiles runs before jest-circus sets the globals up
# (the record takes the expect it finds; only its identity with jest's own is checked); a
# project whose configuration names a testRunner other than jest-circus runs under
# jest-circus here; a jest without jest-circus (before 27, unless installed) runs without this
# watch.

JEST_WATCH_NAME = "proctor-jest-circus.cjs"

JEST_WATCH_SOURCE = r'''"use strict";
const circus = require(CIRCUS_RUNNER);
const path = require("path");
// Taken now, in the worker's own realm, before any test file's context exists.
const getOwn = Object.getOwnPropertyDescriptor;
const namesOf = Object.getOwnPropertyNames;
const is = Object.is;
const MATCHERS = Symbol.for("$$jest-matchers-object");
const INIT = /[\\/]jestAdapterInit\.js$/;

function descriptor(owner, key) {
  try {
    const d = owner !== null && (typeof owner === "object" || typeof owner === "function") ? getOwn(owner, key) : undefined;
    return d ? [d.value, d.get, d.set] : [undefined, undefined, undefined];
  } catch (error) {
    return [error, undefined, undefined];
  }
}

function arm(global, own) {
  const watched = [];
  const alarms = [];
  const reported = new Set();
  const alarm = (what, label = what) => {
    if (reported.has(label)) return;
    reported.add(label);
    alarms.push(what);
  };
  const watch = (label, owner, key) => watched.push([label, owner, key, descriptor(owner, key)]);
  const expect = global.expect;
  if (own !== null && !is(expect, own)) alarm("expect is not jest's own (when the file's globals were set up)");
  watch("expect", global, "expect");
  for (const name of namesOf(expect)) {
    const d = descriptor(expect, name);
    if (typeof d[0] === "function") watch(`expect.${name}`, expect, name);
  }
  watch("expect's matchers object", global, MATCHERS);
  const holder = descriptor(global, MATCHERS)[0];
  if (holder !== null && typeof holder === "object") {
    watch("expect's matchers", holder, "matchers");
    const matchers = descriptor(holder, "matchers")[0];
    if (matchers !== null && typeof matchers === "object") {
      for (const name of namesOf(matchers)) watch(`expect's ${name} matcher`, matchers, name);
    }
  }
  watch("Object", global, "Object");
  watch("Object.is", global.Object, "is");
  for (const name of ["test", "it", "describe"]) watch(name, global, name);
  return {
    alarms,
    check(when) {
      for (let i = 0; i < watched.length; i += 1) {
        const [label, owner, key, first] = watched[i];
        const now = descriptor(owner, key);
        if (!is(now[0], first[0]) || !is(now[1], first[1]) || !is(now[2], first[2])) {
          alarm(`${label} was replaced (${when})`, label);
        }
      }
    },
  };
}

module.exports = async function proctorJestCircus(globalConfig, config, environment, runtime, testPath, sendMessageToJest) {
  let watch = null;
  let failure = null;
  const requireInternal = runtime.requireInternalModule;
  runtime.requireInternalModule = function (from, to) {
    const exported = requireInternal.apply(this, arguments);
    if (watch !== null || to !== undefined || typeof from !== "string" || !INIT.test(from)) return exported;
    const initialize = exported.initialize;
    const wrapped = Object.assign({}, exported);
    wrapped.initialize = async function (options) {
      const out = await initialize.apply(this, arguments);
      try {
        let own = null;
        try {
          own = requireInternal.call(runtime, from, "@jest/expect").jestExpect;
        } catch {}
        watch = arm(environment.global, own === undefined ? null : own);
        const state = requireInternal.call(runtime, path.join(path.dirname(from), "..", "state.js"));
        state.addEventHandler((event) => {
          if (event && event.name === "test_done") watch.check("after a test");
        });
      } catch (error) {
        failure = `the tripwires could not be armed: ${String(error && error.message)}`;
      }
      return out;
    };
    return wrapped;
  };
  const results = await circus(globalConfig, config, environment, runtime, testPath, sendMessageToJest);
  const alarms = failure === null ? [] : [failure];
  if (watch !== null) {
    watch.check("after the file's tests");
    alarms.push(...watch.alarms);
  }
  results.proctorTripwires = alarms;
  return results;
};
'''


def jest_watch_args(scratch, program):
    """--testRunner: jest-circus's runner with the watch of expect around it, when jest-circus
    is found from jest's own jest-config (else nothing: no watch)."""
    circus = jest_circus_runner(program)
    if circus is None:
        return []
    path = os.path.join(scratch, JEST_WATCH_NAME)
    with open(path, "w", encoding="utf-8") as f:
        f.write(JEST_WATCH_SOURCE.replace("CIRCUS_RUNNER", json.dumps(circus), 1))
    return ["--testRunner", path]


def jest_circus_runner(program):
    """jest-circus/runner.js as jest's jest-config requires it: from jest-config's own folder
    (itself found from jest's program) upward."""
    config = _find_up(os.path.dirname(program), os.path.join("node_modules", "jest-config"))
    if config is None:
        return None
    return _find_up(config, os.path.join("node_modules", "jest-circus", "runner.js"))


def _find_up(start, relative):
    """The real path of `relative` in `start` or the nearest folder above that has it."""
    here = start
    while True:
        found = os.path.join(here, relative)
        if os.path.exists(found):
            return os.path.realpath(found)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def jest_watch_alarms(message):
    """The alarms a file's result carries (`tw` in the reporter's message)."""
    alarms = message.get("tw")
    if not isinstance(alarms, list):
        return []
    return [str(a)[:300] for a in alarms if isinstance(a, str)]
