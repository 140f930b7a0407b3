// The baseline sweep's rows, figures and comparison, from stored baseline results
// shaped as the baseline handler writes them.
import { describe, expect, it } from 'vitest';
import {
  BaselineCollector,
  baselineLines,
  compareBaselines,
  flakyFromDetail,
  summariseBaseline,
  type AttemptJob,
  type BaselineRow,
} from '../../src/results/index.js';

const hash = 'a'.repeat(64);

let nextId = 1;
function baselineJob(
  task: string,
  fields: {
    validity?: 'valid' | 'quarantined';
    reason?: string;
    detail?: string;
    flaky?: string[];
    image?: string;
    imageMs?: number;
    ms?: number;
    status?: AttemptJob['status'];
    errorCode?: string;
    id?: number;
  } = {},
): AttemptJob {
  const id = fields.id ?? nextId++;
  const status = fields.status ?? 'done';
  const validity = fields.validity ?? 'valid';
  const reason = fields.reason ?? (validity === 'valid' ? 'PASS' : 'FLAKY');
  return {
    id,
    kind: 'baseline',
    status,
    payload: { bundle: `/suite/${task}`, repeat: 2, gold: true },
    result:
      status === 'done'
        ? {
            verdict: validity === 'valid' ? 'PASS' : 'FAIL',
            reason,
            detail: fields.detail ?? 'd',
            testsHash: hash,
            validity,
            task: { id: task, contentHash: hash },
            image: {
              portable: false,
              kind: 'local_build',
              imageId: fields.image ?? 'sha256:img1',
              localId: 'x',
            },
            runs: [
              { verdict: 'PASS', reason: 'PASS', detail: '' },
              { verdict: 'PASS', reason: 'PASS', detail: '' },
            ],
            gold: { verdict: 'PASS', reason: 'PASS', detail: '' },
            ...(fields.flaky === undefined ? {} : { flaky: fields.flaky }),
            log: 'art',
            timings: { image: fields.imageMs ?? 10, existing: 5 },
          }
        : null,
    errorCode: fields.errorCode ?? null,
    startedAt: status === 'queued' ? null : 1_000,
    finishedAt: status === 'done' || status === 'failed' ? 1_000 + (fields.ms ?? 100) : null,
    parentId: null,
  };
}

function rowsOf(jobs: AttemptJob[]): BaselineRow[] {
  const collector = new BaselineCollector('b1');
  for (const job of jobs) collector.add(job);
  return collector.rows();
}

describe('baseline rows', () => {
  it('keep the newest job of each task, list the others, and ignore other kinds', () => {
    const rows = rowsOf([
      baselineJob('t1', { id: 1, status: 'failed', errorCode: 'DOCKER_ERROR' }),
      baselineJob('t1', { id: 5 }),
      baselineJob('t2', { id: 2, status: 'queued' }),
      { ...baselineJob('t3'), kind: 'grade' },
    ]);
    expect(rows.map((r) => [r.task, r.job, r.supersededJobIds, r.validity, r.status])).toEqual([
      ['t1', 5, [1], 'valid', 'done'],
      // No result: named by its bundle folder.
      ['t2', 2, [], null, 'queued'],
    ]);
  });

  it('read flaky tests from the result, or from an older FLAKY detail', () => {
    const rows = rowsOf([
      baselineJob('new', { validity: 'quarantined', flaky: ['a::x', 'b::y'] }),
      baselineJob('old', {
        validity: 'quarantined',
        detail:
          'existing tests that flipped: e::1, e::2, … and 4 more; hidden tests that flipped: h::1',
      }),
    ]);
    expect(rows.map((r) => r.flakyTests)).toEqual([
      ['a::x', 'b::y'],
      ['e::1', 'e::2', 'h::1'],
    ]);
    expect(flakyFromDetail('hidden phase reported in run 1, timed out in run 2')).toEqual([]);
  });
});

describe('summariseBaseline', () => {
  it('counts by validity and reason, and names the flaky tests, slowest tasks and images', () => {
    const rows = rowsOf([
      baselineJob('a', { ms: 300, image: 'sha256:one', imageMs: 9_000 }),
      baselineJob('b', { ms: 900, image: 'sha256:one', imageMs: 8_500 }),
      baselineJob('c', { validity: 'quarantined', flaky: ['t::x', 't::y'], ms: 200 }),
      baselineJob('d', { validity: 'quarantined', flaky: ['t::x'], ms: 100 }),
      baselineJob('e', { validity: 'quarantined', reason: 'GOLD_FAILED', ms: 50 }),
      baselineJob('f', { status: 'failed', errorCode: 'IMAGE_BUILD_FAILED' }),
      baselineJob('g', { status: 'running' }),
    ]);
    const s = summariseBaseline({ batch: 'b1', label: 'sweep', rows });
    expect(s).toMatchObject({
      tasks: 7,
      validity: { valid: 2, quarantined: 3, error: 1 },
      pending: 1,
      reasons: [
        { reason: 'FLAKY', tasks: 2 },
        { reason: 'PASS', tasks: 2 },
        { reason: 'GOLD_FAILED', tasks: 1 },
        { reason: 'IMAGE_BUILD_FAILED', tasks: 1 },
      ],
      runs: 2,
      goldGraded: 5,
      flakyTasks: 2,
      flakyTests: [
        { test: 't::x', tasks: ['c', 'd'] },
        { test: 't::y', tasks: ['c'] },
      ],
      incomplete: true,
      incompleteBecause: ['1 tasks queued or running'],
    });
    expect(s.slowest.slice(0, 2)).toEqual([
      { task: 'b', jobMs: 900 },
      { task: 'a', jobMs: 300 },
    ]);
    // One image shared by two tasks counts once, with its longest wait (the build).
    expect(s.images).toEqual([
      { image: 'local_build:sha256:one', tasks: 2, imageMs: 9_000 },
      { image: 'local_build:sha256:img1', tasks: 3, imageMs: 10 },
    ]);
    expect(s.imageMs).toBe(9_010);
    const text = baselineLines(s).join('\n');
    expect(text).toMatch(/^baseline batch b1 \(sweep\) {2}INCOMPLETE\n/);
    expect(text).toContain('  flaky tests             in 2 tasks; most often: t::x (2), t::y (1)');
    expect(text).toMatch(/\n {2}c +\d+ +quarantined +FLAKY +2: t::x, t::y +200 ms\n/);
    expect(text).toMatch(/\n {2}g +\d+ +running +- +- +-$/);
  });

  it('names the ten slowest images in the table, and counts the rest', () => {
    const rows = rowsOf(
      Array.from({ length: 12 }, (_, i) =>
        baselineJob(`t${i}`, { image: `sha256:${i}`, imageMs: 1_000 * (i + 1) }),
      ),
    );
    const s = summariseBaseline({ batch: 'b', label: null, rows });
    expect(s.images).toHaveLength(12);
    expect(s.imageMs).toBe(78_000);
    const line = baselineLines(s).find((l) => l.startsWith('  images')) ?? '';
    expect(line).toMatch(
      /^ {2}images {18}12, 78\.0 s getting them: local_build:sha256:11 12\.0 s \(1 tasks\), /,
    );
    expect(line).toMatch(/local_build:sha256:2 3\.0 s \(1 tasks\), … and 2 more$/);
  });

  it('gives an empty sweep dashes, not a failure', () => {
    const s = summariseBaseline({ batch: 'b', label: null, rows: [] });
    expect(s).toMatchObject({ tasks: 0, runs: null, imageMs: null, jobMsP50: null });
    expect(baselineLines(s)).toContain('  slowest                 -');
  });
});

describe('compareBaselines', () => {
  it('names the tasks whose validity or reason changed, with why', () => {
    const before = rowsOf([
      baselineJob('a'),
      baselineJob('b'),
      baselineJob('c', { validity: 'quarantined' }),
      baselineJob('d', { validity: 'quarantined', reason: 'FLAKY' }),
      baselineJob('only-before'),
    ]);
    const after = rowsOf([
      baselineJob('a'),
      baselineJob('b', { validity: 'quarantined', reason: 'GOLD_FAILED', detail: 'gold broke' }),
      baselineJob('c'),
      baselineJob('d', { validity: 'quarantined', reason: 'BASELINE_HIDDEN_PASSED' }),
      baselineJob('e', { status: 'queued' }),
    ]);
    const c = compareBaselines('after', after, 'before', before);
    expect(c).toMatchObject({
      paired: 4,
      unpaired: 2,
      bothValid: 1,
      bothQuarantined: 1,
      validToQuarantined: 1,
      quarantinedToValid: 1,
    });
    expect(c.changed.map((t) => [t.task, t.from.reason, t.to.validity, t.to.reason])).toEqual([
      ['b', 'PASS', 'quarantined', 'GOLD_FAILED'],
      ['c', 'FLAKY', 'valid', 'PASS'],
      ['d', 'FLAKY', 'quarantined', 'BASELINE_HIDDEN_PASSED'],
    ]);
    expect(c.changed[0]?.to.detail).toBe('gold broke');
  });
});
