// The bundles named on a command line (`baseline`, `solve`): its own module so that the
// commands that take no bundles never load the oracle.
import { loadSuite, type Bundle } from '../oracle/index.js';
import type { Io } from './io.js';

/**
 * The valid bundles of the given bundles and suites, in order; each invalid one is named on
 * stderr with its problems and counted, so the command can still run the rest.
 */
export async function loadBundles(
  io: Io,
  paths: readonly string[],
): Promise<{ bundles: Bundle[]; invalid: number }> {
  const bundles: Bundle[] = [];
  let invalid = 0;
  for (const path of paths) {
    const suite = await loadSuite(path);
    bundles.push(...suite.bundles);
    for (const problem of suite.problems) {
      invalid++;
      io.err(`proctor: skipped ${problem.dir}: ${problem.error.message}`);
    }
  }
  return { bundles, invalid };
}
