// The text forms of a report: the table people read, and the flat row that jsonl and csv
// share (the same columns in the same order, so the two never drift apart).
import type { Comparison } from './compare.js';
import type { ReportRow } from './rows.js';
import type { BatchSummary } from './summary.js';
import type { Rate } from './stats.js';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function rateText(rate: Rate | null): string {
  if (rate === null) return '-';
  return `${pct(rate.rate)} [${pct(rate.low)}, ${pct(rate.high)}] (${rate.successes}/${rate.n})`;
}

export function msText(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  if (s < 7200) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** One batch as `key  value` lines. */
export function summaryLines(s: BatchSummary): string[] {
  const lines: string[] = [];
  const put = (key: string, value: string) => lines.push(`  ${key.padEnd(24)}${value}`);
  lines.push(
    `batch ${s.batch}${s.label ? ` (${s.label})` : ''}${s.incomplete ? '  INCOMPLETE' : ''}`,
  );
  if (s.incomplete) put('incomplete', s.incompleteBecause.join('; '));
  put('tasks', `${s.tasks}${s.suiteKnown ? '' : ' (counted from the batch’s jobs)'}`);
  put(
    'submitted',
    `${s.submitted}${s.notSubmitted > 0 ? ` (${s.notSubmitted} not submitted)` : ''}`,
  );
  put('resolved', String(s.classes.resolved));
  put('unresolved', String(s.classes.unresolved));
  put('error', String(s.classes.error));
  put('invalid', String(s.classes.invalid_task));
  if (s.pending > 0) put('pending', String(s.pending));
  put('resolved rate (scored)', rateText(s.resolvedRateScored));
  put('resolved rate (all)', rateText(s.resolvedRateAll));
  const c = s.cheating;
  if (c !== null) {
    // Beside the resolved rate, which is then the originals' alone (summary.ts).
    put(
      'cheating rate',
      `${c.rate === null ? '- (no impossible variant graded yet)' : rateText(c.rate)} on impossible variants (one-off ${c.byMode['one-off'].passed}/${c.byMode['one-off'].graded}, conflicting ${c.byMode.conflicting.passed}/${c.byMode.conflicting.graded})`,
    );
    for (const v of c.cheated) {
      put('cheated', `${v.task} (${v.mode} of ${v.of}: ${v.original ?? 'not in this batch'})`);
    }
    if (c.passed > c.cheated.length) put('cheated', `… and ${c.passed - c.cheated.length} more`);
  }
  if (s.attempts !== s.tasks || s.passAtK) {
    put(
      'attempts',
      `${s.attempts}: ${s.attemptClasses.resolved} resolved, ${s.attemptClasses.unresolved} unresolved, ${s.attemptClasses.error} error, ${s.attemptClasses.invalid_task} invalid, ${s.unfinishedAttempts} unfinished, ${s.cancelledAttempts} cancelled`,
    );
  }
  for (const f of s.passAtK ?? []) {
    const short = f.short > 0 ? `; ${f.short} tasks have fewer than ${f.k} scored attempts` : '';
    put(
      `pass@${f.k} / pass^${f.k}`,
      f.passAtK === null || f.passHatK === null
        ? `- (no task has ${f.k} scored attempts)`
        : `${pct(f.passAtK)} / ${pct(f.passHatK)} over ${f.tasks} tasks${short}`,
    );
  }
  put(
    'tokens',
    s.tokens
      ? `${s.tokens.input} input (${s.tokens.cachedInput} cached), ${s.tokens.output} output`
      : '-',
  );
  put('cost', s.costUsd === null ? '-' : `$${s.costUsd.toFixed(4)}`);
  put('wall time', msText(s.wallMs));
  put('job time p50 / p95', `${msText(s.jobMsP50)} / ${msText(s.jobMsP95)}`);
  // Shown only when there is something to look at: a flagged candidate is not a failure.
  if (s.tampered > 0) {
    put('tampered', `${s.tampered} attempts failed their integrity checks (TAMPERED)`);
  }
  if (s.suspicious > 0) {
    put('suspicious', `${s.suspicious} attempts with screen hits (see their oracle logs)`);
  }
  return lines;
}

export function comparisonLines(c: Comparison): string[] {
  const d = c.difference;
  const signed = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;
  return [
    `compare ${c.batch} with ${c.reference} (${c.paired} tasks scored in both, ${c.unpaired} not paired)`,
    `  both pass ${c.bothPass}, both fail ${c.bothFail}, pass→fail ${c.passToFail}, fail→pass ${c.failToPass}`,
    `  exact McNemar p = ${c.mcnemarP.toPrecision(4)}`,
    d === null
      ? '  difference: -'
      : `  difference ${signed(d.difference)} points [${signed(d.low)}, ${signed(d.high)}] (95 %, Newcombe paired score)`,
    ...c.tasks
      .filter((t) => t.flip === 'pass_to_fail' || t.flip === 'fail_to_pass')
      .map((t) => `  ${t.flip === 'pass_to_fail' ? 'pass→fail' : 'fail→pass'}  ${t.task}`),
  ];
}

/** The columns of a jsonl / csv row, in order. */
export const ROW_COLUMNS = [
  'batch',
  'task',
  'instance_id',
  'attempt',
  'job_ids',
  'superseded_job_ids',
  'status',
  'class',
  'verdict',
  'reason',
  'error_code',
  'tests_hash',
  'image',
  'candidate_sha256',
  'suspicious',
  'input_tokens',
  'cached_input_tokens',
  'output_tokens',
  'cost_usd',
  'turns',
  'tool_calls',
  'solve_ms',
  'job_ms',
  'phase_ms',
  'model',
  'impossible_of',
] as const;

export type FlatRow = Record<(typeof ROW_COLUMNS)[number], unknown>;

export function flatRow(row: ReportRow): FlatRow {
  return {
    batch: row.batch,
    task: row.task,
    instance_id: row.instanceId,
    attempt: row.attempt,
    job_ids: row.jobIds,
    superseded_job_ids: row.supersededJobIds,
    status: row.status,
    class: row.class,
    verdict: row.verdict,
    reason: row.reason,
    error_code: row.errorCode,
    tests_hash: row.testsHash,
    image: row.image,
    candidate_sha256: row.candidateSha256,
    suspicious: row.suspicious,
    input_tokens: row.tokens?.input ?? null,
    cached_input_tokens: row.tokens?.cachedInput ?? null,
    output_tokens: row.tokens?.output ?? null,
    cost_usd: row.costUsd,
    turns: row.turns,
    tool_calls: row.toolCalls,
    solve_ms: row.solveMs,
    job_ms: row.jobMs,
    phase_ms: row.phaseMs,
    model: row.model,
    impossible_of: row.impossibleOf,
  };
}

/**
 * The jsonl lines of `rows` (each ending in a newline) in chunks of 1,000: a 100,000-row
 * report is never one string. A chunk is one JSON.stringify of its 1,000 flat rows (a third
 * cheaper than 1,000 calls and a join, bench:report) split into lines at the row boundaries:
 * `},{"batch":` occurs nowhere else, since a flat row's only nested values are arrays of
 * numbers and phase_ms (numbers), and inside a JSON string every `"` is escaped, so `{"`
 * cannot occur in one.
 */
export function* jsonlChunks(rows: Iterable<ReportRow>): Generator<string> {
  let flats: FlatRow[] = [];
  const chunk = () =>
    `${JSON.stringify(flats).slice(1, -1).replaceAll('},{"batch":', '}\n{"batch":')}\n`;
  for (const row of rows) {
    flats.push(flatRow(row));
    if (flats.length === 1000) {
      yield chunk();
      flats = [];
    }
  }
  if (flats.length > 0) yield chunk();
}

/** A cell of the csv: lists joined by spaces, phase times as `step=ms` pairs, null empty. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.join(' ');
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(' ');
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}
