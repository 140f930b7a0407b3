// The karma runner's fixture project (test/runners/karma.test.ts, karma-canary.test.ts): a karma
// configuration of its own, and a calculator whose division does not round and accepts zero,
// with the gold fix (floor division, zero a RangeError).

// The project's own configuration: the runner keeps its files, frameworks and preprocessors,
// and replaces its browser (Firefox is not even installed) and reporters.
export const KARMA_CONF = `module.exports = function (config) {
  config.set({
    frameworks: ['mocha'],
    files: [{ pattern: 'test/**/*.spec.js', watched: false }],
    preprocessors: { 'test/**/*.spec.js': ['esbuild'] },
    esbuild: { target: 'es2020' },
    browsers: ['Firefox'],
    reporters: ['dots'],
    client: { mocha: { grep: 'nothing at all' } },
  });
};
`;

export const CALC = `export const add = (a, b) => a + b;

// div divides a by b.
export const div = (a, b) => a / b;
`;

export const GOLD_CALC = `export const add = (a, b) => a + b;

// div divides a by b, rounding down; b = 0 is an error.
export const div = (a, b) => {
  if (b === 0) throw new RangeError('division by zero');
  return Math.floor(a / b);
};
`;
