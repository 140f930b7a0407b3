// A task's canary coverage, for `proctor validate`: which hidden tests the mutator
// (src/runners/core/canary.py, or js-canaries.ts for the node, mocha, jest and vitest runners)
// understands. A probe container of the task's image takes the files hidden.patch touches, at
// the base commit, applies the patch to them in its /tmp and runs the runner's canary step
// there; the image's tree itself is never written.
import { readFile } from 'node:fs/promises';
import { describeError } from '../errors.js';
import { fileArguments, MAX_FILE_ARGUMENTS_BYTES } from '../sandbox/file-arguments.js';
import { runToCompletion, type DockerClient, type Owner } from '../sandbox/index.js';
import type { Bundle } from './bundle.js';
import { runnerPlacesCanaries } from './canaries.js';
import type { JsDialect } from './js-canaries.js';
import {
  jsCanaryDialect,
  jsCanaryFiles,
  mutateJsContents,
  parseRead,
  READ_SCRIPT,
} from './js-canary-step.js';

export type CanaryCoverage =
  | {
      /** Hidden tests with at least one mutant, of `total` listed. */
      covered: number;
      total: number;
      mutants: number;
      uncovered: Array<{ test: string; why: string }>;
    }
  | { error: string };

// After the files (fileArguments: run, hidden.patch, list in /tmp/p): $1 the work tree, $2 a
// seed. The probe's tree is the base commit's every tracked file (a runner finds a listed test
// through its crate roots, or among the checkout's sources), and the CMakeCache.txt of a build
// folder at the top, untracked, by which the ctest runner tells a CMake build from make check.
const probeScript = (files: string) => String.raw`set -e
mkdir /tmp/p /tmp/w
${files}
export GIT_CONFIG_NOSYSTEM=1 HOME=/tmp
git -c safe.directory='*' --git-dir="$1/.git" archive --format=tar HEAD | tar -x -C /tmp/w
for c in "$1"/CMakeCache.txt "$1"/*/CMakeCache.txt; do
  [ -f "$c" ] || continue
  d=${'${c#"$1"/}'}
  mkdir -p "/tmp/w/$(dirname "$d")"
  cp "$c" "/tmp/w/$d"
done
cd /tmp/w
GIT_DIR=/nonexistent git apply --whitespace=nowarn /tmp/p/hidden.patch
cd /
exec python3 -I /tmp/p/run --proctor-canary /tmp/w /tmp/p/list "$2"`;

// The JavaScript runners' coverage (js-canary-step.ts): the same files at the base commit with
// the patch applied, and the listed ids' own files, printed by the read step for Proctor's
// mutator. After the files: $1 the work tree, then the test files to print.
const jsProbeScript = (files: string) => String.raw`set -e
mkdir /tmp/p /tmp/w
${files}
export GIT_CONFIG_NOSYSTEM=1 HOME=/tmp
w=$1
shift
extract() {
  mkdir -p "/tmp/w/$(dirname "$1")"
  git -c safe.directory='*' --git-dir="$w/.git" show "HEAD:$1" > "/tmp/w/$1" 2>/dev/null || rm -f -- "/tmp/w/$1"
}
sed -n 's#^--- a/##p' /tmp/p/hidden.patch | while IFS= read -r f; do extract "$f"; done
for f; do [ -e "/tmp/w/$f" ] || extract "$f"; done
cd /tmp/w
GIT_DIR=/nonexistent git apply --whitespace=nowarn /tmp/p/hidden.patch
set +e
${READ_SCRIPT.replace('cd "$1" || exit 125\nshift\n', '')}`;

type Probe = { owner: Owner; uid: number; gid: number; runtime?: string; signal?: AbortSignal };

/** A probe container's stdout (`cmd` as the task uid, in the task's image), or why not. */
async function probeOutput(
  docker: DockerClient,
  imageId: string,
  probe: Probe,
  cmd: string[],
  outputBytes: number,
): Promise<string | { error: string }> {
  const result = await runToCompletion(
    docker,
    {
      owner: probe.owner,
      role: 'probe',
      image: imageId,
      cmd,
      uid: probe.uid,
      gid: probe.gid,
      workdir: '/',
      env: { LC_ALL: 'C.UTF-8' },
      ...(probe.runtime ? { runtime: probe.runtime } : {}),
    },
    {
      timeoutMs: 120_000,
      outputBytes,
      ...(probe.signal ? { signal: probe.signal } : {}),
    },
  );
  if (result.timedOut || result.exitCode !== 0) {
    const last = result.stderr.trim().split('\n').slice(-2).join('; ');
    return {
      error: `not measured: the probe exited with ${String(result.exitCode)}${last ? `: ${last}` : ''}`,
    };
  }
  return result.stdout;
}

/**
 * The canary coverage of a bundle's hidden tests in its image (by local id), or null when its
 * runner places no canaries.
 */
export async function canaryCoverage(
  docker: DockerClient,
  bundle: Bundle,
  imageId: string,
  probe: Probe,
): Promise<CanaryCoverage | null> {
  const runner = await readFile(bundle.paths.runner);
  const js = jsCanaryDialect(runner, bundle.testsEnv);
  if (js !== null) return jsCanaryCoverage(docker, bundle, imageId, probe, js);
  if (!runnerPlacesCanaries(runner)) return null;
  const files = fileArguments('/tmp/p', [
    ['run', runner],
    ['hidden.patch', await readFile(bundle.paths.hiddenPatch)],
    ['list', await readFile(bundle.paths.hidden)],
  ]);
  if (files.bytes > MAX_FILE_ARGUMENTS_BYTES) {
    return { error: 'not measured: tests/run and tests/hidden.patch are over 1 MiB together' };
  }
  try {
    const stdout = await probeOutput(
      docker,
      imageId,
      probe,
      [
        'sh',
        '-c',
        probeScript(files.script),
        'proctor-canary-probe',
        ...files.args,
        bundle.workdir,
        'validate',
      ],
      4 * 1024 * 1024,
    );
    if (typeof stdout !== 'string') return stdout;
    const out = JSON.parse(stdout) as {
      mutants: Array<{ test: string }>;
      uncovered: Array<{ test: string; why: string }>;
    };
    const covered = new Set(out.mutants.map((m) => m.test)).size;
    return {
      covered,
      total: bundle.hiddenIds.length,
      mutants: out.mutants.length,
      uncovered: out.uncovered,
    };
  } catch (error) {
    return { error: `not measured: ${describeError(error)}` };
  }
}

async function jsCanaryCoverage(
  docker: DockerClient,
  bundle: Bundle,
  imageId: string,
  probe: Probe,
  dialect: JsDialect,
): Promise<CanaryCoverage> {
  const patch = await readFile(bundle.paths.hiddenPatch);
  const ids = bundle.hiddenIds;
  const { files: names, unplaced } = jsCanaryFiles(dialect, ids, patch);
  const files = fileArguments('/tmp/p', [['hidden.patch', patch]]);
  if (files.bytes > MAX_FILE_ARGUMENTS_BYTES) {
    return { error: 'not measured: tests/hidden.patch is over 1 MiB' };
  }
  try {
    const stdout = await probeOutput(
      docker,
      imageId,
      probe,
      [
        'sh',
        '-c',
        jsProbeScript(files.script),
        'proctor-canary-probe',
        ...files.args,
        bundle.workdir,
        ...names,
      ],
      64 * 1024 * 1024,
    );
    if (typeof stdout !== 'string') return stdout;
    const read = parseRead(stdout, names);
    // The step's own mutation (js-canary-step.ts), its writes counted, not made.
    const mutated = mutateJsContents(dialect, [...new Set(ids)], unplaced, read);
    const uncovered = [...unplaced, ...mutated.uncovered];
    const made = mutated.writes.flatMap((w) => w.mutants);
    const covered = new Set(made.map((m) => m.test));
    const mutants = made.length;
    return { covered: covered.size, total: ids.length, mutants, uncovered };
  } catch (error) {
    return { error: `not measured: ${describeError(error)}` };
  }
}

/** validate's line for a task's coverage, then one per uncovered test (the first ten). */
export function coverageLines(coverage: CanaryCoverage | null | undefined): string[] {
  if (coverage === undefined) return [];
  if (coverage === null) return ['  canaries: none (the runner places no canaries)'];
  if ('error' in coverage) return [`  canaries: ${coverage.error}`];
  const lines = [
    `  canaries: ${coverage.covered} of ${coverage.total} hidden tests covered (${coverage.mutants} ${coverage.mutants === 1 ? 'mutant' : 'mutants'})`,
  ];
  for (const u of coverage.uncovered.slice(0, 10)) lines.push(`    uncovered ${u.test}: ${u.why}`);
  if (coverage.uncovered.length > 10)
    lines.push(`    … and ${coverage.uncovered.length - 10} more`);
  return lines;
}
