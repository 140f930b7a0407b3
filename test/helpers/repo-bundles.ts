// Bundles made from a small repository for the built-in runners' tests: the repository is
// committed on the host and in the image the same way (fixed identity and dates), so that
// base_commit is known before the build; hidden.patch and gold.patch are real git diffs; the
// runner is the built-in one, written by writeRunner. The image builds FROM the runners fixture
// image (Debian's python3-pytest and nodejs), or the spec's `from`, which the caller builds first
// (fixtureImage).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeRunner, type BuiltinRunner } from '../../src/runners/index.js';
import { afterAll } from 'vitest';
import { tempDir } from './temp.js';

export const RUNNERS_IMAGE = 'proctor-test-runners:latest';

/** Repository-relative path → new contents, or null to delete. */
export type Files = Record<string, string | null>;

export interface RepoBundleSpec {
  id: string;
  runner: BuiltinRunner;
  /** The base commit's files. */
  repo: Record<string, string>;
  /** The hidden tests: changes from the base, as tests/hidden.patch. */
  hidden: Files;
  /** The reference fix: changes from the base, as solution/gold.patch. */
  gold: Files;
  existing: string[];
  hiddenIds: string[];
  /** Seconds per runner invocation (default 60). */
  testSeconds?: number;
  /** The image the bundle's Dockerfile builds FROM (default RUNNERS_IMAGE). */
  from?: string;
  /** [environment] install, e.g. a build kept in the image. */
  install?: string;
  /** Paths of `repo` committed executable (mode 100755). */
  executable?: string[];
  /** [tests] env. */
  testsEnv?: Record<string, string>;
}

const IDENTITY = ['-c', 'user.name=example', '-c', 'user.email=example@example.invalid'];
const DATE = '2024-01-01T00:00:00Z';

// The same commit inside the image as on the host: no config from either side, fixed dates.
const dockerfile = (from: string) => `FROM ${from}
COPY repo/ /repo/
RUN cd /repo && git init -q -b main && git add -A \\
 && GIT_AUTHOR_DATE='${DATE}' GIT_COMMITTER_DATE='${DATE}' \\
    git ${IDENTITY.join(' ')} commit -q -m base
`;

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_DATE: DATE,
      GIT_COMMITTER_DATE: DATE,
    },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

function writeFiles(root: string, files: Files, executable: readonly string[] = []): void {
  for (const [path, text] of Object.entries(files)) {
    const target = join(root, path);
    rmSync(target, { force: true });
    if (text === null) continue;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text, { mode: executable.includes(path) ? 0o755 : 0o644 });
  }
}

/** `changes` on top of the base commit of `repo`, as a full-index binary diff. */
function diffFrom(repo: string, changes: Files): string {
  writeFiles(repo, changes);
  git(repo, ['add', '-A']);
  const diff = git(repo, ['diff', '--cached', '--binary', '--full-index']);
  git(repo, ['reset', '-q', '--hard', 'HEAD']);
  git(repo, ['clean', '-q', '-fdx']);
  return diff;
}

/**
 * Writes the bundle into a fresh temp dir, removed after the test file (call it in beforeAll:
 * its image is built once for the file); returns its folder.
 */
export async function makeRepoBundle(spec: RepoBundleSpec): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'proctor-runner-bundle-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, spec.id);
  writeFiles(join(dir, 'environment/repo'), spec.repo, spec.executable);
  writeFileSync(join(dir, 'environment/Dockerfile'), dockerfile(spec.from ?? RUNNERS_IMAGE));

  const repo = join(root, 'work');
  writeFiles(repo, spec.repo, spec.executable);
  git(repo, ['init', '-q', '-b', 'main']);
  git(repo, ['add', '-A']);
  git(repo, [...IDENTITY, 'commit', '-q', '-m', 'base']);
  const base = git(repo, ['rev-parse', 'HEAD']).trim();

  mkdirSync(join(dir, 'solution'), { recursive: true });
  mkdirSync(join(dir, 'tests'), { recursive: true });
  writeFileSync(join(dir, 'tests/hidden.patch'), diffFrom(repo, spec.hidden));
  writeFileSync(join(dir, 'solution/gold.patch'), diffFrom(repo, spec.gold));
  await writeRunner(spec.runner, join(dir, 'tests'));
  writeIds(dir, 'existing', spec.existing);
  writeIds(dir, 'hidden', spec.hiddenIds);
  writeFileSync(join(dir, 'description.md'), `Make the hidden tests of ${spec.id} pass.\n`);
  writeFileSync(
    join(dir, 'task.toml'),
    `schema = 1
id = "${spec.id}"

[environment]
dockerfile = "environment/Dockerfile"
workdir = "/repo"
base_commit = "${base}"
${spec.install === undefined ? '' : `install = ${JSON.stringify(spec.install)}\n`}
[grading]
deny = ["tests/**"]

${testsEnvTable(spec.testsEnv)}[limits]
test_seconds = ${spec.testSeconds ?? 60}
`,
  );
  return dir;
}

/** A [tests] table with `env` (nothing without one). */
function testsEnvTable(env: Record<string, string> | undefined): string {
  if (env === undefined) return '';
  const pairs = Object.entries(env).map(([k, v]) => `${k} = ${JSON.stringify(v)}`);
  return `[tests]\nenv = { ${pairs.join(', ')} }\n\n`;
}

/**
 * A candidate patch: `changes` on top of the base commit of `spec`, made in a scratch
 * repository (removed after the test file).
 */
export function patchFrom(spec: RepoBundleSpec, changes: Files): Buffer {
  const repo = join(tempDir('proctor-runner-patch-'), 'work');
  writeFiles(repo, spec.repo);
  git(repo, ['init', '-q', '-b', 'main']);
  git(repo, ['add', '-A']);
  git(repo, [...IDENTITY, 'commit', '-q', '-m', 'base']);
  return Buffer.from(diffFrom(repo, changes), 'utf8');
}

function writeIds(dir: string, name: 'existing' | 'hidden', ids: string[]): void {
  writeFileSync(join(dir, 'tests', `${name}.txt`), ids.map((id) => `${id}\n`).join(''));
}

/**
 * A candidate diff for a bundle made by makeRepoBundle: `changes` on top of its base commit,
 * as a full-index binary diff (the repository it was made from stays beside the bundle).
 */
export function candidateDiff(bundleDir: string, changes: Files): Buffer {
  return Buffer.from(diffFrom(join(dirname(bundleDir), 'work'), changes));
}

/**
 * A copy of a bundle (removed after the test) whose runner lacks its protocol line: the same
 * runner run without protocol 2's layers (collector, sentinels, tripwires, canaries), to show
 * what a forgery does when nothing stops it.
 */
export function withoutProtocol(dir: string): string {
  const copy = withIds(dir, {});
  const runner = join(copy, 'tests/run');
  const text = readFileSync(runner, 'utf8');
  writeFileSync(runner, text.replace('# proctor-runner-protocol: 2\n', ''), { mode: 0o755 });
  return copy;
}

/** A copy of a bundle (removed after the test) with other ID lists; environment/ unchanged. */
export function withIds(dir: string, lists: { existing?: string[]; hidden?: string[] }): string {
  const copy = join(tempDir('proctor-runner-copy-'), 'bundle');
  cpSync(dir, copy, { recursive: true });
  if (lists.existing) writeIds(copy, 'existing', lists.existing);
  if (lists.hidden) writeIds(copy, 'hidden', lists.hidden);
  return copy;
}
