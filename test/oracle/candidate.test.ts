// Step 1 of an evaluation and the screen: what the candidate record says about suspicious
// lines, when `[grading] tamper = "fail"` fails a grade on the host, and how the oracle log
// shows it. No container: prepareCandidate runs before one exists.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle, type Bundle } from '../../src/oracle/bundle.js';
import { describeScreen, prepareCandidate } from '../../src/oracle/candidate.js';
import { screenLines } from '../../src/oracle/oracle-log.js';
import { addFile } from '../helpers/diffs.js';
import { ROOT } from '../helpers/processes.js';

const PY_TASK = join(ROOT, 'examples/py-duration-parse');

const tamper = (bundle: Bundle, mode: 'flag' | 'fail'): Bundle => ({
  ...bundle,
  grading: { ...bundle.grading, tamper: mode },
});

// A root conftest.py (denied by the example) and a package module that reaches into pytest.
const FORGED = Buffer.from(
  addFile('conftest.py', ['import pytest', '@pytest.hookimpl(wrapper=True)']) +
    addFile('forge.py', ['import _pytest.reports', 'import os', 'os._exit(0)']),
);

describe('prepareCandidate and the screen', () => {
  it('records the hits of the filtered diff and leaves the verdict alone with tamper = "flag"', async () => {
    const bundle = tamper(await loadBundle(PY_TASK), 'flag');
    const prepared = prepareCandidate(bundle, FORGED, Buffer.alloc(0));
    expect(prepared.verdict).toBeUndefined();
    expect(prepared.record.dropped).toEqual([
      'dropped conftest.py (denied by **/conftest.py, add, 1 hunk)',
    ]);
    // The dropped conftest.py never runs, so it is no hit; forge.py is.
    expect(prepared.record.suspicious).toEqual({
      hits: [
        { rule: 'pytest-internals', file: 'forge.py', line: 1, excerpt: 'import _pytest.reports' },
        { rule: 'hard-exit', file: 'forge.py', line: 3, excerpt: 'os._exit(0)' },
      ],
      count: 2,
      unscreened: 0,
    });
  });

  it('fails the grade with TAMPER_SUSPECTED on the host with tamper = "fail"', async () => {
    const bundle = tamper(await loadBundle(PY_TASK), 'fail');
    const prepared = prepareCandidate(bundle, FORGED, Buffer.alloc(0));
    expect(prepared.verdict).toEqual({
      verdict: 'FAIL',
      reason: 'TAMPER_SUSPECTED',
      detail:
        '2 screen hits in the candidate (tamper = "fail"): pytest-internals forge.py:1, hard-exit forge.py:3',
      testsHash: null,
    });
    expect(prepared.record.suspicious?.count).toBe(2);
  });

  it('passes the gold patch of the example with tamper = "fail"', async () => {
    const bundle = tamper(await loadBundle(PY_TASK), 'fail');
    const gold = readFileSync(join(PY_TASK, 'solution/gold.patch'));
    const prepared = prepareCandidate(bundle, gold, Buffer.alloc(0));
    expect(prepared.verdict).toBeUndefined();
    expect(prepared.record.suspicious).toEqual({ hits: [], count: 0, unscreened: 0 });
  });

  it('screens nothing when the diff is refused before filtering', async () => {
    const bundle = tamper(await loadBundle(PY_TASK), 'fail');
    const prepared = prepareCandidate(bundle, Buffer.from('not a diff\n'), Buffer.alloc(0));
    expect(prepared.verdict?.reason).toBe('APPLY_FAILED');
    expect(prepared.record.suspicious).toBeNull();
  });

  it('says how many more hits there are beyond the first three', () => {
    const hit = (line: number) => ({ rule: 'proctor', file: 'a.py', line, excerpt: 'proctor' });
    expect(describeScreen({ hits: [1, 2, 3, 4].map(hit), count: 60, unscreened: 0 })).toBe(
      '60 screen hits in the candidate (tamper = "fail"): proctor a.py:1, proctor a.py:2, proctor a.py:3, … and 57 more',
    );
  });
});

describe('screenLines', () => {
  it('lists every kept hit, the ones left off and the binary files not screened', () => {
    expect(
      screenLines({
        hits: [
          { rule: 'conftest', file: 'a/conftest.py', line: null, excerpt: 'a/conftest.py' },
          { rule: 'hard-exit', file: 'forge.py', line: 3, excerpt: 'os._exit(0)' },
        ],
        count: 5,
        unscreened: 1,
      }),
    ).toEqual([
      'suspicious: 5 hits of the screen; 1 binary file not screened',
      '  suspicious conftest a/conftest.py: a/conftest.py',
      '  suspicious hard-exit forge.py:3: os._exit(0)',
      '  … and 3 more hits',
    ]);
    expect(screenLines({ hits: [], count: 0, unscreened: 0 })).toEqual([
      'suspicious: 0 hits of the screen',
    ]);
  });
});
