// ---- tripwires: chai (src/runners/core/chai_tripwires.js in Proctor) ---------------------------
//
// The same bytes are in the mocha runner (Proctor writes this part into it when it writes the
// runner into a bundle); edit src/runners/core/chai_tripwires.js, not the runner's copy.
//
// When the checkout's require finds chai, it is loaded in the test process before any test file
// or the project's --require files, and `watch(label, owner, name)` records: chai's expect,
// assert, should, use, Assertion, AssertionError and util; every function of chai.assert
// (equal, strictEqual, deepEqual, throws, ok, …) and of chai.util (flag, addMethod, …); and
// Assertion.prototype's `assert`, which every assertion of expect and should ends in, with,
// unless the checkout has a chai plugin that overwrites chai's own assertions for good reason
// (core/chai_plugins.js, included before this part), every other property of
// Assertion.prototype (equal, eql, throw, ok, …). The runner checks them with its other
// tripwires. A plugin's new assertions are not alarms: only what existed at the start is
// watched. chai 5 is an ES module, which require() cannot load before Node 20.19 and 22.12
// (ERR_REQUIRE_ESM): it is then imported, and watchChai returns the import's promise, which
// the test process awaits before mocha loads any test file; the module's namespace is the one
// every test file's `import … from 'chai'` gets, and what it exports is recorded the same way.

/** Records chai's functions now; a promise when chai must be imported first, else null. */
function watchChai(watch) {
  let resolved;
  try {
    resolved = require.resolve('chai', { paths: [process.cwd()] });
  } catch {
    return null;
  }
  try {
    watchChaiExports(watch, require(resolved));
  } catch (error) {
    if (!error || error.code !== 'ERR_REQUIRE_ESM') return null;
    const { pathToFileURL } = require('node:url');
    return import(pathToFileURL(resolved).href).then(
      (namespace) => watchChaiExports(watch, namespace),
      () => undefined,
    );
  }
  return null;
}

function watchChaiExports(watch, chai) {
  if (chai === null || typeof chai !== 'object' || typeof chai.Assertion !== 'function') return;
  for (const name of ['expect', 'assert', 'should', 'use', 'Assertion', 'AssertionError', 'util']) {
    watch(`chai.${name}`, chai, name);
  }
  for (const [label, owner] of [
    ['chai.assert', chai.assert],
    ['chai.util', chai.util],
  ]) {
    if (owner === null || (typeof owner !== 'object' && typeof owner !== 'function')) continue;
    for (const name of Object.getOwnPropertyNames(owner)) {
      const d = Object.getOwnPropertyDescriptor(owner, name);
      if (d && typeof d.value === 'function') watch(`${label}.${name}`, owner, name);
    }
  }
  const prototype = chai.Assertion.prototype;
  const names = chaiAssertionsOverwritten() ? ['assert'] : Object.getOwnPropertyNames(prototype);
  for (const name of names) watch(`chai.Assertion.prototype.${name}`, prototype, name);
}
