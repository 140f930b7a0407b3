// When the junit runner starts Maven (src/runners/junit/run, build_maven and
// maven_cannot_resolve): not where it is sure to fail offline (the default local repository
// holds no maven-dependency-plugin, and nothing could name another one), and always where it
// may build: the plugin there, or a repository named by a settings file (the user's or Maven's
// own, outside a comment), MAVEN_OPTS, MAVEN_ARGS or the project's .mvn/. The runner's own
// Python function, run on the host's python3 with a stand-in `mvn` on PATH that logs its start
// and fails, as Maven does offline without its plugins: the choice is what is tested, not Maven.
// Then the JVM options of javac and Maven, with a stand-in javac that logs its calls (and may
// refuse the JIT options, as a JVM that is not HotSpot would, or fail to compile).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runnerSource } from '../../src/runners/index.js';
import { tempDir } from '../helpers/temp.js';

let source: Buffer;

beforeAll(async () => {
  source = await runnerSource('junit');
});

const SCRIPT = `
import importlib.machinery, importlib.util, os, sys
loader = importlib.machinery.SourceFileLoader("junit_runner", sys.argv[1])
spec = importlib.util.spec_from_loader("junit_runner", loader)
runner = importlib.util.module_from_spec(spec)
loader.exec_module(runner)
print(runner.build_maven(sys.argv[2], sys.argv[3]))
`;

interface Case {
  /** Files under the user's home, the project and Maven's home, by path. */
  home?: Record<string, string>;
  project?: Record<string, string>;
  maven?: Record<string, string>;
  env?: Record<string, string>;
}

/**
 * build_maven on the module `module` (default: the project's top) of a project with a pom.xml,
 * run with a stand-in `mvn` that logs where it ran and with what, then fails: whether Maven was
 * started, what the runner said, and Maven's folder (from the project's top), arguments and
 * MAVEN_OPTS.
 */
function build(
  spec: Case,
  module = '',
): { started: boolean; stderr: string; cwd: string; args: string[]; opts: string } {
  const root = tempDir();
  const write = (dir: string, files: Record<string, string> = {}) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
  };
  const [home, project, maven, scratch] = ['home', 'project', 'maven', 'scratch'].map((d) => {
    mkdirSync(join(root, d));
    return join(root, d);
  }) as [string, string, string, string];
  write(home, spec.home);
  write(project, { 'pom.xml': '<project/>\n', ...spec.project });
  write(maven, spec.maven);
  const runner = join(root, 'run');
  writeFileSync(runner, source);
  const log = join(root, 'mvn-log');
  write(maven, {
    'bin/mvn': `#!/bin/sh\npwd > '${log}'\necho "$*" >> '${log}'\necho "$MAVEN_OPTS" >> '${log}'\nexit 1\n`,
  });
  chmodSync(join(maven, 'bin', 'mvn'), 0o755);
  const result = spawnSync('python3', ['-c', SCRIPT, runner, module, scratch], {
    cwd: project,
    env: { PATH: `${join(maven, 'bin')}:/usr/bin:/bin`, HOME: home, ...spec.env },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  // Maven failed (the stand-in exits 1), or was not started: no classpath either way.
  expect(result.stdout.trim()).toBe('None');
  const started = existsSync(log);
  const [cwd = '', args = '', opts = ''] = started ? readFileSync(log, 'utf8').split('\n') : [];
  return {
    started,
    stderr: result.stderr,
    cwd: relative(project, cwd),
    args: args.split(' '),
    opts,
  };
}

const PLUGIN = '.m2/repository/org/apache/maven/plugins/maven-dependency-plugin/3.6.1/x.pom';
const NOT_HERE =
  /Maven cannot build offline here \(no maven-dependency-plugin in .*\.m2\/repository\); the tests are built with javac/;
const TRIED = /Maven could not build offline; the tests are built with javac/;

describe("the junit runner's choice to start Maven", () => {
  it('does not start it where the default repository has no maven-dependency-plugin, and says so', () => {
    // Debian's settings.xml names a localRepository inside a comment only.
    const debian =
      '<settings>\n  <!-- localRepository\n  <localRepository>/path/to/local/repo</localRepository>\n  -->\n</settings>\n';
    for (const spec of [
      {},
      { maven: { 'conf/settings.xml': debian } },
      { home: { '.m2/repository/org/x/y.jar': '' } },
    ]) {
      const { started, stderr } = build(spec);
      expect(started).toBe(false);
      expect(stderr).toMatch(NOT_HERE);
    }
  });

  it('starts it where the plugin is in the repository, or anything could name another repository', () => {
    const named = '<settings><localRepository>/srv/m2</localRepository></settings>\n';
    const cases: Case[] = [
      { home: { [PLUGIN]: '' } },
      { home: { '.m2/settings.xml': named } },
      { maven: { 'conf/settings.xml': named } },
      { env: { MAVEN_OPTS: '-Dmaven.repo.local=/srv/m2' } },
      { env: { MAVEN_ARGS: '-Dmaven.repo.local=/srv/m2' } },
      { project: { '.mvn/maven.config': '-Dmaven.repo.local=/srv/m2\n' } },
      { project: { '.mvn/jvm.config': '-Xmx1g\n' } },
    ];
    for (const spec of cases) {
      const { started, stderr } = build(spec);
      expect(started, JSON.stringify(spec)).toBe(true);
      expect(stderr).toMatch(TRIED);
      expect(stderr).not.toMatch(NOT_HERE);
    }
  });

  it("gives Maven's JVM javac's options, after the user's, unless MAVEN_OPTS picks a collector or the JIT's tiers", () => {
    const start = (env: Record<string, string>) => build({ home: { [PLUGIN]: '' }, env }).opts;
    expect(start({})).toBe('-XX:TieredStopAtLevel=1 -XX:+UseSerialGC');
    expect(start({ MAVEN_OPTS: '-Xmx2g' })).toBe('-Xmx2g -XX:TieredStopAtLevel=1 -XX:+UseSerialGC');
    for (const own of ['-XX:+UseG1GC -Xmx2g', '-XX:-TieredCompilation', '-XX:+UseParallelGC'])
      expect(start({ MAVEN_OPTS: own })).toBe(own);
  });
});

/**
 * The runner's javac calls with a stand-in javac that accepts everything, refuses `-J` options
 * as HotSpot refuses an unknown one, or fails every compile: compile_launcher's, or
 * build_javac's on a module with one source file. Its calls, and what the step returned (or
 * the error it raised).
 */
function javacCalls(
  step: 'launcher' | 'module',
  javac: 'accepts' | 'refuses -J' | 'fails',
): { calls: string[][]; returned: string } {
  const root = tempDir();
  const runner = join(root, 'run');
  writeFileSync(runner, source);
  for (const dir of ['bin', 'scratch', 'module/src/main/java'])
    mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, 'module/src/main/java/A.java'), 'class A {}\n');
  const log = join(root, 'calls');
  const answer = {
    accepts: 'exit 0',
    'refuses -J': `case "$*" in *-J-XX*) printf "Unrecognized VM option 'TieredStopAtLevel=1'\\nError: Could not create the Java Virtual Machine.\\n" >&2; exit 1 ;; esac\nexit 0`,
    fails: 'echo "A.java:1: error: cannot find symbol" >&2; exit 1',
  }[javac];
  writeFileSync(join(root, 'bin', 'javac'), `#!/bin/sh\necho "$*" >> '${log}'\n${answer}\n`);
  chmodSync(join(root, 'bin', 'javac'), 0o755);
  const call =
    step === 'launcher'
      ? 'runner.compile_launcher("junit.jar", sys.argv[3])'
      : 'runner.build_javac(sys.argv[2], [], [], "junit.jar", sys.argv[3])';
  const script = SCRIPT.replace(
    'print(runner.build_maven(sys.argv[2], sys.argv[3]))',
    `try:\n    print(${call})\nexcept runner.BuildFailed as e:\n    print("BuildFailed: %s" % e)`,
  );
  const result = spawnSync(
    'python3',
    ['-c', script, runner, join(root, 'module'), join(root, 'scratch')],
    { env: { PATH: `${join(root, 'bin')}:/usr/bin:/bin` }, encoding: 'utf8' },
  );
  expect(result.status, result.stderr).toBe(0);
  const calls = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' '));
  return { calls, returned: result.stdout.trim() };
}

const QUICK = ['-J-XX:TieredStopAtLevel=1', '-J-XX:+UseSerialGC'];

describe("the junit runner's javac", () => {
  it.each(['launcher', 'module'] as const)(
    "asks javac's JVM for the first JIT tier alone and the serial collector (%s), and compiles again without when the JVM refuses them",
    (step) => {
      const output = step === 'launcher' ? /scratch\/launcher$/ : /scratch\/classes/;
      const quick = javacCalls(step, 'accepts');
      expect(quick.calls).toHaveLength(1);
      expect(quick.calls[0]?.slice(0, 2)).toEqual(QUICK);
      expect(quick.returned).toMatch(output);
      const refused = javacCalls(step, 'refuses -J');
      expect(refused.calls).toHaveLength(2);
      expect(refused.calls[1]?.some((arg) => arg.startsWith('-J'))).toBe(false);
      expect(refused.calls[1]).toEqual(refused.calls[0]?.slice(2));
      expect(refused.returned).toMatch(output);
    },
  );

  it('compiles once when the sources do not compile, and says why', () => {
    const failed = javacCalls('module', 'fails');
    expect(failed.calls).toHaveLength(1);
    expect(failed.calls[0]?.slice(0, 2)).toEqual(QUICK);
    expect(failed.returned).toBe('BuildFailed: A.java:1: error: cannot find symbol');
  });
});

/** Where and how build_maven starts Maven on `module` of a checkout laid out as `files`. */
const mavenStart = (files: Record<string, string>, module: string) =>
  build({ home: { [PLUGIN]: '' }, project: files }, module);

const pom = (...modules: string[]) =>
  `<project>\n  <modules>\n${modules.map((m) => `    <module>${m}</module>\n`).join('')}  </modules>\n</project>\n`;

describe("the junit runner's Maven reactor", () => {
  it('builds a module that a pom.xml above lists from the top of the reactor, with the modules it needs', () => {
    // javaparser's layout: the tests' module beside the library's, both listed by the root.
    const flat = mavenStart(
      {
        'pom.xml': pom('core', 'core-testing'),
        'core/pom.xml': pom(),
        'core-testing/pom.xml': pom(),
      },
      'core-testing',
    );
    expect(flat.cwd).toBe('');
    expect(flat.args.slice(0, 7)).toEqual([
      '-o',
      '-B',
      '-q',
      '-pl',
      'core-testing',
      '-am',
      'test-compile',
    ]);
    // Two levels, a module named by a path, and a profile's <modules>.
    const nested = mavenStart(
      {
        'pom.xml': `<project>\n  <profiles><profile><modules><module>./libs</module></modules></profile></profiles>\n</project>\n`,
        'libs/pom.xml': pom('../libs/parser'),
        'libs/parser/pom.xml': pom(),
      },
      'libs/parser',
    );
    expect(nested.cwd).toBe('');
    expect(nested.args.slice(3, 6)).toEqual(['-pl', 'libs/parser', '-am']);
  });

  it('builds a module of its own in its folder: one no pom.xml lists, or listed only in a comment', () => {
    const layouts: Record<string, string>[] = [
      { 'pom.xml': pom('other'), 'app/pom.xml': pom() },
      {
        'pom.xml': '<project><modules><!-- <module>app</module> --></modules></project>\n',
        'app/pom.xml': pom(),
      },
      { 'app/pom.xml': pom() },
    ];
    for (const files of layouts) {
      const alone = mavenStart(files, 'app');
      expect(alone.cwd, JSON.stringify(files)).toBe('app');
      expect(alone.args.slice(0, 4)).toEqual(['-o', '-B', '-q', 'test-compile']);
    }
    // Nothing above the checkout is looked at, even a pom.xml that lists it (the checkout is
    // build's `project` folder).
    const above = { '../pom.xml': pom('project'), 'pom.xml': pom('app'), 'app/pom.xml': pom() };
    const top = mavenStart(above, '');
    expect(top.cwd).toBe('');
    expect(top.args).not.toContain('-pl');
    const inner = mavenStart(above, 'app');
    expect(inner.cwd).toBe('');
    expect(inner.args.slice(3, 6)).toEqual(['-pl', 'app', '-am']);
  });
});
