// Report rows and batch figures from jobs as the store returns them (pure logic: the jobs are
// plain objects shaped like stored ones).
import { describe, expect, it } from 'vitest';
import {
  attemptRows,
  compareBatches,
  summarise,
  type AttemptJob,
} from '../../src/results/index.js';
import { flatRow, summaryLines } from '../../src/results/format.js';

const HASH = 'a'.repeat(64);
const DIFF = 'b'.repeat(64);

let nextId = 1;
function grade(
  task: string,
  verdict: 'PASS' | 'FAIL' | null,
  extra: Partial<AttemptJob> & { sample?: number; reason?: string } = {},
): AttemptJob {
  const { sample, reason, ...rest } = extra;
  return {
    id: nextId++,
    kind: 'grade',
    status: verdict === null ? 'queued' : 'done',
    payload: { bundle: `/suite/${task}`, candidate: 'c1', ...(sample ? { sample } : {}) },
    result:
      verdict === null
        ? null
        : {
            verdict,
            reason: reason ?? (verdict === 'PASS' ? 'PASS' : 'HIDDEN_FAILED'),
            detail: 'd',
            testsHash: HASH,
            task: { id: task, contentHash: 'x', source: { instance_id: `org__${task}` } },
            image: { portable: false, kind: 'local_build', imageId: 'sha256:1', localId: 'l' },
            diffSha256: DIFF,
            log: 'log1',
            timings: { apply: 5, existing: 100, hidden: 200 },
          },
    errorCode: null,
    startedAt: verdict === null ? null : 1_000,
    finishedAt: verdict === null ? null : 1_500,
    parentId: null,
    ...rest,
  };
}

describe('attemptRows', () => {
  it('gives one row per (task, sample), the newest job of a retried attempt winning', () => {
    const failed = grade('t1', null, {
      status: 'failed',
      errorCode: 'DOCKER_ERROR',
      startedAt: 0,
      finishedAt: 10,
    });
    const retried = grade('t1', 'PASS');
    const other = grade('t2', 'FAIL');
    const rows = attemptRows('b1', [failed, other, retried], new Map());
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      task: 't1',
      instanceId: 'org__t1',
      attempt: 1,
      jobIds: [retried.id],
      supersededJobIds: [failed.id],
      class: 'resolved',
      verdict: 'PASS',
      testsHash: HASH,
      image: 'local_build:sha256:1',
      candidateSha256: DIFF,
      phaseMs: { apply: 5, existing: 100, hidden: 200 },
      jobMs: 500,
    });
    expect(rows[1]).toMatchObject({ task: 't2', class: 'unresolved', reason: 'HIDDEN_FAILED' });
  });

  it("takes a solve's verdict and class from its grade child, and its tokens from the solve", () => {
    const child = grade('t3', 'PASS');
    const solve: AttemptJob = {
      id: nextId++,
      kind: 'solve',
      status: 'done',
      payload: { bundle: '/suite/t3', solver: 'mini', sample: 2 },
      result: {
        verdict: 'PASS',
        reason: 'SOLVED',
        task: { id: 't3', contentHash: 'x' },
        candidate: { artifact: 'a', sha256: DIFF, files: 1, bytes: 10 },
        solveMs: 700,
        usage: { inputTokens: 100, cachedInputTokens: 40, outputTokens: 7 },
        turns: 3,
        toolCalls: 4,
        costUsd: 0.25,
      },
      errorCode: null,
      startedAt: 0,
      finishedAt: 800,
      parentId: null,
    };
    const [row] = attemptRows('b1', [solve], new Map([[solve.id, child]]));
    expect(row).toMatchObject({
      attempt: 2,
      jobIds: [solve.id, child.id],
      class: 'resolved',
      verdict: 'PASS',
      tokens: { input: 100, cachedInput: 40, output: 7 },
      costUsd: 0.25,
      solveMs: 700,
      jobMs: 800 + 500,
    });
  });

  it('keys a queued job by the task id its bundle recorded elsewhere', () => {
    const done = grade('real-id', 'FAIL', { payload: { bundle: '/suite/folder', candidate: 'c' } });
    const queued = grade('ignored', null, {
      payload: { ...(done.payload as object), bundle: '/suite/folder', sample: 2 },
    });
    const rows = attemptRows('b1', [done, queued], new Map());
    expect(rows.map((r) => [r.task, r.attempt, r.class])).toEqual([
      ['real-id', 1, 'unresolved'],
      ['real-id', 2, null],
    ]);
  });
});

describe('summarise', () => {
  it('counts the attempts whose grade failed its integrity checks (TAMPERED), as unresolved', () => {
    const jobs = [
      grade('a', 'FAIL', { reason: 'TAMPERED' }),
      grade('b', 'FAIL'),
      grade('c', 'FAIL', { reason: 'TAMPERED' }),
      grade('d', 'PASS'),
    ];
    const rows = attemptRows('b1', jobs, new Map());
    expect(rows.map((r) => [r.task, r.reason, r.class])).toEqual([
      ['a', 'TAMPERED', 'unresolved'],
      ['b', 'HIDDEN_FAILED', 'unresolved'],
      ['c', 'TAMPERED', 'unresolved'],
      ['d', 'PASS', 'resolved'],
    ]);
    const s = summarise({ batch: 'b1', label: null, rows, suiteTasks: null, unfinishedJobs: 0 });
    expect(s.tampered).toBe(2);
    expect(summaryLines(s)).toContain(
      '  tampered                2 attempts failed their integrity checks (TAMPERED)',
    );
    const clean = summarise({
      batch: 'b1',
      label: null,
      rows: rows.filter((r) => r.reason !== 'TAMPERED'),
      suiteTasks: null,
      unfinishedJobs: 0,
    });
    expect(clean.tampered).toBe(0);
    expect(summaryLines(clean).some((line) => line.includes('tampered'))).toBe(false);
  });

  it("carries each grade's screen hits into its row, and counts the flagged attempts", () => {
    const flagged = (task: string, count: number) => {
      const job = grade(task, 'PASS');
      return { ...job, result: { ...(job.result as object), suspicious: { hits: [], count } } };
    };
    const jobs = [flagged('a', 3), flagged('b', 0), grade('c', 'PASS'), flagged('d', 1)];
    const rows = attemptRows('b1', jobs, new Map());
    expect(rows.map((r) => [r.task, r.suspicious])).toEqual([
      ['a', 3],
      ['b', 0],
      ['c', null],
      ['d', 1],
    ]);
    const s = summarise({ batch: 'b1', label: null, rows, suiteTasks: null, unfinishedJobs: 0 });
    expect(s.suspicious).toBe(2);
    expect(summaryLines(s)).toContain(
      '  suspicious              2 attempts with screen hits (see their oracle logs)',
    );
    expect(flatRow(rows[0]!)).toMatchObject({ candidate_sha256: DIFF, suspicious: 3 });
    const clean = summarise({
      batch: 'b1',
      label: null,
      rows: rows.slice(1, 3),
      suiteTasks: null,
      unfinishedJobs: 0,
    });
    expect(clean.suspicious).toBe(0);
    expect(summaryLines(clean).some((l) => l.includes('suspicious'))).toBe(false);
  });

  it('counts tasks by class, rates with Wilson intervals, and flags an incomplete batch', () => {
    const jobs = [
      grade('a', 'PASS'),
      grade('b', 'PASS'),
      grade('c', 'FAIL'),
      grade('d', 'FAIL', { reason: 'INFRA_ERROR' }),
      grade('e', null),
    ];
    const rows = attemptRows('b1', jobs, new Map());
    const s = summarise({ batch: 'b1', label: 'm', rows, suiteTasks: null, unfinishedJobs: 1 });
    expect(s).toMatchObject({
      tasks: 5,
      submitted: 5,
      classes: { resolved: 2, unresolved: 1, error: 1, invalid_task: 0 },
      pending: 1,
      incomplete: true,
      incompleteBecause: ['1 jobs queued or running'],
      passAtK: null,
    });
    // 2 of 3 scored: Wilson [0.207660, 0.938510]; 2 of 5 all: [0.117621, 0.769276]
    expect(s.resolvedRateScored?.low).toBeCloseTo(0.20766, 5);
    expect(s.resolvedRateAll?.high).toBeCloseTo(0.769276, 5);
  });

  it('gives pass@k over scored attempts, leaving error attempts out of n', () => {
    const jobs = [
      grade('a', 'PASS', { sample: 1 }),
      grade('a', 'FAIL', { sample: 2 }),
      grade('a', 'FAIL', { sample: 3, reason: 'INFRA_ERROR' }),
      grade('b', 'PASS', { sample: 1 }),
      grade('b', 'PASS', { sample: 2 }),
    ];
    const rows = attemptRows('b1', jobs, new Map());
    const s = summarise({ batch: 'b1', label: null, rows, suiteTasks: null, unfinishedJobs: 0 });
    // a: n = 2 (the error left out), c = 1; b: n = 2, c = 2
    // pass@1 = (1/2 + 1) / 2 = 0.75; pass@2 = (1 + 1) / 2 = 1; pass^2 = (0 + 1) / 2 = 0.5
    expect(s.passAtK).toEqual([
      { k: 1, passAtK: 0.75, passHatK: 0.75, tasks: 2, short: 0 },
      { k: 2, passAtK: 1, passHatK: 0.5, tasks: 2, short: 0 },
    ]);
    expect(s.attemptClasses).toEqual({ resolved: 3, unresolved: 1, error: 1, invalid_task: 0 });
  });

  it('counts tasks of the suite with no job as not submitted', () => {
    const rows = attemptRows('b1', [grade('a', 'PASS')], new Map());
    const s = summarise({
      batch: 'b1',
      label: null,
      rows,
      suiteTasks: ['a', 'b', 'c'],
      unfinishedJobs: 0,
    });
    expect(s).toMatchObject({ tasks: 3, submitted: 1, notSubmitted: 2, incomplete: true });
  });
});

describe('compareBatches', () => {
  it('pairs tasks scored in both and counts the flips', () => {
    const before = attemptRows(
      'old',
      [grade('a', 'PASS'), grade('b', 'FAIL'), grade('c', 'PASS'), grade('d', 'FAIL')],
      new Map(),
    );
    const after = attemptRows(
      'new',
      [grade('a', 'PASS'), grade('b', 'PASS'), grade('c', 'FAIL'), grade('e', 'PASS')],
      new Map(),
    );
    const c = compareBatches('new', after, 'old', before);
    expect(c).toMatchObject({
      bothPass: 1,
      passToFail: 1,
      failToPass: 1,
      bothFail: 0,
      paired: 3,
      unpaired: 2,
      mcnemarP: 1,
    });
    expect(c.difference?.difference).toBe(0);
    expect(c.tasks).toEqual([
      { task: 'a', flip: 'both_pass' },
      { task: 'b', flip: 'fail_to_pass' },
      { task: 'c', flip: 'pass_to_fail' },
    ]);
  });
});

describe('attemptRows instance ids', () => {
  it("gives a failed retry's row the instance id its bundle's earlier job recorded", () => {
    const first = grade('t9', 'FAIL', { sample: 1 });
    const failed = grade('t9', null, {
      status: 'failed',
      errorCode: 'DOCKER_ERROR',
      payload: { ...(first.payload as object), sample: 2 },
    });
    const rows = attemptRows('b1', [first, failed], new Map());
    expect(rows.map((r) => [r.attempt, r.instanceId, r.class])).toEqual([
      [1, 'org__t9', 'unresolved'],
      [2, 'org__t9', 'error'],
    ]);
  });
});
