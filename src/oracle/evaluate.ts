// The evaluator: one run of a bundle's tests against a candidate diff (a grade) or against
// the clean commit (a baseline run), in the order of product.md's oracle:
//
//  1. host-side: the candidate's size, its files through allow/deny and the hidden-test paths
//     (every dropped file logged), its file count, and no symlinks or submodules unless the
//     task allows symlinks;
//  2. a fresh workspace volume and an asset volume (the runner, the ID lists, the hidden test
//     patch and the filtered diff, root-owned and 0444/0555, mounted read-only: written
//     before any candidate code exists, never in an image), loaded at once through the
//     engine's archive API (sandbox/workspace-start.ts);
//  3. one idle evaluator container (isolation profile; its idle process runs as another uid
//     than the task, so that `kill -9 -1` as the task uid ends every task process but not
//     the container), with the image's workspace template (made on first use) mounted
//     read-only; an exec as the task uid copies the template into the workspace: the clean
//     tracked tree at the base commit and its index, no history at all. Then, by exec:
//     - `git apply --check`, then `git apply` of the filtered diff (outside any repository:
//       the checkout's .git config, hooks and attributes play no part);
//     - the existing suite: `RUNNER existing.txt REPORT` under test_seconds, at the base
//       commit's version of the tests (the hidden patch is not applied yet);
//     - in one exec (evaluate-prepare.ts; two when a JavaScript runner's canaries are made on
//       the host in between): collect (kill every process of the task uid, detached daemons
//       included, then read the report: a regular file, not a symlink, at most the report
//       limit); the hidden test patch, from the host on stdin, never from the diff; the
//       canaries; the checkout's repository made anew;
//     - the hidden tests, then collect again;
//  4. remove the container and both volumes, whatever happened (or, with leaveForOwner, leave
//     them to the job's cleanup after its verdict is recorded).
//
// The verdict comes from the reports alone (decideGrade); the runner's exit status and prose
// are only logged.
//
// A task with `[grading] rules = "swebench"` runs as SWE-bench's harness does instead
// (evaluate-swebench.ts): after the candidate, the hidden test patch, then ONE run of the
// runner on hidden.txt and existing.txt together (the tests.txt asset), graded by SWE-bench's
// rules (swebench-verdict.ts). Everything else (the diff filter, the workspace, the collector
// and its sentinels, collect, cleanup) is the same.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { stepTimer } from '../clock.js';
import { describeError } from '../errors.js';
import {
  execInContainer,
  idleUid,
  removeContainer,
  removeVolume,
  startWithWorkspace,
  type DockerClient,
  type Owner,
  type TemplateStore,
  type WorkspaceContainer,
  type WorkspaceMedium,
  workTmpfs,
} from '../sandbox/index.js';
import type { Bundle } from './bundle.js';
import { prepareCandidate, type CandidateRecord } from './candidate.js';
import {
  checkAborted,
  collectPhase,
  startCollector,
  startPhase,
  startPhaseAfterSteps,
  type CommandRecord,
  type PhaseContext,
  type PhaseExecOptions,
  type PhaseRecord,
  type StartedPhase,
} from './evaluate-phase.js';
import { ASSET, DETERMINISTIC_ENV, EVALUATOR_PATHS, SETUP_TIMEOUT_MS } from './evaluate-scripts.js';
import { runnerCachesCode, runnerProtocol } from './protocol.js';
import { codeLoader } from '../runners/index.js';
import { runSwebenchTests, swebenchList } from './evaluate-swebench.js';
import type { TestStatus } from './report.js';
import { declaredTests, type DeclaredTests } from './test-statuses.js';
import {
  candidateApplyVerdict,
  prepareExistingRun,
  prepareHiddenRun,
  runPrepared,
  splitSample,
  type ExistingCanaries,
} from './evaluate-prepare.js';
import { patchHeaders } from './patch-headers.js';
import {
  decideGrade,
  failVerdict,
  type GradePhases,
  type PhaseName,
  type Verdict,
} from './verdict.js';

export { prepareCandidate } from './candidate.js';
export type { CandidateRecord, PreparedCandidate } from './candidate.js';
export type { CommandRecord, PhaseRecord } from './evaluate-phase.js';
export { DETERMINISTIC_ENV, EVALUATOR_PATHS, SOURCE_DATE_EPOCH } from './evaluate-scripts.js';

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
  /**
   * A protocol-2 test process that never opened its session (an import error in a conftest):
   * false (grades, baselines) counts every declared test `error`, with the report's cause;
   * true (derive, which lists files, not IDs, and must say why nothing ran) keeps the report
   * unusable (REPORT_INVALID).
   */
  unstartedIsInvalid?: boolean;
  /** The process's workspace templates (shared, LRU-bounded); default one of this run's own. */
  templates?: TemplateStore;
  /**
   * Leave the container and both volumes for the owner's cleanup (removeOwned, labelled by
   * job attempt), which the job runs after its verdict is recorded; default false: removed
   * here, before the evaluation returns.
   */
  leaveForOwner?: boolean;
}

export interface Evaluation {
  verdict: Verdict;
  /** What decideGrade saw; null when the run ended before the runner (apply failed, say). */
  phases: GradePhases | null;
  candidate: CandidateRecord | null;
  apply: CommandRecord | null;
  hiddenApply: CommandRecord | null;
  /** The commit of the checkout before the hidden tests' run (evaluate-tree.ts). */
  testTree: CommandRecord | null;
  phaseRecords: PhaseRecord[];
  /** Wall time of each step, in ms; `total` is the evaluation's own wall time. */
  timings: Record<string, number>;
  /**
   * Where the workspace was (overlay: on the template, its writes on disk; memory: its tree's
   * MiB, added to the memory limit), and why an overlay fell back to a copy; unset before one
   * was made.
   */
  workspace?: { medium: WorkspaceMedium | 'overlay'; treeMb?: number; fallback?: string };
  /** Set when removing the container or a volume failed (the job's cleanup retries). */
  cleanupError?: string;
  /**
   * Each declared ID's list, outcome and SWE-bench status, from the phases decideGrade saw;
   * both lists `not_run` when the evaluation ended before any phase.
   */
  tests: DeclaredTests;
}

export async function evaluate(docker: DockerClient, input: EvaluateInput): Promise<Evaluation> {
  const { bundle, owner, sandbox, signal } = input;
  const startedAt = Date.now();
  const timer = stepTimer();
  const timings = timer.steps;
  const timed = timer.time;
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
    testTree: null,
    phaseRecords: [],
    timings,
    tests: declaredTests(bundle, null),
  };
  const swebench = bundle.grading.rules === 'swebench';
  const testsList = swebench ? swebenchList(bundle) : null;

  let patch: Buffer | null = null;
  if (input.candidate !== null) {
    const prepared = prepareCandidate(bundle, input.candidate, hiddenPatch);
    evaluation.candidate = prepared.record;
    if (prepared.verdict) return { ...evaluation, verdict: prepared.verdict };
    patch = prepared.patch;
  }
  checkAborted(signal);

  const user = `${sandbox.uid}:${sandbox.gid}`;
  // The ID lists and the hidden test patch's headers are the collector's uid's alone (0400):
  // each run's runner gets its list and the headers on stdin (runPhase), so that no test
  // process finds them at a fixed path; the hidden test patch itself reaches its apply on stdin.
  const idle = idleUid(sandbox.uid);
  const headers = patchHeaders(hiddenPatch);
  const lists: Record<string, Buffer> = {
    [ASSET.existing]: existingList,
    [ASSET.hidden]: hiddenList,
    ...(testsList === null ? {} : { [ASSET.tests]: testsList }),
  };
  const runtime = sandbox.runtime ? { runtime: sandbox.runtime } : {};
  const { limits } = bundle;
  let workspace: string | undefined;
  let layerVolume: string | undefined;
  let assets: string | undefined;
  let container: WorkspaceContainer['container'] | undefined;
  try {
    // The workspace and the assets are loaded at once, the container started, and the
    // template copied in by an exec as the task uid before anything of the task runs.
    const started = await startWithWorkspace(docker, {
      owner,
      role: 'evaluator',
      image: input.imageId,
      repoPath: bundle.workdir,
      baseCommit: bundle.baseCommit,
      // SWE-bench's layout: the tree of the image's setup commit, its untracked build output.
      ...(bundle.setupCommit ? { setupCommit: true } : {}),
      // The evaluator applies the diff with GIT_DIR pointing nowhere: history is dead weight.
      history: 'none',
      // An overlay on the template unless the task names a medium; where the engine cannot
      // make one, a copy, in memory by default (one container from the copy to the last phase).
      layer: bundle.workspace === undefined ? 'overlay' : 'copy',
      medium: bundle.workspace ?? 'memory',
      uid: sandbox.uid,
      gid: sandbox.gid,
      timeoutMs: SETUP_TIMEOUT_MS,
      ...(input.templates ? { templates: input.templates } : {}),
      // Reported apart: the first use of an image pays it once, later jobs never.
      onPrepared: (ms) => timer.add('template', ms),
      onStep: (step, ms) => timer.add(step === 'container' ? 'container' : 'workspace', ms),
      assets: {
        target: EVALUATOR_PATHS.assets,
        files: [
          { name: ASSET.runner, bytes: runner, executable: true },
          // The collector's alone; the hidden test patch itself reaches its apply on stdin.
          ...Object.entries({ ...lists, [ASSET.hiddenPatch]: headers }).map(([name, bytes]) => ({
            name,
            bytes,
            privateTo: idle,
          })),
          ...(patch !== null && patch.length > 0 ? [{ name: ASSET.candidate, bytes: patch }] : []),
        ],
      },
      container: {
        workdir: bundle.workdir,
        tmpfs: [
          workTmpfs(limits.memoryMb),
          { path: EVALUATOR_PATHS.out, sizeMb: 64 },
          { path: EVALUATOR_PATHS.home, sizeMb: 64 },
        ],
        env: { ...bundle.testsEnv, ...DETERMINISTIC_ENV },
        limits: { cpus: limits.cpus, memoryMb: limits.memoryMb, pids: limits.pids },
      },
      ...(signal ? { signal } : {}),
      ...runtime,
    });
    ({ container, workspace, assets, layerVolume } = started);
    evaluation.workspace = {
      medium: started.medium,
      ...(started.treeMb === undefined ? {} : { treeMb: started.treeMb }),
      ...(started.fallback === undefined ? {} : { fallback: started.fallback }),
    };
    checkAborted(signal);
    const id = container.id;
    const exec = (
      cmd: string[],
      timeoutMs: number,
      outputBytes = 64 * 1024,
      options: PhaseExecOptions = {},
    ) =>
      execInContainer(docker, id, {
        cmd,
        user: options.user ?? user,
        workdir: bundle.workdir,
        timeoutMs,
        outputBytes,
        ...(options.stdin ? { stdin: options.stdin } : {}),
        ...(options.clockFrom ? { clockFrom: options.clockFrom } : {}),
        ...(signal ? { signal } : {}),
      });

    const hasPatch = patch !== null && patch.length > 0;
    // A protocol-2 runner's collector starts first: it saves the base commit's test
    // configuration before anything of the candidate's is in the tree. A run without a diff
    // (a baseline's) has no sentinels, as it has no canaries: they catch a candidate's code,
    // and there is none; a file of them cost a TypeScript suite a compile of its own (2.8 s
    // of immutable-js' 4.9).
    const protocol =
      runnerProtocol(runner) === 2
        ? startCollector(
            exec,
            `${idle}:${idle}`,
            limits.testSeconds,
            swebench ? { tests: ASSET.tests } : { existing: ASSET.existing, hidden: ASSET.hidden },
            {
              sentinels: hasPatch,
              ...(runnerCachesCode(runner)
                ? {
                    code: {
                      loader: codeLoader(),
                      cache: `${idle}:${EVALUATOR_PATHS.out}/code-${randomBytes(8).toString('hex')}`,
                    },
                  }
                : {}),
            },
          )
        : undefined;

    const phase: PhaseContext = {
      docker,
      bundle,
      containerId: id,
      exec,
      timed,
      addTime: timer.add,
      evaluation,
      lists,
      patchHeaders: headers,
      failedEarlier: new Set(),
      ...(signal ? { signal } : {}),
      ...(input.onReport ? { onReport: input.onReport } : {}),
      ...(input.unstartedIsInvalid ? { unstartedIsInvalid: true } : {}),
      ...(protocol ? { protocol } : {}),
    };
    // Under SWE-bench's rules nothing runs between the candidate's apply and the hidden tests'
    // preparation: the apply is that exec's first step (evaluate-swebench.ts). Otherwise its
    // exec also reads the files of the existing run's canaries, for a runner that pays per file.
    let existing: ExistingCanaries | null = null;
    let sample: ReturnType<typeof splitSample> | null = null;
    if (hasPatch && !swebench) {
      sample = splitSample(phase, runner);
      const applied = await prepareExistingRun(phase, runner, sample.existing);
      evaluation.apply = applied.apply;
      if (applied.apply.exitCode !== 0) {
        evaluation.verdict = candidateApplyVerdict(applied.apply);
        return evaluation;
      }
      existing = applied.canaries;
    }

    if (swebench) {
      const ran = await runSwebenchTests(phase, {
        runner,
        hiddenPatch,
        baseline: input.candidate === null,
        candidate: hasPatch,
      });
      evaluation.apply = ran.apply;
      evaluation.hiddenApply = ran.hiddenApply;
      evaluation.testTree = ran.testTree;
      evaluation.phases = ran.phases;
      evaluation.verdict = ran.verdict;
      return evaluation;
    }
    let ran: StartedPhase;
    if (existing?.before) {
      const after = await startPhaseAfterSteps(
        phase,
        'existing',
        ASSET.existing,
        bundle.existingIds,
        existing.before,
      );
      if (after.tree.verdict || !after.ran) {
        evaluation.testTree = after.tree.record;
        evaluation.verdict =
          after.tree.verdict ?? failVerdict('INFRA_ERROR', 'the existing run never started');
        return evaluation;
      }
      ran = after.started;
    } else {
      ran = await startPhase(phase, 'existing', ASSET.existing, undefined, existing?.record);
    }
    if (ran.run.timedOut) {
      // The verdict is TIMEOUT whatever the hidden tests do (and a baseline is quarantined):
      // do not spend test_seconds a second time.
      const phases: GradePhases = { existing: await collectPhase(phase, ran) };
      evaluation.phases = phases;
      evaluation.verdict = decideGrade(phases);
      return evaluation;
    }

    // The existing suite's collect, the hidden test patch, the canaries and the work tree's
    // git, in one exec (two for a JavaScript runner's canaries): the last preparation before
    // the hidden tests run, while no process of the task runs.
    const prepared = await prepareHiddenRun(phase, {
      runner,
      hiddenPatch,
      candidate: hasPatch,
      collect: ran,
      existing,
      ...(sample ? { sample: sample.hidden } : {}),
    });
    if (prepared.collected === null) throw new Error('the existing suite was not collected');
    const phases: GradePhases = { existing: prepared.collected };
    evaluation.phases = phases;
    evaluation.hiddenApply = prepared.hiddenApply;
    if (prepared.applyFailed !== null) {
      evaluation.verdict = failVerdict(
        'APPLY_FAILED',
        input.candidate === null
          ? `tests/hidden.patch does not apply at base_commit: ${prepared.applyFailed}`
          : `tests/hidden.patch does not apply after the candidate's changes and the existing suite: ${prepared.applyFailed}`,
      );
      return evaluation;
    }
    const hidden = await runPrepared(phase, prepared, 'hidden', ASSET.hidden, bundle.hiddenIds);
    evaluation.testTree = hidden.tree.record;
    if (hidden.outcome === null) {
      evaluation.verdict =
        hidden.tree.verdict ?? failVerdict('INFRA_ERROR', 'the hidden run never started');
      return evaluation;
    }
    phases.hidden = hidden.outcome;
    evaluation.verdict = decideGrade(phases);
    return evaluation;
  } finally {
    if (!input.leaveForOwner)
      await timed('cleanup', async () => {
        // A volume can go only after the container that mounts it.
        const results = await Promise.allSettled([
          container ? removeContainer(container) : Promise.resolve(),
        ]);
        const volumes = await Promise.allSettled(
          [workspace, assets].flatMap((v) => (v === undefined ? [] : [removeVolume(docker, v)])),
        );
        // An overlay's layer after the overlay itself (nothing mounts it by then).
        if (layerVolume !== undefined) {
          volumes.push(...(await Promise.allSettled([removeVolume(docker, layerVolume)])));
        }
        const failed = [...results, ...volumes].find((r) => r.status === 'rejected');
        if (failed) {
          // The job's own removeOwned (and the reaper) will try again; the verdict stands.
          evaluation.cleanupError = describeError(failed.reason);
        }
      });
    // The one place per-test statuses are read from the checked phases, whichever way it ended.
    evaluation.tests = declaredTests(bundle, evaluation.phases);
    // Steps overlap (the workspace and the assets are made at once): `total` is the wall time.
    timings['total'] = Date.now() - startedAt;
  }
}
