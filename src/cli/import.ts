// `proctor import swebench ROWS (--repos DIR [--environment DIR] | --images CONVENTION) --out
// SUITE`: SWE-bench rows become bundles (src/import); `proctor import swebench TASK_REPO --out
// SUITE`: a SWE-bench task repository's instances do, each on its own Dockerfile. One line per
// row or instance as it is decided, then a count; --json prints one JSON document instead. Exit
// 0 when every chosen row became (or already was) a bundle, 1 when any was skipped or an --only
// id names no row. An instance its sweb.yaml does not publish is listed and left out, not
// skipped.
import { existsSync, statSync } from 'node:fs';
import type { ImportOptions, RowOutcome } from '../import/swebench.js';
import type { CommandContext } from './context.js';

/** 128 + SIGINT, as a shell reports a command it interrupted. */
const EXIT_INTERRUPTED = 130;

function line(o: RowOutcome): string {
  const who = `${o.where ?? `row ${o.row}`}${o.instanceId !== undefined ? ` (${o.instanceId})` : ''}`;
  if (o.status === 'skipped') return `skipped ${who}: ${o.reasons.join('; ')}`;
  if (o.status === 'unpublished') {
    return `unpublished ${who}: ${o.reason}; --only ${o.instanceId} imports it`;
  }
  const head = `${o.status.padEnd(9)} ${o.id}  ${who}  runner ${o.runner} (${o.why})  environment ${o.environment}`;
  return [head, ...o.notes.map((note) => `  note: ${note}`)].join('\n');
}

export async function importCommand(
  context: CommandContext,
  options: ImportOptions & { json?: boolean },
): Promise<number> {
  const { io } = context;
  // A folder is a task repository (task-repo-import.ts says so when it is not one); a file, rows.
  const taskRepo = existsSync(options.rows) && statSync(options.rows).isDirectory();
  const importer = taskRepo
    ? (await import('../import/task-repo-import.js')).importTaskRepo
    : (await import('../import/swebench.js')).importSwebench;
  const { discardStaging } = await import('../derive/write.js');
  let docker = options.docker;
  if (!taskRepo && options.images !== undefined && docker === undefined) {
    // A mistyped convention or placeholder is told before the engine is asked anything.
    (await import('../import/images.js')).parseImageTemplate(options.images);
    // Each image's digest is asked of its registry through the engine.
    const { dockerHost } = await import('../config.js');
    const { createDockerClient, requireDocker } = await import('../sandbox/docker.js');
    docker = createDockerClient(dockerHost());
    await requireDocker(docker, dockerHost() ?? '/var/run/docker.sock');
  }
  // Bundles written so far stay (each is whole); the one being staged is removed, so that no
  // hidden half-bundle is left beside them.
  const onSignal = () => {
    discardStaging();
    io.err('proctor: import: interrupted; the bundles written so far are kept');
    process.exit(EXIT_INTERRUPTED);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let result;
  try {
    result = await importer({ ...options, ...(docker ? { docker } : {}) }, (o) => {
      if (!options.json) io.out(line(o));
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const { outcomes, unknownOnly } = result;
  const count = (status: RowOutcome['status']) =>
    outcomes.filter((o) => o.status === status).length;
  const skipped = count('skipped');
  if (options.json) {
    io.out(JSON.stringify({ suite: options.out, rows: outcomes, unknownOnly }, null, 2));
  } else {
    for (const id of unknownOnly) io.out(`--only ${id}: no row has this instance_id`);
    const unpublished = count('unpublished');
    io.out(
      `${count('written')} written, ${count('rewritten')} rewritten, ${count('unchanged')} unchanged, ${skipped} skipped${unpublished > 0 ? `, ${unpublished} unpublished` : ''}`,
    );
    if (outcomes.length > skipped + unpublished) {
      io.out(`next: proctor baseline ${options.out} --gold --wait`);
    }
  }
  return skipped > 0 || unknownOnly.length > 0 ? 1 : 0;
}
