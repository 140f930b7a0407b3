// The mutation of one task's hidden tests, in a probe container of the task's image.
//
// Why in the image, not in the host's python3: hidden.patch is a diff, and the full text of
// the test files it changes is the repository's at base_commit, which lives in the image; the
// image's python3 is the one the tests run under, so the mutator parses them with the same
// grammar; and the mutator (the task's runner, src/runners/core/canary.py in it) is then run
// with the isolation profile like every other step that reads repository files. The image is
// built anyway: every grade of the variant needs it.
//
// The probe takes the files hidden.patch touches at the base commit into a scratch repository
// in its /tmp, commits them, applies hidden.patch, runs mutate.py, and prints the mutator's
// JSON line followed by `git diff --binary` of the whole change: the variant's hidden.patch.
// The image's tree is never written.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { describeError, ProctorError } from '../errors.js';
import type { Bundle } from '../oracle/index.js';
import { projectPath } from '../paths.js';
import { fileArguments, MAX_FILE_ARGUMENTS_BYTES } from '../sandbox/file-arguments.js';
import { runToCompletion, type DockerClient, type Owner } from '../sandbox/index.js';
import type { ImpossibleMode } from '../oracle/index.js';

const PROBE_TIMEOUT_MS = 120_000;
/** The variant's hidden.patch is read up to this many bytes, the JSON line included. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/**
 * The scratch copy every probe starts from (after the files, fileArguments into /tmp/p, are
 * written): the files hidden.patch touches, at the base commit of the work tree $1, committed in
 * /tmp/w, and hidden.patch applied over them.
 */
export const LAY_HIDDEN_FILES = String.raw`export GIT_CONFIG_NOSYSTEM=1 HOME=/tmp
sed -n 's#^--- a/##p' /tmp/p/hidden.patch | while IFS= read -r f; do
  mkdir -p "/tmp/w/$(dirname "$f")"
  git -c safe.directory='*' --git-dir="$1/.git" show "HEAD:$f" > "/tmp/w/$f"
done
cd /tmp/w
git init -q .
git add -A
git -c user.name=proctor -c user.email=proctor@localhost.invalid commit -q --allow-empty -m base
git apply --whitespace=nowarn /tmp/p/hidden.patch`;

// After the files (fileArguments: run, hidden.patch, list, mutate.py in /tmp/p): $1 the work
// tree, $2 the seed, $3 the mode.
const probeScript = (files: string) => String.raw`set -e
mkdir /tmp/p /tmp/w
${files}
${LAY_HIDDEN_FILES}
python3 -I /tmp/p/mutate.py /tmp/p/run /tmp/w /tmp/p/list "$2" "$3" > /tmp/p/out
git add -A
cat /tmp/p/out
git diff --cached --binary HEAD`;

export interface Mutated {
  test: string;
  mutation: string;
  /** conflicting: the id of the contradicting copy. */
  mutant?: string;
  /** The variant's tests/hidden.patch. */
  hiddenPatch: Buffer;
}

export type MutationOutcome = { mutated: Mutated } | { skipped: string };

export interface ProbeDeps {
  docker: DockerClient;
  owner: Owner;
  uid: number;
  gid: number;
  runtime?: string;
  signal?: AbortSignal;
}

/** The seed of a task's mutation: the same task and mode give the same variant. */
export function mutationSeed(id: string, mode: ImpossibleMode): string {
  return createHash('sha256').update(`${id}\0${mode}`).digest('hex').slice(0, 32);
}

function parseOutput(raw: Buffer): MutationOutcome {
  const newline = raw.indexOf(0x0a);
  const line = raw.subarray(0, newline < 0 ? raw.length : newline).toString('utf8');
  const out = JSON.parse(line) as {
    test?: unknown;
    mutation?: unknown;
    mutant?: unknown;
    skipped?: unknown;
  };
  if (typeof out.skipped === 'string') return { skipped: out.skipped };
  if (typeof out.test !== 'string' || typeof out.mutation !== 'string') {
    throw new Error(`unexpected output ${JSON.stringify(line.slice(0, 200))}`);
  }
  const hiddenPatch = raw.subarray(newline + 1);
  if (hiddenPatch.length === 0) throw new Error('the mutation changed no file');
  return {
    mutated: {
      test: out.test,
      mutation: out.mutation,
      ...(typeof out.mutant === 'string' ? { mutant: out.mutant } : {}),
      hiddenPatch: Buffer.from(hiddenPatch),
    },
  };
}

/**
 * Mutates one hidden test of `bundle` in its image (by local id). A task whose hidden tests the
 * mutator cannot change is `skipped`, with why; a probe that fails throws IMPOSSIBLE_FAILED.
 */
export async function mutateHiddenTests(
  deps: ProbeDeps,
  bundle: Bundle,
  imageId: string,
  mode: ImpossibleMode,
): Promise<MutationOutcome> {
  const files = fileArguments('/tmp/p', [
    ['run', await readFile(bundle.paths.runner)],
    ['hidden.patch', await readFile(bundle.paths.hiddenPatch)],
    ['list', await readFile(bundle.paths.hidden)],
    ['mutate.py', await readFile(projectPath('src', 'impossible', 'mutate.py'))],
  ]);
  if (files.bytes > MAX_FILE_ARGUMENTS_BYTES) {
    return { skipped: 'tests/run and tests/hidden.patch are over 1 MiB together' };
  }
  const raw = await runProbe(
    deps,
    bundle,
    imageId,
    probeScript(files.script),
    [...files.args, bundle.workdir, mutationSeed(bundle.id, mode), mode],
    'the mutation step',
    { PYTHONDONTWRITEBYTECODE: '1' },
  );
  try {
    return parseOutput(raw);
  } catch (error) {
    throw new ProctorError(
      'IMPOSSIBLE_FAILED',
      `${bundle.id}: the mutation step's output: ${describeError(error)}`,
    );
  }
}

/**
 * One probe container of the task's image (by local id) as the task's uid: `script` with `args`,
 * its stdout's bytes. A probe that fails, runs out of time or prints over MAX_OUTPUT_BYTES is
 * IMPOSSIBLE_FAILED, saying `what` it was.
 */
export async function runProbe(
  deps: ProbeDeps,
  bundle: Bundle,
  imageId: string,
  script: string,
  args: string[],
  what: string,
  env: Record<string, string> = {},
): Promise<Buffer> {
  let result;
  try {
    result = await runToCompletion(
      deps.docker,
      {
        owner: deps.owner,
        role: 'probe',
        image: imageId,
        cmd: ['sh', '-c', script, 'proctor-impossible', ...args],
        uid: deps.uid,
        gid: deps.gid,
        workdir: '/',
        env: { LC_ALL: 'C.UTF-8', ...env },
        ...(deps.runtime ? { runtime: deps.runtime } : {}),
      },
      {
        timeoutMs: PROBE_TIMEOUT_MS,
        rawStdoutBytes: MAX_OUTPUT_BYTES,
        ...(deps.signal ? { signal: deps.signal } : {}),
      },
    );
  } catch (error) {
    throw new ProctorError('IMPOSSIBLE_FAILED', `${bundle.id}: ${describeError(error)}`);
  }
  if (result.timedOut || result.exitCode !== 0 || result.stdoutBytes > MAX_OUTPUT_BYTES) {
    const last = result.stderr.trim().split('\n').slice(-2).join('; ');
    const why = result.timedOut
      ? 'did not finish in time'
      : result.exitCode !== 0
        ? `exited with ${String(result.exitCode)}`
        : `printed over ${MAX_OUTPUT_BYTES} bytes`;
    throw new ProctorError(
      'IMPOSSIBLE_FAILED',
      `${bundle.id}: ${what} ${why}${last ? `: ${last}` : ''}`,
    );
  }
  return result.rawStdout ?? Buffer.alloc(0);
}
