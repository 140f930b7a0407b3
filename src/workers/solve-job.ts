// The handler of the `solve` kind: a long-lived solver container (isolation profile) with a
// fresh workspace from the clean commit (copied from the image's workspace template by the
// container itself; its history as [environment].history says), the adapter's model loop host-side with description.md
// as the only prompt and one deadline (solver_seconds, lowered by the request's timeout), then
// the container is paused and the candidate captured with git (sandbox/capture.ts), stored as
// an artifact with the redacted transcript, and — when the solver finished — its grade job is
// enqueued as a child, in the completion's own transaction.
//
// A solve ended by a limit, a protocol violation or a provider error is a FAIL whose reason
// names it, and no grade is enqueued; a cancel ends the job as cancelled.
//
// Every result records what the solve spent (usage.ts): tokens, turns, tool calls and, when
// the profile has prices, its cost in USD. A solve of a batch with a cost cap (`--max-cost`)
// first checks the batch's spend; once it has reached the cap, the store ends this solve and
// the batch's queued ones as cancelled (BUDGET) before anything runs. While it runs, what it
// spends is drawn on the batch's spend in the store (batch-cost.ts).
import { resolve } from 'node:path';
import type { Clock } from '../clock.js';
import { solverKey, solverPrices, type SolverProfile } from '../config.js';
import { ProctorError, describeError, isProctorError, withContext } from '../errors.js';
import {
  loadBundle,
  readDescription,
  taskRecord,
  type Bundle,
  type FileDigests,
  type TaskRecord,
} from '../oracle/index.js';
import type { JobStore, PayloadOf } from '../queue/index.js';
import {
  capturePatch,
  effectiveSeconds,
  removeContainer,
  startWithWorkspace,
  workTmpfs,
  type DockerClient,
  type TemplateStore,
} from '../sandbox/index.js';
import { createDeadline } from '../solvers/deadline.js';
import type { ModelCatalog } from '../solvers/codex/catalog.js';
import { runCodex } from '../solvers/codex/run.js';
import { runFlat } from '../solvers/flat.js';
import { createTranscript, type SolveEnd } from '../solvers/transcript.js';
import { costUsd, createSolveMeter, type TokenUsage } from '../solvers/usage.js';
import { containsSecret, type ArtifactRecord, type ArtifactStore } from '../store/index.js';
import type { ImageCache } from './images.js';
import { resolveForJob } from './pull-status.js';
import {
  resolveAgent,
  type AgentDefinition,
  type AgentLayers,
  type AgentLog,
} from '../agents/index.js';
import { runAgentSolve } from '../solvers/agent.js';
import { createBudget } from '../proxy/budget.js';
import type { Trajectory } from '../proxy/trajectory.js';
import { batchCost } from './batch-cost.js';
import { asOwner, quarantineOf, type Quarantine } from './oracle-jobs.js';
import type { EvaluatorSandbox } from '../oracle/index.js';
import type { HandlerOutput, JobHandler } from './pool.js';

export interface SolveDeps {
  docker: DockerClient;
  /** For the batch's cost cap, and a failed solve's task quarantine. */
  store: Pick<
    JobStore,
    'checkBudget' | 'drawCost' | 'batchSpent' | 'taskJudgement' | 'setProgress'
  >;
  artifacts: ArtifactStore;
  images: ImageCache;
  sandbox: EvaluatorSandbox;
  home: string;
  /** This host's identity (ProctorConfig.host): labels every container; default hostname. */
  host?: string;
  clock: Clock;
  solvers: Record<string, SolverProfile>;
  /** Provider keys: a candidate holding one is rejected rather than stored. */
  secrets: readonly string[];
  /** The codex adapter's model catalog, read once per runtime. */
  codexCatalog: ModelCatalog;
  /** Workspace templates, shared by every job of the process (LRU-bounded). */
  templates?: TemplateStore;
  /** File digests of earlier bundle loads: an unchanged bundle is not read whole again. */
  digests?: FileDigests;
  /** The agent adapter's layers (the task image with the agent installed), built on first use. */
  agentLayers?: AgentLayers;
}

/** What a solve job stores as its result. */
export interface SolveResult {
  /** FAIL when the solver did not finish (its reason names why); PASS means "graded next". */
  verdict: 'PASS' | 'FAIL';
  reason: string;
  detail: string;
  solver: string;
  task: TaskRecord;
  end: SolveEnd;
  candidate: { artifact: string; sha256: string; files: number; bytes: number } | null;
  transcript: string;
  /** The agent adapter: the agent's name and how its process ended. */
  agent?: { name: string; outcome: string; exitCode: number | null };
  /** The agent adapter: the model proxy's trajectory artifact (trajectory.json). */
  trajectory?: string;
  /** Wall time of the solve (workspace, container and model loop), ms. */
  solveMs: number;
  /** Tokens summed over the provider's usage reports; null when it did not report them all. */
  usage: TokenUsage | null;
  /** Model answers received (codex: 1 once its turn completed). */
  turns: number;
  /** Tool calls run in the sandbox. */
  toolCalls: number;
  /** USD at the profile's prices; null without prices or without usage. */
  costUsd: number | null;
  /**
   * On a FAIL, when the latest baseline of this exact bundle quarantined the task: the solve
   * is then of class invalid_task (a PASS is judged by its grade, which records the same).
   */
  quarantined?: Quarantine;
}

const REASON_OF_END: Record<SolveEnd['reason'], string> = {
  done: 'SOLVED',
  turn_limit: 'SOLVER_TURN_LIMIT',
  tool_call_limit: 'SOLVER_TOOL_CALL_LIMIT',
  token_limit: 'SOLVER_TOKEN_LIMIT',
  deadline: 'SOLVER_TIMEOUT',
  cancelled: 'CANCELLED',
  provider_error: 'SOLVER_PROVIDER_ERROR',
  protocol_error: 'SOLVER_PROTOCOL_ERROR',
  budget_exceeded: 'BUDGET_EXCEEDED',
  agent_crashed: 'AGENT_CRASHED',
  output_flood: 'AGENT_OUTPUT_FLOOD',
};

export function solveHandler(deps: SolveDeps): JobHandler {
  return async (context): Promise<HandlerOutput> => {
    const payload = context.payload as PayloadOf<'solve'>;
    const profile = deps.solvers[payload.solver];
    if (!profile) {
      throw new ProctorError(
        'CONFIG_INVALID',
        `no solver profile named ${payload.solver} in proctor.toml`,
      );
    }
    const prices = solverPrices(profile);
    // The batch's cap, kept in the store: the agent adapter's proxy holds this solve to it,
    // drawing on it with the batch's other solves wherever they run.
    let cap: { batchId: string; capUsd: number } | undefined;
    if (payload.maxCostUsd !== undefined && context.job.batchId !== null) {
      if (prices === null) {
        throw new ProctorError(
          'CONFIG_INVALID',
          `solver ${payload.solver}: the batch has a cost cap but the profile sets no prices`,
        );
      }
      const budget = await deps.store.checkBudget(
        context.job.batchId,
        payload.maxCostUsd,
        context.lease,
      );
      // The store has already ended this job (cancelled, BUDGET), so the failure this throw
      // leads to finds no running job to change.
      if (budget.stopped) {
        throw new ProctorError('CANCELLED', "the batch's spend reached its cost cap", {
          data: { spentUsd: budget.spentUsd, capUsd: payload.maxCostUsd },
        });
      }
      cap = { batchId: context.job.batchId, capUsd: payload.maxCostUsd };
    }
    const definition = agentOf(profile, payload, deps.home);
    const apiKey = solverKey(profile);
    if (apiKey === undefined) {
      throw new ProctorError(
        'CONFIG_INVALID',
        `solver ${payload.solver}: the variable ${profile.api_key_env} is not set`,
      );
    }
    let bundle: Bundle;
    try {
      bundle = await loadBundle(payload.bundle, deps.digests ? { digests: deps.digests } : {});
    } catch (error) {
      throw withContext(error, 'cannot load the bundle');
    }
    const prompt = await readDescription(bundle);
    // A USAGE error: not retried, since the payload will be just as wrong next time.
    const seconds = effectiveSeconds(bundle.limits.solverSeconds, payload.timeoutSeconds);
    const image = await resolveForJob(deps, context, bundle);
    const { uid, gid } = deps.sandbox;
    const runtime = deps.sandbox.runtime ? { runtime: deps.sandbox.runtime } : {};
    const transcript = createTranscript();
    const meter = createSolveMeter();
    const started = performance.now();
    const model = payload.model ?? profile.model;
    const limits = {
      cpus: bundle.limits.cpus,
      memoryMb: bundle.limits.memoryMb,
      pids: bundle.limits.pids,
    };
    return asOwner(deps, context, async (owner) => {
      let container: Awaited<ReturnType<typeof startWithWorkspace>>['container'];
      let volume: string;
      let end: SolveEnd;
      let trajectory: Trajectory | null = null;
      let agentLogs: AgentLog[] = [];
      let agent: SolveResult['agent'];
      if (definition !== null) {
        if (!deps.agentLayers) {
          throw new ProctorError('INTERNAL', 'the solve handler has no agent layers');
        }
        const layer = await deps.agentLayers.resolve(image.localId, definition, context.signal);
        const deadline = createDeadline(seconds * 1000);
        try {
          const solved = await runAgentSolve({
            docker: deps.docker,
            definition,
            image: layer.image,
            owner,
            repoPath: bundle.workdir,
            baseCommit: bundle.baseCommit,
            history: bundle.history ?? 'full',
            ...(bundle.setupCommit ? { setupCommit: true } : {}),
            uid,
            gid,
            limits,
            ...runtime,
            ...(deps.templates ? { templates: deps.templates } : {}),
            prompt,
            upstream: { baseUrl: profile.base_url, apiKey, model },
            proxyLimits: { maxTurns: profile.max_turns, maxTokens: profile.max_tokens },
            ...(cap ? { sharedCost: batchCost(deps.store, cap.batchId, cap.capUsd) } : {}),
            prices,
            meter,
            deadline,
            signal: context.signal,
            transcript,
            secrets: deps.secrets,
            logger: context.logger,
          });
          ({ container, workspace: volume } = solved.started);
          ({ end, trajectory, logs: agentLogs } = solved);
          agent = {
            name: definition.name,
            outcome: solved.run.outcome.kind,
            exitCode: solved.run.exitCode,
          };
        } finally {
          deadline.dispose();
        }
      } else {
        // The solver's own container copies the template in (no init container on the path).
        ({ container, workspace: volume } = await startWithWorkspace(deps.docker, {
          owner,
          role: 'solver',
          image: image.localId,
          repoPath: bundle.workdir,
          baseCommit: bundle.baseCommit,
          history: bundle.history ?? 'full',
          ...(bundle.setupCommit ? { setupCommit: true } : {}),
          uid,
          gid,
          ...runtime,
          ...(deps.templates ? { templates: deps.templates } : {}),
          signal: context.signal,
          container: {
            workdir: bundle.workdir,
            tmpfs: [workTmpfs(bundle.limits.memoryMb)],
            env: { HOME: '/tmp' },
            limits,
          },
        }));
        const deadline = createDeadline(seconds * 1000);
        try {
          const sandbox = {
            docker: deps.docker,
            containerId: container.id,
            workdir: bundle.workdir,
            user: `${uid}:${gid}`,
            outputBytes: bundle.limits.outputBytes,
            patchBytes: bundle.limits.patchBytes,
          };
          const common = { prompt, sandbox, deadline, signal: context.signal, transcript, meter };
          // The batch's cap holds each model request of the loop, whichever adapter runs it.
          const shared = cap && prices ? batchCost(deps.store, cap.batchId, cap.capUsd) : null;
          end =
            profile.adapter === 'codex'
              ? await runCodex(
                  {
                    ...common,
                    profile: {
                      baseUrl: profile.base_url,
                      model,
                      apiKey,
                      maxToolCalls: profile.max_tool_calls,
                      maxTokens: profile.max_tokens,
                    },
                    ...(shared && prices ? { spend: { shared, prices } } : {}),
                  },
                  { catalog: deps.codexCatalog },
                )
              : await runFlat({
                  ...common,
                  profile: {
                    baseUrl: profile.base_url,
                    model: profile.model,
                    apiKey,
                    maxTurns: profile.max_turns,
                    maxToolCalls: profile.max_tool_calls,
                    maxTokens: profile.max_tokens,
                  },
                  ...(shared ? { spend: createBudget({}, prices, () => {}, shared) } : {}),
                });
        } finally {
          deadline.dispose();
        }
      }
      const solveMs = Math.round(performance.now() - started);
      const totals = meter.totals();
      if (end.reason === 'cancelled') {
        throw new ProctorError('CANCELLED', 'the solve was cancelled');
      }
      const records: ArtifactRecord[] = [];
      let candidate: SolveResult['candidate'] = null;
      let verdict: SolveResult['verdict'] = end.reason === 'done' ? 'PASS' : 'FAIL';
      let reason = REASON_OF_END[end.reason];
      let detail = end.detail;
      try {
        const captured = await capturePatch(deps.docker, {
          owner,
          image: image.localId,
          repoPath: bundle.workdir,
          baseCommit: bundle.baseCommit,
          ...(bundle.setupCommit ? { setupCommit: true } : {}),
          volume,
          solverContainerId: container.id,
          uid,
          gid,
          patchBytes: bundle.limits.patchBytes,
          candidateFiles: bundle.limits.candidateFiles,
          allowSymlinks: bundle.grading.allowSymlinks,
          ...runtime,
        });
        if (containsSecret(captured.patch, deps.secrets)) {
          throw new ProctorError('CANDIDATE_REJECTED', 'the candidate contains a provider key');
        }
        const record = await deps.artifacts.write({
          name: 'candidate.diff',
          mediaType: 'text/x-diff',
          bytes: captured.patch,
          redact: false,
        });
        records.push(record);
        candidate = {
          artifact: record.id,
          sha256: captured.sha256,
          files: captured.files,
          bytes: captured.patch.length,
        };
      } catch (error) {
        if (!isProctorError(error, 'CANDIDATE_REJECTED')) throw error;
        verdict = 'FAIL';
        reason = 'PATCH_REJECTED';
        detail = describeError(error);
      } finally {
        await removeContainer(container);
      }
      const log = await deps.artifacts.write({
        name: 'transcript.json',
        mediaType: 'application/json',
        bytes: transcript.toJson(end),
      });
      records.push(log);
      let trajectoryId: string | undefined;
      if (trajectory !== null) {
        const record = await deps.artifacts.write({
          name: 'trajectory.json',
          mediaType: 'application/json',
          bytes: `${JSON.stringify(trajectory, null, 1)}\n`,
        });
        records.push(record);
        trajectoryId = record.id;
      }
      if (agentLogs.length > 0) {
        // What the agent wrote of its own session (the definition's `logs`), bounded by
        // logs.ts and redacted like every artifact.
        records.push(
          await deps.artifacts.write({
            name: 'agent-logs.json',
            mediaType: 'application/json',
            bytes: `${JSON.stringify(agentLogs, null, 1)}\n`,
          }),
        );
      }
      const result: SolveResult = {
        verdict,
        reason,
        detail,
        solver: payload.solver,
        task: taskRecord(bundle),
        end,
        candidate,
        transcript: log.id,
        ...(agent === undefined ? {} : { agent }),
        ...(trajectoryId === undefined ? {} : { trajectory: trajectoryId }),
        solveMs,
        ...totals,
        costUsd: prices === null || totals.usage === null ? null : costUsd(totals.usage, prices),
      };
      if (verdict === 'FAIL') {
        const quarantined = await quarantineOf(deps.store, bundle);
        if (quarantined !== undefined) result.quarantined = quarantined;
      }
      const grade =
        verdict === 'PASS' && candidate !== null
          ? [
              {
                kind: 'grade' as const,
                // The attempt a report row is: a grade carries its solve's sample.
                payload: {
                  bundle: bundle.dir,
                  candidate: candidate.artifact,
                  ...(payload.sample === undefined ? {} : { sample: payload.sample }),
                },
              },
            ]
          : [];
      return { result, artifacts: records, children: grade };
    });
  };
}

/**
 * The agent a solve runs, if any: `--agent` (the payload's), else the profile's with adapter
 * "agent"; a relative definition path is the home's. Refused at once when the proxy does not
 * speak its protocol.
 */
function agentOf(
  profile: SolverProfile,
  payload: PayloadOf<'solve'>,
  home: string,
): AgentDefinition | null {
  const name = payload.agent ?? (profile.adapter === 'agent' ? profile.agent : undefined);
  if (name === undefined) return null;
  const isPath = name.includes('/') || name.endsWith('.toml');
  return resolveAgent(isPath ? resolve(home, name) : name);
}
