// `proctor import swebench`: each SWE-bench row becomes SUITE/<id>/, a bundle of format 1:
// environment/ = the build context (the first of DIR/<owner>__<name>/<version>/,
// DIR/<owner>__<name>/ and DIR that holds a Dockerfile, findEnvironment; without --environment,
// the repository's catalog environments/<owner>__<name>/<version>/, catalog.ts) plus a one-commit
// snapshot of base_commit at /testbed (as derive makes it);
// tests/run = the built-in runner its own test IDs name (pytest's path::name, django's
// name (module.Class), sympy's bare names), else its repository's dialect (dialects.ts), else
// its test patch's language's; or --runner's for every row (the row's line says which and
// why); hidden.patch = test_patch; gold.patch = patch;
// hidden.txt = FAIL_TO_PASS; existing.txt = PASS_TO_PASS; description.md = problem_statement;
// [grading] rules = "swebench", and deny = the test patch's files and the dialect's test
// machinery; [tests] env = the dialect's; [source] keeps where it came from;
// [environment] install = --install, else the text of an install.sh or install file beside
// the Dockerfile (not copied into environment/); [source] dataset = the row's `dataset`, else
// the rows file's name. A base commit's submodules (submodules.ts) are vendored into the
// snapshot, as ordinary files at the gitlink's commit, when --repos holds a mirror of each one's
// repository (found by its .gitmodules URL, as the row's own repository is found); the others
// stay empty (a grade has no network for `git submodule update`). A note says which came from
// where, or what to add. Nothing runs here: `proctor baseline SUITE
// --gold --wait` then tells which tasks are sound on this machine.
//
// A task repository's instance (task-repo-import.ts) is written here too, its environment its
// own Dockerfile and folder.
//
// A row that cannot become a bundle (malformed, colliding id, missing repository, commit or
// Dockerfile) is listed with its reason and skipped; the others are written, each atomically.
// A bundle already there is left alone when it matches what would be written (the snapshot's
// bytes aside: base_commit pins its content) and rewritten only with `force`.
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describeError, isProctorError, ProctorError } from '../errors.js';
import { JEST_IDS_ENV, pathsTouchedBy, runnerRunsPytest } from '../oracle/index.js';
import { git, resolveCommit } from '../derive/git.js';
import { SNAPSHOT_FILE, writeEnvironment } from '../derive/snapshot.js';
import {
  checkOutParent,
  commitBundle,
  limitsFor,
  stagingDir,
  writeBundleFiles,
  type TaskToml,
} from '../derive/write.js';
import {
  BUILTIN_RUNNERS,
  isBuiltinRunner,
  RUNNER_FILE,
  writeRunner,
  type BuiltinRunner,
} from '../runners/index.js';
import { resolveDigest } from '../sandbox/distribution.js';
import type { DockerClient } from '../sandbox/docker.js';
import { CATALOG_DIR, catalogEnvironment } from './catalog.js';
import {
  chooseDialect,
  dialectOf,
  DIALECT_RULES,
  isDialect,
  jestJsonRow,
  type Dialect,
} from './dialects.js';
import {
  imageName,
  parseImageTemplate,
  SWEBENCH_IMAGE_LAYOUT,
  type ImageTemplate,
} from './images.js';
import { bundleId, readRows, type SwebenchRow } from './rows.js';
import { planSubmodules } from './submodules.js';
import { EVALUATOR_ENTRIES } from './task-repo.js';

export const SWEBENCH_WORKDIR = '/testbed';
export const ID = /^[a-z0-9][a-z0-9._-]{0,127}$/;

export interface ImportOptions {
  rows: string;
  /** Without `images`: the repositories and build contexts each row's bundle is made from. */
  repos?: string;
  /** Build contexts by repository and version; without it, the catalog (`catalog`). */
  environment?: string;
  /** The environment catalog used when `environment` is not given; default CATALOG_DIR. */
  catalog?: string;
  /** --images: each row's prebuilt image, by a convention or a name template (images.ts). */
  images?: string;
  /** The engine that pins each image's tag to its digest; needed with `images`. */
  docker?: DockerClient;
  out: string;
  only?: string[];
  force?: boolean;
  /** [environment] install for every row; else each environment folder's install(.sh) file. */
  install?: string;
  /** A built-in runner's name or the path of the user's own, for every row; else the table. */
  runner?: string;
}

/** The runner of every row, from --runner: a built-in one, or the bytes of the user's file. */
export type RunnerChoice = { builtin: BuiltinRunner } | { file: string; bytes: Buffer };

export type RowOutcome =
  | {
      row: number;
      /** A task repository's instance folder (tasks/<id>), named instead of the row. */
      where?: string;
      instanceId?: string;
      id: string;
      status: 'written' | 'rewritten' | 'unchanged';
      /** The built-in runner's name, or the --runner FILE copied as tests/run. */
      runner: string;
      /** How the runner was chosen: the row's test IDs, the dialect table, its test patch, --runner. */
      why: string;
      /** The environment folder the bundle's build context came from, or its pinned image. */
      environment: string;
      /** Its submodules: vendored from which mirror, or left empty and what to add. */
      notes: string[];
    }
  | {
      row: number;
      where?: string;
      instanceId?: string;
      id?: string;
      status: 'skipped';
      reasons: string[];
    }
  /** A task repository's instance that its sweb.yaml does not publish (--only imports it). */
  | { row: number; where: string; instanceId: string; status: 'unpublished'; reason: string };

export interface ImportResult {
  outcomes: RowOutcome[];
  /** --only instance ids that no row has. */
  unknownOnly: string[];
}

const repoFolder = (repo: string) => repo.replace('/', '__');

/** Every file under `dir`, relative, sorted; the snapshot is left out. */
function filesOf(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[])
    .filter((p) => statSync(join(dir, p)).isFile() && p !== join('environment', SNAPSHOT_FILE))
    .sort();
}

function sameBundle(a: string, b: string): boolean {
  const files = filesOf(a);
  const other = filesOf(b);
  if (files.length !== other.length || files.some((f, i) => f !== other[i])) return false;
  return files.every((f) => readFileSync(join(a, f)).equals(readFileSync(join(b, f))));
}

const hasDockerfile = (dir: string) => existsSync(join(dir, 'Dockerfile'));

/** Names of the file beside a Dockerfile that holds its install command. */
export const INSTALL_FILES = ['install.sh', 'install'] as const;

/**
 * The install command of an environment folder: the text of its install.sh or install file
 * (one of them), run with `sh -c` in the work tree ([environment] install); none without.
 */
function installIn(context: string): string | undefined | { reason: string } {
  const present = INSTALL_FILES.map((name) => join(context, name)).filter((p) => existsSync(p));
  if (present.length === 0) return undefined;
  if (present.length > 1) return { reason: `${present.join(' and ')}: keep one install file` };
  const [file = ''] = present;
  if (!statSync(file).isFile()) return { reason: `${file} is not a file` };
  const text = readFileSync(file, 'utf8').trim();
  if (text === '') return { reason: `${file} is empty; remove it, or write the install command` };
  if (text.includes('\0')) return { reason: `${file} holds a NUL byte` };
  return text;
}

/**
 * The entries of `context` that are other environments: in DIR, each folder with a Dockerfile
 * and each <owner>__<name> folder of versions; in DIR/<owner>__<name>, each version folder.
 */
function otherContexts(context: string, dir: string): string[] {
  const folders = readdirSync(context).filter((n) => statSync(join(context, n)).isDirectory());
  if (context === dir) {
    return folders.filter((name) => {
      const path = join(context, name);
      if (hasDockerfile(path)) return true;
      return name.includes('__') && readdirSync(path).some((v) => hasDockerfile(join(path, v)));
    });
  }
  if (dirname(context) === dir) return folders.filter((name) => hasDockerfile(join(context, name)));
  return [];
}

/** `path`'s text at `commit`, or undefined when the commit has no such file. */
async function fileAt(repo: string, commit: string, path: string): Promise<string | undefined> {
  try {
    return (await git(repo, ['show', `${commit}:${path}`])).toString('utf8');
  } catch {
    return undefined;
  }
}

function findRepo(dir: string, repo: string): string | undefined {
  const name = repoFolder(repo);
  return [join(dir, name), join(dir, `${name}.git`)].find((p) => existsSync(p));
}

/**
 * The build context of a row: DIR/<owner>__<name>/<version>/, then DIR/<owner>__<name>/, then
 * DIR, the first that holds a Dockerfile (SWE-bench pins Python and packages per repository
 * and version). A version folder that exists without a Dockerfile is a mistake, not a reason
 * to fall back: the row would silently build with another version's packages.
 */
export function findEnvironment(
  dir: string,
  row: Pick<SwebenchRow, 'repo' | 'version'>,
): { context: string } | { reason: string } {
  const own = join(dir, repoFolder(row.repo));
  const version = row.version !== undefined && safeName(row.version) ? row.version : undefined;
  if (version !== undefined) {
    const versioned = join(own, version);
    if (existsSync(versioned)) {
      if (hasDockerfile(versioned)) return { context: versioned };
      return {
        reason: `${versioned} exists but holds no Dockerfile (the environment of version ${version})`,
      };
    }
  }
  if (hasDockerfile(own)) return { context: own };
  if (hasDockerfile(dir)) return { context: dir };
  const tried =
    version !== undefined ? `${join(own, version)}, ${own} or ${dir}` : `${own} or ${dir}`;
  return { reason: `no Dockerfile in ${tried}` };
}

/** A version usable as one folder name: no separators, not `.` or `..`. */
const safeName = (name: string) =>
  name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);

/**
 * Refuses, as a usage error, a --runner that is neither a built-in runner nor a non-empty
 * regular file; reads the file once, so that every row gets the same bytes.
 */
function chooseRunner(value: string | undefined): RunnerChoice | undefined {
  if (value === undefined) return undefined;
  if (isBuiltinRunner(value)) return { builtin: value };
  const stat = statSync(value, { throwIfNoEntry: false });
  if (stat === undefined) {
    // A bare word is a mistyped runner name more often than a missing file in this folder.
    if (!/[/.]/.test(value)) {
      throw new ProctorError(
        'USAGE',
        `--runner ${value}: not a built-in runner (${BUILTIN_RUNNERS.join(', ')}) nor a file; pass one of them, or FILE, a runner of your own`,
      );
    }
    throw new ProctorError('USAGE', `--runner ${value}: no such file`);
  }
  if (!stat.isFile()) throw new ProctorError('USAGE', `--runner ${value}: not a regular file`);
  let bytes: Buffer;
  try {
    bytes = readFileSync(value);
  } catch (error) {
    throw new ProctorError('USAGE', `--runner ${value}: cannot be read (${describeError(error)})`);
  }
  if (bytes.length === 0) {
    throw new ProctorError('USAGE', `--runner ${value}: is empty; a runner is a program`);
  }
  return { file: value, bytes };
}

const runnerLabel = (runner: RunnerChoice) => ('builtin' in runner ? runner.builtin : runner.file);

/** Writes `runner` as tests/run into `testsDir`, executable. */
async function putRunner(runner: RunnerChoice, testsDir: string): Promise<void> {
  if ('builtin' in runner) {
    await writeRunner(runner.builtin, testsDir);
    return;
  }
  const target = join(testsDir, RUNNER_FILE);
  writeFileSync(target, runner.bytes);
  chmodSync(target, 0o755);
}

/** Runners whose tests run on the project's Python, which SWE-bench's images keep apart. */
const PYTHON_RUNNERS: ReadonlySet<string> = new Set(['pytest', 'django', 'sympy']);

/**
 * The pinned reference of a row's image (its tag's digest, asked of the registry without a
 * pull), or why there is none. An engine that does not answer is thrown: no row can do better.
 */
async function pinImage(
  row: SwebenchRow,
  template: ImageTemplate,
  docker: DockerClient,
): Promise<{ reference: string } | { reasons: string[] }> {
  const named = imageName(template, row);
  if ('reason' in named) return { reasons: [named.reason] };
  try {
    return { reference: (await resolveDigest(docker, named.name)).reference };
  } catch (error) {
    if (isProctorError(error, 'DOCKER_UNAVAILABLE') || !isProctorError(error)) throw error;
    return { reasons: [describeError(error)] };
  }
}

/** A row written into the suite (how, with which runner and why), or the reasons it was not. */
export type RowWrite =
  | {
      status: 'written' | 'rewritten' | 'unchanged';
      runner: string;
      why: string;
      environment: string;
      notes: string[];
    }
  | { reasons: string[] };

async function importRow(
  row: SwebenchRow,
  id: string,
  options: ImportOptions,
  choice: RunnerChoice | undefined,
  template: ImageTemplate | undefined,
): Promise<RowWrite> {
  const repos = options.repos ?? '';
  // With an image, the image holds the repository: there is no mirror to read.
  const repo = template !== undefined ? undefined : findRepo(repos, row.repo);
  const notFound = () => ({
    reasons: [`repository ${row.repo} not found: no ${join(repos, repoFolder(row.repo))}(.git)`],
  });
  const notes: string[] = [];
  // The repository's own dialect (its machinery is denied whichever runner grades it), and
  // the runner's, chosen by the row's IDs, the table, then its test patch's language.
  const table = dialectOf(row.repo);
  let chosen: Dialect | undefined;
  let why = '--runner';
  if (choice === undefined) {
    let paths: string[] = [];
    try {
      paths = pathsTouchedBy(Buffer.from(row.testPatch));
    } catch {
      // Not a diff: the reason then names no file, and the runner the user must bring.
    }
    let missing = false;
    const picked = await chooseDialect(
      { repo: row.repo, ids: [...row.failToPass, ...row.passToPass], paths },
      async () => {
        if (repo === undefined && template === undefined) missing = true;
        return repo === undefined ? undefined : fileAt(repo, row.baseCommit, 'package.json');
      },
    );
    if (missing) return notFound();
    if ('reason' in picked) return { reasons: [picked.reason] };
    chosen = picked.dialect;
    why = picked.why;
  }
  const runner: RunnerChoice = choice ?? { builtin: chosen! };
  if (template !== undefined) {
    const pinned = await pinImage(row, template, options.docker!);
    if ('reasons' in pinned) return pinned;
    return writeRow(row, id, options, runner, why, table, {
      kind: 'image',
      reference: pinned.reference,
      notes,
    });
  }
  if (repo === undefined) return notFound();
  try {
    await resolveCommit(repo, row.baseCommit, 'base_commit');
  } catch {
    return { reasons: [`base_commit ${row.baseCommit} is not in ${repo}`] };
  }
  const submodules = await planSubmodules(
    repo,
    row.repo,
    row.baseCommit,
    (name) => findRepo(repos, name),
    (name) => join(repos, repoFolder(name)),
  );
  notes.push(...submodules.notes);
  const found =
    options.environment !== undefined
      ? findEnvironment(options.environment, row)
      : catalogEnvironment(options.catalog ?? CATALOG_DIR, row);
  if ('reason' in found) return { reasons: [found.reason] };
  return writeRow(row, id, options, runner, why, table, {
    kind: 'context',
    context: found.context,
    repo,
    vendored: submodules.vendored,
    notes,
  });
}

/** Where a bundle's image comes from: a build context and a snapshot, or a pinned image. */
type RowEnvironment =
  | {
      kind: 'context';
      context: string;
      repo: string;
      vendored: Parameters<typeof writeEnvironment>[6];
      notes: string[];
    }
  | { kind: 'image'; reference: string; notes: string[] }
  /**
   * A task repository's instance: its own Dockerfile, whose image holds the repository at
   * /testbed at base_commit (the oracle checks HEAD); its folder, evaluator files left out, is
   * the build context; `python` the interpreter its eval.sh activates; `logParser` its
   * task.yaml's log_parser.
   */
  | { kind: 'dockerfile'; context: string; python?: string; logParser?: string; notes: string[] };

export async function writeRow(
  row: SwebenchRow,
  id: string,
  options: ImportOptions,
  runner: RunnerChoice,
  why: string,
  table: Dialect | undefined,
  env: RowEnvironment,
): Promise<RowWrite> {
  const { notes } = env;
  const context = env.kind === 'image' ? `image ${env.reference}` : env.context;
  const install = options.install ?? (env.kind === 'context' ? installIn(env.context) : undefined);
  if (typeof install === 'object') return { reasons: [install.reason] };
  let hiddenPaths: string[];
  const reasons: string[] = [];
  const gold = Buffer.from(row.patch);
  const hidden = Buffer.from(row.testPatch);
  try {
    hiddenPaths = pathsTouchedBy(hidden);
  } catch (error) {
    reasons.push(`test_patch is not a git diff: ${describeError(error)}`);
    hiddenPaths = [];
  }
  let goldFiles = 0;
  try {
    goldFiles = pathsTouchedBy(gold).length;
  } catch (error) {
    reasons.push(`patch is not a git diff: ${describeError(error)}`);
  }
  if (reasons.length > 0) return { reasons };

  const label = runnerLabel(runner);
  const target = join(options.out, id);
  const staging = stagingDir(target);
  try {
    // The base commit: the snapshot's (a commit of its own, made from base_commit), or with a
    // prebuilt image the row's, which the oracle checks against `git rev-parse HEAD` in it.
    let baseCommit = row.baseCommit;
    if (env.kind === 'context') {
      // The other repositories' and versions' contexts inside a shared one are theirs, not
      // this bundle's.
      const skip = [...otherContexts(env.context, options.environment ?? ''), ...INSTALL_FILES];
      const snapshot = await writeEnvironment(
        env.context,
        join(staging, 'environment'),
        env.repo,
        row.baseCommit,
        SWEBENCH_WORKDIR,
        skip,
        env.vendored,
      );
      baseCommit = snapshot.commit;
    } else if (env.kind === 'dockerfile') {
      // The instance's folder is its Dockerfile's context (SWE-bench builds in it), all but
      // what the evaluator and the solver are given.
      // Symlinks as they are (a relative one stays relative): one that leaves the bundle is
      // refused when it loads.
      const left = new Set([...EVALUATOR_ENTRIES].map((name) => join(env.context, name)));
      cpSync(env.context, join(staging, 'environment'), {
        recursive: true,
        verbatimSymlinks: true,
        filter: (path) => !left.has(path),
      });
    }
    const source: Record<string, string> = {
      // What the row says, else the rows file's name (SWE-bench's rows do not name their
      // dataset: multilingual.jsonl, test.parquet's conversion, is the best there is).
      dataset: row.dataset ?? basename(options.rows),
      instance_id: row.instanceId,
      repo: row.repo,
      base_commit: row.baseCommit,
      ...(row.version !== undefined ? { version: row.version } : {}),
      ...(row.environmentSetupCommit !== undefined
        ? { environment_setup_commit: row.environmentSetupCommit }
        : {}),
      ...(row.hintsText !== undefined ? { hints_text: row.hintsText } : {}),
      ...(row.createdAt !== undefined ? { created_at: row.createdAt } : {}),
    };
    const testsDir = join(staging, 'tests');
    mkdirSync(testsDir, { recursive: true });
    await putRunner(runner, testsDir);
    // The test machinery of the repository's dialect and of the runner's (the same unless
    // --runner chose another), and conftest.py for any runner that runs pytest, as derive
    // and validate judge it.
    const dialects = [
      ...new Set([
        ...(table !== undefined ? [table] : []),
        ...('builtin' in runner && isDialect(runner.builtin) ? [runner.builtin] : []),
      ]),
    ];
    const machinery = dialects.flatMap((d) => DIALECT_RULES[d].deny);
    if (await runnerRunsPytest(join(testsDir, RUNNER_FILE))) machinery.push('**/conftest.py');
    const testsEnv = Object.assign({}, ...dialects.map((d) => DIALECT_RULES[d].env)) as Record<
      string,
      string
    >;
    // SWE-bench's images keep the project's Python in a conda environment that the tests must
    // run in; the Python runners run their tests on the interpreter this names.
    const python =
      env.kind === 'image'
        ? SWEBENCH_IMAGE_LAYOUT.python
        : env.kind === 'dockerfile'
          ? env.python
          : undefined;
    if (python !== undefined && 'builtin' in runner && PYTHON_RUNNERS.has(runner.builtin)) {
      testsEnv['RUNNER_PYTHON'] = python;
    }
    // The jest runner reads its ids as the row's parser wrote them: parse_log_jest_json's
    // describe blocks and title, for the rows SWE-bench grades with it.
    const logParser = env.kind === 'dockerfile' ? env.logParser : undefined;
    if (
      'builtin' in runner &&
      runner.builtin === 'jest' &&
      jestJsonRow(row.instanceId, logParser)
    ) {
      testsEnv[JEST_IDS_ENV] = 'json';
      notes.push(
        `its ids are parse_log_jest_json's (describe blocks and title joined by " > "): [tests] env ${JEST_IDS_ENV} = "json"`,
      );
    }
    const task: TaskToml = {
      id,
      workdir: SWEBENCH_WORKDIR,
      baseCommit,
      // SWE-bench's images commit their install's changes on top of base_commit and keep
      // its untracked build output in the work tree: both are the environment, graded as is.
      ...(env.kind === 'image' ? { image: env.reference, setupCommit: true } : {}),
      // The test patch's own files, exactly: broad globs would also drop source folders
      // that some projects name test/ or testing/ (django/test/, sympy/testing/).
      deny: [...new Set([...hiddenPaths, ...machinery])],
      ...(install !== undefined ? { install } : {}),
      rules: 'swebench',
      testsEnv,
      limits: limitsFor(gold, goldFiles),
      source,
    };
    writeBundleFiles(staging, {
      task,
      description: row.problemStatement,
      hiddenPatch: hidden,
      goldPatch: gold,
      existing: [...new Set(row.passToPass)],
      hidden: [...new Set(row.failToPass)],
    });
    if (existsSync(target)) {
      if (sameBundle(staging, target)) {
        rmSync(staging, { recursive: true, force: true });
        return { status: 'unchanged', runner: label, why, environment: context, notes };
      }
      if (!options.force) {
        rmSync(staging, { recursive: true, force: true });
        return { reasons: [`${target} exists and differs; --force rewrites it`] };
      }
      await commitBundle(staging, target, true);
      return { status: 'rewritten', runner: label, why, environment: context, notes };
    }
    await commitBundle(staging, target);
    return { status: 'written', runner: label, why, environment: context, notes };
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (isProctorError(error, 'BUNDLE_INVALID') || isProctorError(error, 'USAGE')) {
      return { reasons: [describeError(error).replace(/\n\s*/g, '; ')] };
    }
    throw error;
  }
}

/** --out, --install and --runner, checked alike for rows and task repositories. */
export function checkCommonOptions(options: ImportOptions): RunnerChoice | undefined {
  if (existsSync(options.out) && !statSync(options.out).isDirectory()) {
    throw new ProctorError('USAGE', `--out ${options.out}: exists and is not a folder`);
  }
  checkOutParent('--out', options.out);
  if (
    options.install !== undefined &&
    (options.install.trim() === '' || options.install.includes('\0'))
  ) {
    throw new ProctorError('USAGE', '--install: must be a shell command, not empty');
  }
  return chooseRunner(options.runner);
}

export async function importSwebench(
  options: ImportOptions,
  onOutcome: (outcome: RowOutcome) => void = () => {},
): Promise<ImportResult> {
  const template = options.images === undefined ? undefined : parseImageTemplate(options.images);
  if (template !== undefined) {
    const given = (['repos', 'environment'] as const).filter((o) => options[o] !== undefined);
    if (given.length > 0) {
      throw new ProctorError(
        'USAGE',
        `--images takes each row's repository and environment from its image; drop ${given.map((o) => `--${o}`).join(' and ')}`,
      );
    }
    if (options.docker === undefined) {
      throw new ProctorError('USAGE', '--images needs a Docker engine to pin each image');
    }
  } else {
    // Without --environment, each row's environment comes from the catalog.
    for (const [option, dir] of [
      ['--repos', options.repos],
      ['--environment', options.environment],
    ] as const) {
      if (dir === undefined) {
        if (option === '--environment') continue;
        throw new ProctorError('USAGE', `${option} is needed (or --images, for prebuilt images)`);
      }
      if (!existsSync(dir) || !statSync(dir).isDirectory()) {
        throw new ProctorError('USAGE', `${option} ${dir}: not a folder`);
      }
    }
  }
  const runner = checkCommonOptions(options);
  const rows = await readRows(options.rows);
  const only = options.only === undefined ? undefined : new Set(options.only);
  const present = new Set(rows.flatMap((r) => (r.ok ? [r.value.instanceId] : [])));
  const unknownOnly = [...(only ?? [])].filter((id) => !present.has(id));
  const chosen = rows.filter((r) => only === undefined || (r.ok && only.has(r.value.instanceId)));

  // Ids first, over every chosen row, so that a collision names both rows whatever the order.
  const byId = new Map<string, Array<{ row: number; instanceId: string }>>();
  for (const r of chosen) {
    if (!r.ok) continue;
    const id = bundleId(r.value.instanceId);
    byId.set(id, [...(byId.get(id) ?? []), { row: r.row, instanceId: r.value.instanceId }]);
  }
  const outcomes: RowOutcome[] = [];
  const emit = (outcome: RowOutcome) => {
    outcomes.push(outcome);
    onOutcome(outcome);
  };
  for (const r of chosen) {
    if (!r.ok) {
      emit({
        row: r.row,
        ...(r.instanceId !== undefined ? { instanceId: r.instanceId } : {}),
        status: 'skipped',
        reasons: r.reasons,
      });
      continue;
    }
    const { instanceId } = r.value;
    const id = bundleId(instanceId);
    const skip = (reasons: string[]) =>
      emit({ row: r.row, instanceId, id, status: 'skipped', reasons });
    if (!ID.test(id)) {
      skip([`instance_id gives the id ${JSON.stringify(id)}, not [a-z0-9][a-z0-9._-]{0,127}`]);
      continue;
    }
    const others = (byId.get(id) ?? []).filter((o) => o.row !== r.row);
    if (others.length > 0) {
      skip(
        others.map(
          (o) =>
            `id ${id} collides with row ${o.row} (instance_id ${JSON.stringify(o.instanceId)})`,
        ),
      );
      continue;
    }
    const done = await importRow(r.value, id, options, runner, template);
    if ('reasons' in done) skip(done.reasons);
    else emit({ row: r.row, instanceId, id, ...done });
  }
  return { outcomes, unknownOnly };
}
