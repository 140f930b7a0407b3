// The canary step of the JavaScript runners (node, mocha, karma, jest, vitest): the trusted step of
// canaries.ts, with the mutator in Proctor's own process (js-canaries.ts) instead of the runner.
// A step as the task uid, which runs nothing of the checkout (sh, wc, base64), reads the test
// files from the work tree; Proctor mutates them; a second step writes every mutated file back
// in place (mode and owner kept). Both are steps of the hidden tests' preparation
// (evaluate-prepare.ts): the read in the exec of the hidden test patch's apply, the write in the
// exec that then makes the work tree's git. Beside the mutants, up to three hidden test files
// get a must-pass and a must-fail sentinel (js-sentinels.ts), after hidden tests only. The
// mutants' and sentinels' ids stay here, as for the Python runners: the test side learns them
// only inside its phase's request, among the listed ids.
import { randomInt } from 'node:crypto';
import { describeError } from '../errors.js';
import type { ExecResult } from '../sandbox/index.js';
import {
  CANARY_TIMEOUT_MS,
  type Canary,
  type CanaryRecord,
  type InFileSentinel,
} from './canaries.js';
import {
  canaryJsInserts,
  definedIds,
  JS_TEST_FILE,
  withCheckedInserts,
  withParsedPrograms,
  type JsDialect,
  type Random,
} from './js-canaries.js';
import { JS_SENTINEL_MAX_FILES, sentinelJsInserts } from './js-sentinels.js';
import type { PrepStep } from './prepare-steps.js';
import { runnerHead } from './protocol.js';
import { excerpt } from './report.js';

/** The line a runner's first 4 KiB hold when Proctor places its canaries (`js-node`,
 * `js-mocha`, `js-karma`, `js-jest`, `js-vitest`: how the runner names a test). */
const JS_CANARY_LINE = /^# proctor-canaries: js-(node|mocha|karma|jest|vitest)[ \t]*$/m;
/** Why a phase keeps its sentinels in a file of their own when the step could not read the
 * files (the oracle log says so). */
const JS_SENTINELS_FAILED = 'the canary step failed';

/** The jest runner's setting of its ids' form, in [tests].env (src/runners/jest/run). */
export const JEST_IDS_ENV = 'RUNNER_JEST_IDS';
/** The forms the jest runner reads: any other value makes it refuse its list. */
export const JEST_ID_FORMS: readonly string[] = ['verbose', 'json'];

/**
 * How the runner names a test, by its canary line, or null when it places no canaries. The
 * jest runner's ids are SWE-bench's parse_log_jest_json's (`jest-json`) when the task's
 * [tests].env `env` sets RUNNER_JEST_IDS to `json`; any other value than `verbose` makes the
 * runner refuse its list, so the dialect is then the default one.
 */
export function jsCanaryDialect(
  runner: Uint8Array,
  env: Readonly<Record<string, string>> = {},
): JsDialect | null {
  const head = runnerHead(runner);
  const dialect = (JS_CANARY_LINE.exec(head)?.[1] as JsDialect | undefined) ?? null;
  return dialect === 'jest' && env[JEST_IDS_ENV] === 'json' ? 'jest-json' : dialect;
}

/** A test file over this many bytes gets no canary. */
export const JS_CANARY_MAX_FILE = 4 * 1024 * 1024;
/** At most this many files are read for one phase. */
export const JS_CANARY_MAX_FILES = 32;

/** $1 the work tree, then the files: for each, `no` (not a regular file), `big`, or `ok N`
 * and its bytes in base64 on the next line. */
export const READ_SCRIPT = String.raw`cd "$1" || exit 125
shift
for f; do
  if [ -L "$f" ] || [ ! -f "$f" ] || [ ! -r "$f" ]; then echo no; continue; fi
  n=$(wc -c < "$f") || { echo no; continue; }
  if [ "$n" -gt ${JS_CANARY_MAX_FILE} ]; then echo big; continue; fi
  echo "ok $n"
  base64 -w0 < "$f" || exit 1
  echo
done`;

/**
 * $1 the work tree; stdin holds, for each file, a line `LENGTH PATH` and then its new bytes
 * (writeFrames), which replace the file's in place (mode and owner kept). A path
 * that is no longer a regular file (a link now, a folder), or whose folder now resolves
 * outside the work tree, is refused, and nothing after it is written. Prints `ok` for each
 * file written. The frames come on stdin, not as arguments, so that the exec can start before
 * Proctor has mutated the files (jsLaterWriteStep).
 */
export const WRITE_SCRIPT = String.raw`cd "$1" || exit 125
w=$(pwd -P) || exit 125
while IFS= read -r line; do
  n=${'${line%% *}'}
  f=${'${line#* }'}
  case $n in '' | *[!0-9]*) echo "a write frame without its length" >&2; exit 1 ;; esac
  if [ -L "$f" ] || [ ! -f "$f" ]; then echo "$f is no longer a regular file" >&2; exit 1; fi
  case $f in */*) p=$(cd -P -- "${'${f%/*}'}" 2> /dev/null && pwd) || p= ;; *) p=$w ;; esac
  case $p in "$w" | "$w"/*) ;; *) echo "$f is no longer inside the work tree" >&2; exit 1 ;; esac
  head -c "$n" > "$f" || exit 1
  m=$(wc -c < "$f") && [ "$((m))" = "$n" ] || { echo "$f: a short write" >&2; exit 1; }
  echo ok
done`;

/** WRITE_SCRIPT's stdin for `writes`: each file's `LENGTH PATH` line, then its bytes. */
export function writeFrames(writes: readonly Pick<JsWrite, 'file' | 'bytes'>[]): Buffer {
  return Buffer.concat(
    writes.flatMap((w) => [Buffer.from(`${w.bytes.length} ${w.file}\n`, 'utf8'), w.bytes]),
  );
}

/** Dialects whose ids name no file: their files are the hidden patch's test files. */
const BY_PATCH: ReadonlySet<JsDialect> = new Set(['mocha', 'karma', 'jest', 'jest-json']);

/** A vitest id's `|PROJECT| ` in front (an id without one matches the bare test too). */
const VITEST_PROJECT = /^\|[^|\n]*\| /;

/** An id's project prefix (vitest; '' for none) and the id without it. */
export function splitProject(dialect: JsDialect, id: string): { prefix: string; bare: string } {
  const prefix = dialect === 'vitest' ? (VITEST_PROJECT.exec(id)?.[0] ?? '') : '';
  return { prefix, bare: id.slice(prefix.length) };
}

/** The file an id names: node `FILE::…`, vitest `[|PROJECT| ]FILE > …`; null when it names
 * none (a whole file, or mocha's and jest's titles, jest's describe blocks too). */
export function fileOf(dialect: JsDialect, id: string): string | null {
  if (BY_PATCH.has(dialect)) return null;
  if (dialect === 'vitest') {
    const { bare } = splitProject(dialect, id);
    return bare.includes(' > ') ? bare.slice(0, bare.indexOf(' > ')) : null;
  }
  return id.includes('::') ? id.slice(0, id.indexOf('::')) : null;
}

/** A path relative to the work tree that stays inside it, of a kind the mutator reads. */
export function safeTestPath(file: string): boolean {
  return (
    file !== '' &&
    !file.startsWith('/') &&
    !file.split('/').some((part) => part === '..' || part === '') &&
    !/[\0\n\r]/.test(file) &&
    JS_TEST_FILE.test(file)
  );
}

/** The files the hidden test patch's headers name on their `diff --git` lines (b/ side). */
export function patchFiles(headers: Buffer): string[] {
  const files: string[] = [];
  for (const match of headers.toString('utf8').matchAll(/^diff --git a\/.* b\/(.*)$/gm)) {
    const file = match[1]!.trim();
    if (!file.startsWith('"') && !files.includes(file)) files.push(file);
  }
  return files;
}

/** Which files to read for `ids`, and the ids no file can hold (with why). */
export function jsCanaryFiles(
  dialect: JsDialect,
  ids: readonly string[],
  headers: Buffer,
): { files: string[]; unplaced: Array<{ test: string; why: string }> } {
  const unplaced: Array<{ test: string; why: string }> = [];
  if (BY_PATCH.has(dialect)) {
    const files = patchFiles(headers).filter(safeTestPath).slice(0, JS_CANARY_MAX_FILES);
    if (files.length === 0) {
      for (const id of ids)
        unplaced.push({ test: id, why: 'the hidden patch touches no test file' });
    }
    return { files, unplaced };
  }
  const files: string[] = [];
  for (const id of ids) {
    const file = fileOf(dialect, id);
    if (file === null) unplaced.push({ test: id, why: 'the id names a whole file' });
    else if (!safeTestPath(file))
      unplaced.push({ test: id, why: 'not a test file the mutator reads' });
    else if (!files.includes(file) && files.length >= JS_CANARY_MAX_FILES) {
      unplaced.push({ test: id, why: `over ${JS_CANARY_MAX_FILES} files` });
    } else if (!files.includes(file)) files.push(file);
  }
  return { files, unplaced };
}

/** Parses the read step's output: each file's bytes, or why it cannot be read. */
export function parseRead(stdout: string, files: readonly string[]): Map<string, Buffer | string> {
  const lines = stdout.split('\n');
  const out = new Map<string, Buffer | string>();
  let at = 0;
  for (const file of files) {
    const head = lines[at++] ?? '';
    if (head === 'no') out.set(file, 'the file is not a regular file in the work tree');
    else if (head === 'big') out.set(file, `the file is over ${JS_CANARY_MAX_FILE} bytes`);
    else if (/^ok \d+$/.test(head)) {
      const bytes = Buffer.from(lines[at++] ?? '', 'base64');
      if (bytes.length !== Number(head.slice(3))) throw new Error(`${file}: a short read`);
      out.set(file, bytes);
    } else throw new Error(`${file}: an unexpected line ${JSON.stringify(head.slice(0, 40))}`);
  }
  return out;
}

/** What the canary step has to do for a phase, before anything is read. */
export interface JsCanaryPlan {
  dialect: JsDialect;
  /** The listed ids, each once. */
  listed: string[];
  /** Those of them that are hidden tests (not the sample of existing ones): the sentinels
   * follow these alone, since the hidden run reports them. */
  hidden: string[];
  /** The files to read and mutate (none: nothing to place). */
  files: string[];
  /** The record so far: the ids no file can hold. */
  record: CanaryRecord;
}

/** A file's mutated bytes, and the mutants and sentinels they hold. */
export interface JsWrite {
  file: string;
  bytes: Buffer;
  mutants: Canary[];
  sentinels: InFileSentinel[];
}

/**
 * The mutants of the listed tests (`unplaced`: those no file can hold) in the files `read`
 * gave (their bytes, or why they cannot be read), and a pair of sentinels in up to
 * JS_SENTINEL_MAX_FILES of the files that define one of the `hidden` ids: the files' new bytes
 * with their mutants and sentinels, the listed tests that got no mutant, with why, and why no
 * sentinel was placed (null when some were). Pure: the step writes the files back, validate's
 * coverage only counts (and passes no hidden ids).
 */
export function mutateJsContents(...args: Parameters<typeof mutateContents>): MutatedContents {
  // Each file's text is parsed once for its ids, its mutants and its sentinels.
  return withParsedPrograms(() => mutateContents(...args));
}

interface MutatedContents {
  writes: JsWrite[];
  uncovered: Array<{ test: string; why: string }>;
  sentinelsWhy: string | null;
}

function mutateContents(
  dialect: JsDialect,
  listed: readonly string[],
  unplaced: ReadonlyArray<{ test: string; why: string }>,
  read: ReadonlyMap<string, Buffer | string>,
  random?: Random,
  hidden: readonly string[] = [],
): MutatedContents {
  const uncovered: Array<{ test: string; why: string }> = [];
  // The mutator matches ids without a vitest project's prefix; each listed id is found by its
  // bare form, and its mutants carry its prefix.
  const byBare = new Map<string, string[]>();
  for (const id of listed) {
    if (unplaced.some((u) => u.test === id)) continue;
    const { bare } = splitProject(dialect, id);
    byBare.set(bare, [...(byBare.get(bare) ?? []), id]);
  }
  const listedOf = (bare: string) => byBare.get(bare) ?? [bare];
  const wanted = new Set(byBare.keys());
  const defined = new Set<string>();
  const writes: JsWrite[] = [];
  const texts = new Map<string, string>();
  for (const [file, bytes] of read) {
    const inFile = listed.filter((id) => fileOf(dialect, id) === file);
    let why: string | null = typeof bytes === 'string' ? bytes : null;
    if (typeof bytes !== 'string') {
      try {
        texts.set(file, new TextDecoder('utf-8', { fatal: true }).decode(bytes));
      } catch {
        why = 'the file cannot be read as UTF-8';
      }
    }
    if (why !== null) {
      for (const id of inFile) {
        defined.add(id);
        uncovered.push({ test: id, why });
      }
    }
  }
  // jest's and mocha's ids name no file (a bare title, describe blocks and title, a full
  // title): a mutant's or sentinel's may be no id of any file the phase reads, nor a listed id.
  const byTitle = BY_PATCH.has(dialect);
  const taken = new Set<string>(byTitle ? listed : []);
  if (byTitle) {
    for (const [file, text] of texts) {
      try {
        for (const id of definedIds(dialect, file, text)) taken.add(id);
      } catch {
        // It does not parse: the loop below says so.
      }
    }
  }
  // Each file's mutants and sentinels go into its text as read, in one go, each insert at its
  // offset there: the file is parsed once, and its new text is checked once.
  const inserts = new Map<string, Array<{ at: number; text: string }>>();
  for (const [file, text] of texts) {
    const inFile = listed.filter((id) => fileOf(dialect, id) === file);
    let placed;
    try {
      placed = canaryJsInserts(dialect, file, text, wanted, random, taken);
    } catch (error) {
      for (const id of inFile) {
        defined.add(id);
        uncovered.push({
          test: id,
          why: `the file does not parse: ${excerpt(describeError(error))}`,
        });
      }
      continue;
    }
    for (const bare of placed.defined) for (const id of listedOf(bare)) defined.add(id);
    for (const u of placed.uncovered) {
      for (const id of listedOf(u.test)) uncovered.push({ test: id, why: u.why });
    }
    if (placed.inserts.length > 0) {
      inserts.set(file, placed.inserts);
      writes.push({
        file,
        bytes: Buffer.alloc(0),
        sentinels: [],
        mutants: placed.mutants.flatMap((m) =>
          listedOf(m.test).map((id) => ({
            id: splitProject(dialect, id).prefix + m.id,
            test: id,
            mutation: m.mutation,
          })),
        ),
      });
    }
  }
  for (const id of listed) {
    if (unplaced.some((u) => u.test === id) || defined.has(id)) continue;
    uncovered.push({
      test: id,
      why: BY_PATCH.has(dialect)
        ? "no test of that title in the hidden patch's test files"
        : 'no test of that title in its file',
    });
  }
  const sentinelsWhy = placeSentinels(
    dialect,
    listed,
    hidden,
    texts,
    writes,
    inserts,
    random,
    taken,
  );
  const checked: JsWrite[] = [];
  for (const write of writes) {
    const made = inserts.get(write.file) ?? [];
    try {
      // The file with its mutants and sentinels must parse as the original did.
      const out = withCheckedInserts(write.file, texts.get(write.file)!, made);
      checked.push({ ...write, bytes: Buffer.from(out, 'utf8') });
    } catch (error) {
      const why = `the file does not parse with its canaries: ${excerpt(describeError(error))}`;
      for (const m of write.mutants) uncovered.push({ test: m.test, why });
    }
  }
  const placed = checked.some((w) => w.sentinels.length > 0);
  return {
    writes: checked,
    uncovered,
    sentinelsWhy:
      sentinelsWhy ?? (placed ? null : 'no file with sentinels parses with its canaries'),
  };
}

/**
 * The pairs of sentinels (sentinelJsInserts) in up to JS_SENTINEL_MAX_FILES of the files of
 * `texts` (as read) that define one of the `hidden` ids, chosen at random: each such file's
 * inserts in `inserts` get the sentinels' (after its mutants', so that at one offset a sentinel
 * comes before a mutant), and its write in `writes` gets its sentinels (a file without mutants
 * gets a write). Returns why none was placed, or null.
 */
function placeSentinels(
  dialect: JsDialect,
  listed: readonly string[],
  hidden: readonly string[],
  texts: ReadonlyMap<string, string>,
  writes: JsWrite[],
  inserts: Map<string, Array<{ at: number; text: string }>>,
  random: Random = (n) => randomInt(n),
  taken: Set<string> = new Set(),
): string | null {
  // A sentinel's id carries the project prefix of the first listed id of the test it follows.
  const prefixOf = new Map<string, string>();
  for (const id of listed) {
    const { prefix, bare } = splitProject(dialect, id);
    if (!prefixOf.has(bare)) prefixOf.set(bare, prefix);
  }
  const wanted = new Set(hidden.map((id) => splitProject(dialect, id).bare));
  if (wanted.size === 0) return 'no hidden test is listed';
  const files = [...texts.keys()];
  const whys: string[] = [];
  let placedFiles = 0;
  while (files.length > 0 && placedFiles < JS_SENTINEL_MAX_FILES) {
    const file = files.splice(random(files.length), 1)[0]!;
    let placed;
    try {
      placed = sentinelJsInserts(dialect, file, texts.get(file)!, wanted, random, taken);
    } catch (error) {
      whys.push(`${file}: ${excerpt(describeError(error))}`);
      continue;
    }
    if (placed.inserts.length === 0) {
      whys.push(`${file}: ${placed.why ?? 'none placed'}`);
      continue;
    }
    placedFiles += 1;
    let write = writes.find((w) => w.file === file);
    if (write === undefined) {
      write = { file, bytes: Buffer.alloc(0), mutants: [], sentinels: [] };
      writes.push(write);
    }
    inserts.set(file, [...(inserts.get(file) ?? []), ...placed.inserts]);
    write.sentinels = placed.sentinels.map((s) => ({
      id: (prefixOf.get(s.test) ?? '') + s.id,
      test: (prefixOf.get(s.test) ?? '') + s.test,
      expect: s.expect,
      calls: s.calls,
    }));
  }
  if (placedFiles > 0) return null;
  return whys.length > 0 ? whys.join('; ') : 'no hidden test is in a file the mutator read';
}

/** The ids of an ID list's bytes (one per line), each once. */
const idsOf = (bytes: Buffer) => [
  ...new Set(
    bytes
      .toString('utf8')
      .split('\n')
      .map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
      .filter((l) => l.trim() !== ''),
  ),
];

/**
 * The canaries of the tests of the ID list `ids` (one per line), whose first `hiddenBytes` are
 * the hidden tests' (withExistingSample); `headers` are the hidden test patch's headers. Three
 * parts: the read step (jsReadStep) prints the files, Proctor mutates them and writes the
 * sentinels in (mutateJsFiles), the write step (jsWriteStep) writes them back. A part that
 * fails places none (or none more): the record says why, and the phase runs with what was
 * placed (and its sentinels in a file of their own when none is in the test files).
 */
export function planJsCanaries(
  dialect: JsDialect,
  ids: Buffer,
  headers: Buffer,
  hiddenBytes = ids.length,
): JsCanaryPlan {
  const listed = idsOf(ids);
  const { files, unplaced } = jsCanaryFiles(dialect, listed, headers);
  const hidden = idsOf(ids.subarray(0, Math.max(0, Math.min(hiddenBytes, ids.length))));
  return {
    dialect,
    listed,
    // A line cut by hiddenBytes is no hidden id.
    hidden: hidden.filter((id) => listed.includes(id)),
    files,
    record: {
      mutants: [],
      uncovered: [...unplaced],
      sentinels: [],
      sentinelsWhy:
        files.length === 0
          ? 'no listed test is in a file the mutator reads'
          : 'the files were not read',
      error: null,
    },
  };
}

/** The read step of `plan`'s files in the work tree `workdir` (a step of evaluate-prepare.ts). */
export function jsReadStep(workdir: string, plan: JsCanaryPlan): PrepStep {
  return {
    name: 'canary_read',
    script: READ_SCRIPT,
    args: [workdir, ...plan.files],
    stdin: Buffer.alloc(0),
    timeoutMs: CANARY_TIMEOUT_MS,
    // base64 of every file at its largest, with its header line.
    keepBytes: Math.ceil((plan.files.length * JS_CANARY_MAX_FILE * 4) / 3) + plan.files.length * 64,
    stopOnFailure: false,
  };
}

/** What a step did, as the canary parts read it. */
export type StepResult = Pick<ExecResult, 'exitCode' | 'timedOut' | 'stdout' | 'stderr'>;

/** The record of a canary step that placed nothing, and why. */
export function jsCanariesFailed(why: string): CanaryRecord {
  return {
    mutants: [],
    uncovered: [],
    sentinels: [],
    sentinelsWhy: JS_SENTINELS_FAILED,
    error: `the canary step failed: ${excerpt(why)}`,
  };
}

/**
 * Mutates the files the read step printed (`read`: its result), in Proctor's process: the
 * record of what was placed and not, and the files to write back.
 */
export function mutateJsFiles(
  plan: JsCanaryPlan,
  read: StepResult,
  random?: Random,
): { record: CanaryRecord; writes: JsWrite[] } {
  const { dialect, listed, files } = plan;
  const record: CanaryRecord = { ...plan.record, uncovered: [...plan.record.uncovered] };
  let contents: Map<string, Buffer | string>;
  try {
    if (read.timedOut || read.exitCode !== 0) {
      const last = read.stderr.trim().split('\n').slice(-3).join('; ');
      throw new Error(
        read.timedOut
          ? 'the read did not finish in time'
          : `the read exited with ${String(read.exitCode)}${last ? `: ${last}` : ''}`,
      );
    }
    contents = parseRead(read.stdout, files);
  } catch (error) {
    return { record: jsCanariesFailed(describeError(error)), writes: [] };
  }
  const unplaced = plan.record.uncovered;
  const mutated = mutateJsContents(dialect, listed, unplaced, contents, random, plan.hidden);
  record.uncovered.push(...mutated.uncovered);
  // The sentinels count once their files are written (jsWriteOutcome).
  record.sentinelsWhy = mutated.sentinelsWhy ?? 'the files were not written';
  return { record, writes: mutated.writes };
}

/** The write step of `writes` in the work tree `workdir`: every file in one step (WRITE_SCRIPT). */
export function jsWriteStep(
  workdir: string,
  writes: readonly Pick<JsWrite, 'file' | 'bytes'>[],
): PrepStep {
  return { ...writeStep(workdir), stdin: writeFrames(writes) };
}

/**
 * The write step with its files to come: `later` mutates them (in Proctor's process) once the
 * exec that runs the step has started, so the exec's start overlaps the mutation.
 */
export function jsLaterWriteStep(
  workdir: string,
  later: () => Promise<readonly JsWrite[]>,
): PrepStep {
  return { ...writeStep(workdir), stdin: { later: async () => writeFrames(await later()) } };
}

function writeStep(workdir: string): Omit<PrepStep, 'stdin'> {
  return {
    name: 'canary_write',
    script: WRITE_SCRIPT,
    args: [workdir],
    timeoutMs: CANARY_TIMEOUT_MS,
    keepBytes: 16 * 1024,
    stopOnFailure: false,
  };
}

/**
 * The record once the write step ran (`write`: its result; null when it never reported): the
 * mutants of each file it wrote, and, when it stopped before the last, which file failed.
 */
export function jsWriteOutcome(
  record: CanaryRecord,
  writes: readonly JsWrite[],
  write: StepResult | null,
): CanaryRecord {
  const done = write === null ? 0 : write.stdout.split('\n').filter((l) => l === 'ok').length;
  const out: CanaryRecord = {
    ...record,
    mutants: [...record.mutants],
    sentinels: [...record.sentinels],
  };
  for (const [index, { file, mutants, sentinels }] of writes.entries()) {
    if (index < done) {
      out.mutants.push(...mutants);
      out.sentinels.push(...sentinels);
      continue;
    }
    // The file may be half written: its tests' outcomes cannot be told from a failure of the
    // step, so the phase runs, and the record says so.
    const why =
      write === null
        ? 'the step did not run to its end'
        : write.timedOut
          ? 'timed out'
          : lastLine(write.stderr) || `exit ${String(write.exitCode)}`;
    out.error = `writing ${file} failed: ${excerpt(why)}`;
    break;
  }
  // Each file holds both kinds or none: the pairs of the files written stand.
  if (out.sentinels.length > 0) out.sentinelsWhy = null;
  else if (out.error !== null && writes.some((w) => w.sentinels.length > 0)) {
    out.sentinelsWhy = 'writing the test files failed';
  }
  return out;
}

const lastLine = (text: string) => text.trim().split('\n').slice(-1)[0] ?? '';
