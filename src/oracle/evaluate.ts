// The evaluator: one run of a bundle's tests against a candidate diff (a grade) or against
// the clean commit (a baseline run), in the order of product.md's oracle:
//
//  1. host-side: the candidate's size, its files through allow/deny and the hidden-test paths
//     (every dropped file logged), its file count, and no symlinks or submodules unless the
//     task allows symlinks;
//  2. a fresh workspace volume from the clean commit (init container);
//  3. an asset volume with the runner, the ID lists, the hidden test patch and the filtered
//     diff, root-owned and 0444/0555, mounted read-only: written before any candidate code
//     exists, never in an image;
//  4. one idle evaluator container (isolation profile; its idle process runs as another uid
//     than the task, so that `kill -9 -1` as the task uid ends every task process but not
//     the container), driven by exec:
//     - `git apply --check`, then `git apply` of the filtered diff (outside any repository:
//       the checkout's .git config, hooks and attributes play no part);
//     - the existing suite: `RUNNER existing.txt REPORT` under test_seconds, at the base
//       commit's version of the tests (the hidden patch is not applied yet);
//     - collect: kill every process of the task uid (detached daemons included), then read
//       the report (a regular file, not a symlink, at most the report limit);
//     - the hidden test patch, from the assets, never from the diff;
//     - the hidden tests, then collect again;
//  5. remove the container and both volumes, whatever happened.
//
// The verdict comes from the reports alone (decideGrade); the runner's exit status and prose
// are only logged.
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ProctorError, describeError } from '../errors.js';
import {
  createAssetVolume,
  createWorkspace,
  execInContainer,
  removeContainer,
  removeVolume,
  startIdleContainer,
  type DockerClient,
  type ExecResult,
  type Owner,
  workTmpfs,
} from '../sandbox/index.js';
import type { Bundle } from './bundle.js';
import { describeDropped, filterDiff, pathsTouchedBy } from './diff-filter.js';
import { DEFAULT_REPORT_LIMITS, excerpt, parseReport, type TestStatus } from './report.js';
import {
  checkPhase,
  decideGrade,
  failVerdict,
  type GradePhases,
  type PhaseName,
  type PhaseOutcome,
  type Verdict,
} from './verdict.js';

/** Where the evaluator mounts what it brings; bundles may not use these paths as workdir. */
export const EVALUATOR_PATHS = {
  assets: '/proctor/assets',
  out: '/proctor/out',
  home: '/proctor/home',
} as const;

/** 1980-01-01T00:00:00Z, the earliest time ZIP files can hold: a common fixed build epoch. */
export const SOURCE_DATE_EPOCH = '315532800';

/** Proctor's part of every runner's environment; bundles cannot override these names. */
export const DETERMINISTIC_ENV: Readonly<Record<string, string>> = {
  TZ: 'UTC',
  LC_ALL: 'C.UTF-8',
  PYTHONHASHSEED: '0',
  SOURCE_DATE_EPOCH,
  HOME: EVALUATOR_PATHS.home,
};

const ASSET = {
  runner: 'run',
  existing: 'existing.txt',
  hidden: 'hidden.txt',
  hiddenPatch: 'hidden.patch',
  candidate: 'candidate.diff',
} as const;

const asset = (name: string) => `${EVALUATOR_PATHS.assets}/${name}`;

/** Git with no system or global config, no hooks, and no repository (GIT_DIR points nowhere). */
const GIT_ENV = String.raw`export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0 GIT_DIR=/nonexistent/proctor-no-repository`;

// $1 is the patch. `--check` first, so that a diff that does not apply leaves the tree alone.
const APPLY_SCRIPT = String.raw`${GIT_ENV}
git apply --check --whitespace=nowarn -- "$1" || exit 10
git apply --whitespace=nowarn -- "$1" || exit 11
`;

// $1 is the report path, $2 the most bytes read. Kills every process of this uid but itself
// (the idle process runs as another uid), then, if the report is a regular file no larger
// than $2, prints its size on stderr and its bytes in base64 on stdout: the host decodes the
// exact bytes (a report that is not UTF-8 must be refused, not repaired in transit).
const COLLECT_SCRIPT = String.raw`kill -9 -1 2>/dev/null
r=$1
if [ -L "$r" ]; then echo "the report is a symlink, not a file" >&2; exit 3; fi
if [ ! -e "$r" ]; then echo "the runner wrote no report" >&2; exit 4; fi
if [ ! -f "$r" ]; then echo "the report is not a regular file" >&2; exit 5; fi
size=$(wc -c < "$r") || exit 7
echo "proctor-report-size $size" >&2
[ "$size" -le "$2" ] || exit 6
exec base64 -- "$r"
`;

// $1 the phase's own output folder (fresh, random name), $2 the runner, $3 the ID list.
const PHASE_SCRIPT = String.raw`mkdir -m 700 -- "$1" || exit 125
exec "$2" "$3" "$1/report"`;

const APPLY_TIMEOUT_MS = 120_000;
const COLLECT_TIMEOUT_MS = 60_000;
const SETUP_TIMEOUT_MS = 300_000;

export interface EvaluatorSandbox {
  uid: number;
  gid: number;
  /** An OCI runtime such as `runsc`; default the engine's. */
  runtime?: string;
}

export interface EvaluateInput {
  bundle: Bundle;
  /** The daemon-local id of the bundle's image (resolveImage). */
  imageId: string;
  /** The candidate diff as submitted; null for a baseline run (no diff). */
  candidate: Buffer | null;
  owner: Owner;
  sandbox: EvaluatorSandbox;
  signal?: AbortSignal;
  /** Every test of each phase's report, declared or not (derive reads IDs from them). */
  onReport?: (phase: PhaseName, tests: ReadonlyMap<string, TestStatus>) => void;
}

export interface CandidateRecord {
  /** SHA-256 of the diff as submitted, and of what was applied after filtering. */
  sha256: string;
  bytes: number;
  filteredSha256: string | null;
  filteredBytes: number;
  kept: string[];
  /** One line per dropped file, with its path and why (describeDropped). */
  dropped: string[];
}

export interface CommandRecord {
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  stdoutBytes: number;
  stderrBytes: number;
  truncated: boolean;
}

export interface PhaseRecord {
  name: PhaseName;
  /** The runner: its exit status and output are logged, never graded. */
  run: CommandRecord;
  oomKilled: boolean;
  report: {
    format: 'json' | 'junit' | null;
    bytes: number;
    error: string | null;
    problems: string[];
    /** Reported IDs that were not declared (logged and ignored), first 50. */
    undeclared: string[];
    undeclaredCount: number;
  };
}

export interface Evaluation {
  verdict: Verdict;
  /** What decideGrade saw; null when the run ended before the runner (apply failed, say). */
  phases: GradePhases | null;
  candidate: CandidateRecord | null;
  apply: CommandRecord | null;
  hiddenApply: CommandRecord | null;
  phaseRecords: PhaseRecord[];
  /** Wall time of each step, in ms; `total` is the evaluation's own wall time. */
  timings: Record<string, number>;
  /** Set when removing the container or a volume failed (the job's cleanup retries). */
  cleanupError?: string;
}

interface Prepared {
  verdict?: Verdict;
  record: CandidateRecord;
  patch: Buffer;
}

/** Step 1: everything decided on the host before a container exists. */
export function prepareCandidate(bundle: Bundle, diff: Buffer, hiddenPatch: Buffer): Prepared {
  const sha256 = createHash('sha256').update(diff).digest('hex');
  const record: CandidateRecord = {
    sha256,
    bytes: diff.length,
    filteredSha256: null,
    filteredBytes: 0,
    kept: [],
    dropped: [],
  };
  const { patchBytes, candidateFiles } = bundle.limits;
  if (diff.length > patchBytes) {
    return {
      record,
      patch: Buffer.alloc(0),
      verdict: failVerdict(
        'PATCH_TOO_LARGE',
        `the diff is ${diff.length} bytes; the task allows ${patchBytes} (patch_bytes)`,
      ),
    };
  }
  let filtered;
  try {
    filtered = filterDiff(diff, {
      allow: bundle.grading.allow,
      deny: bundle.grading.deny,
      hiddenPaths: pathsTouchedBy(hiddenPatch),
    });
  } catch (error) {
    return {
      record,
      patch: Buffer.alloc(0),
      verdict: failVerdict('APPLY_FAILED', `the diff cannot be read: ${describeError(error)}`),
    };
  }
  record.filteredSha256 = filtered.sha256;
  record.filteredBytes = filtered.patch.length;
  record.kept = filtered.kept.map((c) => c.newPath ?? c.oldPath ?? '');
  record.dropped = describeDropped(filtered.dropped);
  const reject = (detail: string) => ({
    record,
    patch: filtered.patch,
    verdict: failVerdict('PATCH_REJECTED', detail),
  });
  if (filtered.kept.length > candidateFiles) {
    return reject(
      `the diff changes ${filtered.kept.length} files; the task allows ${candidateFiles} (candidate_files)`,
    );
  }
  for (const change of filtered.kept) {
    const path = change.newPath ?? change.oldPath ?? '';
    if (change.newMode === '160000') return reject(`${path}: submodules are not allowed`);
    if (change.newMode === '120000' && !bundle.grading.allowSymlinks) {
      return reject(`${path}: symlinks are not allowed (grading.allow_symlinks is false)`);
    }
  }
  return { record, patch: filtered.patch };
}

function commandRecord(result: ExecResult): CommandRecord {
  return {
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    stdout: result.stdout,
    stderr: result.stderr,
    stdoutBytes: result.stdoutBytes,
    stderrBytes: result.stderrBytes,
    truncated: result.truncated,
  };
}

/** Throws the abort reason when the run was cancelled; the caller's pool settles the job. */
function checkAborted(signal: AbortSignal | undefined, result?: ExecResult): void {
  if (signal?.aborted || result?.aborted) {
    throw new ProctorError('CANCELLED', 'the evaluation was cancelled', {
      cause: signal?.reason,
    });
  }
}

async function requireRunning(docker: DockerClient, id: string): Promise<void> {
  let running = false;
  try {
    running = (await docker.getContainer(id).inspect()).State.Running;
  } catch {
    running = false;
  }
  if (!running) {
    throw new ProctorError('DOCKER_ERROR', 'the evaluator container stopped under the run');
  }
}

function lastLines(text: string, n = 5): string {
  return excerpt(text.trim().split('\n').slice(-n).join('; '));
}

export async function evaluate(docker: DockerClient, input: EvaluateInput): Promise<Evaluation> {
  const { bundle, owner, sandbox, signal } = input;
  const startedAt = Date.now();
  const timings: Record<string, number> = {};
  const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    try {
      return await work();
    } finally {
      timings[step] = (timings[step] ?? 0) + Date.now() - started;
    }
  };
  const [runner, existingList, hiddenList, hiddenPatch] = await Promise.all(
    [bundle.paths.runner, bundle.paths.existing, bundle.paths.hidden, bundle.paths.hiddenPatch].map(
      (path) => readFile(path),
    ) as [Promise<Buffer>, Promise<Buffer>, Promise<Buffer>, Promise<Buffer>],
  );

  const evaluation: Evaluation = {
    verdict: failVerdict('INFRA_ERROR', 'the evaluation did not finish'),
    phases: null,
    candidate: null,
    apply: null,
    hiddenApply: null,
    phaseRecords: [],
    timings,
  };

  let patch: Buffer | null = null;
  if (input.candidate !== null) {
    const prepared = prepareCandidate(bundle, input.candidate, hiddenPatch);
    evaluation.candidate = prepared.record;
    if (prepared.verdict) return { ...evaluation, verdict: prepared.verdict };
    patch = prepared.patch;
  }
  checkAborted(signal);

  const user = `${sandbox.uid}:${sandbox.gid}`;
  const runtime = sandbox.runtime ? { runtime: sandbox.runtime } : {};
  const { limits } = bundle;
  let workspace: string | undefined;
  let assets: string | undefined;
  let container: Awaited<ReturnType<typeof startIdleContainer>> | undefined;
  try {
    // The clean checkout and the assets are independent: make both at once.
    const [made, loaded] = await Promise.allSettled([
      timed('workspace', () =>
        createWorkspace(docker, {
          owner,
          role: 'evaluator',
          image: input.imageId,
          repoPath: bundle.workdir,
          baseCommit: bundle.baseCommit,
          uid: sandbox.uid,
          gid: sandbox.gid,
          timeoutMs: SETUP_TIMEOUT_MS,
          ...runtime,
        }),
      ),
      timed('assets', () =>
        createAssetVolume(docker, {
          owner,
          image: input.imageId,
          files: [
            { name: ASSET.runner, bytes: runner, executable: true },
            { name: ASSET.existing, bytes: existingList },
            { name: ASSET.hidden, bytes: hiddenList },
            { name: ASSET.hiddenPatch, bytes: hiddenPatch },
            ...(patch !== null && patch.length > 0
              ? [{ name: ASSET.candidate, bytes: patch }]
              : []),
          ],
        }),
      ),
    ]);
    if (made.status === 'fulfilled') workspace = made.value;
    if (loaded.status === 'fulfilled') assets = loaded.value;
    if (made.status === 'rejected') throw made.reason;
    if (loaded.status === 'rejected') throw loaded.reason;
    checkAborted(signal);
    const workspaceVolume = made.value;
    const assetVolume = loaded.value;
    container = await timed('container', () =>
      startIdleContainer(docker, {
        owner,
        role: 'evaluator',
        image: input.imageId,
        uid: sandbox.uid,
        gid: sandbox.gid,
        workdir: bundle.workdir,
        workspace: { volume: workspaceVolume, target: bundle.workdir },
        mounts: [{ volume: assetVolume, target: EVALUATOR_PATHS.assets, readOnly: true }],
        tmpfs: [
          workTmpfs(limits.memoryMb),
          { path: EVALUATOR_PATHS.out, sizeMb: 64 },
          { path: EVALUATOR_PATHS.home, sizeMb: 64 },
        ],
        env: { ...bundle.testsEnv, ...DETERMINISTIC_ENV },
        limits: { cpus: limits.cpus, memoryMb: limits.memoryMb, pids: limits.pids },
        ...runtime,
      }),
    );
    const id = container.id;
    const exec = (cmd: string[], timeoutMs: number, outputBytes = 64 * 1024) =>
      execInContainer(docker, id, {
        cmd,
        user,
        workdir: bundle.workdir,
        timeoutMs,
        outputBytes,
        ...(signal ? { signal } : {}),
      });

    if (patch !== null && patch.length > 0) {
      const applied = await timed('apply', () =>
        exec(['sh', '-c', APPLY_SCRIPT, 'proctor-apply', asset(ASSET.candidate)], APPLY_TIMEOUT_MS),
      );
      checkAborted(signal, applied);
      evaluation.apply = commandRecord(applied);
      if (applied.exitCode !== 0) {
        evaluation.verdict = failVerdict(
          'APPLY_FAILED',
          applied.timedOut
            ? 'git apply did not finish in time'
            : `the diff does not apply: ${lastLines(applied.stderr) || `exit code ${String(applied.exitCode)}`}`,
        );
        return evaluation;
      }
    }

    const runPhase = async (name: PhaseName, list: string): Promise<PhaseOutcome> => {
      const dir = `${EVALUATOR_PATHS.out}/${name}-${randomBytes(8).toString('hex')}`;
      const run = await timed(name, () =>
        exec(
          ['sh', '-c', PHASE_SCRIPT, 'proctor-phase', dir, asset(ASSET.runner), asset(list)],
          limits.testSeconds * 1000,
          limits.outputBytes,
        ),
      );
      checkAborted(signal, run);
      // A container that died under the run (removed, the engine restarted) says nothing
      // about the candidate: an exit 137 then is not an OOM kill.
      await requireRunning(docker, id);
      const maxBytes = DEFAULT_REPORT_LIMITS.maxBytes;
      const collected = await timed('collect', () =>
        exec(
          ['sh', '-c', COLLECT_SCRIPT, 'proctor-collect', `${dir}/report`, String(maxBytes)],
          COLLECT_TIMEOUT_MS,
          // base64 of maxBytes, with its line breaks.
          Math.ceil(((maxBytes + 3) * 4) / 3 / 76) * 77 + 16,
        ),
      );
      checkAborted(signal, collected);
      await requireRunning(docker, id);
      const size = Number(/proctor-report-size (\d+)/.exec(collected.stderr)?.[1] ?? NaN);
      const record: PhaseRecord = {
        name,
        run: commandRecord(run),
        oomKilled: run.oomKilled,
        report: {
          format: null,
          bytes: Number.isFinite(size) ? size : 0,
          error: null,
          problems: [],
          undeclared: [],
          undeclaredCount: 0,
        },
      };
      evaluation.phaseRecords.push(record);
      const declared = name === 'existing' ? bundle.existingIds : bundle.hiddenIds;
      const outcome: PhaseOutcome = {
        timedOut: run.timedOut,
        oom: run.oomKilled,
        reportError: null,
        check: null,
      };
      if (collected.exitCode === 6) {
        outcome.reportError = `the report is ${size} bytes; at most ${maxBytes} are read`;
      } else if (collected.exitCode !== 0) {
        outcome.reportError =
          lastLines(collected.stderr.replace(/^proctor-report-size \d+\n?/m, '')) ||
          `reading the report failed (exit ${String(collected.exitCode)})`;
      } else {
        try {
          const bytes = Buffer.from(collected.stdout, 'base64');
          if (bytes.length !== size) {
            throw new ProctorError(
              'REPORT_INVALID',
              `read ${bytes.length} of the report's ${size} bytes`,
            );
          }
          const parsed = parseReport(bytes);
          input.onReport?.(name, parsed.tests);
          record.report.format = parsed.format;
          record.report.problems = parsed.problems;
          outcome.check = checkPhase(declared, parsed.tests);
          record.report.undeclared = outcome.check.undeclared.slice(0, 50);
          record.report.undeclaredCount = outcome.check.undeclared.length;
        } catch (error) {
          outcome.reportError = describeError(error);
        }
      }
      record.report.error = outcome.reportError;
      return outcome;
    };

    const existing = await runPhase('existing', ASSET.existing);
    const phases: GradePhases = { existing };
    evaluation.phases = phases;
    if (existing.timedOut) {
      // The verdict is TIMEOUT whatever the hidden tests do (and a baseline is quarantined):
      // do not spend test_seconds a second time.
      evaluation.verdict = decideGrade(phases);
      return evaluation;
    }

    if (hiddenPatch.length > 0) {
      const applied = await timed('hidden_apply', () =>
        exec(
          ['sh', '-c', APPLY_SCRIPT, 'proctor-apply', asset(ASSET.hiddenPatch)],
          APPLY_TIMEOUT_MS,
        ),
      );
      checkAborted(signal, applied);
      evaluation.hiddenApply = commandRecord(applied);
      if (applied.exitCode !== 0) {
        const why = lastLines(applied.stderr) || `exit code ${String(applied.exitCode)}`;
        evaluation.verdict = failVerdict(
          'APPLY_FAILED',
          input.candidate === null
            ? `tests/hidden.patch does not apply at base_commit: ${why}`
            : `tests/hidden.patch does not apply after the candidate's changes and the existing suite: ${why}`,
        );
        return evaluation;
      }
    }
    phases.hidden = await runPhase('hidden', ASSET.hidden);
    evaluation.verdict = decideGrade(phases);
    return evaluation;
  } finally {
    await timed('cleanup', async () => {
      // A volume can go only after the container that mounts it.
      const results = await Promise.allSettled([
        container ? removeContainer(container) : Promise.resolve(),
      ]);
      const volumes = await Promise.allSettled(
        [workspace, assets].flatMap((v) => (v === undefined ? [] : [removeVolume(docker, v)])),
      );
      const failed = [...results, ...volumes].find((r) => r.status === 'rejected');
      if (failed) {
        // The job's own removeOwned (and the reaper) will try again; the verdict stands.
        evaluation.cleanupError = describeError(failed.reason);
      }
    });
    // Steps overlap (the workspace and the assets are made at once): `total` is the wall time.
    timings['total'] = Date.now() - startedAt;
  }
}
