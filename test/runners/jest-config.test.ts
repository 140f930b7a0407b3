// Which test runner the jest runner's watch of expect wraps (src/runners/jest/run,
// configured_test_runner, and core/jest_expect.py, jest_watch_runner): the one HEAD's jest
// configuration names, else jest's default for its version; and when it cannot tell for sure,
// none (the watch stands aside, saying why). The runner's own Python functions, run on the
// host's python3 in a git checkout made for each case: pure logic, no jest runs.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runnerSource } from '../../src/runners/index.js';
import { tempDir } from '../helpers/temp.js';

let source: Buffer;

beforeAll(async () => {
  source = await runnerSource('jest');
});

/** A git checkout whose HEAD holds `files` (then `work` written over it, uncommitted). */
function checkout(files: Record<string, string>, work: Record<string, string> = {}): string {
  const dir = tempDir();
  const write = (all: Record<string, string>) => {
    for (const [path, text] of Object.entries(all)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
  };
  write(files);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd: dir,
      stdio: 'ignore',
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '--allow-empty', '-m', 'base');
  write(work);
  return dir;
}

/** jest_watch_runner's answer in `dir` for a jest of `version` with jest-circus and
 * jest-jasmine2 beside its jest-config: [kind, the runner's file or why]. */
function watchRunner(dir: string, version = '29.7.0', env: Record<string, string> = {}) {
  const modules = join(dir, 'node_modules');
  for (const [name, file] of [
    ['jest', 'package.json'],
    ['jest-config', 'package.json'],
    ['jest-circus', 'runner.js'],
    ['jest-jasmine2', 'build/index.js'],
  ] as const) {
    mkdirSync(join(modules, name, file, '..'), { recursive: true });
    writeFileSync(join(modules, name, file), name === 'jest' ? `{"version":"${version}"}` : '');
  }
  const program = join(modules, 'jest', 'bin', 'jest.js');
  const runner = join(tempDir(), 'run');
  writeFileSync(runner, source);
  const script = `
import importlib.machinery, importlib.util, json, sys
loader = importlib.machinery.SourceFileLoader("jest_runner", sys.argv[1])
spec = importlib.util.spec_from_loader("jest_runner", loader)
runner = importlib.util.module_from_spec(spec)
loader.exec_module(runner)
kind, found = runner.jest_watch_runner(sys.argv[2], json.loads(sys.argv[3]))
print(json.dumps([kind, found.replace(sys.argv[4], "ROOT") if kind else found]))
`;
  const out = execFileSync(
    'python3',
    [
      '-c',
      script,
      runner,
      program,
      JSON.stringify(env),
      execFileSync('realpath', [dir]).toString().trim(),
    ],
    { cwd: dir },
  );
  return JSON.parse(out.toString()) as [string | null, string];
}

const IMMUTABLE = `module.exports = {
  testRunner: 'jest-jasmine2', // See https://github.com/jestjs/jest/issues/9958 : jasmine-check uses jasmine and not jest-circus
  testEnvironment: 'node',
};
`;

describe("the jest runner's choice of the test runner it watches", () => {
  it("wraps jest-jasmine2 when the JS configuration names it, as immutable-js's does", () => {
    expect(watchRunner(checkout({ 'jest.config.js': IMMUTABLE }))).toEqual([
      'jasmine2',
      'ROOT/node_modules/jest-jasmine2/build/index.js',
    ]);
  });

  it('wraps jest-circus by default from jest 27 on, jest-jasmine2 before', () => {
    const dir = checkout({ 'package.json': '{"name": "x"}\n' });
    expect(watchRunner(dir, '29.7.0')[0]).toBe('circus');
    expect(watchRunner(dir, '27.0.0')[0]).toBe('circus');
    expect(watchRunner(dir, '26.6.3')[0]).toBe('jasmine2');
  });

  it("reads package.json's jest key and jest.config.json, and knows circus's other names", () => {
    const key = (runner: string) =>
      watchRunner(
        checkout({ 'package.json': JSON.stringify({ jest: { testRunner: runner } }) }),
      )[0];
    expect(key('jasmine2')).toBe('jasmine2');
    expect(key('jest-circus/runner')).toBe('circus');
    expect(key('circus')).toBe('circus');
    expect(
      watchRunner(checkout({ 'jest.config.json': '{"testRunner": "jest-jasmine2"}' }))[0],
    ).toBe('jasmine2');
  });

  it("reads HEAD's configuration, not the work tree's", () => {
    const dir = checkout(
      { 'jest.config.js': IMMUTABLE },
      { 'jest.config.js': "module.exports = { testRunner: 'jest-circus' };\n" },
    );
    expect(watchRunner(dir)[0]).toBe('jasmine2');
  });

  it("takes a preset's testRunner, read from the preset's folder", () => {
    const dir = checkout({
      'jest.config.js': "module.exports = { preset: './preset' };\n",
      'preset/jest-preset.json': '{"testRunner": "jest-jasmine2"}',
    });
    expect(watchRunner(dir)[0]).toBe('jasmine2');
  });

  it('takes jest-jasmine2 when JEST_JASMINE is 1, as jest-runner does', () => {
    expect(watchRunner(checkout({}), '29.7.0', { JEST_JASMINE: '1' })[0]).toBe('jasmine2');
  });

  it.each([
    [
      'a runner of its own',
      { 'jest.config.js': "module.exports = { testRunner: '<rootDir>/runner.js' };\n" },
      'the jest configuration names its own testRunner, "<rootDir>/runner.js"',
    ],
    [
      'a testRunner computed',
      { 'jest.config.js': "module.exports = { testRunner: require.resolve('jest-jasmine2') };\n" },
      "the jest configuration cannot be read for sure (jest.config.js's testRunner is not a plain string)",
    ],
    [
      'testRunner twice',
      {
        'jest.config.js':
          "const testRunner = 'jest-circus';\nmodule.exports = { testRunner: 'jest-jasmine2' };\n",
      },
      'the jest configuration cannot be read for sure (jest.config.js names testRunner more than once)',
    ],
    [
      'projects',
      { 'jest.config.js': "module.exports = { projects: ['<rootDir>/a'] };\n" },
      'the jest configuration cannot be read for sure (jest.config.js names projects, each with its own configuration)',
    ],
    [
      'a JSON configuration that does not parse',
      { 'jest.config.json': '{"testRunner": ' },
      'the jest configuration cannot be read for sure (jest.config.json does not parse)',
    ],
    [
      'a jest key that is not an object',
      { 'package.json': '{"jest": "./config.js"}' },
      "the jest configuration cannot be read for sure (package.json's jest key is not an object)",
    ],
    [
      'a preset that is not there',
      { 'package.json': '{"jest": {"preset": "ts-jest"}}' },
      'the jest configuration cannot be read for sure (the preset ts-jest is not found)',
    ],
  ])('stands aside for %s, saying why', (_, files, why) => {
    expect(watchRunner(checkout(files))).toEqual([null, why]);
  });

  it("stands aside when jest's version is unknown", () => {
    expect(watchRunner(checkout({}), 'unknown')).toEqual([
      null,
      "jest's version is unknown, so is its default test runner",
    ]);
  });
});
