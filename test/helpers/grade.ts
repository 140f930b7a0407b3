// One evaluation of a bundle against a candidate (null: a baseline run) as the runner tests
// make it: the test scope's owner, the task uid 1000, and nothing left to clean up after; and
// what the runner tests read of one, or grade it by.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { loadBundle, type Bundle } from '../../src/oracle/bundle.js';
import { evaluate, type Evaluation } from '../../src/oracle/evaluate.js';
import { declaredOutcomes } from '../../src/oracle/verdict.js';
import type { DockerClient } from '../../src/sandbox/docker.js';
import type { DockerScope } from './docker.js';
import { withIds } from './repo-bundles.js';

export async function gradeIn(
  docker: DockerClient,
  scope: DockerScope,
  imageId: string,
  task: Bundle,
  candidate: Buffer | null,
): Promise<Evaluation> {
  const evaluation = await evaluate(docker, {
    bundle: task,
    imageId,
    candidate,
    owner: scope.owner(),
    sandbox: { uid: 1000, gid: 1000 },
  });
  expect(evaluation.cleanupError).toBeUndefined();
  return evaluation;
}

/** Each declared test's outcome in one phase of a checked evaluation, by id. */
export function outcomes(evaluation: Evaluation, phase: 'existing' | 'hidden') {
  const check = evaluation.phases?.[phase]?.check;
  if (!check) throw new Error(`no ${phase} check: ${JSON.stringify(evaluation.verdict)}`);
  return Object.fromEntries(declaredOutcomes(check));
}

/** Each declared test's outcome and SWE-bench status, by id. */
export function swebenchOf(evaluation: Evaluation): Record<string, [string, string | undefined]> {
  return Object.fromEntries(
    evaluation.tests.tests.map((t) => [t.id, [t.outcome, t.swebench]] as const),
  );
}

/** A copy of the bundle at `from` graded by SWE-bench's rules, with other lists when given. */
export async function swebenchTask(
  from: string,
  lists: { existing?: string[]; hidden?: string[] } = {},
): Promise<Bundle> {
  const copy = withIds(from, lists);
  const toml = join(copy, 'task.toml');
  writeFileSync(
    toml,
    readFileSync(toml, 'utf8').replace('[grading]\n', '[grading]\nrules = "swebench"\n'),
  );
  return loadBundle(copy);
}
