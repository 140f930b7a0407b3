// The text forms of `report --against`: the table people read, and the csv records (the
// disagreements, the instances not comparable and those not in this suite; the json form is
// the Parity object itself).
import { SHAPE_NAMES } from './official.js';
import type { Disagreement, Parity, TestDifference } from './parity.js';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** The table shows at most this many not-comparable instances per reason; json has them all. */
export const MAX_LISTED_PER_REASON = 50;

export const kappaText = (p: Parity['agreement']) =>
  p.kappa === null ? `- (${p.kappaNote ?? 'undefined'})` : p.kappa.toFixed(3);

/** Where Proctor's side of a disagreement's tests came from, when not its stored statuses. */
const fromText = (d: Disagreement) =>
  d.testsFrom === 'inferred'
    ? " (Proctor's side inferred from the verdict: no per-test statuses stored)"
    : '';

const testLine = (t: TestDifference) =>
  `      ${t.category} ${t.test}: Proctor ${t.proctor.replace('_', ' ')}, official ${t.official}`;

/** Up to MAX_LISTED_PER_REASON entries, one a line, and how many more the json lists. */
function listed(entries: readonly string[]): string[] {
  const lines = entries.slice(0, MAX_LISTED_PER_REASON).map((entry) => `    ${entry}`);
  if (entries.length > MAX_LISTED_PER_REASON) {
    lines.push(
      `    … and ${entries.length - MAX_LISTED_PER_REASON} more (--format json lists all)`,
    );
  }
  return lines;
}

export function parityLines(p: Parity, source: string): string[] {
  const a = p.agreement;
  const put = (key: string, value: string) => `  ${key.padEnd(24)}${value}`;
  const lines = [
    `batch ${p.batch} against ${SHAPE_NAMES[p.shape]}: ${source}`,
    put(
      'agreement',
      a.rate === null
        ? `- (no comparable instances)`
        : `${a.agree} of ${a.comparable} comparable instances (${pct(a.rate)})`,
    ),
    put("Cohen's kappa", kappaText(a)),
    put('both resolved', String(a.counts.bothResolved)),
    put('both unresolved', String(a.counts.bothUnresolved)),
    put('resolved here only', String(a.counts.resolvedHereOnly)),
    put('resolved there only', String(a.counts.resolvedThereOnly)),
    put('not comparable', String(p.notComparable.length)),
    put('not in this suite', String(p.notInSuite.length)),
  ];
  if (p.disagreements.length > 0) {
    lines.push('', `disagreements (${p.disagreements.length}):`);
    for (const d of p.disagreements) {
      lines.push(
        `  ${d.instance}${d.task === d.instance ? '' : ` (task ${d.task})`}: Proctor ${d.proctor}${d.reason && d.proctor !== 'resolved' ? ` (${d.reason})` : ''}, official ${d.official}`,
      );
      if (d.detail && d.proctor !== 'resolved') lines.push(`    detail: ${d.detail}`);
      if (d.tests === null) lines.push(`    tests: not compared: ${d.testsNote ?? ''}`);
      else if (d.tests.length === 0) lines.push(`    tests: no per-test difference${fromText(d)}`);
      else {
        lines.push(`    tests that differ (${d.tests.length})${fromText(d)}:`);
        lines.push(...d.tests.map(testLine));
      }
    }
  }
  if (p.notComparable.length > 0) {
    lines.push('', `not comparable (${p.notComparable.length}):`);
    const byWhy = new Map<string, string[]>();
    for (const n of p.notComparable) {
      const list = byWhy.get(n.why) ?? [];
      list.push(n.instance);
      byWhy.set(n.why, list);
    }
    for (const [why, instances] of byWhy) {
      lines.push(`  ${why} (${instances.length}):`);
      lines.push(...listed(instances));
    }
  }
  if (p.notInSuite.length > 0) {
    lines.push('', `not in this suite (${p.notInSuite.length}): named there, no task of it here`);
    lines.push(...listed(p.notInSuite.map((n) => `${n.instance} (${n.official} there)`)));
  }
  return lines;
}

/** The class, `proctor` column and `why` of an instance the suite lacks. */
export const NOT_IN_SUITE = 'not_in_suite';
const NOT_IN_SUITE_WHY = 'not in this suite';

export const PARITY_COLUMNS = [
  'instance_id',
  'task',
  'proctor',
  'official',
  'comparable',
  'agrees',
  'why',
  'reason',
  'test_differences',
  /** stored or inferred: where Proctor's side of test_differences came from. */
  'tests_from',
] as const;

/**
 * The csv records: every disagreement, then every instance not comparable, then every one not
 * in this suite (proctor `not_in_suite`, why `not in this suite`). Agreeing
 * instances are counted in the table and json, not listed (a batch of 2,294 would be
 * 2,294 rows saying "yes").
 */
export function parityRecords(p: Parity): string[][] {
  const records: string[][] = [];
  for (const d of p.disagreements) {
    records.push([
      d.instance,
      d.task,
      d.proctor,
      d.official,
      'true',
      'false',
      'disagreement',
      d.reason ?? '',
      // One difference per line within the cell.
      d.tests === null
        ? `not compared: ${d.testsNote ?? ''}`
        : d.tests.map((t) => `${t.category} ${t.test}: ${t.proctor}/${t.official}`).join('\n'),
      d.testsFrom ?? '',
    ]);
  }
  for (const n of p.notComparable) {
    records.push([n.instance, n.task ?? '', n.proctor, n.official, 'false', '', n.why, '', '', '']);
  }
  for (const n of p.notInSuite) {
    records.push([
      n.instance,
      '',
      NOT_IN_SUITE,
      n.official,
      'false',
      '',
      NOT_IN_SUITE_WHY,
      '',
      '',
      '',
    ]);
  }
  return records;
}
