// A quarantine reaches the grades of its task whichever finished first, against both stores:
// a grade done before its task's baseline quarantined it becomes invalid_task in the
// baseline's own completion; a grade whose worker read no quarantine but completes after one
// is marked in its own; a quarantine of another bundle content, a valid judgement, a solve
// that passed and a grade of another task are left alone; and completions of grades and
// baselines racing on two connections never leave a grade of a quarantined task unmarked.
import { describe, expect, it } from 'vitest';
import type { JobStore, OutcomeClass, TaskValidityInput } from '../../src/queue/index.js';
import { outcomeOf } from '../../src/results/outcome.js';
import { STORE_KINDS } from '../helpers/stores.js';

const sha = (c: string) => c.repeat(64);

function judgement(
  taskId: string,
  validity: 'valid' | 'quarantined',
  hash = 'a',
): TaskValidityInput {
  return {
    taskId,
    contentHash: sha(hash),
    bundlePath: `/suite/${taskId}`,
    validity,
    reason: validity === 'valid' ? 'PASS' : 'HIDDEN_PASSED',
    detail: validity === 'valid' ? 'sound' : 'the hidden tests pass without the fix',
  };
}

const gradeResult = (taskId: string, verdict: 'PASS' | 'FAIL', hash = 'a') => ({
  verdict,
  reason: verdict === 'PASS' ? 'PASS' : 'HIDDEN_FAILED',
  detail: 'x',
  task: { id: taskId, contentHash: sha(hash) },
});

/** Enqueues, claims and completes one job of `kind` as the pool would (class stored with it). */
async function finish(
  store: JobStore,
  kind: 'grade' | 'solve' | 'baseline',
  result: Record<string, unknown>,
  task?: TaskValidityInput,
): Promise<number> {
  const payload =
    kind === 'grade'
      ? { bundle: '/suite/x', candidate: 'c' }
      : kind === 'solve'
        ? { bundle: '/suite/x', solver: 's' }
        : { bundle: '/suite/x' };
  const { job } = await store.enqueue({ kind, payload });
  const [claimed] = await store.claim(kind, 'w', 1, 60_000);
  expect(claimed?.id).toBe(job.id);
  const outcome: OutcomeClass | null = outcomeOf({
    kind,
    status: 'done',
    result,
    errorCode: null,
  });
  const done = await store.complete({ id: job.id, attempt: 1 }, result, [], {
    outcome,
    ...(task === undefined ? {} : { task }),
  });
  expect(done).toBe(true);
  return job.id;
}

const baseline = (store: JobStore, input: TaskValidityInput) =>
  finish(
    store,
    'baseline',
    { verdict: input.validity === 'valid' ? 'PASS' : 'FAIL', validity: input.validity },
    input,
  );

async function classOf(store: JobStore, id: number) {
  const job = await store.getJob(id);
  return {
    outcome: job?.outcome,
    quarantined: (job?.result as { quarantined?: unknown } | undefined)?.quarantined,
  };
}

describe.each(STORE_KINDS)('a quarantine after a grade, on $name', (kind) => {
  it('marks a grade that finished before its task was quarantined, in the same write as the quarantine', async () => {
    const store = await kind.open();
    const passed = await finish(store, 'grade', gradeResult('t1', 'PASS'));
    const failed = await finish(store, 'grade', gradeResult('t1', 'FAIL'));
    const otherContent = await finish(store, 'grade', gradeResult('t1', 'PASS', 'b'));
    const otherTask = await finish(store, 'grade', gradeResult('t2', 'PASS'));
    const solvePassed = await finish(store, 'solve', gradeResult('t1', 'PASS'));
    const solveFailed = await finish(store, 'solve', {
      ...gradeResult('t1', 'FAIL'),
      reason: 'SOLVER_TURN_LIMIT',
    });
    expect((await classOf(store, passed)).outcome).toBe('resolved');

    const quarantine = await baseline(store, judgement('t1', 'quarantined'));
    const marked = {
      outcome: 'invalid_task',
      quarantined: { reason: 'HIDDEN_PASSED', job: quarantine },
    };
    expect(await classOf(store, passed)).toEqual(marked);
    expect(await classOf(store, failed)).toEqual(marked);
    expect(await classOf(store, solveFailed)).toEqual(marked);
    // Another bundle content, another task, and a solve judged by its grade: untouched.
    expect(await classOf(store, otherContent)).toEqual({
      outcome: 'resolved',
      quarantined: undefined,
    });
    expect(await classOf(store, otherTask)).toEqual({
      outcome: 'resolved',
      quarantined: undefined,
    });
    expect(await classOf(store, solvePassed)).toEqual({ outcome: null, quarantined: undefined });
    // The stored result says the same as the stored class.
    const job = await store.getJob(passed);
    expect(outcomeOf(job!)).toBe('invalid_task');
  });

  it('marks a grade that completes after the quarantine even when its worker did not see it', async () => {
    const store = await kind.open();
    const quarantine = await baseline(store, judgement('t1', 'quarantined'));
    // Completed with the class its worker computed before the quarantine landed.
    const late = await finish(store, 'grade', gradeResult('t1', 'PASS'));
    expect(await classOf(store, late)).toEqual({
      outcome: 'invalid_task',
      quarantined: { reason: 'HIDDEN_PASSED', job: quarantine },
    });
    const otherContent = await finish(store, 'grade', gradeResult('t1', 'PASS', 'b'));
    expect((await classOf(store, otherContent)).outcome).toBe('resolved');
  });

  it('leaves grades alone on a valid judgement', async () => {
    const store = await kind.open();
    const graded = await finish(store, 'grade', gradeResult('t1', 'PASS'));
    await baseline(store, judgement('t1', 'valid'));
    expect(await classOf(store, graded)).toEqual({ outcome: 'resolved', quarantined: undefined });
  });

  it('counts the marked grade as invalid_task in its batch', async () => {
    const store = await kind.open();
    const { batch, jobIds } = await store.enqueueBatch({
      jobs: [{ kind: 'grade', payload: { bundle: '/suite/t1', candidate: 'c' } }],
    });
    const [claimed] = await store.claim('grade', 'w', 1, 60_000);
    expect(claimed?.id).toBe(jobIds[0]);
    await store.complete({ id: jobIds[0]!, attempt: 1 }, gradeResult('t1', 'PASS'), [], {
      outcome: 'resolved',
    });
    expect(await store.countByOutcome(batch!.id)).toMatchObject({ resolved: 1, invalid_task: 0 });
    await baseline(store, judgement('t1', 'quarantined'));
    expect(await store.countByOutcome(batch!.id)).toMatchObject({ resolved: 0, invalid_task: 1 });
  });

  it('never leaves a grade of a quarantined task unmarked when the two complete at once on two connections', async () => {
    const [a, b] = await kind.pair();
    const tasks = Array.from({ length: 12 }, (_, i) => `race-${i}`);
    // Claimed first, completed together: each pair of writes races.
    const grades: number[] = [];
    const baselines: number[] = [];
    for (const t of tasks) {
      grades.push(
        (await a.enqueue({ kind: 'grade', payload: { bundle: `/suite/${t}`, candidate: 'c' } })).job
          .id,
      );
      baselines.push(
        (await b.enqueue({ kind: 'baseline', payload: { bundle: `/suite/${t}` } })).job.id,
      );
    }
    expect((await a.claim('grade', 'wa', tasks.length, 60_000)).length).toBe(tasks.length);
    expect((await b.claim('baseline', 'wb', tasks.length, 60_000)).length).toBe(tasks.length);
    await Promise.all(
      tasks.flatMap((t, i) => [
        a.complete({ id: grades[i]!, attempt: 1 }, gradeResult(t, 'PASS'), [], {
          outcome: 'resolved',
        }),
        b.complete({ id: baselines[i]!, attempt: 1 }, { verdict: 'FAIL' }, [], {
          task: judgement(t, 'quarantined'),
        }),
      ]),
    );
    for (const id of grades) expect((await classOf(a, id)).outcome).toBe('invalid_task');
  });
});
