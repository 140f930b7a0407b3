// writeRunner: the built-in runners written into a bundle's tests/ folder as plain files; the
// examples that hold copies of them.
import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUILTIN_RUNNERS,
  isBuiltinRunner,
  RUNNER_CORE,
  RUNNER_PARTS,
  RUNNER_TEXT_PARTS,
  codeLoader,
  pythonStringLiteral,
  runnerSource,
  writeRunner,
} from '../../src/runners/index.js';
import { runnerCachesCode } from '../../src/oracle/protocol.js';
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

describe('the loader the Python runners hand to their test process', () => {
  it.each(BUILTIN_RUNNERS)(
    'is in the %s runner as one string of core/loader.py, when the runner caches its code',
    async (name) => {
      const loader = codeLoader();
      const source = (await runnerSource(name)).toString('utf8');
      expect(source).not.toContain('# proctor-include-text:');
      const lines = source.split('\n').filter((line) => line.startsWith('CODE_LOADER = '));
      const parts = RUNNER_TEXT_PARTS[name];
      expect(parts).toEqual(
        name === 'pytest' || name === 'django' || name === 'sympy' ? ['core/loader.py'] : [],
      );
      expect(lines).toHaveLength(parts.length);
      expect(runnerCachesCode(Buffer.from(source))).toBe(parts.length > 0);
      for (const line of lines) {
        // A JSON string, read as Python reads it: only ASCII, only escapes the two share.
        const literal = line.slice('CODE_LOADER = '.length);
        expect(literal).toMatch(
          /^"(?:[\x20-\x21\x23-\x5b\x5d-\x7e]|\\["\\nrtbf]|\\u[0-9a-f]{4})*"$/,
        );
        expect(JSON.parse(literal)).toBe(loader);
      }
    },
  );

  it('writes a Python string of any text, escapes and all', () => {
    expect(pythonStringLiteral('a "b" \\ \n\t é ☃\0')).toBe(
      '"a \\"b\\" \\\\ \\n\\t \\u00e9 \\u2603\\u0000"',
    );
    expect(pythonStringLiteral('😀')).toBe('"\\U0001f600"');
  });
});

describe('the shared core', () => {
  const read = (path: string) =>
    readFileSync(new URL(`../../src/runners/${path}`, import.meta.url), 'utf8');
  // The functions and classes a Python text defines at its top level (a JavaScript class, as
  // `class Collector {`, is not one).
  const definitions = (text: string) =>
    [...text.matchAll(/^(?:def ([A-Za-z_]\w*)\(|class ([A-Za-z_]\w*)[(:])/gm)].map(
      (m) => (m[1] ?? m[2])!,
    );
  // The same for JavaScript: its top-level functions, classes and constants.
  const jsDefinitions = (text: string) =>
    [
      ...text.matchAll(
        /^(?:(?:async )?function ([A-Za-z_$][\w$]*)|class ([A-Za-z_$][\w$]*) |const ([A-Za-z_$][\w$]*) =)/gm,
      ),
    ].map((m) => (m[1] ?? m[2] ?? m[3])!);
  const definedIn = (part: string) => (/\.c?js$/.test(part) ? jsDefinitions : definitions);

  it.each(BUILTIN_RUNNERS)(
    'is in the %s runner as the same bytes, once each, through its include lines only',
    async (name) => {
      const own = read(`${name}/run`);
      const includes = [...own.matchAll(/^(?:#|\/\/) proctor-include: (\S+)$/gm)].map((m) => m[1]);
      expect(includes).toEqual([...RUNNER_PARTS[name]]);
      const source = (await runnerSource(name)).toString('utf8');
      expect(source).not.toContain('# proctor-include:');
      for (const part of RUNNER_CORE) {
        const copies = source.split(read(part)).length - 1;
        expect(copies, `${part} in the ${name} runner`).toBe(
          RUNNER_PARTS[name].includes(part) ? 1 : 0,
        );
      }
    },
  );

  // A runner that includes a part defines none of its names itself; one that does not include
  // it may name its own dialect's function the same (each defines its own sentinel_plan).
  it.each(BUILTIN_RUNNERS)(
    'leaves the %s runner no private copy of a function or class of the core it includes',
    async (name) => {
      const text = (await runnerSource(name)).toString('utf8');
      for (const part of RUNNER_PARTS[name]) {
        const own = definedIn(part)(read(`${name}/run`));
        const written = definedIn(part)(text);
        const names = definedIn(part)(read(part));
        expect(names.length, part).toBeGreaterThan(0);
        for (const defined of names) {
          expect(own, `${name} defines ${defined} of ${part} itself`).not.toContain(defined);
          const times = written.filter((d) => d === defined).length;
          expect(times, `${defined} of ${part} in the ${name} runner`).toBe(1);
        }
      }
    },
  );

  it('finds a private copy of a core function in a runner that has one', () => {
    const copy = `${read('go/run')}\ndef read_ids(path):\n    return []\n`;
    const own = definitions(copy);
    expect(definitions(read('core/protocol.py')).filter((d) => own.includes(d))).toEqual([
      'read_ids',
    ]);
    const jsCopy = `${read('mocha/run')}\nfunction readIds(list) {\n  return [];\n}\n`;
    const jsOwn = jsDefinitions(jsCopy);
    expect(jsDefinitions(read('core/protocol.cjs')).filter((d) => jsOwn.includes(d))).toEqual([
      'readIds',
    ]);
  });

  it('is the run protocol in every runner written in Python, and in no shell script', async () => {
    for (const name of BUILTIN_RUNNERS) {
      const python = (await runnerSource(name))
        .toString('utf8')
        .startsWith('#!/usr/bin/env python3');
      expect(RUNNER_PARTS[name].includes('core/protocol.py'), name).toBe(python);
    }
  });

  it('names every part of src/runners/core/ and only those', () => {
    const folder = new URL('../../src/runners/core/', import.meta.url);
    expect(readdirSync(folder).sort()).toEqual(
      RUNNER_CORE.map((p) => p.slice('core/'.length)).sort(),
    );
  });
});
