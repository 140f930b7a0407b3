// What the command line needs before it knows which command runs: the output streams and the
// job ids of the command line. Kept free of the config, the queue and every heavier module,
// because main.ts loads it for every command, `--help` included.
import { ProctorError } from '../errors.js';
import { parseInteger } from '../numbers.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text + '\n'),
  err: (text) => process.stderr.write(text + '\n'),
};

/** Job ids as given on the command line: the strict rule of src/numbers.ts, up to 2^53 - 1. */
export function parseJobIds(values: readonly string[]): number[] {
  return values.map((value) => {
    const parsed = parseInteger(value, { min: 1, max: Number.MAX_SAFE_INTEGER });
    if (!parsed.ok) throw new ProctorError('USAGE', `job id: ${parsed.problem}`);
    return parsed.value;
  });
}
