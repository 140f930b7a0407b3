// ---- chai's plugins (src/runners/core/chai_plugins.js in Proctor) ------------------------------
//
// The same bytes are in the mocha and karma runners (Proctor writes this part into each when it
// writes the runner into a bundle); edit src/runners/core/chai_plugins.js, not a runner's copy.
//
// A chai plugin that overwrites chai's own assertions for good reason (chai-as-promised, for
// `eventually`): where the checkout has one, the chai tripwires watch Assertion.prototype's
// `assert` alone (which every assertion ends in), not every property of Assertion.prototype.
const OVERWRITING_CHAI_PLUGINS = ['chai-as-promised'];

/** Whether the checkout's require finds a chai plugin that overwrites chai's assertions. */
function chaiAssertionsOverwritten() {
  return OVERWRITING_CHAI_PLUGINS.some((name) => {
    try {
      require.resolve(name, { paths: [process.cwd()] });
      return true;
    } catch {
      return false;
    }
  });
}
