// The tests every tripwire forgery file makes over a runner suite: the gold patch passes with
// the sentinels and tripwires holding; without protocol 2 (the runner without its protocol
// line) every forgery passes, which shows each fools a plain run of the tests; through
// Proctor each ends TAMPERED naming its tripwire, the sentinels still reporting what they must.
import { expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/bundle.js';
import { expectSentinelsHeld } from './grade.js';
import { withoutProtocol } from './repo-bundles.js';
import type { RunnerSuite } from './runner-suite.js';

export interface ForgeryCases {
  /** The candidate diff of forgery `name`. */
  forged: (name: string) => Buffer;
  /** Each forgery's name and what its TAMPERED detail must match (after `tripwire: `). */
  cases: Array<[name: string, details: RegExp[]]>;
  /** Each test's timeout; the no-protocol test, which grades every forgery, gets twice. */
  timeout: number;
}

export function forgeryTests(suite: RunnerSuite, { forged, cases, timeout }: ForgeryCases): void {
  it(
    'passes the gold patch, the sentinels and tripwires holding',
    async () => {
      const evaluation = await suite.grade(suite.bundle, suite.gold);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
        verdict: 'PASS',
        reason: 'PASS',
      });
      expectSentinelsHeld(evaluation);
    },
    timeout,
  );

  it(
    'without protocol 2 (the runner without its protocol line) every forgery passes',
    async () => {
      const plain = await loadBundle(withoutProtocol(suite.dir));
      for (const [name] of cases) {
        const evaluation = await suite.grade(plain, forged(name));
        expect(evaluation.verdict, `${name}: ${evaluation.verdict.detail}`).toMatchObject({
          verdict: 'PASS',
        });
      }
    },
    timeout * 2,
  );

  it.each(cases)(
    'fails the %s forgery as TAMPERED, naming the tripwire, the sentinels holding',
    async (name, details) => {
      const evaluation = await suite.grade(suite.bundle, forged(name));
      expect(evaluation.verdict.verdict).toBe('FAIL');
      expect(evaluation.verdict.reason, evaluation.verdict.detail).toBe('TAMPERED');
      // The first phase that runs the candidate's code sees it.
      const detail = evaluation.verdict.detail ?? '';
      expect(detail).toMatch(/tripwire: /);
      for (const pattern of details) expect(detail).toMatch(pattern);
      for (const record of evaluation.phaseRecords) {
        for (const s of record.integrity?.sentinels ?? []) expect(s.status).toBe(s.expect);
      }
    },
    timeout,
  );
}
