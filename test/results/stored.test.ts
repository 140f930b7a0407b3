import { describe, expect, it } from 'vitest';
import {
  baselineOf,
  gradeOf,
  payloadOf,
  solveOf,
  storedBaseline,
  storedGrade,
  storedPayload,
  storedSolve,
} from '../../src/results/stored.js';

const hash = 'a'.repeat(64);
const grade = {
  verdict: 'FAIL',
  reason: 'HIDDEN_FAILED',
  detail: 'x',
  testsHash: hash,
  task: { id: 't', source: { instance_id: 'o__r-1', dataset: 'd' }, contentHash: hash },
  image: { portable: false, kind: 'local_build', imageId: 'sha256:1', localId: 'x' },
  diffSha256: null,
  log: 'l',
  timings: { image: 1, hidden: 2 },
  extra: { kept: 'out' },
};
const solve = {
  verdict: 'PASS',
  reason: 'PASS',
  candidate: { sha256: hash },
  solveMs: 5,
  usage: { inputTokens: 1, cachedInputTokens: 0, outputTokens: 2 },
  turns: 3,
  toolCalls: 4,
  costUsd: null,
};
const payload = { bundle: '/b', sample: 2, prediction: { instanceId: 'i', model: 'm' }, x: 1 };

// Each variant breaks (or keeps) one rule; the hand-written check must agree with the schema.
const grades: unknown[] = [
  grade,
  { ...grade, verdict: 'MAYBE' },
  { ...grade, reason: 'r'.repeat(101) },
  { ...grade, testsHash: 'A'.repeat(64) },
  { ...grade, task: { id: 5 } },
  { ...grade, task: { id: 't', source: { instance_id: 1 } } },
  { ...grade, image: { portable: true, digest: 'd' } },
  { ...grade, image: { portable: false, kind: 'other', imageId: 'i' } },
  { ...grade, diffSha256: 'short' },
  // A grade recorded when enqueued (an empty prediction) ran nothing: no image, no log.
  { ...grade, image: null, log: null },
  { ...grade, log: 5 },
  { ...grade, timings: { image: -1 } },
  { ...grade, timings: [] },
  { ...grade, timings: { ['k'.repeat(101)]: 1 } },
  { ...grade, suspicious: { hits: [], count: 2, unscreened: 0 } },
  { ...grade, suspicious: { count: -1 } },
  { ...grade, suspicious: { count: 1.5 } },
  { ...grade, suspicious: 3 },
  [],
  'PASS',
  null,
];
const solves: unknown[] = [
  solve,
  { ...solve, usage: null },
  { ...solve, usage: { inputTokens: 1.5, cachedInputTokens: 0, outputTokens: 2 } },
  { ...solve, turns: -1 },
  { ...solve, costUsd: -0.5 },
  { ...solve, candidate: null },
  { ...solve, candidate: { sha256: 'x' } },
  { verdict: 'PASS' },
];
const baseline = {
  ...grade,
  verdict: 'FAIL',
  reason: 'FLAKY',
  validity: 'quarantined',
  runs: [{ verdict: 'PASS', reason: 'PASS', detail: 'd' }, { verdict: 'FAIL' }],
  gold: null,
  flaky: ['t::a', 't::b'],
};
const baselines: unknown[] = [
  baseline,
  { ...baseline, validity: 'maybe' },
  { ...baseline, validity: undefined },
  { ...baseline, runs: [{ verdict: 'SO-SO' }] },
  { ...baseline, runs: {} },
  { ...baseline, gold: { verdict: 'PASS' } },
  { ...baseline, gold: 'PASS' },
  { ...baseline, flaky: [1] },
  { ...baseline, flaky: 'a' },
  { ...baseline, flaky: undefined },
  { ...baseline, image: null },
];
const payloads: unknown[] = [
  payload,
  {},
  { sample: 0 },
  { sample: 1.5 },
  { retryOf: 0 },
  { bundle: 'b'.repeat(4097) },
  { prediction: { instanceId: 'i' } },
  { solver: 's'.repeat(65) },
];

describe('stored result checks', () => {
  it('accept exactly what the zod schemas accept', () => {
    for (const value of grades) {
      expect(gradeOf(value) !== null, JSON.stringify(value)).toBe(
        storedGrade.safeParse(value).success,
      );
    }
    for (const value of solves) {
      expect(solveOf(value) !== null, JSON.stringify(value)).toBe(
        storedSolve.safeParse(value).success,
      );
    }
    for (const value of baselines) {
      expect(baselineOf(value) !== null, JSON.stringify(value)).toBe(
        storedBaseline.safeParse(value).success,
      );
    }
    for (const value of payloads) {
      const ok = storedPayload.safeParse(value).success;
      expect(
        Object.keys(payloadOf(value)).length > 0 ||
          !ok ||
          Object.keys(value as object).length === 0,
      ).toBe(true);
      if (!ok) expect(payloadOf(value)).toEqual({});
    }
  });

  it('read the fields a report uses as the schemas would', () => {
    expect(gradeOf(grade)).toMatchObject(storedGrade.parse(grade));
    // An empty prediction's grade (image and log null) is read, its reason kept.
    expect(gradeOf({ ...grade, reason: 'EMPTY_PATCH', image: null, log: null })?.reason).toBe(
      'EMPTY_PATCH',
    );
    expect(solveOf(solve)).toMatchObject(storedSolve.parse(solve));
    expect(payloadOf(payload)).toMatchObject(storedPayload.parse(payload));
  });
});
