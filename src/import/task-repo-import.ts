// `proctor import swebench TASK_REPO`: a SWE-bench 5 task repository (task-repo.ts reads it)
// becomes a suite as rows do (swebench.ts writes each bundle), each instance on its own
// Dockerfile: its folder, without the evaluator's files, is the build context, and its image
// holds the project at /testbed at base_commit, which the oracle checks with `git rev-parse
// HEAD` as for --images. The runner is chosen by the instance's test IDs, then its eval.sh's
// test command, then the dialect table, then its test patch's language (or --runner); the
// interpreter eval.sh activates becomes RUNNER_PYTHON. Only what sweb.yaml publishes is
// imported, unless --only names an instance, as SWE-bench builds one by id from any split.
import { ProctorError } from '../errors.js';
import { pathsTouchedBy } from '../oracle/index.js';
import { chooseDialect, dialectOf, type Dialect } from './dialects.js';
import { bundleId } from './rows.js';
import {
  checkCommonOptions,
  ID,
  writeRow,
  type ImportOptions,
  type ImportResult,
  type RowOutcome,
  type RowWrite,
  type RunnerChoice,
} from './swebench.js';
import {
  isTaskRepo,
  readTaskRepo,
  readTaskRepoConfig,
  unpublished,
  type TaskInstance,
} from './task-repo.js';

/**
 * One instance of a task repository: its runner (by its IDs, its eval.sh's test command, the
 * dialect table, its test patch's language, or --runner) and its bundle, on its own Dockerfile.
 */
async function importInstance(
  instance: TaskInstance,
  id: string,
  options: ImportOptions,
  choice: RunnerChoice | undefined,
): Promise<RowWrite> {
  const { row } = instance;
  const table = dialectOf(row.repo);
  let why = '--runner';
  let chosen: Dialect | undefined;
  if (choice === undefined) {
    let paths: string[] = [];
    try {
      paths = pathsTouchedBy(Buffer.from(row.testPatch));
    } catch {
      // Not a diff: writeRow says so.
    }
    // The repository is in the image, not here: its package.json cannot be read.
    const picked = await chooseDialect(
      {
        repo: row.repo,
        ids: [...row.failToPass, ...row.passToPass],
        paths,
        command: instance.command,
      },
      () => Promise.resolve(undefined),
    );
    if ('reason' in picked) return { reasons: [picked.reason] };
    chosen = picked.dialect;
    why = picked.why;
  }
  return writeRow(row, id, options, choice ?? { builtin: chosen! }, why, table, {
    kind: 'dockerfile',
    context: instance.folder,
    ...(instance.python !== undefined ? { python: instance.python } : {}),
    ...(instance.logParser !== undefined ? { logParser: instance.logParser } : {}),
    notes: [],
  });
}

/**
 * `proctor import swebench DIR` for a task repository (task-repo.ts): each instance folder under
 * DIR/tasks that sweb.yaml publishes (a published split and dataset; any with --only) becomes a
 * bundle on its own Dockerfile. A malformed instance is skipped with its reasons, as a row is.
 */
export async function importTaskRepo(
  options: ImportOptions,
  onOutcome: (outcome: RowOutcome) => void = () => {},
): Promise<ImportResult> {
  const dir = options.rows;
  if (!isTaskRepo(dir)) {
    throw new ProctorError(
      'USAGE',
      `${dir}: a folder, but not a task repository (no sweb.yaml, no tasks/ folder); ROWS is a rows file or a task repository`,
    );
  }
  const given = (['repos', 'environment', 'images', 'catalog'] as const).filter(
    (o) => options[o] !== undefined,
  );
  if (given.length > 0) {
    throw new ProctorError(
      'USAGE',
      `${dir} is a task repository: each instance's Dockerfile is its environment; drop ${given.map((o) => `--${o}`).join(' and ')}`,
    );
  }
  const runner = checkCommonOptions(options);
  const config = readTaskRepoConfig(dir);
  const instances = readTaskRepo(dir);
  const nameOf = (r: (typeof instances)[number]) => (r.ok ? r.value.row.instanceId : r.instanceId);
  const only = options.only === undefined ? undefined : new Set(options.only);
  const present = new Set(instances.map(nameOf));
  const unknownOnly = [...(only ?? [])].filter((id) => !present.has(id));
  const chosen = instances.filter((r) => only === undefined || only.has(nameOf(r) ?? ''));
  const byId = new Map<string, string[]>();
  for (const r of chosen) {
    if (!r.ok) continue;
    const id = bundleId(r.value.row.instanceId);
    byId.set(id, [...(byId.get(id) ?? []), r.where]);
  }
  const outcomes: RowOutcome[] = [];
  const emit = (outcome: RowOutcome) => {
    outcomes.push(outcome);
    onOutcome(outcome);
  };
  for (const r of chosen) {
    const at = { row: r.index, where: r.where };
    if (!r.ok) {
      emit({
        ...at,
        ...(r.instanceId !== undefined ? { instanceId: r.instanceId } : {}),
        status: 'skipped',
        reasons: r.reasons,
      });
      continue;
    }
    const { instanceId } = r.value.row;
    const id = bundleId(instanceId);
    const skip = (reasons: string[]) => emit({ ...at, instanceId, id, status: 'skipped', reasons });
    const hidden = only === undefined ? unpublished(r.value, config) : undefined;
    if (hidden !== undefined) {
      emit({ ...at, instanceId, status: 'unpublished', reason: hidden });
      continue;
    }
    if (!ID.test(id)) {
      skip([`instance_id gives the id ${JSON.stringify(id)}, not [a-z0-9][a-z0-9._-]{0,127}`]);
      continue;
    }
    const others = (byId.get(id) ?? []).filter((w) => w !== r.where);
    if (others.length > 0) {
      skip(others.map((w) => `id ${id} collides with ${w}`));
      continue;
    }
    const done = await importInstance(r.value, id, options, runner);
    if ('reasons' in done) skip(done.reasons);
    else emit({ ...at, instanceId, id, ...done });
  }
  return { outcomes, unknownOnly };
}
