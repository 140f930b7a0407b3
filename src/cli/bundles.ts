// The bundles named on a command line (`baseline`, `solve`): its own module so that the
// commands that take no bundles never load the oracle.
import { basename } from 'node:path';
import { loadSuite, type Bundle } from '../oracle/index.js';
import type { Io } from './io.js';

/**
 * The valid bundles of the given bundles and suites, in order; each invalid one is named on
 * stderr with its problems and counted, so the command can still run the rest.
 */
export async function loadBundles(
  io: Io,
  paths: readonly string[],
): Promise<{ bundles: Bundle[]; invalid: number; suiteTasks: string[] }> {
  const bundles: Bundle[] = [];
  let invalid = 0;
  const invalidTasks: string[] = [];
  for (const path of paths) {
    const suite = await loadSuite(path);
    bundles.push(...suite.bundles);
    for (const problem of suite.problems) {
      invalid++;
      invalidTasks.push(basename(problem.dir));
      io.err(`proctor: skipped ${problem.dir}: ${problem.error.message}`);
    }
  }
  // The tasks a batch of these paths stands for: every bundle's id, and a bundle that does not
  // load by its folder's name (import and derive make that the task id), so that a report of
  // the batch counts it as not submitted.
  return { bundles, invalid, suiteTasks: [...bundles.map((b) => b.id), ...invalidTasks] };
}
