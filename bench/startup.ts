// npm run bench:startup — what a command costs before it does anything: `proctor --help` and
// `proctor status` on an empty home, through the bin (`node bin/proctor.js`, as the README
// calls it), beside the raw cost of starting node (`node -e 0`) and of loading commander
// alone, in the same run (this machine is shared and noisy: compare ratios, not absolutes).
// Target: ≤ 200 ms for both commands (median).
//
// It also runs both commands from tsc's unbundled dist/, to show what the bin's bundle saves.
//
// Each case is spawned --runs times, interleaved round by round after --warmup rounds, like
// hyperfine; each status run gets a fresh empty home (which has no database: status answers
// without creating one or loading the store). For comparison, not a target: `status` on a
// home whose database holds 1,000 jobs in 10 batches (made once, before the runs).
// Usage: npm run bench:startup [-- --runs 30 --warmup 3]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { systemClock } from '../src/clock.js';
import { openSqliteJobStore } from '../src/queue/index.js';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'proctor.js');
const TARGET_MS = 200;
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '3' },
  },
});
const RUNS = Number(values.runs);
const WARMUP = Number(values.warmup);
if (!Number.isInteger(RUNS) || RUNS < 1 || !Number.isInteger(WARMUP) || WARMUP < 0) {
  throw new Error(
    `--runs must be an integer ≥ 1 and --warmup ≥ 0, got ${values.runs}, ${values.warmup}`,
  );
}

// The bench measures dist/, so it must be the dist/ of these sources.
const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) throw new Error(`npm run build exited ${build.status}`);

const temp: string[] = [];
function emptyHome(): string {
  const dir = mkdtempSync(join(tmpdir(), 'proctor-bench-startup-'));
  temp.push(dir);
  return dir;
}

/** A home with 1,000 queued jobs in 10 batches, made with the real store. */
async function populatedHome(): Promise<string> {
  const home = emptyHome();
  const store = openSqliteJobStore(join(home, 'proctor.db'), { clock: systemClock });
  try {
    for (let b = 0; b < 10; b++) {
      await store.enqueueBatch({
        label: `batch ${b}`,
        jobs: Array.from({ length: 100 }, (_, i) => ({
          kind: 'noop' as const,
          payload: { tag: `${b}-${i}` },
        })),
      });
    }
  } finally {
    await store.close();
  }
  return home;
}
const populated = await populatedHome();

interface Case {
  name: string;
  /** The arguments of `node`, made afresh for every run. */
  args: () => string[];
  target?: boolean;
}

const cases: Case[] = [
  { name: 'node -e 0', args: () => ['-e', '0'] },
  { name: `node -e "import('commander')"`, args: () => ['-e', "import('commander')"] },
  { name: 'proctor --help', args: () => [BIN, '--help'], target: true },
  {
    name: 'proctor --home <empty> status',
    args: () => [BIN, '--home', emptyHome(), 'status'],
    target: true,
  },
  {
    name: 'proctor --home <1,000 jobs> status',
    args: () => [BIN, '--home', populated, 'status'],
  },
  // The same two commands from tsc's dist/ (one file per module), as the bin ran before it ran
  // the bundle (scripts/bundle.ts): what the bundle saves.
  { name: '  unbundled dist/: --help', args: () => unbundled(['--help']) },
  { name: '  unbundled dist/: status', args: () => unbundled(['--home', emptyHome(), 'status']) },
];

function unbundled(args: string[]): string[] {
  const main = JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'cli', 'main.js')).href);
  return [
    '--input-type=module',
    '-e',
    `const { main } = await import(${main}); process.exitCode = await main(process.argv.slice(1));`,
    '--',
    ...args,
  ];
}

function timed(args: string[]): number {
  const started = performance.now();
  // PROCTOR_HOME unset: the run must not read or create another home than the one named.
  const result = spawnSync(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, PROCTOR_HOME: undefined },
    encoding: 'utf8',
  });
  const ms = performance.now() - started;
  if (result.status !== 0) {
    throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  }
  return ms;
}

const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};

try {
  const times = cases.map(() => [] as number[]);
  for (let round = 0; round < WARMUP + RUNS; round++) {
    cases.forEach((c, i) => {
      const ms = timed(c.args());
      if (round >= WARMUP) times[i]!.push(ms);
    });
  }
  const baseline = quantile(times[0]!, 0.5);
  console.log(`start-up, ${RUNS} interleaved runs each after ${WARMUP} warm-up rounds`);
  const rows = cases.map((c, i) => {
    const median = quantile(times[i]!, 0.5);
    const p90 = quantile(times[i]!, 0.9);
    return [
      c.name,
      median.toFixed(0),
      p90.toFixed(0),
      `${(median / baseline).toFixed(2)}×`,
      `+${(median - baseline).toFixed(0)}`,
      c.target ? (median <= TARGET_MS ? 'met' : 'missed') : '',
    ];
  });
  const header = [
    'command',
    'median ms',
    'p90 ms',
    'vs node -e 0',
    'ms over it',
    `≤ ${TARGET_MS} ms`,
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const row of [header, ...rows]) {
    console.log(
      row
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join('  '),
    );
  }
} finally {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
}
