// Task bundles and candidate diffs for evaluator tests: a temporary copy of a fixture bundle
// with its task.toml or runner changed (environment/ untouched, so its image and base_commit
// stay valid), and candidates made by real git from the bundle's repository.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from './processes.js';
import { tempDir } from './temp.js';

export const SHELL_TASK = join(ROOT, 'test/fixtures/bundles/shell-task');

export interface BundleEdits {
  /** Values for [limits] keys, replacing the bundle's or added to it. */
  limits?: Record<string, number>;
  /** Text appended to task.toml (a [tests] table, say). */
  appendToml?: string;
  /** Any other change to task.toml's text, made last. */
  editToml?: (toml: string) => string;
  /** A new tests/run (made executable). */
  runner?: string;
}

/** Sets `key = value` in the [limits] table of a task.toml (the table must exist). */
export function setLimits(toml: string, limits: Record<string, number>): string {
  const start = toml.search(/^\[limits\]$/m);
  if (start < 0) throw new Error('task.toml has no [limits] table');
  const next = toml.slice(start + 1).search(/^\[/m);
  const end = next < 0 ? toml.length : start + 1 + next;
  let table = toml.slice(start, end);
  for (const [key, value] of Object.entries(limits)) {
    const line = new RegExp(`^${key}\\s*=.*$`, 'm');
    table = line.test(table)
      ? table.replace(line, `${key} = ${value}`)
      : `${table.trimEnd()}\n${key} = ${value}\n`;
  }
  return toml.slice(0, start) + table + toml.slice(end);
}

/** A copy of a fixture bundle in a temp dir (removed after the test), with `edits` made. */
export function copyBundle(edits: BundleEdits = {}, from = SHELL_TASK): string {
  const dir = join(tempDir('proctor-bundle-'), 'bundle');
  cpSync(from, dir, { recursive: true });
  const tomlPath = join(dir, 'task.toml');
  let toml = readFileSync(tomlPath, 'utf8');
  if (edits.limits) toml = setLimits(toml, edits.limits);
  if (edits.appendToml !== undefined) toml = `${toml.trimEnd()}\n\n${edits.appendToml}`;
  if (edits.editToml) toml = edits.editToml(toml);
  writeFileSync(tomlPath, toml);
  if (edits.runner !== undefined) {
    const runner = join(dir, 'tests/run');
    writeFileSync(runner, edits.runner);
    chmodSync(runner, 0o755);
  }
  return dir;
}

/** New contents of a repository file: text or bytes, a symlink to `symlink`, or null to delete. */
export type FileContent = string | Buffer | { symlink: string } | null;

export interface CandidateChanges {
  /** Repository-relative path → its new contents. */
  files?: Record<string, FileContent>;
  /** [from, to] renames, made before `files` are written. */
  renames?: Array<[string, string]>;
}

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'candidate',
  GIT_AUTHOR_EMAIL: 'candidate@example.invalid',
  GIT_COMMITTER_NAME: 'candidate',
  GIT_COMMITTER_EMAIL: 'candidate@example.invalid',
  GIT_AUTHOR_DATE: '2024-01-02T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-02T00:00:00Z',
};

function git(cwd: string, args: string[]): Buffer {
  return execFileSync('git', args, { cwd, env: GIT_ENV, maxBuffer: 256 * 1024 * 1024 });
}

/**
 * A candidate diff made by real git: the bundle's environment/repo committed in a fresh
 * repository, `changes` made to the work tree, then `git diff --cached --binary --full-index -M`.
 */
export function candidateDiff(changes: CandidateChanges, bundle = SHELL_TASK): Buffer {
  const repo = join(tempDir('proctor-candidate-'), 'repo');
  cpSync(join(bundle, 'environment/repo'), repo, { recursive: true });
  git(repo, ['init', '-q', '-b', 'main']);
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'base']);
  for (const [from, to] of changes.renames ?? []) {
    mkdirSync(dirname(join(repo, to)), { recursive: true });
    renameSync(join(repo, from), join(repo, to));
  }
  for (const [path, content] of Object.entries(changes.files ?? {})) {
    const target = join(repo, path);
    rmSync(target, { force: true });
    if (content === null) continue;
    mkdirSync(dirname(target), { recursive: true });
    if (typeof content === 'string' || Buffer.isBuffer(content)) writeFileSync(target, content);
    else symlinkSync(content.symlink, target);
  }
  git(repo, ['add', '-A']);
  return git(repo, ['diff', '--cached', '--binary', '--full-index', '-M']);
}

/** The shell task's lib.sh with `div` (and optionally `add` and extra top-level code) replaced. */
export function shellLib(parts: { div?: string; add?: string; prelude?: string }): string {
  return [
    '# Arithmetic helpers.',
    ...(parts.prelude === undefined ? [] : [parts.prelude]),
    parts.add ?? 'add() { echo $(($1 + $2)); }',
    parts.div ?? 'div() { echo $(($1 / $2)); }',
    '',
  ].join('\n');
}

/** The gold patch's `div`: prints `error` for a zero divisor. */
export const FIXED_DIV = `div() {
  if [ "$2" -eq 0 ]; then echo error; return 0; fi
  echo $(($1 / $2))
}`;

/**
 * `count` copies of the shell task under `dir` that are slow to read (a hidden.txt of 100,000
 * test IDs, about a third of a second each, hard-linked so that the copies cost no disk), for
 * requests whose work takes seconds. Returns their folder names.
 */
export function slowBundles(dir: string, count: number): string[] {
  const ids = Array.from({ length: 100_000 }, (_, i) => `tests/test_m${i % 500}.py::T::test_${i}`);
  const big = join(dir, 'hidden-big.txt');
  writeFileSync(big, ids.join('\n') + '\n');
  return Array.from({ length: count }, (_, i) => {
    const name = `slow-${i}`;
    cpSync(SHELL_TASK, join(dir, name), { recursive: true });
    const hidden = join(dir, name, 'tests', 'hidden.txt');
    rmSync(hidden);
    linkSync(big, hidden);
    return name;
  });
}
