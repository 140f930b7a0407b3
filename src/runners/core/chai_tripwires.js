// ---- tripwires: chai (src/runners/core/chai_tripwires.js in Proctor) ---------------------------
//
// The same bytes are in the mocha runner (Proctor writes this part into it when it writes the
// runner into a bundle); edit src/runners/core/chai_tripwires.js, not the runner's copy.
//
// When the checkout's require finds chai (4 or earlier: chai 5 is an ES module, which
// require() cannot load before Node 22, and is then not watched), it is loaded in the test
// process before any test file or the project's --require files, and `watch(label, owner,
// name)` records: chai's expect, assert, should, use, Assertion, AssertionError and util; every
// function of chai.assert (equal, strictEqual, deepEqual, throws, ok, …) and of chai.util
// (flag, addMethod, …); and Assertion.prototype's `assert`, which every assertion of expect and
// should ends in, with, unless the checkout has a chai plugin that overwrites chai's own
// assertions for good reason (chai-as-promised, for `eventually`), every other property of
// Assertion.prototype (equal, eql, throw, ok, …). The runner checks them with its other
// tripwires. A plugin's new assertions are not alarms: only what existed at the start is
// watched.
const OVERWRITING_CHAI_PLUGINS = ['chai-as-promised'];

function watchChai(watch) {
  let chai = null;
  try {
    chai = require(require.resolve('chai', { paths: [process.cwd()] }));
  } catch {
    return;
  }
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
  const overwritten = OVERWRITING_CHAI_PLUGINS.some((name) => {
    try {
      require.resolve(name, { paths: [process.cwd()] });
      return true;
    } catch {
      return false;
    }
  });
  const names = overwritten ? ['assert'] : Object.getOwnPropertyNames(prototype);
  for (const name of names) watch(`chai.Assertion.prototype.${name}`, prototype, name);
}
