// writeRunner: the built-in runners written into a bundle's tests/ folder as plain files; the
// examples that hold copies of them.
import { readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUILTIN_RUNNERS,
  RUNNER_CORE,
  isBuiltinRunner,
  runnerSource,
  writeRunner,
} from '../../src/runners/index.js';
import { tempDir } from '../helpers/temp.js';

describe('writeRunner', () => {
  it.each(BUILTIN_RUNNERS)('writes the %s runner as one executable tests/run', async (name) => {
    const tests = join(tempDir(), 'bundle', 'tests');
    expect(await writeRunner(name, tests)).toEqual(['run']);
    const run = join(tests, 'run');
    expect(statSync(run).mode & 0o777).toBe(0o755);
    const text = readFileSync(run, 'utf8');
    expect(Buffer.from(text)).toEqual(await runnerSource(name));
    expect(text.startsWith('#!')).toBe(true);
  });

  it('replaces a runner already there, and makes it executable', async () => {
    const tests = join(tempDir(), 'tests');
    mkdirSync(tests);
    writeFileSync(join(tests, 'run'), 'old', { mode: 0o600 });
    await writeRunner('node', tests);
    expect(readFileSync(join(tests, 'run'))).toEqual(await runnerSource('node'));
    expect(statSync(join(tests, 'run')).mode & 0o777).toBe(0o755);
  });

  it('knows its runner names and nothing else', () => {
    expect(BUILTIN_RUNNERS.filter(isBuiltinRunner)).toEqual([
      'pytest',
      'node',
      'sympy',
      'django',
      'cargo',
      'go',
      'jest',
      'vitest',
      'mocha',
      'karma',
      'junit',
      'ctest',
    ]);
    expect(isBuiltinRunner('rspec')).toBe(false);
    expect(isBuiltinRunner('run')).toBe(false);
  });
});

describe('the examples', () => {
  it.each([
    ['py-duration-parse', 'pytest'],
    ['node-version-compare', 'node'],
    ['go-text-ellipsis', 'go'],
    ['rust-ini-values', 'cargo'],
    ['js-slug-accents', 'mocha'],
    ['java-roman-numerals', 'junit'],
    ['cpp-csv-split', 'ctest'],
  ] as const)(
    '%s holds the built-in %s runner as it is today (copy it again after changing the runner)',
    async (example, name) => {
      const root = new URL('../../examples/', import.meta.url).pathname;
      expect(readFileSync(join(root, example, 'tests/run'))).toEqual(await runnerSource(name));
    },
  );

  // The instructions of a Dockerfile without its comments, a continued line as one.
  const instructions = (path: string) =>
    readFileSync(path, 'utf8')
      .replace(/\\\n/g, '')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));

  it.each([
    ['go-text-ellipsis', 'go'],
    ['rust-ini-values', 'cargo'],
    ['cpp-csv-split', 'ctest'],
  ])(
    "%s's image begins with the instructions of the %s runner's test image, so the two share their layers",
    (example, name) => {
      const root = new URL('../../', import.meta.url).pathname;
      const fixture = instructions(join(root, 'test/fixtures/images', name, 'Dockerfile'));
      const own = instructions(join(root, 'examples', example, 'environment/Dockerfile'));
      expect(fixture.length).toBeGreaterThanOrEqual(2);
      expect(own.slice(0, fixture.length)).toEqual(fixture);
      expect(own[fixture.length]).toBe('COPY repo/ /repo/');
    },
  );
});

describe('the shared tripwires', () => {
  it.each(['pytest', 'django', 'sympy'] as const)(
    'are in the %s runner as the same bytes, once, and only through the include line',
    async (name) => {
      const core = readFileSync(
        new URL('../../src/runners/core/tripwires.py', import.meta.url),
        'utf8',
      );
      const source = (await runnerSource(name)).toString('utf8');
      expect(source.split(core)).toHaveLength(2);
      const own = readFileSync(new URL(`../../src/runners/${name}/run`, import.meta.url), 'utf8');
      expect(own).toContain('# proctor-include: core/tripwires.py\n');
      expect(own).not.toContain('class _ImportWatch');
      expect(own).not.toContain('def _code_key(');
    },
  );
});

describe("the JavaScript runners' assertion watches", () => {
  it.each([
    ['jest', 'core/jest_expect.py'],
    ['vitest', 'core/vitest_expect.py'],
    ['mocha', 'core/chai_tripwires.js'],
  ] as const)(
    'are in the %s runner as the same bytes as %s, once, and only through the include line',
    async (name, part) => {
      expect(RUNNER_CORE).toContain(part);
      const core = readFileSync(new URL(`../../src/runners/${part}`, import.meta.url), 'utf8');
      const source = (await runnerSource(name)).toString('utf8');
      expect(source.split(core)).toHaveLength(2);
      expect(source).not.toContain('# proctor-include:');
      const own = readFileSync(new URL(`../../src/runners/${name}/run`, import.meta.url), 'utf8');
      expect(own).toContain(`# proctor-include: ${part}\n`);
      expect(own.split('\n').filter((line) => line.startsWith('# proctor-include:'))).toHaveLength(
        1,
      );
    },
  );
});
