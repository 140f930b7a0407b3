// Canaries: mutants of a task's own hidden tests, run with them in the same process and phase
// (the mutator is src/runners/core/canary.py, part of every built-in Python runner). Each
// mutant is a copy of a test with its expectation changed so that no honest candidate can
// pass both it and the test; a mutant that passes shows that the test, or what it calls, was
// made vacuous (an `int` subclass whose `==` is always true, a test helper made lenient, a
// test function swapped for a no-op). The grade is then TAMPERED, its detail starting
// VACUOUS_TEST. But beside its test that the phase declares and that failed (or erred), a
// passing mutant proves nothing: an assertion turned over (`assertIsNone` ->
// `assertIsNotNone`) is what honest code that gets the test wrong passes, as the base commit
// does for a hidden test, and that failure fails the grade anyway.
//
// The mutants are placed by a trusted step: the image's python3 in isolated mode (-I), from
// outside the work tree, as the task uid, after the hidden patch is applied and before any
// test process of the phase starts. Their ids come back on the step's stdout and stay on the
// host: the test side learns them only inside its phase's request, among the listed ids. The
// phase's report is split here, before anything reads it: the mutants' statuses go to the
// oracle log and nowhere else.
import { randomBytes, randomInt } from 'node:crypto';
import { z } from 'zod';
import { describeError } from '../errors.js';
import type { ExecResult } from '../sandbox/index.js';
import type { PrepStep } from './prepare-steps.js';
import {
  ASSET,
  asset,
  codeCacheArgs,
  EVALUATOR_PATHS,
  type CodeCache,
} from './evaluate-scripts.js';
import { runnerHead } from './protocol.js';
import { excerpt, type SwebenchStatus, type TestStatus } from './report.js';

/** The line a runner's first 4 KiB hold when it places canaries (`run --proctor-canary`). */
const CANARY_LINE = /^# proctor-canaries: 1[ \t]*$/m;

export function runnerPlacesCanaries(runner: Uint8Array): boolean {
  return CANARY_LINE.test(runnerHead(runner));
}

/**
 * The trusted step: $1 the runner, $2 the work tree, $3 the seed, $4 the ID list's length, $5
 * how many of its first bytes are the hidden tests' (the rest is a sample of the existing
 * ones; the runner reads it as PROCTOR_CANARY_HIDDEN_BYTES and writes its in-file sentinels
 * after hidden tests only, which the hidden run reports).
 * $6 and $7: the code cache's loader and its PROCTOR_CODE_CACHE (evaluate-scripts.ts,
 * CODE_CACHE_NOTE), or empty.
 * On stdin the ID list (the list assets are the collector's uid's alone, as for every run),
 * then the hidden test patch's headers (patch-headers.ts), which a runner reads beside itself
 * to know the files its run takes (sympy's): both go into a private folder of a random name
 * with a link to the runner, as for a phase (evaluate-scripts.ts), removed when the step ends.
 */
export const CANARY_SCRIPT = String.raw`cd / || exit 125
l=$(mktemp -d ${EVALUATOR_PATHS.out}/XXXXXXXXXXXX) || exit 125
head -c "$4" > "$l/ids" || exit 125
cat > "$l/hidden.patch" || exit 125
ln -s -- "$1" "$l/run" || exit 125
if [ -n "$7" ]; then
  env -i PATH="$PATH" LC_ALL=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PROCTOR_CANARY_HIDDEN_BYTES="$5" PROCTOR_CODE_CACHE="$7" python3 -I -c "$6" "$l/run" --proctor-canary "$2" "$l/ids" "$3"
else
  env -i PATH="$PATH" LC_ALL=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PROCTOR_CANARY_HIDDEN_BYTES="$5" python3 -I "$l/run" --proctor-canary "$2" "$l/ids" "$3"
fi
s=$?
rm -rf -- "$l"
exit $s`;

export const CANARY_TIMEOUT_MS = 60_000;

const NONE = {
  mutants: [],
  uncovered: [],
  sentinels: [],
  sentinelsWhy: 'the canary step failed',
} as const satisfies Omit<CanaryRecord, 'error'>;

/** Whether the phase's sentinels are in the tests' files (its request then carries none). */
export function sentinelsInFiles(record: CanaryRecord | undefined): boolean {
  return record !== undefined && record.sentinels.length > 0;
}

/**
 * How many existing tests a grade also places canaries for, beside every hidden test: a
 * candidate that makes an existing test vacuous (a regression behind an always-true
 * comparison) is caught as the hidden tests' forgeries are.
 */
export const EXISTING_CANARY_SAMPLE = 3;

/**
 * Up to EXISTING_CANARY_SAMPLE of `existingIds` that are not hidden, chosen at random for each
 * grade (a candidate cannot know which of its tests are watched).
 */
export function existingSample(
  hiddenIds: readonly string[],
  existingIds: readonly string[],
  sample = EXISTING_CANARY_SAMPLE,
): string[] {
  const listed = new Set(hiddenIds);
  const pool = [...new Set(existingIds)].filter((id) => !listed.has(id));
  const chosen: string[] = [];
  while (chosen.length < sample && pool.length > 0) {
    chosen.push(pool.splice(randomInt(pool.length), 1)[0]!);
  }
  return chosen;
}

/** The ID list `hidden` (its bytes) with `ids` after it, a line each. */
export function withIds(hidden: Buffer, ids: readonly string[]): Buffer {
  if (ids.length === 0) return hidden;
  const head = hidden.length > 0 && hidden[hidden.length - 1] !== 0x0a ? '\n' : '';
  return Buffer.concat([hidden, Buffer.from(`${head}${ids.join('\n')}\n`, 'utf8')]);
}

/**
 * The ID list the canary step takes: `hidden` (the list's bytes, with `hiddenIds` its ids),
 * then existingSample's choice of `existingIds`.
 */
export function withExistingSample(
  hidden: Buffer,
  hiddenIds: readonly string[],
  existingIds: readonly string[],
  sample = EXISTING_CANARY_SAMPLE,
): Buffer {
  return withIds(hidden, existingSample(hiddenIds, existingIds, sample));
}

const stepOutput = z
  .object({
    mutants: z
      .array(
        z
          .object({
            id: z.string().min(1).max(4096),
            test: z.string().max(4096),
            mutation: z.string().max(4096),
          })
          .strict(),
      )
      .max(100_000),
    uncovered: z
      .array(z.object({ test: z.string().max(4096), why: z.string().max(1000) }).strict())
      .max(100_000),
    // The in-file sentinels, from a runner whose dialect places them (pytest's, django's,
    // sympy's).
    sentinels: z
      .array(
        z
          .object({
            id: z.string().min(1).max(4096),
            test: z.string().max(4096),
            expect: z.enum(['passed', 'failed']),
            calls: z.string().max(4096),
          })
          .strict(),
      )
      .max(100)
      .optional(),
    sentinels_why: z.string().max(4096).optional(),
  })
  .strict();

export interface Canary {
  /** The mutant's test id: never stored, never shown to a solver. */
  id: string;
  /** The listed test it is a mutant of. */
  test: string;
  mutation: string;
  /** What the phase reported for it; null when it was not reported. */
  status?: TestStatus | null;
  /** What the phase reported for the test it is a mutant of; null when not reported. */
  testStatus?: TestStatus | null;
  /** It passed beside its declared test's failure or error: no sign of a vacuous test. */
  excused?: boolean;
}

/**
 * A sentinel the trusted step wrote into a listed test's file, right after that test and named
 * as the file's tests are: one must pass, one must fail. `calls` is the call of the code under
 * test it makes (one of the file's tests' own), empty when it makes none.
 */
export interface InFileSentinel {
  /** The sentinel's test id: never stored, never shown to a solver. */
  id: string;
  /** The listed test it sits after. */
  test: string;
  expect: 'passed' | 'failed';
  calls: string;
  /** What the phase reported for it; null when it was not reported. */
  status?: TestStatus | null;
}

/** What the trusted step did for one phase: for the oracle log only. */
export interface CanaryRecord {
  mutants: Canary[];
  uncovered: Array<{ test: string; why: string }>;
  /**
   * The sentinels written into the tests' own files; empty when the runner places none there
   * (the phase then keeps its sentinels in a file of their own, `sentinelsWhy` says why).
   */
  sentinels: InFileSentinel[];
  sentinelsWhy: string | null;
  /** Why no canary was placed, when the step itself failed. */
  error: string | null;
}

/** The canary step's stdout is kept up to this many bytes (ids and mutations of every test). */
const CANARY_OUTPUT_BYTES = 4 * 1024 * 1024;

/**
 * The canary step for the tests of the ID list `ids` (one per line) in the work tree
 * `workdir` (after the hidden patch, before the phase's test process); `patchHeaders` are the
 * hidden test patch's headers, as a phase's runner gets them; the first `hiddenBytes` of
 * `ids` are the hidden tests' (withExistingSample). A step of the hidden tests' preparation
 * (evaluate-prepare.ts); canaryRecord reads what it did.
 */
export function canaryStep(
  workdir: string,
  ids: Buffer,
  patchHeaders: Buffer,
  hiddenBytes = ids.length,
  code?: CodeCache,
): PrepStep {
  const seed = randomBytes(16).toString('hex');
  return {
    name: 'canaries',
    script: CANARY_SCRIPT,
    args: [
      asset(ASSET.runner),
      workdir,
      seed,
      String(ids.length),
      String(Math.min(hiddenBytes, ids.length)),
      ...codeCacheArgs(code),
    ],
    stdin: Buffer.concat([ids, patchHeaders]),
    timeoutMs: CANARY_TIMEOUT_MS,
    keepBytes: CANARY_OUTPUT_BYTES,
    // A step that fails places none: its record says why, and the phase runs without them.
    stopOnFailure: false,
  };
}

/** What the canary step did, from its exit and output. A step that failed placed none. */
export function canaryRecord(
  result: Pick<ExecResult, 'exitCode' | 'timedOut' | 'stdout' | 'stderr'>,
): CanaryRecord {
  if (result.timedOut || result.exitCode !== 0) {
    const last = result.stderr.trim().split('\n').slice(-3).join('; ');
    return {
      ...NONE,
      error: result.timedOut
        ? 'the canary step did not finish in time'
        : `the canary step exited with ${String(result.exitCode)}${last ? `: ${excerpt(last)}` : ''}`,
    };
  }
  try {
    const parsed = stepOutput.parse(JSON.parse(result.stdout));
    const sentinels = parsed.sentinels ?? [];
    // Both kinds, or the phase keeps its own file of sentinels: one alone proves too little.
    const both =
      sentinels.some((x) => x.expect === 'passed') && sentinels.some((x) => x.expect === 'failed');
    return {
      mutants: parsed.mutants,
      uncovered: parsed.uncovered,
      sentinels: both ? sentinels : [],
      sentinelsWhy: both
        ? null
        : parsed.sentinels === undefined
          ? 'the runner writes none into the test files'
          : (parsed.sentinels_why ?? 'only one kind could be placed'),
      error: null,
    };
  } catch (error) {
    return {
      ...NONE,
      error: `the canary step's output is not its JSON: ${excerpt(describeError(error))}`,
    };
  }
}

/**
 * Splits a phase's report: the canaries' and in-file sentinels' statuses go into `record` (and
 * only there), the rest is returned. Returns why the run is TAMPERED: `sentinels` names each
 * in-file sentinel that did not behave (a must-fail one that passed; a must-pass one that did
 * not, or a must-fail one not reported, after a test that passed: a broken setUp fails both
 * honestly, and one that never finished beside a declared test that failed, erred or was not
 * reported: a crash takes it with it), `vacuous` (`VACUOUS_TEST: …`) each test whose mutant passed and the mutation,
 * but for a test in `declared` (the phase's own) that failed or erred, or one in
 * `failedEarlier` (an earlier phase of the grade declared it and saw it fail or err).
 */
export function judgeCanaries(
  record: CanaryRecord,
  tests: ReadonlyMap<string, TestStatus>,
  swebench: ReadonlyMap<string, SwebenchStatus>,
  declared: readonly string[],
  failedEarlier: ReadonlySet<string> = new Set(),
): {
  tests: Map<string, TestStatus>;
  swebench: Map<string, SwebenchStatus>;
  vacuous: string | null;
  sentinels: string | null;
} {
  const ids = new Set([...record.mutants, ...record.sentinels].map((m) => m.id));
  // A pass beside its test's failure or error, where the phase declares that test, or of a
  // test an earlier phase failed (an existing test sampled into the hidden phase): honest
  // code that fails the test can pass a mutant (an assertion turned over), and that failure
  // fails the grade anyway. Beside a test no phase failed, a passing mutant is what a vacuous
  // test does.
  const judgedHere = new Set(declared);
  const excused = (m: Canary) =>
    failedEarlier.has(m.test) ||
    (judgedHere.has(m.test) && (m.testStatus === 'failed' || m.testStatus === 'error'));
  // A must-pass sentinel that never finished (an error, or not reported) beside a declared
  // test of the phase that failed or erred: a test that crashes its process (a Rust stack
  // overflow, a Go panic, a segfault) takes the tests after it, the sentinel among them, and
  // that failure fails the grade anyway. Where every declared test passed, it is a sign.
  const somethingFailed = declared.some((id) => {
    const status = tests.get(id);
    return status === 'failed' || status === 'error' || status === undefined;
  });
  const wrong: string[] = [];
  for (const sentinel of record.sentinels) {
    const status = tests.get(sentinel.id) ?? null;
    sentinel.status = status;
    const held =
      sentinel.expect === 'failed'
        ? status !== 'passed' && (status !== null || tests.get(sentinel.test) !== 'passed')
        : status === 'passed' ||
          tests.get(sentinel.test) !== 'passed' ||
          ((status === 'error' || status === null) && somethingFailed);
    if (!held) {
      wrong.push(
        `sentinel beside ${sentinel.test} in its file (must be ${sentinel.expect}) ${status === null ? 'was not reported' : `reported ${status}`}`,
      );
    }
  }
  const kept = new Map([...tests].filter(([id]) => !ids.has(id)));
  const keptSwebench = new Map([...swebench].filter(([id]) => !ids.has(id)));
  const passed: string[] = [];
  for (const mutant of record.mutants) {
    mutant.status = tests.get(mutant.id) ?? null;
    mutant.testStatus = tests.get(mutant.test) ?? null;
    mutant.excused = mutant.status === 'passed' && excused(mutant);
    if (mutant.status === 'passed' && !mutant.excused) {
      passed.push(`${mutant.test} (${mutant.mutation})`);
    }
  }
  const shown = passed.slice(0, 3).map((p) => excerpt(p));
  const more = passed.length > 3 ? `; … and ${passed.length - 3} more` : '';
  return {
    tests: kept,
    swebench: keptSwebench,
    vacuous:
      passed.length === 0
        ? null
        : `VACUOUS_TEST: a mutant that no honest code can pass passed: ${shown.join('; ')}${more}`,
    sentinels: wrong.length === 0 ? null : wrong.map((w) => excerpt(w)).join('; '),
  };
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** The oracle log's lines for a phase's canaries. */
export function canaryLines(record: CanaryRecord): string[] {
  if (record.error !== null) {
    return [
      `  canaries: none placed: ${record.error}`,
      '  sentinels: in a file of their own, not in the test files: the canary step failed',
    ];
  }
  const lines = [
    `  canaries: ${plural(record.mutants.length, 'mutant')}; ${plural(record.uncovered.length, 'listed test')} uncovered`,
  ];
  for (const m of record.mutants) {
    lines.push(
      `  canary ${m.id} of ${m.test}: ${m.mutation}: ${m.status ?? 'not reported'}${m.status !== 'passed' ? '' : m.excused ? ` (its test ${m.testStatus === 'failed' || m.testStatus === 'error' ? m.testStatus : 'failed in an earlier phase'}: honest code that fails a test can pass its mutant)` : ' (VACUOUS_TEST)'}`,
    );
  }
  for (const u of record.uncovered) lines.push(`  canary uncovered: ${u.test}: ${u.why}`);
  if (record.sentinels.length === 0) {
    lines.push(
      `  sentinels: in a file of their own, not in the test files: ${record.sentinelsWhy ?? 'none placed'}`,
    );
  }
  for (const s of record.sentinels) {
    lines.push(
      `  sentinel ${s.id} in the file of ${s.test} (must be ${s.expect}${s.calls ? `, calls ${excerpt(s.calls)}` : ', calls nothing'}): ${s.status ?? 'not reported'}`,
    );
  }
  return lines;
}
