// What every command gets: its output streams, the resolved configuration, and a way to open
// the job store (opened lazily, so `--help` and usage errors never touch the database).
import { systemClock, type Clock } from '../clock.js';
import { ProctorError } from '../errors.js';
import { loadConfig, resolveHome, type ProctorConfig } from '../config.js';
import { parseInteger } from '../numbers.js';
import { loadSuite, type Bundle } from '../oracle/index.js';
import { openSqliteJobStore, type JobStore } from '../queue/index.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text + '\n'),
  err: (text) => process.stderr.write(text + '\n'),
};

export interface CommandContext {
  io: Io;
  clock: Clock;
  config: ProctorConfig;
  openStore(): JobStore;
}

export function createContext(homeFlag: string | undefined, io: Io): CommandContext {
  const config = loadConfig(resolveHome(homeFlag));
  const clock = systemClock;
  return {
    io,
    clock,
    config,
    openStore: () =>
      openSqliteJobStore(config.dbPath, { clock, synchronous: config.queue.synchronous }),
  };
}

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

/** Job ids as given on the command line: the strict rule of src/numbers.ts, up to 2^53 - 1. */
export function parseJobIds(values: readonly string[]): number[] {
  return values.map((value) => {
    const parsed = parseInteger(value, { min: 1, max: Number.MAX_SAFE_INTEGER });
    if (!parsed.ok) throw new ProctorError('USAGE', `job id: ${parsed.problem}`);
    return parsed.value;
  });
}
