// The four states of a derivation, run by the oracle's own evaluator (same isolation profile,
// deterministic environment, workspace and assets), so that the lists derive writes are what
// a baseline will see. One evaluation without a candidate gives base (its existing phase) and
// base + hidden (its hidden phase); one with the gold patch as the candidate gives base + gold
// and base + hidden + gold. Each is run `repeat` times.
//
// The runner is asked for the whole scope: its LIST holds the scope's paths, one per line,
// and PROCTOR_DISCOVER=1 tells it that LIST names paths, not IDs ("run every test under
// these and report each by its ID"). Everything else is the runner contract unchanged.
import { randomBytes } from 'node:crypto';
import { describeError, ProctorError } from '../errors.js';
import {
  evaluate,
  type Bundle,
  type EvaluatorSandbox,
  type Evaluation,
  type TestStatus,
} from '../oracle/index.js';
import type { DockerClient, Owner } from '../sandbox/index.js';
import { removeOwned } from '../sandbox/index.js';
import { STATE_NAMES, type State, type StateReports } from './classify.js';

/** Set for the runner during derive: LIST names paths to run everything under. */
export const DISCOVER_ENV = 'PROCTOR_DISCOVER';

export interface RunStatesInput {
  docker: DockerClient;
  /** A bundle whose existing and hidden lists are the scope, and testsEnv has DISCOVER_ENV. */
  bundle: Bundle;
  imageId: string;
  gold: Buffer;
  repeat: number;
  home: string;
  /** The host identity its containers are labelled with; default the hostname. */
  host?: string;
  sandbox: EvaluatorSandbox;
  signal?: AbortSignal;
  /** Called after each evaluation: which states, which repeat, how long. */
  onProgress?: (states: readonly State[], repeat: number, ms: number, counts: number[]) => void;
}

export interface RunStatesResult {
  reports: StateReports;
  /** Wall time of all evaluations, and of the runner runs alone (the four states summed). */
  totalMs: number;
  runnerMs: number;
  /** The last lines of the runner's output in the first state, for an error that needs it. */
  firstOutput: string;
}

function tail(text: string): string {
  const lines = text.trim().split('\n').slice(-8).join('\n  ');
  return lines === '' ? '' : `\n  ${lines}`;
}

/** Throws, naming the state and the runner's last words, unless both phases gave a report. */
function requireReports(evaluation: Evaluation, states: readonly [State, State]): void {
  const { verdict, phaseRecords } = evaluation;
  if (verdict.reason === 'APPLY_FAILED' || evaluation.phases === null) {
    throw new ProctorError(
      'DERIVE_FAILED',
      `${STATE_NAMES[states[1]]}: ${verdict.detail || verdict.reason}`,
    );
  }
  const names = ['existing', 'hidden'] as const;
  names.forEach((phase, index) => {
    const state = states[index] ?? states[0];
    const record = phaseRecords.find((r) => r.name === phase);
    if (record === undefined) {
      throw new ProctorError(
        'DERIVE_FAILED',
        `${STATE_NAMES[state]}: the runner did not run (${verdict.detail})`,
      );
    }
    if (record.run.timedOut) {
      throw new ProctorError(
        'DERIVE_FAILED',
        `${STATE_NAMES[state]}: the runner did not finish in ${evaluation.timings[phase] ?? 0} ms (test_seconds)`,
      );
    }
    if (record.report.error !== null) {
      throw new ProctorError(
        'DERIVE_FAILED',
        `${STATE_NAMES[state]}: ${record.report.error} (runner exit ${String(record.run.exitCode)})${tail(record.run.stderr || record.run.stdout)}`,
      );
    }
  });
}

export async function runStates(input: RunStatesInput): Promise<RunStatesResult> {
  const reports: StateReports = { base: [], gold: [], hidden: [], both: [] };
  const started = Date.now();
  let runnerMs = 0;
  let firstOutput: string | undefined;
  const plans: Array<{ states: readonly [State, State]; candidate: Buffer | null }> = [
    { states: ['base', 'hidden'], candidate: null },
    { states: ['gold', 'both'], candidate: input.gold },
  ];
  for (let repeat = 1; repeat <= input.repeat; repeat++) {
    for (const plan of plans) {
      const owner: Owner = {
        job: `derive-${randomBytes(6).toString('hex')}`,
        attempt: 1,
        home: input.home,
        ...(input.host !== undefined ? { host: input.host } : {}),
      };
      const seen: Partial<Record<'existing' | 'hidden', ReadonlyMap<string, TestStatus>>> = {};
      const began = Date.now();
      let evaluation: Evaluation;
      try {
        evaluation = await evaluate(input.docker, {
          bundle: input.bundle,
          imageId: input.imageId,
          candidate: plan.candidate,
          owner,
          sandbox: input.sandbox,
          onReport: (phase, tests) => {
            seen[phase] = tests;
          },
          // derive lists files, not IDs: a run that never began must say why, not list errors.
          unstartedIsInvalid: true,
          ...(input.signal ? { signal: input.signal } : {}),
        });
      } finally {
        // evaluate removes what it made; this catches what an interrupted one left.
        await removeOwned(input.docker, owner).catch((error: unknown) => {
          throw new ProctorError('DOCKER_ERROR', `cleanup: ${describeError(error)}`);
        });
      }
      requireReports(evaluation, plan.states);
      const first = evaluation.phaseRecords[0]?.run;
      firstOutput ??= first ? tail(`${first.stdout}\n${first.stderr}`) : '';
      runnerMs += (evaluation.timings['existing'] ?? 0) + (evaluation.timings['hidden'] ?? 0);
      const [without, withHidden] = plan.states;
      reports[without].push(new Map(seen.existing));
      reports[withHidden].push(new Map(seen.hidden));
      input.onProgress?.(plan.states, repeat, Date.now() - began, [
        seen.existing?.size ?? 0,
        seen.hidden?.size ?? 0,
      ]);
    }
  }
  return { reports, totalMs: Date.now() - started, runnerMs, firstOutput: firstOutput ?? '' };
}
