// Runner protocol 2: the integrity layers the oracle adds to a runner that speaks it (the built-in
// runners do; a custom runner may): sentinel tests made fresh for each phase, a report written
// by a collector process of another uid that runs none of the checkout's code, and the
// runner's own tripwires. This module is the oracle's side, pure: whether a runner speaks the
// protocol, the sentinel request a phase sends it, and what the report's `integrity` object
// says about the run.
//
// Why sentinels: a candidate's code runs inside the test process, so anything that makes every
// test pass (a patched report constructor, a replaced hook, a rewritten outcome stream) also
// makes the sentinels that must fail or error pass. The sentinels' names are random words
// shaped like test names, placed beside the task's own tests, and never stored: only a
// failed check names one, in the verdict's detail.
import { randomInt } from 'node:crypto';
import { z } from 'zod';
import { excerpt, TEST_STATUSES } from './report.js';

/** The line a runner's first 4 KiB hold when it speaks protocol 2 (a `#` or `//` comment). */
const PROTOCOL_LINE = /^(?:#|\/\/) proctor-runner-protocol: 2[ \t]*$/m;
export const PROTOCOL_PREFIX_BYTES = 4096;

export type RunnerProtocol = 1 | 2;

/** A runner's first PROTOCOL_PREFIX_BYTES, where its declaration lines (`# proctor-…`) stand. */
export function runnerHead(runner: Uint8Array): string {
  return Buffer.from(runner.subarray(0, PROTOCOL_PREFIX_BYTES)).toString('utf8');
}

export function runnerProtocol(runner: Uint8Array): RunnerProtocol {
  return PROTOCOL_LINE.test(runnerHead(runner)) ? 2 : 1;
}

/** The line a runner's head holds when it may be run through core/loader.py (CODE_CACHE_NOTE). */
const CODE_CACHE_LINE = /^# proctor-code-cache: 1[ \t]*$/m;

export function runnerCachesCode(runner: Uint8Array): boolean {
  return CODE_CACHE_LINE.test(runnerHead(runner));
}

export const SENTINEL_EXPECTS = ['passed', 'failed', 'error'] as const;
export type SentinelExpect = (typeof SENTINEL_EXPECTS)[number];

export interface SentinelRequest {
  /** A word for the sentinels' file name, in the shape of the task's own test files. */
  file: string;
  sentinels: Array<{ name: string; expect: SentinelExpect }>;
  /** Where the collector keeps the base commit's test configuration for the runner. */
  config: string;
  /** Whether this phase's collector saves it (the first phase, before any candidate code). */
  snapshot: boolean;
  /**
   * The canaries' ids (canaries.ts), in the test side's request only: run with the listed
   * tests and reported with them.
   */
  canaries?: string[];
}

const CONSONANTS = 'bdfgklmnprstvz';
const VOWELS = 'aeiou';

/** A pronounceable lowercase word of `syllables` syllables, e.g. `maroki`. */
function word(syllables: number): string {
  let out = '';
  for (let i = 0; i < syllables; i += 1) {
    out += CONSONANTS[randomInt(CONSONANTS.length)]! + VOWELS[randomInt(VOWELS.length)]!;
  }
  return out;
}

/** `word_word`: reads like a test name (`test_parse_dates`), 14^6·5^6 ≈ 10^11 of them. */
function name(): string {
  return `${word(2 + randomInt(2))}_${word(2 + randomInt(2))}`;
}

/** A fresh request: one sentinel of each expected status, in random order. */
export function sentinelRequest(config: string, snapshot: boolean): SentinelRequest {
  const expects: SentinelExpect[] = [...SENTINEL_EXPECTS];
  for (let i = expects.length - 1; i > 0; i -= 1) {
    const j = randomInt(i + 1);
    [expects[i], expects[j]] = [expects[j]!, expects[i]!];
  }
  const names = new Set<string>();
  while (names.size < expects.length) names.add(name());
  return {
    file: name(),
    sentinels: [...names].map((n, i) => ({ name: n, expect: expects[i]! })),
    config,
    snapshot,
  };
}

/** The `integrity` object a protocol-2 collector writes into the JSON report. */
export const integritySchema = z
  .object({
    protocol: z.literal(2),
    complete: z.boolean(),
    /**
     * Whether the test process opened its session at all (false: it stopped before, as for an
     * import error in a conftest); informational, absent from older runners.
     */
    started: z.boolean().optional(),
    problems: z.array(z.string().max(1000)).max(100),
    tampered: z.array(z.string().max(1000)).max(1000),
    sentinels: z
      .array(
        z.object({ name: z.string().max(200), status: z.enum(TEST_STATUSES).nullable() }).strict(),
      )
      .max(100),
  })
  .strict();

export type Integrity = z.infer<typeof integritySchema>;

export interface IntegrityCheck {
  /** Why the run counts as forged (a tripwire, a sentinel with the wrong status), or null. */
  tampered: string | null;
  /** Why the report cannot be used (the session did not end, a malformed stream), or null. */
  invalid: string | null;
}

const MAX_NAMED = 3;

function listed(items: readonly string[]): string {
  const shown = items.slice(0, MAX_NAMED).map((s) => excerpt(s));
  return items.length > MAX_NAMED
    ? `${shown.join('; ')}; … and ${items.length - MAX_NAMED} more`
    : shown.join('; ');
}

/**
 * What a protocol-2 report says about its run. A tripwire that fired is TAMPERED even when
 * the session then broke off (a forger that patches and exits); a session that did not end
 * cleanly cannot vouch for its sentinels, so it is only an unusable report; otherwise each
 * sentinel must have reported exactly its expected status.
 */
export function checkIntegrity(
  integrity: Integrity | undefined,
  request: SentinelRequest,
): IntegrityCheck {
  if (integrity === undefined) {
    return {
      tampered: null,
      invalid:
        'the report has no integrity section (the runner speaks protocol 2; its collector did not write it)',
    };
  }
  if (integrity.tampered.length > 0) {
    return { tampered: `tripwire: ${listed(integrity.tampered)}`, invalid: null };
  }
  if (!integrity.complete) {
    const why = integrity.problems.length > 0 ? `: ${listed(integrity.problems)}` : '';
    return {
      tampered: null,
      invalid: `the test process ended before the end of its session${why}`,
    };
  }
  if (integrity.problems.length > 0) {
    return {
      tampered: null,
      invalid: `the test process's outcome stream: ${listed(integrity.problems)}`,
    };
  }
  const reported = new Map(integrity.sentinels.map((s) => [s.name, s.status]));
  const wrong: string[] = [];
  for (const sentinel of request.sentinels) {
    const status = reported.get(sentinel.name) ?? null;
    if (status !== sentinel.expect) {
      wrong.push(
        `sentinel ${sentinel.name} (must be ${sentinel.expect}) ${status === null ? 'was not reported' : `reported ${status}`}`,
      );
    }
  }
  return wrong.length > 0
    ? { tampered: listed(wrong), invalid: null }
    : { tampered: null, invalid: null };
}
