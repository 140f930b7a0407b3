// Task bundles, format 1 (product.md, "Task bundle, format 1"), and suites of them. Loading a
// bundle checks everything that can be checked without Docker and reports every problem at
// once, each naming its file and, in task.toml, its key; the result is what the oracle, the
// solver and the queue rely on: validated settings with defaults, absolute paths of the
// evaluator assets, the declared test IDs and a hash of the bundle's exact contents.
// task.toml's schema, its defaults and bounds are in task-schema.ts.
import type { FileDigests } from './file-digests.js';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { tomlProblem } from '../problems.js';
import { isProctorError, ProctorError } from '../errors.js';
import {
  checkCopied,
  hashBundle,
  isInside,
  readText,
  readUtf8,
  walkBundle,
  type BundleEntry,
  type BundleProblem,
} from './bundle-paths.js';
import { imageReferenceProblem } from '../sandbox/image-reference.js';
import { contextEntry, contextListing, type ContextListing } from '../sandbox/context-cache.js';
import type { InstallSpec } from '../sandbox/install.js';
import { parseTask, type TaskFile } from './task-schema.js';
import type { TaskImpossible } from './task-impossible.js';
import type { TaskSource } from './task-source.js';

export { imageReferenceProblem };

export type { BundleProblem } from './bundle-paths.js';
export { parseTask };
export type { TaskSource };

/** Largest task.toml, description.md, and test-ID list read, in bytes. */
// 256 KiB, not less: [source].hints_text alone may hold 64 Ki characters.
export const MAX_TASK_TOML_BYTES = 256 * 1024;
export const MAX_DESCRIPTION_BYTES = 1024 * 1024;
export const MAX_ID_LIST_BYTES = 16 * 1024 * 1024;
/** Most IDs one list may declare, and the longest ID, in characters. */
export const MAX_TEST_IDS = 100_000;
export const MAX_TEST_ID_CHARS = 1000;

export interface BundleLimits {
  solverSeconds: number;
  testSeconds: number;
  cpus: number;
  memoryMb: number;
  pids: number;
  outputBytes: number;
  patchBytes: number;
  candidateFiles: number;
}

/** A loaded, valid bundle. Every path is absolute and inside `dir`. */
export interface Bundle {
  /** The bundle folder, as a realpath. */
  dir: string;
  id: string;
  /** The shape the sandbox's resolveImage takes; `dockerfile` is relative to `contextDir`. */
  environment:
    | { kind: 'dockerfile'; contextDir: string; dockerfile: string; install?: InstallSpec }
    | { kind: 'image'; reference: string; install?: InstallSpec };
  workdir: string;
  baseCommit: string;
  /**
   * [environment].history: the solver's workspace history, `full` when absent; the
   * evaluator never has any.
   */
  history?: 'full' | 'none';
  /** [environment].setup_commit: the image is in SWE-bench's layout (task-schema.ts). */
  setupCommit?: boolean;
  /**
   * [environment].workspace: the medium of the evaluator's copied workspace. Absent, the
   * workspace is an overlay on the template where the engine can mount one, else a copy in memory.
   */
  workspace?: 'memory' | 'disk';
  /**
   * [grading]; `tamper`: what a hit of the candidate screen does; `rules`: whose rules grade
   * the reports (task-schema.ts).
   */
  grading: {
    allow: string[];
    deny: string[];
    allowSymlinks: boolean;
    tamper: 'flag' | 'fail';
    rules: 'proctor' | 'swebench';
  };
  /** [tests].env: extra variables for the runner, on top of Proctor's deterministic ones. */
  testsEnv: Record<string, string>;
  limits: BundleLimits;
  /** [source]: where the task came from (informational; grading never reads it). */
  source?: TaskSource;
  /** [impossible]: this task is an impossible variant of another (task-impossible.ts). */
  impossible?: TaskImpossible;
  paths: {
    description: string;
    runner: string;
    existing: string;
    hidden: string;
    hiddenPatch: string;
    goldPatch?: string;
  };
  existingIds: string[];
  hiddenIds: string[];
  /** SHA-256 (hex) over the relative paths, modes and bytes of every file (see hashBundle). */
  contentHash: string;
}

export interface LoadBundleOptions {
  /** When set, a bundle (by realpath) outside this folder is refused before anything is read. */
  tasksRoot?: string;
  /** A suite of more bundles is refused (LIMIT_EXCEEDED) before any of them is read. */
  maxBundles?: number;
  /** Checked between bundles: a suite's loading stops when it aborts. */
  signal?: AbortSignal;
  /** File digests of earlier loads in this process: unchanged files are not read again. */
  digests?: FileDigests;
}

const FILES = {
  task: 'task.toml',
  description: 'description.md',
  runner: 'tests/run',
  existing: 'tests/existing.txt',
  hidden: 'tests/hidden.txt',
  hiddenPatch: 'tests/hidden.patch',
  goldPatch: 'solution/gold.patch',
} as const;

function problemLine(p: BundleProblem): string {
  return `  ${p.file}: ${p.key === undefined ? '' : `${p.key}: `}${p.message}`;
}

/** The BUNDLE_INVALID error for `problems`: a count, then one line per problem. */
export function bundleInvalid(dir: string, problems: BundleProblem[]): ProctorError {
  const count = `${problems.length} problem${problems.length === 1 ? '' : 's'}`;
  return new ProctorError(
    'BUNDLE_INVALID',
    [`${dir}: ${count}`, ...problems.map(problemLine)].join('\n'),
    { data: { dir, problems } },
  );
}

/** The bundle folder as a realpath; refused when missing, not a folder, or outside tasksRoot. */
async function resolveDir(dir: string, tasksRoot: string | undefined): Promise<string> {
  const shown = resolve(dir);
  const fail = (message: string) => bundleInvalid(shown, [{ file: '.', message }]);
  const within = (path: string, root: string) => path === root || isInside(path, root);
  let root: string | undefined;
  if (tasksRoot !== undefined) {
    const rootShown = resolve(tasksRoot);
    root = await realpath(rootShown).catch(() => {
      throw fail(`tasks_root ${tasksRoot} cannot be read`);
    });
    // Before the path is looked at: whether something outside tasks_root exists or not is
    // none of the caller's business.
    if (!within(shown, rootShown) && !within(shown, root)) {
      throw fail(`is outside tasks_root ${root}`);
    }
  }
  let real: string;
  try {
    real = await realpath(shown);
  } catch (error) {
    throw fail(`cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  // A symbolic link inside tasks_root may still lead out of it.
  if (root !== undefined && !within(real, root)) throw fail(`is outside tasks_root ${root}`);
  if (!(await stat(real)).isDirectory()) throw fail('is not a folder');
  return real;
}

/**
 * Declared test IDs: one per line, a trailing \r dropped, blank lines ignored, otherwise
 * verbatim (a runner's IDs are compared exactly). At most 20 problems are listed per file.
 */
export function parseTestIds(text: string, file: string, problems: BundleProblem[]): string[] {
  const ids: string[] = [];
  const firstLine = new Map<string, number>();
  let found = 0;
  const problem = (line: number, message: string) => {
    found += 1;
    if (found <= 20) problems.push({ file, message: `line ${line}: ${message}` });
  };
  text.split('\n').forEach((raw, index) => {
    const id = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const line = index + 1;
    if (id.trim() === '') return;
    if (id.includes('\0')) return problem(line, 'test ID contains NUL');
    if (id.length > MAX_TEST_ID_CHARS) {
      return problem(line, `test ID longer than ${MAX_TEST_ID_CHARS} characters`);
    }
    const first = firstLine.get(id);
    if (first !== undefined) {
      return problem(line, `duplicate test ID ${JSON.stringify(id)} (first on line ${first})`);
    }
    firstLine.set(id, line);
    ids.push(id);
  });
  if (found > 20) problems.push({ file, message: `… and ${found - 20} more problems` });
  if (ids.length > MAX_TEST_IDS) {
    problems.push({ file, message: `declares ${ids.length} test IDs; at most ${MAX_TEST_IDS}` });
  }
  return ids;
}

async function readTask(
  root: string,
  entries: Map<string, BundleEntry>,
  problems: BundleProblem[],
): Promise<TaskFile | undefined> {
  const text = await readText(root, entries, FILES.task, MAX_TASK_TOML_BYTES, problems);
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (error) {
    problems.push({ file: FILES.task, message: tomlProblem(error) });
    return undefined;
  }
  const parsed = parseTask(raw);
  problems.push(...parsed.problems.map((p) => ({ file: FILES.task, ...p })));
  return parsed.task;
}

/**
 * Loads and validates the bundle in `dir`. Throws BUNDLE_INVALID listing every problem found
 * (`data.problems`: `{ file, key?, message }[]`, files relative to the bundle).
 */
export async function loadBundle(dir: string, options: LoadBundleOptions = {}): Promise<Bundle> {
  return (await loadBundleWithListing(dir, options)).bundle;
}

/**
 * loadBundle, and for a Dockerfile bundle the lstat listing of its build context that the
 * walk took: the image cache takes it (ImageCache.resolve) instead of walking environment/
 * again, so a job lists its bundle once.
 */
export async function loadBundleWithListing(
  dir: string,
  options: LoadBundleOptions = {},
): Promise<{ bundle: Bundle; listing?: ContextListing }> {
  const root = await resolveDir(dir, options.tasksRoot);
  // Before the first lstat, as ContextListing requires.
  const listedAt = Date.now();
  const walk = await walkBundle(root);
  const problems = [...walk.problems];
  if (!walk.complete) throw bundleInvalid(root, problems);
  const { entries } = walk;

  const task = await readTask(root, entries, problems);
  const description = await readText(
    root,
    entries,
    FILES.description,
    MAX_DESCRIPTION_BYTES,
    problems,
  );
  if (description !== undefined && description.trim() === '') {
    problems.push({ file: FILES.description, message: 'is empty' });
  }
  checkCopied(entries, FILES.runner, problems, { executable: true });
  checkCopied(entries, FILES.hiddenPatch, problems);
  const hasGold = entries.has(FILES.goldPatch) && checkCopied(entries, FILES.goldPatch, problems);
  const lists = { existing: FILES.existing, hidden: FILES.hidden };
  const ids: Record<keyof typeof lists, string[]> = { existing: [], hidden: [] };
  for (const [name, file] of Object.entries(lists) as Array<[keyof typeof lists, string]>) {
    const text = await readText(root, entries, file, MAX_ID_LIST_BYTES, problems);
    if (text !== undefined) ids[name] = parseTestIds(text, file, problems);
    if (name === 'hidden' && text !== undefined && ids.hidden.length === 0) {
      problems.push({
        file,
        message: 'declares no test IDs; a task needs at least one hidden test',
      });
    }
  }
  if (task?.environment.dockerfile !== undefined) {
    checkCopied(entries, task.environment.dockerfile, problems);
  }

  if (task === undefined || problems.length > 0) {
    if (problems.length === 0) problems.push({ file: FILES.task, message: 'is not valid' });
    throw bundleInvalid(root, problems);
  }
  const bundle: Bundle = {
    dir: root,
    id: task.id,
    // parseTask has made sure that exactly one of the two is set.
    environment: {
      ...(task.environment.image !== undefined
        ? { kind: 'image' as const, reference: task.environment.image }
        : {
            kind: 'dockerfile' as const,
            contextDir: join(root, 'environment'),
            dockerfile: (task.environment.dockerfile ?? '').slice('environment/'.length),
          }),
      ...(task.environment.install !== undefined
        ? {
            install: {
              command: task.environment.install,
              workdir: task.environment.workdir,
              baseCommit: task.environment.base_commit,
            },
          }
        : {}),
    },
    workdir: task.environment.workdir,
    baseCommit: task.environment.base_commit,
    ...(task.environment.history === 'none' ? { history: 'none' as const } : {}),
    ...(task.environment.setup_commit ? { setupCommit: true } : {}),
    // Kept when set, `memory` too: a medium named asks for a copy, where absent means an overlay.
    ...(task.environment.workspace === undefined ? {} : { workspace: task.environment.workspace }),
    grading: {
      allow: [...task.grading.allow],
      deny: [...task.grading.deny],
      allowSymlinks: task.grading.allow_symlinks,
      tamper: task.grading.tamper,
      rules: task.grading.rules,
    },
    testsEnv: { ...task.tests.env },
    limits: toLimits(task.limits),
    ...(task.source === undefined ? {} : { source: { ...task.source } }),
    ...(task.impossible === undefined ? {} : { impossible: { ...task.impossible } }),
    paths: {
      description: join(root, FILES.description),
      runner: join(root, FILES.runner),
      existing: join(root, FILES.existing),
      hidden: join(root, FILES.hidden),
      hiddenPatch: join(root, FILES.hiddenPatch),
      ...(hasGold ? { goldPatch: join(root, FILES.goldPatch) } : {}),
    },
    existingIds: ids.existing,
    hiddenIds: ids.hidden,
    contentHash: await hashBundle(root, entries.values(), options.digests),
  };
  if (bundle.environment.kind !== 'dockerfile') return { bundle };
  return { bundle, listing: listingOf(bundle.environment.contextDir, listedAt, entries) };
}

/** The walk's entries under environment/, as the build context's own listing. */
function listingOf(
  contextDir: string,
  listedAt: number,
  entries: Map<string, BundleEntry>,
): ContextListing {
  const prefix = 'environment/';
  const listed = [];
  for (const entry of entries.values()) {
    if (entry.path.startsWith(prefix)) {
      listed.push(contextEntry(entry.path.slice(prefix.length), entry.stats));
    }
  }
  return contextListing(contextDir, listedAt, listed);
}

function toLimits(l: TaskFile['limits']): BundleLimits {
  return {
    solverSeconds: l.solver_seconds,
    testSeconds: l.test_seconds,
    cpus: l.cpus,
    memoryMb: l.memory_mb,
    pids: l.pids,
    outputBytes: l.output_bytes,
    patchBytes: l.patch_bytes,
    candidateFiles: l.candidate_files,
  };
}

/**
 * The text a solver is shown: description.md, read again (it is the only bundle file a
 * solver ever sees, so it is re-checked as a regular, bounded, UTF-8 file at use).
 */
export async function readDescription(bundle: Pick<Bundle, 'dir'>): Promise<string> {
  const read = await readUtf8(join(bundle.dir, FILES.description), MAX_DESCRIPTION_BYTES);
  if (read.ok) return read.text;
  throw bundleInvalid(bundle.dir, [{ file: FILES.description, message: read.message }]);
}

export interface Suite {
  /** Valid bundles, in folder-name order. */
  bundles: Bundle[];
  /** Folders holding a task.toml that did not load, each with its BUNDLE_INVALID error. */
  problems: Array<{ dir: string; error: ProctorError }>;
}

async function hasTaskToml(dir: string): Promise<boolean> {
  return lstat(join(dir, FILES.task)).then(
    () => true,
    () => false,
  );
}

/**
 * Loads a suite: `path` itself when it holds a task.toml, else each immediate sub-folder that
 * holds one (not those whose name starts with a dot), in byte order of the folder names. A bad bundle does not stop the others; it is
 * listed in `problems`. Bundles sharing an id are all refused, each error naming the others.
 * Throws BUNDLE_INVALID when `path` is unreadable, outside tasksRoot, or holds no bundle.
 */
export async function loadSuite(path: string, options: LoadBundleOptions = {}): Promise<Suite> {
  const root = await resolveDir(path, options.tasksRoot);
  let dirs: string[];
  if (await hasTaskToml(root)) dirs = [root];
  else {
    const children = await readdir(root, { withFileTypes: true });
    const names = children
      // A dot-folder is no task: .git, or a bundle being written (derive, import).
      .filter((child) => child.isDirectory() && !child.name.startsWith('.'))
      .map((child) => child.name)
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    dirs = [];
    for (const name of names) {
      if (await hasTaskToml(join(root, name))) dirs.push(join(root, name));
    }
    if (dirs.length === 0) {
      throw bundleInvalid(root, [
        { file: '.', message: 'holds no task bundle (no task.toml in it or its sub-folders)' },
      ]);
    }
  }
  if (options.maxBundles !== undefined && dirs.length > options.maxBundles) {
    throw new ProctorError(
      'LIMIT_EXCEEDED',
      `${root}: ${dirs.length} bundles; at most ${options.maxBundles} at once`,
      { data: { limit: options.maxBundles } },
    );
  }
  const loaded: Bundle[] = [];
  const problems: Suite['problems'] = [];
  for (const dir of dirs) {
    options.signal?.throwIfAborted();
    try {
      loaded.push(await loadBundle(dir, options));
    } catch (error) {
      if (!isProctorError(error, 'BUNDLE_INVALID')) throw error;
      problems.push({ dir, error });
    }
  }
  const byId = new Map<string, Bundle[]>();
  for (const bundle of loaded) {
    const same = byId.get(bundle.id);
    if (same === undefined) byId.set(bundle.id, [bundle]);
    else same.push(bundle);
  }
  const bundles = loaded.filter((bundle) => byId.get(bundle.id)?.length === 1);
  for (const bundle of loaded) {
    const others = (byId.get(bundle.id) ?? []).filter((other) => other !== bundle);
    if (others.length === 0) continue;
    const message = `duplicate id ${JSON.stringify(bundle.id)}: also the id of ${others.map((o) => o.dir).join(', ')}`;
    problems.push({
      dir: bundle.dir,
      error: bundleInvalid(bundle.dir, [{ file: FILES.task, key: 'id', message }]),
    });
  }
  problems.sort((a, b) => Buffer.compare(Buffer.from(a.dir), Buffer.from(b.dir)));
  return { bundles, problems };
}
