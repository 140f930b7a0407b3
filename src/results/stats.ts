// The statistics of a report, as pure functions of counts: Wilson intervals for a resolved
// rate, the exact McNemar test and a paired interval for the difference between two batches
// graded on the same tasks, and the unbiased pass@k / pass^k estimators over attempts.
// Everything is computed in floating point from products and sums of ratios, never from
// factorials, so n in the hundreds of thousands stays finite and exact to double precision.

/** The normal quantile of a two-sided 95 % interval. */
export const Z95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

export interface Rate extends Interval {
  /** successes / n */
  rate: number;
  successes: number;
  n: number;
}

/**
 * The Wilson score interval of `successes` out of `n` (95 % by default); null for n = 0,
 * where there is no rate to bound. Unlike the Wald interval it stays inside [0, 1] and is
 * sensible at 0/n and n/n, which small task suites hit often.
 */
export function wilson(successes: number, n: number, z = Z95): Rate | null {
  checkCount(successes, n);
  if (n === 0) return null;
  const p = successes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  // Clamp rounding (at 0/n the low end is 0 up to an ulp).
  return {
    rate: p,
    successes,
    n,
    low: successes === 0 ? 0 : Math.max(0, centre - half),
    high: successes === n ? 1 : Math.min(1, centre + half),
  };
}

/**
 * The exact (binomial) McNemar test: two-sided p-value of `b` against `c` discordant pairs
 * under H0 "a flip either way is equally likely", i.e. 2 · P(X ≤ min(b, c)) for
 * X ~ Binomial(b + c, 1/2), capped at 1. With no discordant pair there is no evidence: 1.
 */
export function mcnemarExact(b: number, c: number): number {
  checkCount(0, b);
  checkCount(0, c);
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  // P(X = i) = C(n, i) / 2^n, accumulated in log space so n in the thousands cannot underflow
  // the terms before they are summed.
  let logTerm = -n * Math.LN2; // i = 0
  let tail = Math.exp(logTerm);
  for (let i = 1; i <= k; i++) {
    logTerm += Math.log((n - i + 1) / i);
    tail += Math.exp(logTerm);
  }
  return Math.min(1, 2 * tail);
}

/** The four cells of a paired comparison of batch A against batch B over the same tasks. */
export interface PairedCounts {
  /** resolved in both */
  bothPass: number;
  /** resolved in A, not in B (pass → fail) */
  passToFail: number;
  /** resolved in B, not in A (fail → pass) */
  failToPass: number;
  /** resolved in neither */
  bothFail: number;
}

export interface PairedDifference extends Interval {
  /** rate(B) − rate(A) */
  difference: number;
  n: number;
  method: 'newcombe-paired-score';
}

/**
 * rate(B) − rate(A) over paired tasks, with Newcombe's (1998) hybrid score interval for
 * paired proportions (his method 10): the two Wilson intervals combined with the correlation
 * φ of the 2×2 table. It respects [−1, 1], behaves at 0 and n, and is the interval
 * statisticians recommend over the Wald one for paired binary outcomes. Null for n = 0.
 */
export function pairedDifference(counts: PairedCounts, z = Z95): PairedDifference | null {
  const { bothPass: a, passToFail: b, failToPass: c, bothFail: d } = counts;
  for (const x of [a, b, c, d]) checkCount(0, x);
  const n = a + b + c + d;
  if (n === 0) return null;
  const rateB = wilson(a + c, n, z);
  const rateA = wilson(a + b, n, z);
  if (!rateA || !rateB) return null;
  const theta = rateB.rate - rateA.rate;
  const marginals = (a + b) * (c + d) * (a + c) * (b + d);
  const phi = marginals === 0 ? 0 : (a * d - b * c) / Math.sqrt(marginals);
  const dl = rateB.rate - rateB.low;
  const du = rateB.high - rateB.rate;
  const el = rateA.rate - rateA.low;
  const eu = rateA.high - rateA.rate;
  const delta = Math.sqrt(Math.max(0, dl * dl - 2 * phi * dl * eu + eu * eu));
  const epsilon = Math.sqrt(Math.max(0, du * du - 2 * phi * du * el + el * el));
  return {
    difference: theta,
    n,
    low: Math.max(-1, theta - delta),
    high: Math.min(1, theta + epsilon),
    method: 'newcombe-paired-score',
  };
}

/**
 * The unbiased pass@k estimator of one task (Chen et al. 2021): the chance that at least one
 * of k attempts drawn without replacement from n scored attempts, c of them resolved, is
 * resolved: 1 − C(n−c, k) / C(n, k), as the product 1 − ∏_{i=n−c+1..n} (1 − k/i). Null when
 * n < k: too few scored attempts to say.
 */
export function passAtK(n: number, c: number, k: number): number | null {
  checkCount(c, n);
  checkK(k);
  if (n < k) return null;
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

/**
 * pass^k: the chance that all k attempts drawn without replacement are resolved,
 * C(c, k) / C(n, k) = ∏_{i=0..k−1} (c − i) / (n − i). Null when n < k.
 */
export function passHatK(n: number, c: number, k: number): number | null {
  checkCount(c, n);
  checkK(k);
  if (n < k) return null;
  if (c < k) return 0;
  let all = 1;
  for (let i = 0; i < k; i++) all *= (c - i) / (n - i);
  return all;
}

/** One task's scored attempts: n scored (class error left out), c of them resolved. */
export interface TaskAttempts {
  n: number;
  c: number;
}

export interface PassAtKFigure {
  k: number;
  /** Mean over the tasks with at least k scored attempts; null when none has. */
  passAtK: number | null;
  passHatK: number | null;
  /** Tasks that have at least k scored attempts (the mean's denominator). */
  tasks: number;
  /** Tasks with fewer than k scored attempts: reported as such, never guessed. */
  short: number;
}

/**
 * pass@k and pass^k of a batch for every k from 1 to the most scored attempts of any task:
 * each the mean of the per-task estimators over the tasks that have k scored attempts.
 */
export function passAtKTable(tasks: readonly TaskAttempts[]): PassAtKFigure[] {
  const most = tasks.reduce((m, t) => Math.max(m, t.n), 0);
  const figures: PassAtKFigure[] = [];
  for (let k = 1; k <= most; k++) {
    let sumAt = 0;
    let sumHat = 0;
    let counted = 0;
    for (const t of tasks) {
      const at = passAtK(t.n, t.c, k);
      const hat = passHatK(t.n, t.c, k);
      if (at === null || hat === null) continue;
      sumAt += at;
      sumHat += hat;
      counted++;
    }
    figures.push({
      k,
      passAtK: counted === 0 ? null : sumAt / counted,
      passHatK: counted === 0 ? null : sumHat / counted,
      tasks: counted,
      short: tasks.length - counted,
    });
  }
  return figures;
}

/**
 * The nearest-rank percentile (p in (0, 100]) of `values`: the smallest value with at least
 * p % of the values at or below it. Null for no values. Sorts a copy.
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (!(p > 0 && p <= 100)) throw new RangeError(`Expected \`p\` in (0, 100], got \`${p}\``);
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)] ?? null;
}

function checkCount(successes: number, n: number): void {
  if (!Number.isInteger(n) || n < 0) {
    throw new RangeError(`Expected \`n\` to be an integer >= 0, got \`${n}\``);
  }
  if (!Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new RangeError(`Expected a count from 0 to ${n}, got \`${successes}\``);
  }
}

function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1) {
    throw new RangeError(`Expected \`k\` to be an integer >= 1, got \`${k}\``);
  }
}
