// One evaluation of a bundle against a candidate (null: a baseline run) as the runner tests
// make it: the test scope's owner, the task uid 1000, and nothing left to clean up after.
import { expect } from 'vitest';
import type { Bundle } from '../../src/oracle/bundle.js';
import { evaluate, type Evaluation } from '../../src/oracle/evaluate.js';
import type { DockerClient } from '../../src/sandbox/docker.js';
import type { DockerScope } from './docker.js';

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
