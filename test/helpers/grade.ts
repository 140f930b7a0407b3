// One evaluation of a bundle against a candidate (null: a baseline run) as the runner tests
// make it: the test scope's owner, the task uid 1000, and nothing left to clean up after; and
// what the runner tests read of one, or grade it by.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { loadBundle, type Bundle } from '../../src/oracle/bundle.js';
import type { CanaryRecord, InFileSentinel } from '../../src/oracle/canaries.js';
import { evaluate, type EvaluateInput, type Evaluation } from '../../src/oracle/evaluate.js';
import { declaredOutcomes } from '../../src/oracle/verdict.js';
import type { DockerClient } from '../../src/sandbox/docker.js';
import type { DockerScope } from './docker.js';
import { withIds } from './repo-bundles.js';

export async function gradeIn(
  docker: DockerClient,
  scope: DockerScope,
  imageId: string,
  task: Bundle,
  candidate: Buffer | null,
  onReport?: EvaluateInput['onReport'],
): Promise<Evaluation> {
  const evaluation = await evaluate(docker, {
    bundle: task,
    imageId,
    candidate,
    owner: scope.owner(),
    sandbox: { uid: 1000, gid: 1000 },
    ...(onReport ? { onReport } : {}),
  });
  expect(evaluation.cleanupError).toBeUndefined();
  return evaluation;
}

/** Each declared test's outcome in one phase of a checked evaluation, by id. */
export function outcomes(evaluation: Evaluation, phase: 'existing' | 'hidden') {
  const check = evaluation.phases?.[phase]?.check;
  if (!check) throw new Error(`no ${phase} check: ${JSON.stringify(evaluation.verdict)}`);
  return Object.fromEntries(declaredOutcomes(check));
}

/** Each declared test's outcome and SWE-bench status, by id. */
export function swebenchOf(evaluation: Evaluation): Record<string, [string, string | undefined]> {
  return Object.fromEntries(
    evaluation.tests.tests.map((t) => [t.id, [t.outcome, t.swebench]] as const),
  );
}

/** A copy of the bundle at `from` graded by SWE-bench's rules, with other lists when given. */
export async function swebenchTask(
  from: string,
  lists: { existing?: string[]; hidden?: string[] } = {},
): Promise<Bundle> {
  const copy = withIds(from, lists);
  const toml = join(copy, 'task.toml');
  writeFileSync(
    toml,
    readFileSync(toml, 'utf8').replace('[grading]\n', '[grading]\nrules = "swebench"\n'),
  );
  return loadBundle(copy);
}

/** The ids a task lists, as a RepoBundleSpec names them. */
export interface ListedIds {
  existing: readonly string[];
  hiddenIds: readonly string[];
}

/** A baseline's outcomes per phase are these, and it fails on the hidden tests. */
export function expectBaseline(
  base: Evaluation,
  baseline: { existing: Record<string, string>; hidden: Record<string, string> },
): void {
  expect(outcomes(base, 'existing')).toEqual(baseline.existing);
  expect(outcomes(base, 'hidden')).toEqual(baseline.hidden);
  expect(base.verdict, base.verdict.detail).toMatchObject({
    verdict: 'FAIL',
    reason: 'HIDDEN_FAILED',
  });
}

/**
 * A baseline (no candidate) gives these outcomes per phase and fails on the hidden tests, and
 * the gold patch passes: both evaluations, for a test's further checks.
 */
export async function expectBaselineThenGold(
  grade: (task: Bundle, candidate: Buffer | null) => Promise<Evaluation>,
  task: Bundle,
  gold: Buffer,
  baseline: { existing: Record<string, string>; hidden: Record<string, string> },
): Promise<{ base: Evaluation; fixed: Evaluation }> {
  const base = await grade(task, null);
  expectBaseline(base, baseline);
  const fixed = await grade(task, gold);
  expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
  return { base, fixed };
}

/** The evaluation fails, and every listed test of both phases is an error. */
export function expectAllErrors(evaluation: Evaluation, listed: ListedIds): void {
  expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL' });
  for (const phase of ['existing', 'hidden'] as const) {
    const seen = outcomes(evaluation, phase);
    for (const id of phase === 'existing' ? listed.existing : listed.hiddenIds)
      expect(seen[id], id).toBe('error');
  }
}

/** A forgery's evaluation does not pass, and its reason and detail say why (`detail`). */
export function expectNotPassed(evaluation: Evaluation, detail: RegExp): void {
  expect(evaluation.verdict.verdict, evaluation.verdict.detail).not.toBe('PASS');
  expect(`${evaluation.verdict.reason}: ${evaluation.verdict.detail}`).toMatch(detail);
}

/** Every id either phase's check reported: passed, not passed, or undeclared. */
export function reported(evaluation: Evaluation): string[] {
  return (['existing', 'hidden'] as const).flatMap((name) => {
    const check = evaluation.phases?.[name]?.check;
    return check ? [...check.passed, ...check.notPassed.map((t) => t.id), ...check.undeclared] : [];
  });
}

/**
 * Both phases ran the protocol: none tampered, three sentinels each (one must pass, one fail,
 * one be an error), each reported as it must be.
 */
export function expectSentinelsHeld(evaluation: Evaluation): void {
  expect(evaluation.phaseRecords).toHaveLength(2);
  for (const phase of evaluation.phaseRecords) {
    expect(phase.integrity?.tampered).toBeNull();
    const inFiles = phase.canaries?.sentinels ?? [];
    if (inFiles.length > 0) {
      // Written into the test files by the trusted step: no file of their own that phase.
      expect(phase.integrity?.sentinels).toEqual([]);
      // A pair in each file that got them.
      const kinds = inFiles.map((s) => s.expect);
      expect(kinds.filter((k) => k === 'passed')).toHaveLength(inFiles.length / 2);
      expect(kinds.filter((k) => k === 'failed')).toHaveLength(inFiles.length / 2);
      for (const s of inFiles) expect(s.status, s.calls).toBe(s.expect);
      continue;
    }
    expect(phase.integrity?.sentinels.map((s) => s.expect).sort()).toEqual([
      'error',
      'failed',
      'passed',
    ]);
    for (const s of phase.integrity?.sentinels ?? []) expect(s.status).toBe(s.expect);
  }
}

/** The hidden tests' phase record of a grade. */
export const hiddenRecord = (evaluation: Evaluation) =>
  evaluation.phaseRecords.find((p) => p.name === 'hidden');

/** The existing tests' phase record of a grade. */
export const existingRecord = (evaluation: Evaluation) =>
  evaluation.phaseRecords.find((p) => p.name === 'existing');

/**
 * A gold grade with canaries on: PASS with the sentinels held, one mutant for each of `tested`
 * and for nothing else (in whichever phase: a node or vitest runner's sampled existing test in
 * a file no hidden test names has its mutant in the existing phase), none of them passing, and
 * only the task's own `ids` in what the grade reports and stores. The hidden phase's canary
 * record, for the dialect's own checks.
 */
export function expectGoldWithCanaries(
  evaluation: Evaluation,
  tested: string[],
  ids: string[],
): CanaryRecord {
  expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
    verdict: 'PASS',
    reason: 'PASS',
  });
  expectSentinelsHeld(evaluation);
  const canaries = hiddenRecord(evaluation)?.canaries;
  expect(canaries?.error).toBeNull();
  const records = evaluation.phaseRecords.flatMap((p) => (p.canaries ? [p.canaries] : []));
  for (const record of records) expect(record.error).toBeNull();
  const mutants = records.flatMap((r) => r.mutants);
  expect(mutants.map((m) => m.test).sort()).toEqual([...tested].sort());
  for (const m of mutants) {
    expect(m.status, `${m.id}: ${m.mutation}`).not.toBe('passed');
    expect(m.status, `${m.id}: ${m.mutation}`).not.toBeNull();
  }
  expect(reported(evaluation).sort()).toEqual([...ids].sort());
  expect(evaluation.tests.tests.map((t) => t.id).sort()).toEqual([...ids].sort());
  return canaries!;
}

/**
 * An honest candidate's failure: FAIL for `reason` (its own tests fail, and so do their
 * mutants, or their passing mutants are excused), nothing tampered in any phase.
 */
export function expectHonestFail(evaluation: Evaluation, reason = 'HIDDEN_FAILED'): void {
  expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'FAIL', reason });
  for (const record of evaluation.phaseRecords) expect(record.integrity?.tampered).toBeNull();
}

/**
 * A forgery the canaries catch and nothing else does: TAMPERED with a `VACUOUS_TEST` detail
 * matching `detail`, no tripwire named, every sentinel as it must be; without the canaries every
 * declared test passed, and only the task's own `ids` were reported.
 */
export function expectVacuousTest(evaluation: Evaluation, detail: RegExp, ids: string[]): void {
  expect(evaluation.verdict.verdict).toBe('FAIL');
  expect(evaluation.verdict.reason, evaluation.verdict.detail).toBe('TAMPERED');
  expect(evaluation.verdict.detail).toMatch(detail);
  expect(evaluation.verdict.detail).not.toMatch(/tripwire/);
  for (const s of hiddenRecord(evaluation)?.integrity?.sentinels ?? []) {
    expect(s.status).toBe(s.expect);
  }
  expect(evaluation.phases?.hidden?.check?.notPassed).toEqual([]);
  expect(reported(evaluation).every((id) => ids.includes(id))).toBe(true);
}

/**
 * The hidden phase's sentinels were written into the hidden test files (a pair in each file
 * that got them, each after one of `hiddenIds`, making one of `calls`), and each reported what
 * it must; that phase asked the test side for no file of its own. The sentinels, for the
 * dialect's own checks.
 */
export function expectInFileSentinels(
  evaluation: Evaluation,
  hiddenIds: readonly string[],
  calls: readonly string[],
): InFileSentinel[] {
  const hidden = hiddenRecord(evaluation);
  const sentinels = hidden?.canaries?.sentinels ?? [];
  expect(hidden?.canaries?.sentinelsWhy, 'why they are not in the files').toBeNull();
  const kinds = sentinels.map((s) => s.expect);
  expect(kinds.filter((k) => k === 'passed').length).toBeGreaterThan(0);
  expect(kinds.filter((k) => k === 'failed')).toHaveLength(kinds.length / 2);
  expect(hidden?.integrity?.sentinels).toEqual([]);
  for (const s of sentinels) {
    expect(hiddenIds).toContain(s.test);
    expect(calls).toContain(s.calls);
    expect(s.status, `${s.id} (must be ${s.expect})`).toBe(s.expect);
  }
  return sentinels;
}

/**
 * A forgery the sentinels in the hidden test files catch and the file of their own did not:
 * TAMPERED, the detail naming the must-fail sentinel beside a hidden test, which passed, while
 * the existing phase's sentinels, in a file of their own, all reported what they must, and no
 * tripwire fired in either phase.
 */
export function expectInFileSentinelCatch(evaluation: Evaluation): void {
  expect(evaluation.verdict.verdict).toBe('FAIL');
  expect(evaluation.verdict.reason, evaluation.verdict.detail).toBe('TAMPERED');
  expect(evaluation.verdict.detail).toMatch(
    /^hidden phase: sentinel beside .+ in its file \(must be failed\) reported passed/,
  );
  expect(evaluation.verdict.detail).not.toMatch(/tripwire/);
  const existing = evaluation.phaseRecords.find((p) => p.name === 'existing');
  expect(existing?.integrity?.tampered).toBeNull();
  expect(existing?.integrity?.sentinels.map((s) => s.expect).sort()).toEqual([
    'error',
    'failed',
    'passed',
  ]);
  for (const s of existing?.integrity?.sentinels ?? []) expect(s.status).toBe(s.expect);
  // One must-fail sentinel at least passed (one in a file the forgery spares may still fail).
  const failing = hiddenRecord(evaluation)?.canaries?.sentinels.filter(
    (s) => s.expect === 'failed',
  );
  expect(failing?.map((s) => s.status)).toContain('passed');
  // Every declared hidden test passed: the forgery fooled them all, and only the sentinel told.
  expect(evaluation.phases?.hidden?.check?.notPassed).toEqual([]);
}
