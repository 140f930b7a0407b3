// SWE-bench 5's task repositories, read as they are (swebench/task/repo.py and checks.py): a
// `sweb.yaml` naming the datasets the repository publishes and their splits, and one folder an
// instance under tasks/:
//   task.yaml             instance_id, repo, version, base_commit, split, datasets, image,
//                         log_parser, eval_type, …
//   tests.json            {"FAIL_TO_PASS": [...], "PASS_TO_PASS": [...]}
//   problem_statement.md  hints.md (optional)  gold.patch  test.patch
//   eval.sh               the harness's script; its test command runs between the markers
//                         `: '>>>>> Start Test Output'` and `: '>>>>> End Test Output'`
//   Dockerfile            the instance's image, built with its own folder as the context
//   test_assets/          binary files the test patch cannot carry (SWE-bench Multimodal)
// Each instance becomes a row (rows.ts checks it as it checks a dataset's) and what the import
// needs beside it: its folder (the Dockerfile's context), its test command, and the
// interpreter eval.sh activates. Pure reading: nothing is built here.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describeError, ProctorError } from '../errors.js';
import { checkRow, type SwebenchRow } from './rows.js';

export const CONFIG_FILE = 'sweb.yaml';
export const TASKS_DIR = 'tasks';
const TASK_FILE = 'task.yaml';
const TESTS_FILE = 'tests.json';

/** The files every instance folder needs, as `swebench dataset check` requires them. */
const REQUIRED_FILES = [
  TASK_FILE,
  TESTS_FILE,
  'Dockerfile',
  'gold.patch',
  'test.patch',
  'eval.sh',
  'problem_statement.md',
] as const;

/**
 * The entries of an instance folder that are the evaluator's or the solver's: they stay out of
 * the bundle's build context, so that no image or build cache holds them.
 */
export const EVALUATOR_ENTRIES: ReadonlySet<string> = new Set([
  TASK_FILE,
  TESTS_FILE,
  'problem_statement.md',
  'hints.md',
  'gold.patch',
  'test.patch',
  'eval.sh',
  'test_assets',
  'problem_assets',
  'assets',
]);

const START_MARKER = '>>>>> Start Test Output';
const END_MARKER = '>>>>> End Test Output';

export interface TaskRepoConfig {
  datasets: string[];
  /** The published splits; ["test"] when sweb.yaml names none, as SWE-bench defaults. */
  splits: string[];
}

export interface TaskInstance {
  /** tasks/<folder>, as the line names it. */
  where: string;
  /** The instance folder: the Dockerfile's build context. */
  folder: string;
  row: SwebenchRow;
  split?: string;
  datasets: string[];
  /** eval.sh's lines between its output markers. */
  command: string;
  /** The interpreter eval.sh activates (conda's env or a venv), if it activates one. */
  python?: string;
  /** task.yaml's log_parser: the PARSER_REGISTRY name SWE-bench reads the log with. */
  logParser?: string;
}

export type InstanceResult =
  | { index: number; where: string; ok: true; value: TaskInstance }
  | { index: number; where: string; ok: false; instanceId?: string; reasons: string[] };

/** A folder is a task repository when it has a sweb.yaml or a tasks/ folder. */
export function isTaskRepo(dir: string): boolean {
  const tasks = join(dir, TASKS_DIR);
  return existsSync(join(dir, CONFIG_FILE)) || (existsSync(tasks) && statSync(tasks).isDirectory());
}

/** A YAML error on one line: the parser's first line, without the code frame it announces. */
function yamlProblem(error: unknown): string {
  return (describeError(error).split('\n')[0] ?? '').replace(/:\s*$/, '');
}

/** YAML read without implicit typing: `1.0` and a commit id of digits stay text. */
function readYaml(path: string): unknown {
  return parseYaml(readFileSync(path, 'utf8'), { schema: 'failsafe' });
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const stringList = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;

/**
 * sweb.yaml, or undefined for a repository of tasks/ alone (every split is then imported). A
 * sweb.yaml that is not YAML, or names no datasets, is one USAGE line.
 */
export function readTaskRepoConfig(dir: string): TaskRepoConfig | undefined {
  const path = join(dir, CONFIG_FILE);
  if (!existsSync(path)) return undefined;
  let config: unknown;
  try {
    config = readYaml(path);
  } catch (error) {
    throw new ProctorError('USAGE', `${path}: not valid YAML: ${yamlProblem(error)}`);
  }
  const datasets = isMap(config) ? stringList(config['datasets']) : undefined;
  if (datasets === undefined || datasets.length === 0) {
    throw new ProctorError('USAGE', `${path}: does not name any datasets (datasets: [...])`);
  }
  const splits = config && isMap(config) ? config['splits'] : undefined;
  if (splits !== undefined && stringList(splits) === undefined) {
    throw new ProctorError('USAGE', `${path}: splits must be a list of names`);
  }
  return { datasets, splits: stringList(splits) ?? ['test'] };
}

/** eval.sh's test command, or why it has none. */
export function testCommand(script: string): { command: string } | { reason: string } {
  const lines = script.split('\n');
  const start = lines.findIndex((l) => l.includes(START_MARKER));
  const end = lines.findIndex((l, i) => i > start && l.includes(END_MARKER));
  if (start < 0) return { reason: `eval.sh has no '${START_MARKER}' marker` };
  if (end < 0) return { reason: `eval.sh has no '${END_MARKER}' marker after its start` };
  const command = lines
    .slice(start + 1, end)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .join('\n');
  if (command === '') return { reason: 'eval.sh runs nothing between its output markers' };
  return { command };
}

/**
 * The interpreter eval.sh's tests run on, before its test command: `source ROOT/bin/activate`
 * then `conda activate ENV` is ROOT/envs/ENV/bin/python (SWE-bench's images); a `source
 * VENV/bin/activate` alone is VENV/bin/python. None otherwise.
 */
export function activatedPython(script: string): string | undefined {
  const before = script.split(START_MARKER)[0] ?? '';
  const sourced = [...before.matchAll(/(?:^|[\s;&])(?:source|\.)\s+(\/\S+)\/bin\/activate\b/gm)];
  const conda = [...before.matchAll(/\bconda\s+activate\s+([A-Za-z0-9_.-]+)/g)];
  const root = sourced.at(-1)?.[1];
  const env = conda.at(-1)?.[1];
  if (root === undefined) return undefined;
  if (env !== undefined && env !== 'base') return `${root}/envs/${env}/bin/python`;
  if (env === undefined) return `${root}/bin/python`;
  return undefined;
}

/** The sources a Dockerfile's COPY and ADD lines take from the build context. */
function contextSources(dockerfile: string): string[] {
  const joined = dockerfile.replace(/\\\r?\n/g, ' ');
  const sources: string[] = [];
  for (const raw of joined.split('\n')) {
    const words = raw
      .trim()
      .replace(/[[\]",]/g, ' ')
      .split(/\s+/)
      .filter((w) => w !== '');
    const [op, ...rest] = words;
    if (op === undefined || !/^(?:copy|add)$/i.test(op)) continue;
    if (rest.some((w) => w.startsWith('--from='))) continue;
    const args = rest.filter((w) => !w.startsWith('--'));
    sources.push(...args.slice(0, -1));
  }
  return sources;
}

/** The evaluator entries a Dockerfile copies into its image (they are not in its context). */
export function evaluatorFilesCopied(dockerfile: string): string[] {
  const named = contextSources(dockerfile).map((s) => s.replace(/^\.\//, '').split('/')[0] ?? '');
  return [...new Set(named.filter((n) => EVALUATOR_ENTRIES.has(n)))];
}

/** An optional task.yaml value as the rows have it: absent when empty or null. */
function optional(meta: Record<string, unknown>, key: string): unknown {
  const value = meta[key];
  return value === '' || value === 'null' || value === '~' ? undefined : value;
}

/** A row's reason (rows.ts) said of the file that holds the field. */
function inFile(reason: string): string {
  const files: Array<[RegExp, string]> = [
    [/^test_patch\b/, 'test.patch'],
    [/^patch\b/, 'gold.patch'],
    [/^problem_statement\b/, 'problem_statement.md'],
  ];
  for (const [field, file] of files) if (field.test(reason)) return reason.replace(field, file);
  return /^(FAIL_TO_PASS|PASS_TO_PASS)/.test(reason)
    ? `${TESTS_FILE}: ${reason}`
    : `${TASK_FILE}: ${reason}`;
}

/** One instance folder, checked; every problem is a reason. */
function readInstance(folder: string, where: string): TaskInstance | { reasons: string[] } {
  const missing = REQUIRED_FILES.filter((f) => {
    const path = join(folder, f);
    return !existsSync(path) || !statSync(path).isFile();
  });
  if (missing.includes(TASK_FILE)) return { reasons: [`no ${TASK_FILE}, so it is not a task`] };
  if (missing.length > 0) return { reasons: [`missing ${missing.join(', ')}`] };
  const reasons: string[] = [];
  let meta: unknown;
  try {
    meta = readYaml(join(folder, TASK_FILE));
  } catch (error) {
    return { reasons: [`${TASK_FILE} is not valid YAML: ${yamlProblem(error)}`] };
  }
  if (!isMap(meta)) return { reasons: [`${TASK_FILE} is not a mapping of keys to values`] };
  let tests: unknown;
  try {
    tests = JSON.parse(readFileSync(join(folder, TESTS_FILE), 'utf8'));
  } catch (error) {
    return { reasons: [`${TESTS_FILE} is not valid JSON: ${describeError(error)}`] };
  }
  if (!isMap(tests)) {
    return { reasons: [`${TESTS_FILE} must be an object with FAIL_TO_PASS and PASS_TO_PASS`] };
  }
  for (const key of ['FAIL_TO_PASS', 'PASS_TO_PASS']) {
    if (tests[key] === undefined) reasons.push(`${TESTS_FILE} has no ${key}`);
    else if (!Array.isArray(tests[key])) reasons.push(`${TESTS_FILE}: ${key} is not a list`);
  }
  if (reasons.length > 0) return { reasons };
  const text = (name: string) => readFileSync(join(folder, name), 'utf8');
  const datasets = stringList(meta['datasets']) ?? [];
  const raw = {
    instance_id: meta['instance_id'],
    repo: meta['repo'],
    base_commit: meta['base_commit'],
    version: optional(meta, 'version'),
    environment_setup_commit: optional(meta, 'environment_setup_commit'),
    created_at: optional(meta, 'created_at'),
    patch: text('gold.patch'),
    test_patch: text('test.patch'),
    problem_statement: text('problem_statement.md'),
    ...(existsSync(join(folder, 'hints.md')) ? { hints_text: text('hints.md') } : {}),
    FAIL_TO_PASS: tests['FAIL_TO_PASS'],
    PASS_TO_PASS: tests['PASS_TO_PASS'],
    ...(datasets.length > 0 ? { dataset: datasets.join(', ') } : {}),
  };
  const checked = checkRow(raw);
  reasons.push(...checked.reasons.map(inFile));
  const folderName = where.slice(TASKS_DIR.length + 1);
  if (typeof raw.instance_id === 'string' && raw.instance_id !== folderName) {
    reasons.push(
      `${TASK_FILE}: instance_id is ${JSON.stringify(raw.instance_id)}, not its folder's name`,
    );
  }
  const assets = meta['image_assets'];
  if (isMap(assets) && Object.values(assets).some((v) => Array.isArray(v) && v.length > 0)) {
    reasons.push(
      `${TASK_FILE}: image_assets names binary files the test or gold patch needs, which a bundle cannot carry yet`,
    );
  }
  // fail_only counts a test the log does not name as passed; Proctor's grading never does.
  const evalType = optional(meta, 'eval_type');
  if (evalType !== undefined && evalType !== 'pass_and_fail') {
    reasons.push(
      `${TASK_FILE}: eval_type ${JSON.stringify(evalType)}: only pass_and_fail is graded as SWE-bench grades it (fail_only counts a test missing from the log as passed)`,
    );
  }
  const script = text('eval.sh');
  const command = testCommand(script);
  if ('reason' in command) reasons.push(command.reason);
  const copied = evaluatorFilesCopied(text('Dockerfile'));
  if (copied.length > 0) {
    reasons.push(
      `Dockerfile copies ${copied.join(', ')}, which stay${copied.length === 1 ? 's' : ''} with the evaluator (not in the build context)`,
    );
  }
  if (reasons.length > 0 || checked.value === undefined || 'reason' in command) return { reasons };
  const split = typeof meta['split'] === 'string' ? meta['split'] : undefined;
  const logParser = typeof meta['log_parser'] === 'string' ? meta['log_parser'] : undefined;
  const python = activatedPython(script);
  return {
    where,
    folder,
    row: checked.value,
    datasets,
    command: command.command,
    ...(split !== undefined ? { split } : {}),
    ...(python !== undefined ? { python } : {}),
    ...(logParser !== undefined ? { logParser } : {}),
  };
}

/**
 * Every folder under DIR/tasks, in name order, each an instance or the reasons it is not. A
 * repository without tasks/ is one USAGE line.
 */
export function readTaskRepo(dir: string): InstanceResult[] {
  const root = join(dir, TASKS_DIR);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new ProctorError('USAGE', `${dir}: a task repository needs a ${TASKS_DIR}/ folder`);
  }
  const folders = readdirSync(root)
    .filter((name) => statSync(join(root, name)).isDirectory())
    .sort();
  return folders.map((name, i) => {
    const where = `${TASKS_DIR}/${name}`;
    const read = readInstance(join(root, name), where);
    if ('reasons' in read) {
      return { index: i + 1, where, ok: false, instanceId: name, reasons: read.reasons };
    }
    return { index: i + 1, where, ok: true, value: read };
  });
}

/**
 * Whether an instance is in what sweb.yaml publishes: a published split and a dataset it names
 * (swebench.task.repo.published_tasks); undefined when it is, else why not.
 */
export function unpublished(instance: TaskInstance, config: TaskRepoConfig | undefined) {
  if (config === undefined) return undefined;
  if (instance.split === undefined || !config.splits.includes(instance.split)) {
    return `split ${JSON.stringify(instance.split ?? '')} is not one ${CONFIG_FILE} publishes (${config.splits.join(', ')})`;
  }
  if (!instance.datasets.some((d) => config.datasets.includes(d))) {
    return `none of its datasets (${instance.datasets.join(', ') || 'none'}) is one ${CONFIG_FILE} publishes`;
  }
  return undefined;
}
