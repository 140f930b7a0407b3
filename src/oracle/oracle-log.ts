// The oracle log: everything one grade or baseline did, as plain text for people (step 7 of
// product.md's oracle) — the image identity, the diff's SHA-256, every dropped file, the
// screen's suspicious lines, git's
// output, each phase's timing, exit, bounded output and report findings, the exit reason and
// the gate line. It is stored as an artifact, so it passes through redaction on the way.
import type { ImageIdentity } from '../sandbox/index.js';
import type { Bundle } from './bundle.js';
import { canaryLines } from './canaries.js';
import { printable } from './report.js';
import type { ScreenResult } from './screen.js';
import type { CommandRecord, Evaluation } from './evaluate.js';
import { sourceLine } from './task-source.js';
import { gateLine, testsHash, type Verdict } from './verdict.js';

export interface OracleLogInput {
  kind: 'grade' | 'baseline';
  bundle: Pick<Bundle, 'id' | 'dir' | 'baseCommit' | 'contentHash' | 'limits' | 'source'>;
  image: ImageIdentity & { localId: string };
  /** Each evaluation with its title: `grade`, `baseline run 1`, `gold patch`. */
  runs: ReadonlyArray<{ title: string; evaluation: Evaluation }>;
  verdict: Verdict;
  startedAt: Date;
  finishedAt: Date;
}

function describeImage(image: OracleLogInput['image']): string {
  return image.portable
    ? `${image.reference} (manifest ${image.digest}, local ${image.localId})`
    : `local_build ${image.imageId}`;
}

/**
 * A line of a command's output or a runner's account as the log quotes it (report.ts's
 * printable: a test that prints gzip bytes, a carriage return that would overwrite the line on
 * a terminal), so that the log stays text a person can read and a terminal cannot be driven by.
 */
function quoted(line: string): string {
  return `  | ${printable(line.replace(/\r$/, ''))}`;
}

function command(lines: string[], title: string, record: CommandRecord): void {
  lines.push(
    `  ${title}: exit ${record.exitCode ?? 'none'}${record.timedOut ? ' (timed out)' : ''} in ${record.durationMs} ms; stdout ${record.stdoutBytes} bytes, stderr ${record.stderrBytes} bytes${record.truncated ? ' (truncated to head and tail)' : ''}`,
  );
  for (const [name, text] of [
    ['stdout', record.stdout],
    ['stderr', record.stderr],
  ] as const) {
    if (text.length === 0) continue;
    lines.push(`  --- ${title} ${name} ---`);
    lines.push(...text.replace(/\n$/, '').split('\n').map(quoted));
  }
}

function evaluationLines(title: string, evaluation: Evaluation): string[] {
  const lines = [`== ${title} ==`];
  const candidate = evaluation.candidate;
  if (candidate === null) {
    lines.push('diff: none (the clean base commit)');
  } else {
    lines.push(`diff: sha256 ${candidate.sha256}, ${candidate.bytes} bytes`);
    if (candidate.traditional) {
      lines.push(
        '  a traditional unified diff (no `diff --git` line): read as the git diff of the same changes',
      );
    }
    if (candidate.filteredSha256 !== null) {
      lines.push(
        `filtered diff: sha256 ${candidate.filteredSha256}, ${candidate.filteredBytes} bytes, ${candidate.kept.length} files kept, ${candidate.dropped.length} dropped`,
      );
    }
    for (const path of candidate.kept) lines.push(`  kept ${path}`);
    for (const line of candidate.dropped) lines.push(`  ${line}`);
    if (candidate.suspicious) lines.push(...screenLines(candidate.suspicious));
  }
  if (evaluation.apply) command(lines, 'git apply (candidate)', evaluation.apply);
  for (const phase of evaluation.phaseRecords) {
    if ((phase.name === 'hidden' || phase.name === 'tests') && evaluation.hiddenApply) {
      command(lines, 'git apply (hidden tests)', evaluation.hiddenApply);
    }
    if ((phase.name === 'hidden' || phase.name === 'tests') && evaluation.testTree) {
      command(lines, "git commit (the checkout's repository)", evaluation.testTree);
    }
    lines.push(`-- ${phase.name} phase --`);
    command(lines, 'runner', phase.run);
    if (phase.oomKilled) lines.push('  the runner was killed for exceeding memory_mb');
    const report = phase.report;
    lines.push(
      report.error === null
        ? `  report: ${report.format ?? '?'} format, ${report.bytes} bytes${report.readBy === 'collector' ? ", from the collector's output" : ''}`
        : `  report: unusable: ${report.error}`,
    );
    for (const problem of report.problems) lines.push(`  report note: ${problem}`);
    if (report.cause !== undefined) lines.push(...causeLines(report.cause));
    if (report.undeclaredCount > 0) {
      lines.push(
        `  ${report.undeclaredCount} reported IDs were not declared (ignored): ${report.undeclared.join(', ')}${report.undeclaredCount > report.undeclared.length ? ', …' : ''}`,
      );
    }
    const integrity = phase.integrity;
    if (integrity) {
      if (integrity.collector && integrity.collector.exitCode !== 0) {
        command(lines, 'collector', integrity.collector);
      }
      const sentinels = integrity.sentinels
        .map((s) => `${s.name} (must be ${s.expect}): ${s.status ?? 'not reported'}`)
        .join(', ');
      // A run without a diff asks for no sentinels (evaluate.ts), and places none in files.
      const none = integrity.sentinels.length === 0 && phase.canaries === undefined;
      lines.push(
        integrity.tampered === null
          ? none
            ? '  integrity: tripwires held (no sentinels: the run has no candidate)'
            : `  integrity: sentinels and tripwires held${sentinels ? ` (${sentinels})` : ''}`
          : `  integrity: TAMPERED: ${integrity.tampered}${sentinels ? `; sentinels: ${sentinels}` : ''}`,
      );
    }
    if (phase.canaries) lines.push(...canaryLines(phase.canaries));
  }
  if (
    evaluation.hiddenApply &&
    !evaluation.phaseRecords.some((p) => p.name === 'hidden' || p.name === 'tests') &&
    evaluation.hiddenApply.exitCode !== 0
  ) {
    command(lines, 'git apply (hidden tests)', evaluation.hiddenApply);
  }
  if (
    evaluation.testTree &&
    !evaluation.phaseRecords.some((p) => p.name === 'hidden' || p.name === 'tests')
  ) {
    command(lines, "git commit (the checkout's repository)", evaluation.testTree);
  }
  const timings = Object.entries(evaluation.timings)
    .map(([step, ms]) => `${step} ${ms} ms`)
    .join(', ');
  lines.push(`timings: ${timings}`);
  if (evaluation.workspace) {
    const { medium, treeMb, fallback } = evaluation.workspace;
    const where =
      medium === 'overlay'
        ? 'workspace: an overlay on the template (its writes on disk)'
        : medium === 'memory'
          ? `workspace: in memory (a tmpfs volume; its ${String(treeMb)} MiB tree added to the memory limit)`
          : 'workspace: on disk';
    lines.push(fallback === undefined ? where : `${where}; copied: ${fallback}`);
  }
  if (evaluation.cleanupError) lines.push(`cleanup: ${evaluation.cleanupError}`);
  lines.push(
    `result: ${evaluation.verdict.verdict} (${evaluation.verdict.reason}) — ${evaluation.verdict.detail}`,
  );
  return lines;
}

/** Lines of a report's `cause` the log quotes; the rest are counted. */
const CAUSE_LOG_LINES = 20;

/** A report's `cause` (the runner's account of why its tests are errors), its first lines. */
function causeLines(cause: string): string[] {
  const all = cause.replace(/\n$/, '').split('\n');
  const lines = ['  report cause (the runner says):', ...all.slice(0, CAUSE_LOG_LINES).map(quoted)];
  if (all.length > CAUSE_LOG_LINES)
    lines.push(`  | … and ${all.length - CAUSE_LOG_LINES} more lines`);
  return lines;
}

/**
 * The screen of the filtered diff: `suspicious: N hits`, then one line per hit kept, as
 * `suspicious RULE FILE:LINE: EXCERPT`, and the binary files it could not read.
 */
export function screenLines(screen: ScreenResult): string[] {
  const lines = [
    `suspicious: ${screen.count} ${screen.count === 1 ? 'hit' : 'hits'} of the screen${screen.unscreened > 0 ? `; ${screen.unscreened} binary ${screen.unscreened === 1 ? 'file' : 'files'} not screened` : ''}`,
  ];
  for (const hit of screen.hits) {
    const where = hit.line === null ? hit.file : `${hit.file}:${hit.line}`;
    lines.push(`  suspicious ${hit.rule} ${where}: ${hit.excerpt}`);
  }
  if (screen.count > screen.hits.length) {
    lines.push(`  … and ${screen.count - screen.hits.length} more hits`);
  }
  return lines;
}

/** [source], so that a log found on its own still says which dataset task it graded. */
function sourceLines(source: Bundle['source']): string[] {
  const line = sourceLine(source);
  return line === undefined ? [] : [`source: ${line}`];
}

export function renderOracleLog(input: OracleLogInput): string {
  const { bundle, verdict } = input;
  const lines = [
    `proctor oracle log: ${input.kind} of task ${bundle.id}`,
    `bundle: ${bundle.dir} (content sha256 ${bundle.contentHash})`,
    `base commit: ${bundle.baseCommit}`,
    ...sourceLines(bundle.source),
    `image: ${describeImage(input.image)}`,
    `limits: test_seconds ${bundle.limits.testSeconds}, memory_mb ${bundle.limits.memoryMb}, cpus ${bundle.limits.cpus}, pids ${bundle.limits.pids}, output_bytes ${bundle.limits.outputBytes}`,
    `started: ${input.startedAt.toISOString()}`,
    '',
  ];
  for (const run of input.runs) lines.push(...evaluationLines(run.title, run.evaluation), '');
  lines.push(
    `finished: ${input.finishedAt.toISOString()} (${input.finishedAt.getTime() - input.startedAt.getTime()} ms)`,
    `verdict: ${verdict.verdict}`,
    `reason: ${verdict.reason}`,
    `detail: ${verdict.detail}`,
    gateLine(verdict.testsHash ?? testsHash([])),
  );
  return `${lines.join('\n')}\n`;
}
