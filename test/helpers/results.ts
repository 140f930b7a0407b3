// Batches of finished grade jobs with realistic results, written through the real store, for
// report tests and the report benchmark.
import type { JobStore } from '../../src/queue/index.js';
import type { ReportRow } from '../../src/results/index.js';

/** A report row of task `t`, attempt 1, done and resolved, every measure null; `fields` win. */
export function reportRow(fields: Partial<ReportRow> = {}): ReportRow {
  return {
    batch: 'b',
    task: 't',
    instanceId: null,
    attempt: 1,
    jobIds: [1],
    supersededJobIds: [],
    status: 'done',
    class: 'resolved',
    verdict: 'PASS',
    reason: 'PASS',
    errorCode: null,
    testsHash: null,
    image: null,
    candidateSha256: null,
    suspicious: null,
    tokens: null,
    costUsd: null,
    turns: null,
    toolCalls: null,
    solveMs: null,
    phaseMs: {},
    jobMs: null,
    startedAt: null,
    finishedAt: null,
    model: null,
    impossibleOf: null,
    impossibleMode: null,
    bundle: null,
    detail: null,
    gradeJobId: null,
    ...fields,
  };
}

export interface SeededGrade {
  task: string;
  /** null: left queued. */
  verdict: 'PASS' | 'FAIL' | null;
  reason?: string;
  detail?: string;
  sample?: number;
  instanceId?: string;
  bundle?: string;
  /** Fail the job instead (attempts exhausted on a machine error). */
  failCode?: string;
  /** Hits of the screen recorded in the result (absent: none recorded, as before it). */
  suspicious?: number;
  /** Per-test statuses stored with the result (absent: none, as before they were kept). */
  tests?: unknown;
}

export function gradeResult(
  g: Pick<SeededGrade, 'task' | 'verdict' | 'reason' | 'detail' | 'instanceId' | 'suspicious'>,
  i = 0,
) {
  return {
    verdict: g.verdict,
    reason: g.reason ?? (g.verdict === 'PASS' ? 'PASS' : 'HIDDEN_FAILED'),
    detail: g.detail ?? (g.verdict === 'PASS' ? '3 existing and 2 hidden tests passed' : 'x'),
    testsHash: (i % 16).toString(16).repeat(64),
    task: {
      id: g.task,
      contentHash: 'c'.repeat(64),
      source: { dataset: 'bench', instance_id: g.instanceId ?? `org__${g.task}` },
    },
    image: {
      portable: false,
      kind: 'local_build',
      imageId: `sha256:${'d'.repeat(64)}`,
      localId: `sha256:${'d'.repeat(64)}`,
    },
    diffSha256: 'e'.repeat(64),
    log: '00000000-0000-4000-8000-000000000000',
    timings: { image: 12, workspace: 230, apply: 40, existing: 1200, hidden: 900, cleanup: 80 },
    ...(g.suspicious === undefined
      ? {}
      : { suspicious: { hits: [], count: g.suspicious, unscreened: 0 } }),
  };
}

/** Enqueues one batch of grades and finishes each as told; returns the batch id. */
export async function seedGrades(
  store: JobStore,
  label: string,
  grades: readonly SeededGrade[],
): Promise<string> {
  const { batch, jobIds } = await store.enqueueBatch({
    label,
    jobs: grades.map((g) => ({
      kind: 'grade' as const,
      payload: { bundle: g.bundle ?? `/suite/${g.task}`, candidate: 'cand' },
      maxAttempts: 1,
    })),
  });
  const wanted = new Map(jobIds.map((id, i) => [id, grades[i]!]));
  for (;;) {
    const claimed = await store.claim('grade', 'seed', 200, 600_000);
    if (claimed.length === 0) break;
    for (const job of claimed) {
      const g = wanted.get(job.id);
      if (!g) continue;
      const lease = { id: job.id, attempt: job.attempt };
      if (g.failCode) await store.fail(lease, 'the engine went away', { code: g.failCode });
      else if (g.verdict === null) await store.release(lease, 'left queued');
      else
        await store.complete(
          lease,
          gradeResult(g, job.id),
          [],
          g.tests === undefined ? {} : { tests: g.tests },
        );
    }
    if (claimed.every((j) => wanted.get(j.id)?.verdict === null && !wanted.get(j.id)?.failCode)) {
      break;
    }
  }
  return batch!.id;
}
