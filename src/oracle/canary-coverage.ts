// A task's canary coverage, for `proctor validate`: which hidden tests the mutator
// (src/runners/core/canary.py) understands. A probe container of the task's image takes the
// files hidden.patch touches, at the base commit, applies the patch to them in its /tmp and
// runs the runner's canary step there; the image's tree itself is never written.
import { readFile } from 'node:fs/promises';
import { describeError } from '../errors.js';
import { runToCompletion, type DockerClient, type Owner } from '../sandbox/index.js';
import type { Bundle } from './bundle.js';
import { runnerPlacesCanaries } from './canaries.js';

export type CanaryCoverage =
  | {
      /** Hidden tests with at least one mutant, of `total` listed. */
      covered: number;
      total: number;
      mutants: number;
      uncovered: Array<{ test: string; why: string }>;
    }
  | { error: string };

/** One argument of a process may hold at most 128 KiB (Linux's MAX_ARG_STRLEN). */
const MAX_ARGUMENT = 128 * 1024 - 1;

// $1 the runner, $2 hidden.patch, $3 hidden.txt (each in base64), $4 the work tree, $5 a seed.
const PROBE_SCRIPT = String.raw`set -e
mkdir /tmp/p /tmp/w
printf %s "$1" | base64 -d > /tmp/p/run
printf %s "$2" | base64 -d > /tmp/p/hidden.patch
printf %s "$3" | base64 -d > /tmp/p/list
export GIT_CONFIG_NOSYSTEM=1 HOME=/tmp
sed -n 's#^--- a/##p' /tmp/p/hidden.patch | while IFS= read -r f; do
  mkdir -p "/tmp/w/$(dirname "$f")"
  git -c safe.directory='*' --git-dir="$4/.git" show "HEAD:$f" > "/tmp/w/$f"
done
cd /tmp/w
GIT_DIR=/nonexistent git apply --whitespace=nowarn /tmp/p/hidden.patch
cd /
exec python3 -I /tmp/p/run --proctor-canary /tmp/w /tmp/p/list "$5"`;

/**
 * The canary coverage of a bundle's hidden tests in its image (by local id), or null when its
 * runner places no canaries.
 */
export async function canaryCoverage(
  docker: DockerClient,
  bundle: Bundle,
  imageId: string,
  probe: { owner: Owner; uid: number; gid: number; runtime?: string; signal?: AbortSignal },
): Promise<CanaryCoverage | null> {
  const runner = await readFile(bundle.paths.runner);
  if (!runnerPlacesCanaries(runner)) return null;
  const args = [
    runner,
    await readFile(bundle.paths.hiddenPatch),
    await readFile(bundle.paths.hidden),
  ].map((bytes) => bytes.toString('base64'));
  if (args.some((a) => a.length > MAX_ARGUMENT)) {
    return { error: 'not measured: tests/run or tests/hidden.patch is over 96 KiB' };
  }
  try {
    const result = await runToCompletion(
      docker,
      {
        owner: probe.owner,
        role: 'probe',
        image: imageId,
        cmd: [
          'sh',
          '-c',
          PROBE_SCRIPT,
          'proctor-canary-probe',
          ...args,
          bundle.workdir,
          'validate',
        ],
        uid: probe.uid,
        gid: probe.gid,
        workdir: '/',
        env: { LC_ALL: 'C.UTF-8' },
        ...(probe.runtime ? { runtime: probe.runtime } : {}),
      },
      {
        timeoutMs: 120_000,
        outputBytes: 4 * 1024 * 1024,
        ...(probe.signal ? { signal: probe.signal } : {}),
      },
    );
    if (result.timedOut || result.exitCode !== 0) {
      const last = result.stderr.trim().split('\n').slice(-2).join('; ');
      return {
        error: `not measured: the probe exited with ${String(result.exitCode)}${last ? `: ${last}` : ''}`,
      };
    }
    const out = JSON.parse(result.stdout) as {
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

/** validate's line for a task's coverage, then one per uncovered test (the first ten). */
export function coverageLines(coverage: CanaryCoverage | null | undefined): string[] {
  if (coverage === undefined) return [];
  if (coverage === null) return ['  canaries: none (the runner places no canaries)'];
  if ('error' in coverage) return [`  canaries: ${coverage.error}`];
  const lines = [
    `  canaries: ${coverage.covered} of ${coverage.total} hidden tests covered (${coverage.mutants} mutants)`,
  ];
  for (const u of coverage.uncovered.slice(0, 10)) lines.push(`    uncovered ${u.test}: ${u.why}`);
  if (coverage.uncovered.length > 10)
    lines.push(`    … and ${coverage.uncovered.length - 10} more`);
  return lines;
}
