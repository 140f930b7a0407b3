// The mutation of one task's hidden tests for a JavaScript runner (one whose tests/run carries
// `# proctor-canaries: js-…`): the canaries' mutator (oracle/js-canaries.ts, @babel/parser in
// Proctor's own process) lends its mutations, as canary.py does for the Python runners.
//
// Two probe containers of the task's image, as probe.ts runs one: the first lays the files the
// hidden patch touches at the base commit in a scratch repository in its /tmp, applies the
// patch and prints the test files (js-canary-step.ts's read format); Proctor changes one hidden
// test (`one-off`: its expectation in place; `conflicting`: the canary copy beside it, under a
// new title); the second lays the same scratch repository, writes the changed file over it and
// prints `git diff --binary` of the whole change: the variant's hidden.patch. Nothing of the
// checkout runs; the image's tree is never written.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describeError, ProctorError } from '../errors.js';
import type { Bundle, ImpossibleMode } from '../oracle/index.js';
import {
  canaryJsFile,
  findTests,
  parseTestFile,
  testId,
  testMutations,
  type JsDialect,
  type Random,
} from '../oracle/js-canaries.js';
import { parseRead, patchFiles, READ_SCRIPT, safeTestPath } from '../oracle/js-canary-step.js';
import { fileArguments, MAX_FILE_ARGUMENTS_BYTES } from '../sandbox/file-arguments.js';
import {
  LAY_HIDDEN_FILES,
  mutationSeed,
  runProbe,
  type MutationOutcome,
  type ProbeDeps,
} from './probe.js';

// After the files (fileArguments into /tmp/p): $1 the work tree, then the step's own.
/** $2 READ_SCRIPT, $3…: the test files to print, read as js-canary-step.ts reads a work tree's. */
const readScript = (files: string) => `set -e
mkdir /tmp/p /tmp/w
${files}
${LAY_HIDDEN_FILES}
r=$2
shift 2
sh -c "$r" proctor-read /tmp/w "$@"`;

/** $2 the changed file's path: /tmp/p/changed goes over it, then the whole change is printed. */
const diffScript = (files: string) => `set -e
mkdir /tmp/p /tmp/w
${files}
${LAY_HIDDEN_FILES}
[ -f "$2" ] && [ ! -L "$2" ] || { echo "$2 is not a file of the hidden patch" >&2; exit 3; }
cat /tmp/p/changed > "$2"
git add -A
git diff --cached --binary HEAD`;

/** A reproducible draw from `seed`: the same task and mode give the same variant. */
export function seededRandom(seed: string): Random {
  let counter = 0;
  return (n) => {
    const digest = createHash('sha256').update(`${seed}\0${counter++}`).digest();
    return digest.readUInt32BE(0) % n;
  };
}

export interface JsChange {
  file: string;
  text: string;
  test: string;
  mutation: string;
  mutant?: string;
}

/**
 * Changes one hidden test among `files` (path → text after the hidden patch): the ids in an
 * order drawn from `random`, the first whose test the mutator understands. null: none.
 */
export function changeJsTest(
  dialect: JsDialect,
  files: ReadonlyMap<string, string>,
  ids: readonly string[],
  mode: ImpossibleMode,
  random: Random,
): JsChange | null {
  const order = [...ids];
  for (let i = order.length - 1; i > 0; i -= 1) {
    const j = random(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (const id of order) {
    for (const [file, text] of files) {
      let tests;
      try {
        tests = findTests(parseTestFile(file, text));
      } catch {
        continue;
      }
      const found = tests.find((t) => testId(dialect, file, t.path) === id);
      if (found === undefined) continue;
      if (mode === 'conflicting') {
        const placed = canaryJsFile(dialect, file, text, new Set([id]), random);
        const mutant = placed.mutants[0];
        if (placed.text === null || mutant === undefined) continue;
        return { file, text: placed.text, test: id, mutation: mutant.mutation, mutant: mutant.id };
      }
      // The test itself is changed here, not copied: what runs after its assertion runs.
      const choices = testMutations(text, found.fn, random).all;
      if (choices.length === 0) continue;
      const { edit, description } = choices[random(choices.length)]!;
      const changed = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
      parseTestFile(file, changed);
      return { file, text: changed, test: id, mutation: description };
    }
  }
  return null;
}

/**
 * Mutates one hidden test of a JavaScript task in its image (by local id); `skipped`, with why,
 * when no hidden test has an assertion the mutator understands.
 */
export async function mutateJsHiddenTests(
  deps: ProbeDeps,
  bundle: Bundle,
  imageId: string,
  mode: ImpossibleMode,
  dialect: JsDialect,
): Promise<MutationOutcome> {
  const hiddenPatch = await readFile(bundle.paths.hiddenPatch);
  const names = patchFiles(hiddenPatch).filter(safeTestPath);
  if (names.length === 0) return { skipped: 'the hidden patch touches no test file' };
  const patchArgument = fileArguments('/tmp/p', [['hidden.patch', hiddenPatch]]);
  if (patchArgument.bytes > MAX_FILE_ARGUMENTS_BYTES) {
    return { skipped: 'tests/hidden.patch is over 1 MiB' };
  }
  const printed = await runProbe(
    deps,
    bundle,
    imageId,
    readScript(patchArgument.script),
    [...patchArgument.args, bundle.workdir, READ_SCRIPT, ...names],
    'the read of the hidden test files',
  );
  let read;
  try {
    read = parseRead(printed.toString('utf8'), names);
  } catch (error) {
    throw new ProctorError(
      'IMPOSSIBLE_FAILED',
      `${bundle.id}: the read of the hidden test files: ${describeError(error)}`,
    );
  }
  const files = new Map<string, string>();
  for (const [name, bytes] of read) {
    if (typeof bytes === 'string') continue;
    try {
      files.set(name, new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch {
      // Not UTF-8: no test of it is changed.
    }
  }
  const change = changeJsTest(
    dialect,
    files,
    bundle.hiddenIds,
    mode,
    seededRandom(mutationSeed(bundle.id, mode)),
  );
  if (change === null) {
    return { skipped: 'no hidden test has an assertion the mutator understands' };
  }
  const diffArguments = fileArguments('/tmp/p', [
    ['hidden.patch', hiddenPatch],
    ['changed', Buffer.from(change.text, 'utf8')],
  ]);
  if (diffArguments.bytes > MAX_FILE_ARGUMENTS_BYTES) {
    return { skipped: 'tests/hidden.patch and the changed test file are over 1 MiB together' };
  }
  const diff = await runProbe(
    deps,
    bundle,
    imageId,
    diffScript(diffArguments.script),
    [...diffArguments.args, bundle.workdir, change.file],
    "the variant's hidden.patch",
  );
  if (diff.length === 0) {
    throw new ProctorError('IMPOSSIBLE_FAILED', `${bundle.id}: the mutation changed no file`);
  }
  return {
    mutated: {
      test: change.test,
      mutation: change.mutation,
      ...(change.mutant === undefined ? {} : { mutant: change.mutant }),
      hiddenPatch: diff,
    },
  };
}
