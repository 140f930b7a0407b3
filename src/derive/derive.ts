// `proctor derive`: a task bundle from a fix commit of a local repository.
// The diff base..fix is split into hidden tests and gold patch (split.ts), the environment is
// the author's build context plus a one-commit snapshot of base (snapshot.ts), and the ID
// lists come from running the runner in four states in the oracle's sandbox (runs.ts,
// classify.ts). The bundle is staged beside --out and renamed into place (write.ts).
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { isProctorError, ProctorError } from '../errors.js';
import {
  checkImage,
  runnerRunsPytest,
  SOURCE_DATE_EPOCH,
  type Bundle,
  type BundleLimits,
  type EvaluatorSandbox,
} from '../oracle/index.js';
import type { DockerClient } from '../sandbox/index.js';
import type { ImageCache } from '../workers/images.js';
import { classify, STATE_NAMES, type Classified } from './classify.js';
import { childrenOf, git, gitDirOf, gitText, parentsOf, resolveCommit } from './git.js';
import { originName, originRepo } from './origin.js';
import { DISCOVER_ENV, runStates } from './runs.js';
import { defaultScope } from './scope.js';
import { writeEnvironment } from './snapshot.js';
import { DEFAULT_EXCLUDE_GLOBS, DEFAULT_TEST_GLOBS, splitDiff, type Ecosystem } from './split.js';
import {
  checkOutParent,
  commitBundle,
  copyRunner,
  limitsFor,
  stagingDir,
  writeBundleFiles,
  type TaskToml,
} from './write.js';
import { BUILTIN_RUNNERS, isBuiltinRunner, writeRunner } from '../runners/index.js';

/**
 * The built-in runners derive runs over a scope of paths: each reports every test of a LIST
 * line that names a file (the sympy runner) or a file or folder (the django runner); the cargo
 * runner, under PROCTOR_DISCOVER, every test of the targets of the Rust files under it; the go
 * runner, under PROCTOR_DISCOVER, every test of the packages of the Go files under it.
 * The mocha runner, under PROCTOR_DISCOVER, every test of the JavaScript files under its paths;
 * the ctest runner, under PROCTOR_DISCOVER, every test of the CMake build or every test script
 * under its paths.
 */
const DERIVE_RUNNERS = BUILTIN_RUNNERS; // every built-in runner has a discovery mode

export interface DeriveOptions {
  repo: string;
  base: string;
  /** Default: the one commit (reachable from any ref) whose only parent is `base`. */
  fix?: string;
  environment: string;
  out: string;
  id?: string;
  tests?: string[];
  exclude?: string[];
  /** `pytest`, `node`, or the path of the author's own runner. */
  runner: string;
  /** Paths the runner runs everything under; default: the ecosystem's test files (scope.ts). */
  scope?: string[];
  repeat: number;
  description?: string;
  workdir: string;
  /** [environment] install: the repository's own build, run in the work tree in the image. */
  install?: string;
}

export interface DeriveDeps {
  docker: DockerClient;
  images: ImageCache;
  home: string;
  /** The host identity its containers are labelled with; default the hostname. */
  host?: string;
  sandbox: EvaluatorSandbox;
  /** Progress and warnings, one line each. */
  note: (line: string) => void;
  signal?: AbortSignal;
}

export interface DeriveResult {
  bundle: Bundle;
  base: string;
  fix: string;
  baseCommit: string;
  classified: Classified;
  hiddenFiles: string[];
  goldFiles: string[];
  excluded: Array<{ path: string; glob: string }>;
  timings: Record<string, number>;
}

const WORKDIR = /^\/[A-Za-z0-9._/-]+$/;

/** `name` as the start of a task id: lower case, runs of other characters as `-`, or ''. */
function idPart(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 100);
}

/**
 * The default task id, `name-0123456789ab`: the project's name from origin's URL (what
 * [source].repo names), else the repository folder's name without `.git`. A mirror is often
 * kept in a folder named `repo` or `mirror.git`, which names no project.
 */
export async function defaultId(repo: string, fix: string): Promise<string> {
  const origin = idPart((await originName(repo)) ?? '');
  const name = origin || idPart(basename(resolve(repo)).replace(/\.git$/, ''));
  return `${name || 'task'}-${fix.slice(0, 12)}`;
}

function fail(message: string): never {
  throw new ProctorError('DERIVE_FAILED', message);
}

function listed(ids: readonly string[], n = 10): string {
  const shown = ids.slice(0, n).join(', ');
  return ids.length > n ? `${shown}, … (${ids.length} in all)` : shown;
}

/** --fix left out: the one commit whose only parent is --base, or a USAGE error saying why not. */
async function onlyChild(
  repo: string,
  base: string,
  rev: string,
  note: (line: string) => void,
): Promise<string> {
  const children = await childrenOf(repo, base);
  const [only] = children;
  if (only !== undefined && children.length === 1) {
    note(`--fix ${only.slice(0, 12)}: the one commit whose only parent is --base ${rev}`);
    return only;
  }
  if (children.length === 0) {
    throw new ProctorError(
      'USAGE',
      `--fix: no commit of ${repo} has --base ${rev} as its only parent; pass --fix`,
    );
  }
  throw new ProctorError(
    'USAGE',
    `--fix: ${children.length} commits have --base ${rev} as their only parent (${listed(
      children.map((c) => c.slice(0, 12)),
      5,
    )}); pass --fix`,
  );
}

async function checkInputs(options: DeriveOptions, note: (line: string) => void) {
  if (!WORKDIR.test(options.workdir) || options.workdir.split('/').includes('..')) {
    throw new ProctorError(
      'USAGE',
      `--workdir ${options.workdir}: expected an absolute path of letters, digits, . _ - /`,
    );
  }
  if (
    options.install !== undefined &&
    (options.install.trim() === '' || options.install.includes('\0'))
  ) {
    throw new ProctorError('USAGE', '--install: must be a shell command, not empty');
  }
  if (existsSync(options.out))
    throw new ProctorError('USAGE', `--out ${options.out}: already exists`);
  checkOutParent('--out', options.out);
  if (!isBuiltinRunner(options.runner)) {
    if (!existsSync(options.runner) || !statSync(options.runner).isFile()) {
      throw new ProctorError(
        'USAGE',
        `--runner ${options.runner}: not ${DERIVE_RUNNERS.join(', ')}, or a file`,
      );
    }
  }
  if (options.description !== undefined && !existsSync(options.description)) {
    throw new ProctorError('USAGE', `--description ${options.description}: no such file`);
  }
  const envDir = options.environment;
  if (!existsSync(envDir) || !statSync(envDir).isDirectory()) {
    throw new ProctorError('USAGE', `--environment ${envDir}: not a folder`);
  }
  await gitDirOf(options.repo);
  const base = await resolveCommit(options.repo, options.base, '--base');
  const fix =
    options.fix === undefined
      ? await onlyChild(options.repo, base, options.base, note)
      : await resolveCommit(options.repo, options.fix, '--fix');
  const parents = await parentsOf(options.repo, fix);
  if (parents.length !== 1 || parents[0] !== base) {
    const had = parents.length === 0 ? 'no parent' : `parent(s) ${parents.join(', ')}`;
    note(
      `warning: --fix ${fix.slice(0, 12)} has ${had}, not --base ${base.slice(0, 12)} alone; the bundle is the whole diff from --base to --fix`,
    );
  }
  return { base, fix };
}

export async function derive(options: DeriveOptions, deps: DeriveDeps): Promise<DeriveResult> {
  const { note } = deps;
  const timings: Record<string, number> = {};
  const started = Date.now();
  const { base, fix } = await checkInputs(options, note);
  const id = options.id ?? (await defaultId(options.repo, fix));
  if (!/^[a-z0-9][a-z0-9._-]{0,127}$/.test(id)) {
    throw new ProctorError('USAGE', `--id ${id}: must match [a-z0-9][a-z0-9._-]{0,127}`);
  }
  const ecosystem: Ecosystem = isBuiltinRunner(options.runner) ? options.runner : 'file';
  const testGlobs = options.tests ?? [...DEFAULT_TEST_GLOBS[ecosystem]];
  const excludeGlobs = options.exclude ?? [...DEFAULT_EXCLUDE_GLOBS];

  const diff = await git(options.repo, [
    'diff',
    '--binary',
    '--full-index',
    '--no-renames',
    '--no-ext-diff',
    '--no-textconv',
    '--no-color',
    base,
    fix,
    '--',
  ]);
  const split = splitDiff(diff, { tests: testGlobs, exclude: excludeGlobs });
  if (split.hiddenFiles.length === 0) {
    fail(`the fix changes no test file (no path matches ${testGlobs.join(' ')}); pass --tests`);
  }
  if (split.goldFiles.length === 0) {
    fail(
      `the fix changes only tests${split.excluded.length > 0 ? ' and excluded files' : ''}: there is no gold patch`,
    );
  }

  let description: string;
  if (options.description !== undefined) description = readFileSync(options.description, 'utf8');
  else {
    description = await gitText(options.repo, ['log', '-1', '--format=%B', fix]);
    if (description.split('\n').filter((l) => l.trim() !== '').length <= 1) {
      note(
        'warning: the fix commit message is only a title, and the description is all a solver sees; pass --description FILE',
      );
    }
  }
  if (description.trim() === '') fail('the description is empty; pass --description FILE');

  const staging = stagingDir(options.out);
  const scratch = mkdtempSync(join(tmpdir(), 'proctor-derive-'));
  try {
    let began = Date.now();
    const snapshot = await writeEnvironment(
      options.environment,
      join(staging, 'environment'),
      options.repo,
      base,
      options.workdir,
    );
    timings['snapshot'] = Date.now() - began;
    const limits = limitsFor(split.gold, split.goldFiles.length);
    const deny = [...testGlobs];
    // A conftest.py is a pytest plugin a candidate could add: denied wherever pytest runs the
    // tests, by the built-in runner or by the author's own (validate warns about the others).
    const pytest =
      ecosystem === 'pytest' || (ecosystem === 'file' && (await runnerRunsPytest(options.runner)));
    if (pytest && !deny.includes('**/conftest.py')) deny.push('**/conftest.py');
    const upstream = await originRepo(options.repo);
    const source = {
      ...(upstream !== undefined ? { repo: upstream } : {}),
      base_commit: base,
      fix_commit: fix,
    };
    const task: TaskToml = {
      source,
      id,
      workdir: options.workdir,
      baseCommit: snapshot.commit,
      deny,
      limits,
      ...(options.install !== undefined ? { install: options.install } : {}),
    };
    const files = {
      task,
      description,
      hiddenPatch: split.hidden,
      goldPatch: split.gold,
      existing: [] as string[],
      hidden: [] as string[],
    };
    writeBundleFiles(staging, files);
    const testsDir = join(staging, 'tests');
    if (isBuiltinRunner(options.runner)) await writeRunner(options.runner, testsDir);
    else copyRunner(options.runner, testsDir);

    const scope = options.scope ?? (await defaultScope(options.repo, [base, fix], ecosystem));
    if (scope.length === 0) fail(`no ${ecosystem} test file in ${base} or ${fix}; pass --scope`);
    const scopeFile = join(scratch, 'scope.txt');
    writeFileSync(scopeFile, `${scope.join('\n')}\n`);
    const bundle = probeBundle(staging, task, scopeFile, scope, limits);

    began = Date.now();
    note(
      `building the image: --environment ${options.environment} and the snapshot of ${base.slice(0, 12)} as ${snapshot.commit.slice(0, 12)}`,
    );
    let image;
    try {
      image = await deps.images.resolve(bundle, deps.signal);
    } catch (error) {
      if (!isProctorError(error, 'IMAGE_INVALID')) throw error;
      fail(`--environment ${options.environment}: the image did not build: ${buildFailure(error)}`);
    }
    const check = await checkImage(bundle, {
      docker: deps.docker,
      resolve: () => Promise.resolve(image),
      owner: {
        job: `derive-probe-${snapshot.commit.slice(0, 12)}`,
        attempt: 1,
        home: deps.home,
        ...(deps.host !== undefined ? { host: deps.host } : {}),
      },
      uid: deps.sandbox.uid,
      gid: deps.sandbox.gid,
      ...(deps.sandbox.runtime ? { runtime: deps.sandbox.runtime } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    if (!check.ok) fail(`the environment: ${check.problems.join('; ')}`);
    timings['image'] = Date.now() - began;
    note(
      `image ${image.localId.slice(7, 19)} at ${snapshot.commit.slice(0, 12)} (${timings['image']} ms); running the four states ${options.repeat} time(s) over ${scope.length <= 3 ? scope.join(' ') : `${scope.length} paths`}`,
    );

    const runs = await runStates({
      docker: deps.docker,
      bundle,
      imageId: image.localId,
      gold: split.gold,
      repeat: options.repeat,
      home: deps.home,
      ...(deps.host !== undefined ? { host: deps.host } : {}),
      sandbox: deps.sandbox,
      ...(deps.signal ? { signal: deps.signal } : {}),
      onProgress: (states, repeat, ms, counts) =>
        note(
          `  ${states.map((s, i) => `${STATE_NAMES[s]}: ${counts[i] ?? 0} tests`).join(', ')} (run ${repeat}, ${ms} ms)`,
        ),
    });
    timings['runs'] = runs.totalMs;
    timings['runner'] = runs.runnerMs;

    const classified = classify(runs.reports);
    if (classified.broken.length > 0) {
      fail(
        `the gold patch breaks existing tests: ${classified.broken.map((b) => `${b.id} (${b.status} in ${STATE_NAMES[b.state]})`).join(', ')}`,
      );
    }
    if (classified.hidden.length === 0) {
      const flaky =
        classified.flaky.length > 0 ? `; ${classified.flaky.length} flaky test(s) dropped` : '';
      const seen = new Set(
        Object.values(runs.reports).flatMap((rs) => rs.flatMap((r) => [...r.keys()])),
      );
      if (seen.size === 0)
        fail(
          `the runner reported no test in any state; check --scope and the runner. Its output (base):${runs.firstOutput}`,
        );
      fail(
        `no hidden test: no test passes in base + hidden + gold and fails without the fix (hidden.patch touches ${listed(split.hiddenFiles)})${flaky}`,
      );
    }
    writeBundleFiles(staging, {
      ...files,
      existing: classified.existing,
      hidden: classified.hidden,
    });
    const written = await commitBundle(staging, options.out);
    timings['total'] = Date.now() - started;
    return {
      bundle: written,
      base,
      fix,
      baseCommit: snapshot.commit,
      classified,
      hiddenFiles: split.hiddenFiles,
      goldFiles: split.goldFiles,
      excluded: split.excluded,
      timings,
    };
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

// Docker's own colour codes around a failing step's stderr.
// eslint-disable-next-line no-control-regex -- ESC is what a colour code starts with
const ANSI = /\x1b\[[0-9;]*m/g;

/**
 * Why an image did not build, in a few lines: what Proctor's own stage said (`proctor: …`),
 * else Docker's reason and the last lines of the build's output.
 */
export function buildFailure(error: ProctorError): string {
  // The install layer's refusal is its own one line (src/sandbox/install.ts).
  if (error.message.startsWith('[environment] install: ')) return error.message;
  const log = typeof error.data?.['buildLog'] === 'string' ? error.data['buildLog'] : '';
  const lines = log
    .replace(ANSI, '')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  const own = lines
    .filter((l) => l.startsWith('proctor: ') && !l.startsWith('proctor: note: '))
    .map((l) => l.slice('proctor: '.length));
  if (own.length > 0) return [...new Set(own)].join('; ');
  const reason = error.message.split('\n')[0] ?? error.message;
  const tail = lines.filter((l) => !/^(?:Step \d+\/\d+ :| ---> |Removing intermediate)/.test(l));
  return `${reason.replace(/^.*? failed: /, '')}; its last lines:\n  ${tail.slice(-8).join('\n  ')}`;
}

/** The staged bundle as the evaluator sees it, its two lists replaced by the scope. */
function probeBundle(
  dir: string,
  task: TaskToml,
  scopeFile: string,
  scope: string[],
  limits: Record<string, number>,
): Bundle {
  const full: BundleLimits = {
    solverSeconds: 1800,
    testSeconds: 600,
    cpus: 1,
    memoryMb: 2048,
    pids: 256,
    outputBytes: 1024 * 1024,
    patchBytes: limits['patch_bytes'] ?? 1024 * 1024,
    candidateFiles: limits['candidate_files'] ?? 200,
  };
  return {
    dir,
    id: task.id,
    environment: {
      kind: 'dockerfile',
      contextDir: join(dir, 'environment'),
      dockerfile: 'Dockerfile',
      ...(task.install !== undefined
        ? { install: { command: task.install, workdir: task.workdir, baseCommit: task.baseCommit } }
        : {}),
    },
    workdir: task.workdir,
    baseCommit: task.baseCommit,
    grading: { allow: ['**'], deny: [], allowSymlinks: true, tamper: 'flag', rules: 'proctor' },
    testsEnv: { [DISCOVER_ENV]: '1' },
    limits: full,
    paths: {
      description: join(dir, 'description.md'),
      runner: join(dir, 'tests', 'run'),
      existing: scopeFile,
      hidden: scopeFile,
      hiddenPatch: join(dir, 'tests', 'hidden.patch'),
      goldPatch: join(dir, 'solution', 'gold.patch'),
    },
    existingIds: scope,
    hiddenIds: scope,
    contentHash: createHash('sha256')
      .update(`${task.id}\0${task.baseCommit}\0${SOURCE_DATE_EPOCH}`)
      .digest('hex'),
  };
}
