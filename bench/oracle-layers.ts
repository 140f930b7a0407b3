// bench:oracle's pure parts: for part (d), the layers-off copy of a runner and the table of what
// the integrity layers cost per dialect (medians of interleaved grades with the layers on and
// off, and the steps of the oracle's timings that make the difference); for part (a), the check
// that a raw run passed the gold patch.
//
// "Layers off" lives here, in the bench, and nowhere in src/: the oracle turns its layers on
// for a runner whose first lines say `proctor-runner-protocol: 2` (a collector of another uid,
// fresh sentinels, the base configuration check) and `proctor-canaries: 1` (the canary step and
// its mutants). The same runner without those two lines is graded as a plain `run LIST REPORT`:
// the same tests, the same framework, the plain report format.
import { runnerProtocol } from '../src/oracle/protocol.js';
import { runnerPlacesCanaries } from '../src/oracle/canaries.js';
import { jsCanaryDialect } from '../src/oracle/js-canary-step.js';
import { parseReport, type ParsedReport } from '../src/oracle/report.js';

/** The share of a grade's time the layers may cost: part (d)'s target. */
export const LAYER_TARGET = 0.1;

const MARKER_LINE =
  /^(?:#|\/\/) proctor-(?:runner-protocol: 2|canaries: (?:1|js-[a-z]+))[ \t]*\r?\n/gm;

/**
 * The runner without its protocol-2 and canary lines: what the oracle grades as a plain run.
 * Throws when the runner has no layers to take off (a protocol-1 runner), or when a marker is
 * still read after the lines are gone (one past the first 4 KiB, say).
 */
export function plainRunner(runner: Buffer): Buffer {
  if (runnerProtocol(runner) !== 2) {
    throw new Error('the runner does not speak protocol 2: it has no layers to take off');
  }
  const plain = Buffer.from(runner.toString('utf8').replace(MARKER_LINE, ''), 'utf8');
  if (
    runnerProtocol(plain) !== 1 ||
    runnerPlacesCanaries(plain) ||
    jsCanaryDialect(plain) !== null
  ) {
    throw new Error('the runner still reads as protocol 2 or placing canaries without its markers');
  }
  return plain;
}

/** The median; of an even count, the mean of the two middle values. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('the median of no values');
  if (xs.some((x) => !Number.isFinite(x)))
    throw new Error(`not a finite number in ${xs.join(', ')}`);
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Round `i`'s order (0-based): layers on first in even rounds, off first in odd ones. */
export function roundOrder(i: number): ['on', 'off'] | ['off', 'on'] {
  return i % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
}

/** One grade: its whole wall time (the command) and the job's step timings (ms). */
export interface GradeSample {
  ms: number;
  timings: Record<string, number>;
}

export interface StepDifference {
  step: string;
  on: number;
  off: number;
  diff: number;
}

export interface LayerRow {
  example: string;
  dialect: string;
  on: number;
  off: number;
  diff: number;
  /** The difference as a share of the grade with the layers on. */
  share: number;
  met: boolean;
  /** Every step of either side's timings but `total`, largest difference first. */
  steps: StepDifference[];
}

/**
 * The row of one example: medians of each side's grade times and of each step's time (a step
 * one side lacks counts 0 there, as the canary step in a plain run).
 */
export function layerRow(
  example: string,
  dialect: string,
  on: readonly GradeSample[],
  off: readonly GradeSample[],
): LayerRow {
  if (on.length === 0 || on.length !== off.length) {
    throw new Error(`${example}: ${on.length} grades with the layers and ${off.length} without`);
  }
  const [m, o] = [median(on.map((s) => s.ms)), median(off.map((s) => s.ms))];
  const names = new Set([...on, ...off].flatMap((s) => Object.keys(s.timings)));
  names.delete('total');
  const stepMedian = (samples: readonly GradeSample[], step: string) =>
    median(samples.map((s) => s.timings[step] ?? 0));
  const steps = [...names]
    .map((step) => {
      const [a, b] = [stepMedian(on, step), stepMedian(off, step)];
      return { step, on: a, off: b, diff: a - b };
    })
    .sort((x, y) => Math.abs(y.diff) - Math.abs(x.diff) || x.step.localeCompare(y.step));
  const share = (m - o) / m;
  return { example, dialect, on: m, off: o, diff: m - o, share, met: share <= LAYER_TARGET, steps };
}

const signed = (ms: number) => `${ms >= 0 ? '+' : '−'}${Math.abs(ms).toFixed(0)}`;

/** The table's lines, tab-separated; `top` steps named per row (those that differ by ≥ 1 ms). */
export function layerTable(rows: readonly LayerRow[], top = 3): string[] {
  const lines = [
    [
      'example',
      'dialect',
      'on ms',
      'off ms',
      'diff ms',
      'share',
      'target ≤ 10 %',
      'steps (on − off, ms)',
    ].join('\t'),
  ];
  for (const r of rows) {
    const steps = r.steps
      .filter((s) => Math.abs(s.diff) >= 1)
      .slice(0, top)
      .map((s) => `${s.step} ${signed(s.diff)}`)
      .join(', ');
    lines.push(
      [
        r.example,
        r.dialect,
        r.on.toFixed(0),
        r.off.toFixed(0),
        signed(r.diff),
        `${(r.share * 100).toFixed(1)} %`,
        r.met ? 'met' : 'missed',
        steps || 'none',
      ].join('\t'),
    );
  }
  return lines;
}

/**
 * What the raw script's reports (`existing: …`, `hidden: …` or `tests: …` on stdout, each as
 * the runner wrote it) say failed, joined: each test not passed with its status, and a
 * report's cause; empty when every listed test passed. Read as the oracle reads a report
 * (parseReport). A raw run that errs is no baseline: it skips the work a grade does.
 */
export function rawFailures(stdout: string): string {
  const parts = stdout.split(/^(existing|hidden|tests): /m).slice(1);
  if (parts.length === 0) return 'no report';
  const failures: string[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const phase = parts[i] as string;
    let report: ParsedReport;
    try {
      report = parseReport(Buffer.from(parts[i + 1] ?? ''));
    } catch {
      failures.push(`${phase}: no report`);
      continue;
    }
    if (report.cause !== undefined) failures.push(`${phase}: ${report.cause}`);
    for (const [id, status] of report.tests) {
      if (status !== 'passed') failures.push(`${phase}: ${id} ${status}`);
    }
  }
  return failures.join('; ');
}
