// The text forms of a baseline sweep's report: the table people read (the figures, then one
// line per task), the comparison of two sweeps, and the flat row jsonl and csv share.
import type { BaselineRow } from './baseline.js';
import {
  BASELINE_TOP,
  type BaselineComparison,
  type BaselineState,
  type BaselineSummary,
} from './baseline-summary.js';
import { msText } from './format.js';

/** Columns padded to their widest cell; the last one is not padded. */
function columns(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + 2)))
      .join('')
      .trimEnd(),
  );
}

const shortImage = (image: string) =>
  image.replace(/^(local_build:sha256:|sha256:)([0-9a-f]{12})[0-9a-f]+$/, '$1$2');

/** One sweep: its figures as `key  value` lines, then a line per task. */
export function baselineLines(s: BaselineSummary): string[] {
  const lines: string[] = [];
  const put = (key: string, value: string) => lines.push(`  ${key.padEnd(24)}${value}`);
  lines.push(
    `baseline batch ${s.batch}${s.label ? ` (${s.label})` : ''}${s.incomplete ? '  INCOMPLETE' : ''}`,
  );
  if (s.incomplete) put('incomplete', s.incompleteBecause.join('; '));
  put('tasks', String(s.tasks));
  put('valid', String(s.validity.valid));
  put('quarantined', String(s.validity.quarantined));
  put('error', String(s.validity.error));
  if (s.pending > 0) put('pending', String(s.pending));
  if (s.cancelled > 0) put('cancelled', String(s.cancelled));
  put('reasons', s.reasons.map((r) => `${r.reason} ${r.tasks}`).join(', ') || '-');
  put(
    'runs',
    s.runs === null ? '-' : `${s.runs} per task; gold patch graded for ${s.goldGraded} tasks`,
  );
  put(
    'flaky tests',
    s.flakyTasks === 0
      ? 'none'
      : `in ${s.flakyTasks} tasks; most often: ${s.flakyTests
          .map((f) => `${f.test} (${f.tasks.length})`)
          .join(', ')}`,
  );
  put('slowest', s.slowest.map((t) => `${t.task} ${msText(t.jobMs)}`).join(', ') || '-');
  put(
    'images',
    s.images.length === 0
      ? '-'
      : `${s.images.length}, ${msText(s.imageMs)} getting them: ${s.images
          .slice(0, BASELINE_TOP)
          .map((i) => `${shortImage(i.image)} ${msText(i.imageMs)} (${i.tasks} tasks)`)
          .join(
            ', ',
          )}${s.images.length > BASELINE_TOP ? `, … and ${s.images.length - BASELINE_TOP} more` : ''}`,
  );
  put('wall time', msText(s.wallMs));
  put('job time p50 / p95', `${msText(s.jobMsP50)} / ${msText(s.jobMsP95)}`);
  if (s.perTask.length > 0) {
    lines.push('');
    const table = columns([
      ['TASK', 'JOB', 'VALIDITY', 'REASON', 'FLAKY', 'TIME'],
      ...s.perTask.map((t) => [
        t.task,
        String(t.job),
        t.validity ?? t.status,
        t.reason ?? '-',
        t.flakyTests.length === 0
          ? '-'
          : `${t.flakyTests.length}: ${t.flakyTests.slice(0, 3).join(', ')}${t.flakyTests.length > 3 ? ', …' : ''}`,
        msText(t.jobMs),
      ]),
    ]);
    lines.push(...table.map((l) => `  ${l}`));
  }
  return lines;
}

const stateText = (s: BaselineState) =>
  `${s.validity}${s.reason !== null && s.reason !== 'PASS' ? ` ${s.reason}` : ''}`;

export function baselineComparisonLines(c: BaselineComparison): string[] {
  return [
    `compare baseline ${c.batch} with ${c.reference} (${c.paired} tasks decided in both, ${c.unpaired} not paired)`,
    `  both valid ${c.bothValid}, both quarantined ${c.bothQuarantined}, valid→quarantined ${c.validToQuarantined}, quarantined→valid ${c.quarantinedToValid}`,
    ...(c.changed.length === 0 ? ['  no task changed validity or reason'] : []),
    ...c.changed.map(
      (t) =>
        `  ${t.task}: ${stateText(t.from)} → ${stateText(t.to)}${t.to.detail ? `: ${t.to.detail}` : ''}`,
    ),
  ];
}

/** The columns of a baseline jsonl / csv row, in order. */
export const BASELINE_COLUMNS = [
  'kind',
  'batch',
  'task',
  'instance_id',
  'job',
  'superseded_job_ids',
  'status',
  'validity',
  'reason',
  'detail',
  'flaky_tests',
  'runs',
  'gold',
  'tests_hash',
  'image',
  'image_ms',
  'job_ms',
  'phase_ms',
] as const;

export type FlatBaselineRow = Record<(typeof BASELINE_COLUMNS)[number], unknown>;

export function flatBaselineRow(row: BaselineRow): FlatBaselineRow {
  return {
    kind: 'baseline',
    batch: row.batch,
    task: row.task,
    instance_id: row.instanceId,
    job: row.job,
    superseded_job_ids: row.supersededJobIds,
    status: row.status,
    validity: row.validity,
    reason: row.reason,
    detail: row.detail,
    flaky_tests: row.flakyTests,
    runs: row.runs,
    gold: row.gold,
    tests_hash: row.testsHash,
    image: row.image,
    image_ms: row.imageMs,
    job_ms: row.jobMs,
    phase_ms: row.phaseMs,
  };
}
