// @ts-check
// How the page writes numbers: times, durations and sizes, and the report's figures in the
// very words of `proctor report` (src/results/format.ts), so the page and the table agree.

/** @param {unknown} ms */
export function formatTime(ms) {
  return typeof ms === 'number' ? new Date(ms).toLocaleString() : '–';
}

/** @param {number | null | undefined} seconds */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined) return '?';
  if (seconds < 60) return Math.round(seconds) + 's';
  if (seconds < 3600) {
    return Math.floor(seconds / 60) + 'm' + String(Math.round(seconds % 60)).padStart(2, '0') + 's';
  }
  const minutes = String(Math.floor((seconds % 3600) / 60)).padStart(2, '0');
  return Math.floor(seconds / 3600) + 'h' + minutes + 'm';
}

/** @param {number} n */
export function formatBytes(n) {
  if (n < 1024) return n + ' B';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KiB';
  return (n / (1024 * 1024)).toFixed(1) + ' MiB';
}

/** @param {number} x a fraction */
export const pct = (x) => (100 * x).toFixed(1) + '%';

/**
 * `66.7% [20.8%, 93.9%] (2/3)`: a rate with its Wilson 95 % interval, as the table writes it.
 * @param {{ rate: number, low: number, high: number, successes: number, n: number } | null} rate
 */
export function rateText(rate) {
  if (rate === null) return '-';
  return `${pct(rate.rate)} [${pct(rate.low)}, ${pct(rate.high)}] (${rate.successes}/${rate.n})`;
}

/** @param {number | null} ms */
export function msText(ms) {
  if (ms === null) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  if (s < 7200) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** @param {number} x a difference of fractions, in points with its sign */
export const signed = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`;

/**
 * `+33.3 points [-10.0, +70.1]`, or '-' with no paired task.
 * @param {{ difference: number, low: number, high: number } | null} d
 */
export function differenceText(d) {
  if (d === null) return '-';
  return `${signed(d.difference)} points [${signed(d.low)}, ${signed(d.high)}]`;
}

/**
 * Summarises a cancel answer's outcomes, whether keyed by job (id → outcome) or counted.
 * @param {Record<string, unknown>} outcomes
 */
export function summarizeOutcomes(outcomes) {
  const counts = new Map();
  for (const [key, value] of Object.entries(outcomes || {})) {
    const [name, n] = typeof value === 'number' ? [key, value] : [String(value), 1];
    if (n > 0) counts.set(name, (counts.get(name) || 0) + n);
  }
  const parts = [...counts].map(([name, n]) => name + ' ' + n);
  return parts.length > 0 ? parts.join(', ') : 'nothing to cancel';
}

/**
 * `pulling r/x@sha256:…: 12.3 MB of 40.0 MB, 5.1 MB/s, ETA 6s (layers 1/2)`: the pull a running
 * job waits on, in the words of `proctor status` (src/pull-progress.ts).
 * @param {{ image: string, bytes: number, totalBytes: number | null, bytesPerSecond: number | null, etaSeconds: number | null, layersDone: number, layers: number }} p
 */
export function pullText(p) {
  /** @param {number} n */
  const mb = (n) => (n / 1_000_000).toFixed(1) + ' MB';
  const of = p.totalBytes === null ? '' : ' of ' + mb(p.totalBytes);
  const rate = p.bytesPerSecond === null ? '? MB/s' : mb(p.bytesPerSecond) + '/s';
  const eta = p.etaSeconds === null ? '?' : p.etaSeconds + 's';
  return `pulling ${p.image}: ${mb(p.bytes)}${of}, ${rate}, ETA ${eta} (layers ${p.layersDone}/${p.layers})`;
}
