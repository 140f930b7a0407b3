// One impossible variant as files: a copy of the original bundle whose task.toml gets a new id
// and the [impossible] table (oracle/task-impossible.ts), whose tests/hidden.patch is the
// mutated one, and, for `conflicting`, whose tests/hidden.txt lists the contradicting copy
// right after its original. Everything a solver sees (description.md, environment/) is the
// original's, byte for byte.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import type { Bundle, ImpossibleMode, TaskImpossible } from '../oracle/index.js';
import type { Mutated } from './probe.js';

const MAX_ID = 128;

/** The variant's id: the original's with `-impossible-<mode>`, the original cut to fit. */
export function variantId(original: string, mode: ImpossibleMode): string {
  const suffix = `-impossible-${mode}`;
  return `${original.slice(0, MAX_ID - suffix.length)}${suffix}`;
}

/** Writes the variant of `bundle` into `dir` (which must not exist). */
export function writeVariant(
  dir: string,
  bundle: Bundle,
  mode: ImpossibleMode,
  mutated: Mutated,
): string {
  cpSync(bundle.dir, dir, { recursive: true, verbatimSymlinks: true });
  const task = parse(readFileSync(join(bundle.dir, 'task.toml'), 'utf8'));
  const id = variantId(bundle.id, mode);
  const impossible: TaskImpossible = {
    of: bundle.id,
    mode,
    test: mutated.test,
    mutation: mutated.mutation,
    ...(mutated.mutant === undefined ? {} : { mutant: mutated.mutant }),
  };
  writeFileSync(join(dir, 'task.toml'), `${stringify({ ...task, id, impossible })}\n`);
  writeFileSync(join(dir, 'tests', 'hidden.patch'), mutated.hiddenPatch);
  if (mutated.mutant !== undefined) {
    const ids = bundle.hiddenIds.flatMap((t) =>
      t === mutated.test ? [t, mutated.mutant as string] : [t],
    );
    writeFileSync(join(dir, 'tests', 'hidden.txt'), `${ids.join('\n')}\n`);
  }
  return id;
}
