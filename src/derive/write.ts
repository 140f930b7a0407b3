// Writing a bundle atomically: everything goes into a hidden temporary folder beside the
// target, is loaded back with the oracle's own loader (so a derived or imported bundle is one
// that `validate --static` accepts), and only then renamed into place: a reader never sees
// half a bundle, and a failure leaves nothing at the target.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { stringify } from 'smol-toml';
import { ProctorError } from '../errors.js';
import { loadBundle, type Bundle } from '../oracle/index.js';

/** Staging folders this process made and has not yet renamed into place or removed. */
const staged = new Set<string>();

/**
 * Refuses, as a usage error naming `option`, a target whose nearest existing ancestor is not a
 * folder (a file in the way): the folders up to it are made later, and that would fail there.
 */
export function checkOutParent(option: string, target: string): void {
  let dir = dirname(resolve(target));
  while (!existsSync(dir)) dir = dirname(dir);
  if (!statSync(dir).isDirectory()) {
    throw new ProctorError('USAGE', `${option} ${target}: ${dir} is not a folder`);
  }
}

/** A fresh temporary folder beside `target`, on the same file system, so rename is atomic. */
export function stagingDir(target: string): string {
  const full = resolve(target);
  const dir = join(dirname(full), `.${basename(full)}.tmp-${randomBytes(4).toString('hex')}`);
  mkdirSync(dirname(full), { recursive: true });
  mkdirSync(dir);
  staged.add(dir);
  return dir;
}

/**
 * Removes every staging folder of this process that is still there: for an interrupted
 * command, whose pending work will not reach its own cleanup. Synchronous, so that it runs
 * whole between two steps of that work.
 */
export function discardStaging(): void {
  for (const dir of staged) {
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.old`, { recursive: true, force: true });
  }
  staged.clear();
}

export interface TaskToml {
  id: string;
  workdir: string;
  baseCommit: string;
  /** [environment] image, a digest-pinned reference; environment/Dockerfile when absent. */
  image?: string;
  deny: string[];
  /** [environment] install: the repository's own build, run in the work tree in the image. */
  install?: string;
  /** [environment] setup_commit: the image is in SWE-bench's layout (a setup commit on top). */
  setupCommit?: boolean;
  /** [grading] rules: `swebench` for imported SWE-bench rows; Proctor's own when absent. */
  rules?: 'swebench';
  /** [tests] env: variables the runner gets on top of Proctor's own (none when empty). */
  testsEnv?: Record<string, string>;
  limits?: Record<string, number>;
  /** [source]: where the task came from (informational). */
  source?: Record<string, string>;
}

export function taskTomlText(task: TaskToml): string {
  const table: Record<string, unknown> = {
    schema: 1,
    id: task.id,
    environment: {
      ...(task.image !== undefined
        ? { image: task.image }
        : { dockerfile: 'environment/Dockerfile' }),
      workdir: task.workdir,
      base_commit: task.baseCommit,
      ...(task.install !== undefined ? { install: task.install } : {}),
      ...(task.setupCommit ? { setup_commit: true } : {}),
    },
    grading: { deny: task.deny, ...(task.rules !== undefined ? { rules: task.rules } : {}) },
    ...(task.testsEnv && Object.keys(task.testsEnv).length > 0
      ? { tests: { env: task.testsEnv } }
      : {}),
    ...(task.limits && Object.keys(task.limits).length > 0 ? { limits: task.limits } : {}),
    ...(task.source ? { source: task.source } : {}),
  };
  return `${stringify(table)}\n`;
}

export interface BundleFiles {
  task: TaskToml;
  description: string;
  hiddenPatch: Buffer;
  goldPatch: Buffer;
  existing: readonly string[];
  hidden: readonly string[];
}

/** Writes every file but environment/ (made first, by writeEnvironment) and tests/run. */
export function writeBundleFiles(dir: string, files: BundleFiles): void {
  mkdirSync(join(dir, 'tests'), { recursive: true });
  mkdirSync(join(dir, 'solution'), { recursive: true });
  writeFileSync(join(dir, 'task.toml'), taskTomlText(files.task));
  writeFileSync(join(dir, 'description.md'), `${files.description.trimEnd()}\n`);
  writeFileSync(join(dir, 'tests', 'hidden.patch'), files.hiddenPatch);
  writeFileSync(join(dir, 'solution', 'gold.patch'), files.goldPatch);
  const list = (ids: readonly string[]) => (ids.length === 0 ? '' : `${ids.join('\n')}\n`);
  writeFileSync(join(dir, 'tests', 'existing.txt'), list(files.existing));
  writeFileSync(join(dir, 'tests', 'hidden.txt'), list(files.hidden));
}

/** Default patch_bytes and candidate_files, and the [limits] a gold patch needs beyond them. */
export function limitsFor(gold: Buffer, files: number): Record<string, number> {
  const limits: Record<string, number> = {};
  if (gold.length > 1024 * 1024) {
    limits['patch_bytes'] = Math.min(64 * 1024 * 1024, Math.ceil(gold.length / 1024) * 1024 * 2);
  }
  if (files > 200) limits['candidate_files'] = Math.min(100_000, files);
  return limits;
}

/** Copies an author's runner script to tests/run, executable. */
export function copyRunner(file: string, testsDir: string): void {
  mkdirSync(testsDir, { recursive: true });
  copyFileSync(file, join(testsDir, 'run'));
  chmodSync(join(testsDir, 'run'), 0o755);
}

/**
 * Loads the staged bundle (every format check), then renames it to `target`; with `replace`,
 * an existing target is swapped out first. Removes the staging folder on failure.
 */
export async function commitBundle(
  staging: string,
  target: string,
  replace = false,
): Promise<Bundle> {
  try {
    await loadBundle(staging);
    if (existsSync(target)) {
      if (!replace) throw new ProctorError('USAGE', `${target} already exists`);
      const old = `${staging}.old`;
      renameSync(target, old);
      renameSync(staging, target);
      rmSync(old, { recursive: true, force: true });
    } else renameSync(staging, target);
    staged.delete(staging);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  return loadBundle(target);
}
