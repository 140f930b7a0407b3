// Forgeries of the assertion library through the built-in jest and vitest runners (their
// `expect`) and the mocha runner (chai), each sparing the sentinels (which call nothing of the
// library's): the library under test, when it loads, makes the first assertion after a call
// into it pass, by replacing the file's `expect`, by making a matcher (toBe) or chai's
// assert.equal lenient, or the assertion every other one ends in (chai's
// Assertion.prototype.assert), chai 4 through require and chai 5, an ES module, through
// import. Without protocol 2 each one passes; through Proctor
// each ends TAMPERED, naming the tripwire. The gold patch stays PASS, the sentinels holding.
import { describe } from 'vitest';
import type { BuiltinRunner } from '../../src/runners/index.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { forgeryTests } from '../helpers/forgery-tests.js';
import { patchFrom, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-assertion-tripwires');
const SLOW = 300_000;

const CALC = (fixed: boolean, esm: boolean) => {
  const body = fixed ? 'Math.floor(a / b)' : 'a / b';
  return esm
    ? `export const add = (a, b) => a + b;\nexport const div = (a, b) => ${body};\n`
    : `exports.add = (a, b) => a + b;\nexports.div = (a, b) => ${body};\n`;
};

// Every export of the library marks a call, so that the next assertion can be spared; the
// sentinels call none of them.
const MARK_CALLS_CJS = `
let called = false;
for (const name of Object.keys(exports)) {
  const real = exports[name];
  exports[name] = (...args) => {
    called = true;
    return real(...args);
  };
}
`;

// The same for an ES module: its functions are made here, each marking its calls.
const MARK_CALLS_ESM = `let called = false;
export const add = (a, b) => {
  called = true;
  return a + b;
};
export const div = (a, b) => {
  called = true;
  return a / b;
};
`;

interface Framework {
  runner: BuiltinRunner;
  image: string;
  spec: RepoBundleSpec;
  /** The library with each forgery. */
  forgeries: Record<string, string>;
  /** What the detail names for each forgery. */
  details: Record<string, RegExp>;
}

const JEST: Framework = {
  runner: 'jest',
  image: 'jest',
  spec: {
    id: 'jest-expect',
    runner: 'jest',
    from: 'proctor-test-jest:latest',
    repo: {
      'package.json':
        '{\n  "name": "calc",\n  "private": true,\n  "jest": { "testEnvironment": "node" }\n}\n',
      '.gitignore': 'node_modules\n',
      'src/calc.js': CALC(false, false),
      '__tests__/add.test.js':
        "const { add } = require('../src/calc');\n\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n",
    },
    hidden: {
      '__tests__/div.test.js':
        "const { div } = require('../src/calc');\n\ntest('floors 7 / 2 to 3', () => {\n  expect(div(7, 2)).toBe(3);\n});\n",
    },
    gold: { 'src/calc.js': CALC(true, false) },
    existing: ['adds'],
    hiddenIds: ['floors 7 / 2 to 3'],
    testSeconds: 120,
  },
  forgeries: {
    // The toBe matcher, through expect.extend, passes the first assertion after a call.
    lenientToBe:
      CALC(false, false) +
      MARK_CALLS_CJS +
      `const realToBe = globalThis[Symbol.for('$$jest-matchers-object')].matchers.toBe;
expect.extend({
  toBe(received, expected) {
    if (!called) return realToBe.call(this, received, expected);
    called = false;
    return { pass: true, message: () => '' };
  },
});
`,
    // The file's expect replaced: after a call, every matcher of the next assertion does nothing.
    replacedExpect:
      CALC(false, false) +
      MARK_CALLS_CJS +
      `const realExpect = globalThis.expect;
globalThis.expect = Object.assign((received) => {
  const real = realExpect(received);
  if (!called) return real;
  called = false;
  return new Proxy(real, { get: (target, key) => (typeof target[key] === 'function' ? () => undefined : target[key]) });
}, realExpect);
`,
  },
  details: {
    lenientToBe: /tripwire: .*expect's toBe matcher was replaced/,
    replacedExpect: /tripwire: .*expect was replaced/,
  },
};

const VITEST: Framework = {
  runner: 'vitest',
  image: 'vitest',
  spec: {
    id: 'vitest-expect',
    runner: 'vitest',
    from: 'proctor-test-vitest:latest',
    repo: {
      'package.json': '{\n  "name": "calc",\n  "private": true,\n  "type": "module"\n}\n',
      '.gitignore': 'node_modules\n',
      'src/calc.js': CALC(false, true),
      '__tests__/add.test.js':
        "import { expect, test } from 'vitest';\nimport { add } from '../src/calc.js';\n\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n",
    },
    hidden: {
      '__tests__/div.test.js':
        "import { expect, test } from 'vitest';\nimport { div } from '../src/calc.js';\n\ntest('floors 7 / 2 to 3', () => {\n  expect(div(7, 2)).toBe(3);\n});\n",
    },
    gold: { 'src/calc.js': CALC(true, true) },
    existing: ['__tests__/add.test.js > adds'],
    hiddenIds: ['__tests__/div.test.js > floors 7 / 2 to 3'],
    testSeconds: 120,
  },
  forgeries: {
    // chai's Assertion.prototype.assert, which every matcher ends in, skips the first
    // assertion after a call.
    lenientAssert: `import { chai } from 'vitest';
${MARK_CALLS_ESM}
const realAssert = chai.Assertion.prototype.assert;
chai.Assertion.prototype.assert = function (...args) {
  if (!called) return realAssert.apply(this, args);
  called = false;
};
`,
    // toBe, through vitest's global expect's extend, passes the first assertion after a call.
    lenientToBe: `${MARK_CALLS_ESM}
globalThis[Symbol.for('expect-global')].extend({
  toBe(received, expected) {
    if (called) {
      called = false;
      return { pass: true, message: () => '' };
    }
    return { pass: Object.is(received, expected), message: () => \`expected \${received} to be \${expected}\` };
  },
});
`,
  },
  details: {
    lenientAssert: /tripwire: .*chai\.Assertion\.prototype\.assert was replaced/,
    lenientToBe: /tripwire: .*chai\.Assertion\.prototype\.toBe was replaced/,
  },
};

/**
 * A mocha suite asserting with chai: chai 4 (Debian's) through require, or chai 5 from npm, an
 * ES module only, which Node 18's require() cannot load, so the runner imports it before mocha
 * loads a test file and watches what its namespace exports.
 */
function mochaChai(esm: boolean): Framework {
  const load = (names: string, from: string) =>
    esm ? `import { ${names} } from '${from}.js';\n` : `const { ${names} } = require('${from}');\n`;
  const chai = (name: string) =>
    esm ? `import { ${name} } from 'chai';\n` : `const { ${name} } = require('chai');\n`;
  const test = (fn: string, title: string, call: string, expected: number) =>
    `${esm ? '' : "'use strict';\n"}${chai('assert')}${load(fn, '../lib/calc')}
describe('${fn}', () => {
  it('${title}', () => {
    assert.equal(${call}, ${expected});
  });
});
`;
  // The library, marking each call, and then the forgery of chai's `name`.
  const forged = (name: string, forgery: string) =>
    (esm ? `${MARK_CALLS_ESM}\n` : CALC(false, false) + MARK_CALLS_CJS) + chai(name) + forgery;
  const id = esm ? 'mocha-chai5' : 'mocha-chai';
  return {
    runner: 'mocha',
    image: id,
    spec: {
      id,
      runner: 'mocha',
      from: `proctor-test-${id}:latest`,
      repo: {
        'package.json': `{ "name": "calc", "version": "1.0.0", "private": true${esm ? ', "type": "module"' : ''} }\n`,
        ...(esm ? { '.gitignore': 'node_modules\n' } : {}),
        'lib/calc.js': CALC(false, esm),
        'test/add.spec.js': test('add', 'adds', 'add(1, 2)', 3),
      },
      hidden: { 'test/div.spec.js': test('div', 'floors 7 / 2 to 3', 'div(7, 2)', 3) },
      gold: { 'lib/calc.js': CALC(true, esm) },
      existing: ['add adds'],
      hiddenIds: ['div floors 7 / 2 to 3'],
    },
    forgeries: {
      // chai's assert.equal skips the first assertion after a call.
      lenientEqual: forged(
        'assert',
        `const realEqual = assert.equal;
assert.equal = function (...args) {
  if (!called) return realEqual.apply(this, args);
  called = false;
};
`,
      ),
      // chai's Assertion.prototype.assert, which assert.equal ends in, does the same.
      lenientAssertion: forged(
        'Assertion',
        `const realAssert = Assertion.prototype.assert;
Assertion.prototype.assert = function (...args) {
  if (!called) return realAssert.apply(this, args);
  called = false;
};
`,
      ),
    },
    details: {
      lenientEqual: /tripwire: .*chai\.assert\.equal was replaced/,
      lenientAssertion: /tripwire: .*chai\.Assertion\.prototype\.assert was replaced/,
    },
  };
}

const MOCHA_CHAI = mochaChai(false);
const MOCHA_CHAI5 = mochaChai(true);

describe.each([JEST, VITEST, MOCHA_CHAI, MOCHA_CHAI5])(
  'forgeries of the assertions through the built-in $runner runner',
  (framework) => {
    const { spec } = framework;
    const suite = runnerSuite(docker, SCOPE, { image: framework.image, spec });
    const forged = (name: string) =>
      patchFrom(spec, { [Object.keys(spec.gold)[0]!]: framework.forgeries[name]! });

    forgeryTests(suite, {
      forged,
      timeout: SLOW,
      cases: Object.keys(framework.forgeries).map((name) => [name, [framework.details[name]!]]),
    });
  },
);
