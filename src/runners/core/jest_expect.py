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
# in the context. It wraps the test runner the project's jest runs: the one its configuration
# names (HEAD's, as the runner reads it: configured_test_runner), else jest's default,
# jest-circus from jest 27 on and jest-jasmine2 before; either is resolved from jest's own
# jest-config. Under jest-circus it is armed once circus has set up the file's globals; under
# jest-jasmine2 once its jestExpect.js has put jest's expect on the file's global (after
# jasmine's globals); both before the project's setupFilesAfterEnv and the test file load. It
# records:
#   the file's global `expect` (which must be jest's own, from jest's internal registry, that
#   the test files cannot reach), every function of expect (extend, any, objectContaining,
#   assertions, …), the matchers object and each matcher in it, the global Object and
#   Object.is, and the globals test, it and describe,
# each by its property descriptor (value, getter and setter). It checks them after each test (a
# jest-circus event handler, or a reporter added to jasmine's env, that the test files cannot
# remove) and after the file's tests; what changed goes into the file's result, which jest's
# worker hands to jest's own process after the context is done with, as `proctorTripwires`;
# the runner's reporter passes it on and the runner reports each as a tamper message. New
# matchers (jest-extended, jest-dom) are not alarms: only what existed when the record was
# taken is watched.
#
# A project is never run under another test runner than its own: when its configuration names
# any other (a custom one), or cannot be read for sure (a testRunner or preset that is not a
# plain string, `projects`), or the runner is not found, the watch stands aside, the project's
# runner runs unwatched, and the runner's stderr (the oracle log) says so and why.
#
# Not watched: code of the project's setupFiles runs before the globals are set up (the record
# takes the expect it finds; only its identity with jest's own is checked).

JEST_WATCH_NAME = "proctor-jest-runner.cjs"

JEST_WATCH_SOURCE = r'''"use strict";
const KIND = RUNNER_KIND;
const loaded = require(RUNNER_PATH);
const RUNNER = typeof loaded === "function" ? loaded : loaded.default;
const path = require("path");
// Taken now, in the worker's own realm, before any test file's context exists.
const getOwn = Object.getOwnPropertyDescriptor;
const namesOf = Object.getOwnPropertyNames;
const is = Object.is;
const MATCHERS = Symbol.for("$$jest-matchers-object");
const CIRCUS_INIT = /[\\/]jestAdapterInit\.js$/;
const JASMINE_EXPECT = /[\\/]jest-jasmine2[\\/]build[\\/]jestExpect\.js$/;

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

// jest-circus: armed once its jestAdapterInit has set up the file's globals (jest's expect
// among them), before the setupFilesAfterEnv and the test file load; checked after each test
// (an event handler of circus's state) and after the file.
async function circus(globalConfig, config, environment, runtime, testPath, sendMessageToJest) {
  let watch = null;
  let failure = null;
  const requireInternal = runtime.requireInternalModule;
  runtime.requireInternalModule = function (from, to) {
    const exported = requireInternal.apply(this, arguments);
    if (watch !== null || to !== undefined || typeof from !== "string" || !CIRCUS_INIT.test(from)) return exported;
    const initialize = exported.initialize;
    const wrapped = Object.assign({}, exported);
    wrapped.initialize = async function (options) {
      const out = await initialize.apply(this, arguments);
      try {
        watch = arm(environment.global, ownExpect(requireInternal, runtime, from));
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
  const results = await RUNNER(globalConfig, config, environment, runtime, testPath, sendMessageToJest);
  return finish(results, watch, failure);
}

// jest-jasmine2: armed once its jestExpect.js has put jest's expect on the file's global (after
// jasmine's globals, before the setupFilesAfterEnv and the test file); checked after each spec
// (a reporter added to jasmine's env: a test file can only clear its reporters all at once,
// jest's own with them, and the file's results are lost) and after the file.
async function jasmine2(globalConfig, config, environment, runtime, testPath, sendMessageToJest) {
  let watch = null;
  let failure = null;
  const requireInternal = runtime.requireInternalModule;
  runtime.requireInternalModule = function (from, to) {
    const exported = requireInternal.apply(this, arguments);
    if (watch !== null || to !== undefined || typeof from !== "string" || !JASMINE_EXPECT.test(from)) return exported;
    const install = exported.default;
    const wrapped = Object.assign({}, exported);
    wrapped.default = function () {
      const out = install.apply(this, arguments);
      try {
        watch = arm(environment.global, ownExpect(requireInternal, runtime, from));
        const jasmine = environment.global.jasmine;
        jasmine.getEnv().addReporter({ specDone: () => watch.check("after a test") });
      } catch (error) {
        failure = `the tripwires could not be armed: ${String(error && error.message)}`;
      }
      return out;
    };
    return wrapped;
  };
  const results = await RUNNER(globalConfig, config, environment, runtime, testPath, sendMessageToJest);
  return finish(results, watch, failure);
}

// jest's own expect, from jest's internal registry (jest 28 on: @jest/expect; before: expect).
function ownExpect(requireInternal, runtime, from) {
  for (const [name, key] of [["@jest/expect", "jestExpect"], ["expect", null]]) {
    try {
      const exported = requireInternal.call(runtime, from, name);
      const own = key === null ? (exported && exported.__esModule ? exported.default : exported) : exported[key];
      if (own !== undefined) return own;
    } catch {}
  }
  return null;
}

function finish(results, watch, failure) {
  const alarms = failure === null ? [] : [failure];
  if (watch !== null) {
    watch.check("after the file's tests");
    alarms.push(...watch.alarms);
  }
  results.proctorTripwires = alarms;
  return results;
}

module.exports = KIND === "jasmine2" ? jasmine2 : circus;
'''


CIRCUS_NAMES = ("circus", "jest-circus", "jest-circus/runner")
JASMINE2_NAMES = ("jasmine2", "jest-jasmine2")


def jest_watch_args(scratch, program, env):
    """--testRunner: the test runner the project's jest runs (its configuration's testRunner,
    else jest's default: jest-circus from jest 27 on, jest-jasmine2 before) with the watch of
    expect around it. Nothing, and a line on stderr saying why, when that runner is another
    (the project's own) or cannot be told for sure, or is not found from jest's own jest-config:
    the project's runner then runs unwatched, never another in its place."""
    kind, found = jest_watch_runner(program, env)
    if kind is None:
        sys.stderr.write("proctor: jest's expect watch is not armed: %s; the project's own test runner runs\n" % found)
        return []
    if kind == "jasmine2":
        # jest-runner takes jest-jasmine2 itself, past --testRunner, when JEST_JASMINE is 1.
        env.pop("JEST_JASMINE", None)
    path = os.path.join(scratch, JEST_WATCH_NAME)
    with open(path, "w", encoding="utf-8") as f:
        f.write(JEST_WATCH_SOURCE.replace("RUNNER_KIND", json.dumps(kind), 1).replace("RUNNER_PATH", json.dumps(found), 1))
    return ["--testRunner", path]


def jest_watch_runner(program, env):
    """("circus" or "jasmine2", the runner's path), or (None, why the watch stands aside)."""
    named, why = configured_test_runner()
    if why is not None:
        return None, "the jest configuration cannot be read for sure (%s)" % why
    if env.get("JEST_JASMINE") == "1":
        named = "jest-jasmine2"
    if named is None:
        version = package_version(program)
        if not version:
            return None, "jest's version is unknown, so is its default test runner"
        kind = "circus" if version >= (27,) else "jasmine2"
    elif named in CIRCUS_NAMES:
        kind = "circus"
    elif named in JASMINE2_NAMES:
        kind = "jasmine2"
    else:
        return None, "the jest configuration names its own testRunner, %s" % json.dumps(named)[:200]
    found = jest_circus_runner(program) if kind == "circus" else jest_jasmine2_runner(program)
    if found is None:
        return None, "jest-%s is not found from jest's jest-config" % kind
    return kind, found


def jest_circus_runner(program):
    """jest-circus/runner.js as jest's jest-config requires it: from jest-config's own folder
    (itself found from jest's program) upward."""
    config = _find_up(os.path.dirname(program), os.path.join("node_modules", "jest-config"))
    if config is None:
        return None
    return _find_up(config, os.path.join("node_modules", "jest-circus", "runner.js"))


def jest_jasmine2_runner(program):
    """jest-jasmine2's runner (build/index.js), found as jest-circus's is."""
    config = _find_up(os.path.dirname(program), os.path.join("node_modules", "jest-config"))
    if config is None:
        return None
    return _find_up(config, os.path.join("node_modules", "jest-jasmine2", "build", "index.js"))


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
