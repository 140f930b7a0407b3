// The command line's contract for bad input: a usage error is one line on stderr naming the
// problem (plus at most `see: proctor COMMAND --help`), exit 2, at once; numbers are parsed by
// the one strict parser and their messages name the real limits; a home on a pseudo-filesystem
// is refused before anything tries to create it.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor, proctorBounded, type CliResult } from '../helpers/cli.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir, tempStore } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');

/** Exit 2, nothing on stdout, and stderr one line (plus the `see:` line when `see` is given). */
function usageError(result: CliResult, first: string | RegExp, see?: string) {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines[0]).toMatch(typeof first === 'string' ? new RegExp(escape(first)) : first);
  expect(lines[0]).toMatch(/^proctor: /);
  if (see === undefined) expect(lines).toHaveLength(1);
  else expect(lines).toEqual([lines[0], `see: ${see}`]);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('usage errors', () => {
  it.each([
    [['frobnicate'], "unknown command 'frobnicate'", 'proctor --help'],
    [['status', '--bogus'], "unknown option '--bogus'", 'proctor status --help'],
    [
      ['status', '--limit', '0'],
      '--limit: expected an integer from 1 to 200',
      'proctor status --help',
    ],
    [['grade', TASK], 'give exactly one of --patch and --predictions', 'proctor grade --help'],
    [
      ['grade', TASK, '--patch', 'a', '--predictions', 'b'],
      'give exactly one of --patch and --predictions',
      'proctor grade --help',
    ],
    [['baseline'], "missing required argument 'paths'", 'proctor baseline --help'],
    [
      ['solve', TASK, '--solver', 'mini', '--attempts', '0'],
      '--attempts: expected an integer from 1 to 100',
      'proctor solve --help',
    ],
  ])('proctor %j is one line and a pointer to help, exit 2', async (args, first, see) => {
    usageError(await proctor(['--home', tempDir(), ...args]), first, see);
  });

  it('prints help on stderr and exits 2 when given no command', async () => {
    const result = await proctor([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Usage: proctor');
  });

  it('prints help on stdout and exits 0 when asked for it', async () => {
    for (const args of [['--help'], ['status', '--help'], ['help', 'grade']]) {
      const result = await proctor(args);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Usage: proctor');
      expect(result.stderr).toBe('');
    }
  });

  it("lists derive's runner-dependent defaults in its help, from the globs it uses", async () => {
    const { DEFAULT_TEST_GLOBS } = await import('../../src/derive/split.js');
    const help = (await proctor(['derive', '--help'])).stdout.replace(/\s+/g, ' ');
    for (const glob of DEFAULT_TEST_GLOBS.pytest) expect(help).toContain(glob);
    expect(help).toMatch(/--exclude <glob\.\.\.> files left out .*\(default: changelogs/);
    expect(help).toMatch(/--scope <path\.\.\.> .*\(default: pytest: every test_\*\.py/);
    expect(help).toMatch(/--repeat <n> .*\(default: 2\)/);
    expect(help).toMatch(/--runner <name> .*\(default: "pytest"\)/);
  });

  it('exits 2 for the status of a job that does not exist, after showing the ones that do', async () => {
    const dir = tempDir();
    const store = tempStore({ path: join(dir, 'proctor.db') });
    const { jobIds } = await store.enqueueBatch({ jobs: [{ kind: 'noop', payload: {} }] });
    usageError(await proctor(['--home', dir, 'status', '999']), 'proctor: no job 999');
    const mixed = await proctor(['--home', dir, 'status', String(jobIds[0]), '999']);
    expect(mixed.code).toBe(2);
    expect(mixed.stdout).toMatch(new RegExp(`^${jobIds[0]}\\s+noop\\s+queued`, 'm'));
    expect(mixed.stderr).toBe('proctor: no job 999\n');
    const json = await proctor(['--home', dir, 'status', '999', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ jobs: [], missing: [999] });
  });
});

describe('numbers on the command line', () => {
  it('refuses a job id beyond 2^53 instead of answering about another job', async () => {
    const dir = tempDir();
    const store = tempStore({ path: join(dir, 'proctor.db') });
    await store.enqueueBatch({ jobs: [{ kind: 'noop', payload: {} }] });
    for (const command of ['status', 'cancel']) {
      const result = await proctor(['--home', dir, command, '9007199254740993']);
      usageError(
        result,
        'proctor: job id: expected an integer from 1 to 9007199254740991, got `9007199254740993`',
        `proctor ${command} --help`,
      );
      expect(result.stderr).not.toContain('9007199254740992');
    }
  });

  it.each([
    [['status', '1e3'], 'job id: expected an integer from 1 to 9007199254740991 in decimal digits'],
    [
      ['cancel', '0x10'],
      'job id: expected an integer from 1 to 9007199254740991 in decimal digits',
    ],
    [
      ['status', '007'],
      'job id: expected an integer from 1 to 9007199254740991 without leading zeros',
    ],
    [['status', '0'], 'job id: expected an integer from 1 to 9007199254740991, got `0`'],
    [['status', '--limit', '1e2'], '--limit: expected an integer from 1 to 200 in decimal digits'],
    [['status', '--limit', '201'], '--limit: expected an integer from 1 to 200, got `201`'],
    [
      ['baseline', TASK, '--repeat', '1e308'],
      '--repeat: expected an integer from 1 to 20 in decimal digits, got `1e308`',
    ],
    [
      ['baseline', TASK, '--repeat', '1' + '0'.repeat(308)],
      '--repeat: expected an integer from 1 to 20, got',
    ],
    [
      ['solve', TASK, '--solver', 'x', '--timeout', '1e3'],
      '--timeout: expected an integer from 1 to 86400',
    ],
    [['serve', '--port', '0x10'], '--port: expected an integer from 0 to 65535'],
    [['worker', '--grace', '-1'], '--grace: expected an integer from 0 to 86400'],
    [['serve', '--grace', '9007199254740993'], '--grace: expected an integer from 0 to 86400, got'],
  ])('proctor %j names the real limit, exit 2', async (args, first) => {
    const result = await proctor(['--home', tempDir(), ...args]);
    usageError(result, `proctor: ${first}`, `proctor ${args[0]} --help`);
    expect(result.stderr).not.toContain('9007199254740991`');
    if (!args.includes('status') && !args.includes('cancel'))
      expect(result.stderr).not.toContain('9007199254740991');
  });
});

describe('a home on a pseudo-filesystem', () => {
  // Node's recursive mkdir loops forever under /proc: each test runs the real binary with a
  // kill timeout, so that old behaviour fails the test instead of hanging it.
  it.each([
    '/proc/1/nonexist',
    '/proc/self/x/y',
    '/sys/nonexist/x',
    '/dev/shm/proctor-home',
    '/dev/null',
  ])(
    'refuses --home %s with one line, exit 2, at once',
    async (home) => {
      const result = await proctorBounded(['--home', home, 'status'], { timeoutMs: 15_000 });
      expect(result.signal).toBeNull();
      usageError(result, `proctor: home ${home}`);
      expect(result.stderr).toMatch(/\/proc|\/sys|\/dev/);
      expect(result.ms).toBeLessThan(10_000);
    },
    20_000,
  );

  it('refuses a home reached through a symlink into /proc, and one given by PROCTOR_HOME', async () => {
    const link = join(tempDir(), 'link');
    symlinkSync('/proc/1', link);
    const through = await proctorBounded(['--home', join(link, 'nonexist'), 'status'], {
      timeoutMs: 15_000,
    });
    expect(through.signal).toBeNull();
    usageError(through, /^proctor: home .*link\/nonexist: .*\/proc/);
    const env = await proctorBounded(['status'], {
      timeoutMs: 15_000,
      env: { PROCTOR_HOME: '/proc/1/nonexist' },
    });
    expect(env.signal).toBeNull();
    usageError(env, 'proctor: home /proc/1/nonexist');
  }, 40_000);

  it('refuses a home whose nearest existing parent is not a directory', async () => {
    const file = join(tempDir(), 'file');
    writeFileSync(file, '');
    usageError(
      await proctor(['--home', join(file, 'a', 'b'), 'status']),
      /^proctor: home .*file\/a\/b: .*not a directory/,
    );
  });

  it('still creates a new home, parents included, on a regular filesystem', async () => {
    const parent = tempDir();
    mkdirSync(join(parent, 'exists'));
    const result = await proctor(['--home', join(parent, 'exists', 'new', 'home'), 'status']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('jobs: 0 queued');
  });
});
