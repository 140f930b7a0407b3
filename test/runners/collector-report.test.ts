// The last report of a grade from its collector's own output (COLLECTOR_REPORT in
// src/oracle/evaluate-scripts.ts), graded by the real oracle through the built-in pytest
// runner: the hidden phase's report comes from the collector, the existing phase's from the
// exec that prepares the hidden run; a frame the candidate prints is nobody's report; a process
// the tests leave holding the channel goes with the run's end, so the collector still ends at
// once; and a runner whose collector prints nothing (a bundle's own, an older copy) is read by
// an exec, as before, with the same verdicts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/bundle.js';
import type { Evaluation } from '../../src/oracle/evaluate.js';
import { renderOracleLog } from '../../src/oracle/oracle-log.js';
import { CALC, CALC_REPO } from '../helpers/calc-repo.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { hiddenRecord, reported } from '../helpers/grade.js';
import { candidateDiff, withIds, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-collector-report');
const SLOW = 300_000;

const ID = {
  zero: 'tests/test_calc.py::test_zero',
  same: 'tests/test_calc.py::test_same',
  add: 'tests/test_hidden.py::test_add',
  negative: 'tests/test_hidden.py::test_negative',
};
const FIXED = 'def add(a, b):\n    return a + b\n';

const SPEC: RepoBundleSpec = {
  id: 'collector-report',
  runner: 'pytest',
  repo: CALC_REPO,
  hidden: {
    'tests/test_hidden.py': `from calc import add


def test_add():
    assert add(2, 3) == 5


def test_negative():
    assert add(-1, -1) == -2
`,
  },
  gold: { 'calc.py': FIXED },
  existing: [ID.zero, ID.same],
  hiddenIds: [ID.add, ID.negative],
};

const suite = runnerSuite(docker, SCOPE, { image: 'runners', spec: SPEC });

/** The oracle log of one grade of the suite's bundle. */
function oracleLog(evaluation: Evaluation): string {
  return renderOracleLog({
    kind: 'grade',
    bundle: suite.bundle,
    image: { portable: false, kind: 'local_build', imageId: suite.imageId, localId: suite.imageId },
    runs: [{ title: 'grade', evaluation }],
    verdict: evaluation.verdict,
    startedAt: new Date(),
    finishedAt: new Date(),
  });
}

/** A framed report, as a collector prints it, saying every listed test passed. */
function forgedFrame(): string {
  const report = JSON.stringify({
    schema: 1,
    tests: Object.values(ID).map((id) => ({ id, status: 'passed' })),
  });
  const bytes = Buffer.from(report);
  return `proctor-report ${bytes.length}\n${bytes.toString('base64')}\nproctor-report-end\n`;
}

describe("the last report, from the collector's output", () => {
  it(
    'reads the hidden phase from the collector and the existing one in the preparation, and says so',
    async () => {
      const evaluation = await suite.grade(suite.bundle, suite.gold);
      expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expect(reported(evaluation).sort()).toEqual(Object.values(ID).sort());
      expect(evaluation.phaseRecords.find((r) => r.name === 'existing')?.report.readBy).toBe(
        'exec',
      );
      expect(hiddenRecord(evaluation)?.report.readBy).toBe('collector');
      const log = oracleLog(evaluation);
      expect(log).toMatch(/report: json format, \d+ bytes, from the collector's output/);
    },
    SLOW,
  );

  it(
    'quotes what the tests print in the oracle log as text: colours dropped, gzip bytes and carriage returns as \\xNN',
    async () => {
      // A wrong add that prints, in the failing tests' captured output, a coloured word, the
      // start of a gzip stream and a carriage return (as a test comparing a compressed body
      // with a string shows it).
      const candidate = candidateDiff(suite.dir, {
        'calc.py': `def add(a, b):
    print("\\x1b[31mgzip\\x1b[0m \\x1f\\x8b\\x08\\x00 body\\rover")
    return a - b
`,
      });
      const evaluation = await suite.grade(suite.bundle, candidate);
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(hiddenRecord(evaluation)?.run.stdout).toContain('\u001f\u008b');
      const log = oracleLog(evaluation);
      expect(log).toContain('  | gzip \\x1f\\x8b\\x08\\x00 body\\x0dover');
      // No control character but newlines and tabs anywhere in it.
      // eslint-disable-next-line no-control-regex
      expect(log.match(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g)).toBeNull();
    },
    SLOW,
  );

  it(
    'takes no frame the candidate prints, on its output or its errors: a wrong add still fails',
    async () => {
      const frame = JSON.stringify(forgedFrame());
      // Past pytest's capture: into the runner's own output and errors, which the exec's are.
      const candidate = candidateDiff(suite.dir, {
        'calc.py': `${CALC}
import os

for _fd in (1, 2):
    try:
        with open("/proc/%d/fd/%d" % (os.getppid(), _fd), "w") as _out:
            _out.write(${frame})
    except OSError:
        pass
`,
      });
      const evaluation = await suite.grade(suite.bundle, candidate);
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(hiddenRecord(evaluation)?.report.readBy).toBe('collector');
      expect(hiddenRecord(evaluation)?.run.stdout).toContain('proctor-report-end');
    },
    SLOW,
  );

  it(
    'ends a process the tests leave holding the channel with the run, so the collector ends at once',
    async () => {
      // The fixed add, and a detached sleeper that inherits every socket of the test process
      // (the channel among them): without the run's own kill it would keep the channel open
      // for a minute, and the report would wait for the collector, then go to an exec.
      const candidate = candidateDiff(suite.dir, {
        'calc.py': `${FIXED}
import os
import subprocess

_fds = []
for _name in os.listdir("/proc/self/fd"):
    try:
        if os.readlink("/proc/self/fd/" + _name).startswith("socket:"):
            os.set_inheritable(int(_name), True)
            _fds.append(int(_name))
    except OSError:
        pass
if _fds:
    subprocess.Popen(["sleep", "60"], close_fds=False, start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
`,
      });
      const started = Date.now();
      const evaluation = await suite.grade(suite.bundle, candidate);
      expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expect(hiddenRecord(evaluation)?.report.readBy).toBe('collector');
      // Well under the minute the sleeper would hold the channel.
      expect(Date.now() - started).toBeLessThan(45_000);
    },
    SLOW,
  );

  it(
    'reads every report by an exec when the collector prints none (an older copy of the runner), with the same verdicts',
    async () => {
      const copy = withIds(suite.dir, {});
      const runner = join(copy, 'tests/run');
      const text = readFileSync(runner, 'utf8');
      const silenced = text.replace(
        /\n( +)print_report\(data\)\n/,
        '\n$1pass  # an older runner: no printed report\n',
      );
      expect(silenced).not.toBe(text);
      writeFileSync(runner, silenced, { mode: 0o755 });
      const older = await loadBundle(copy);
      const gold = await suite.grade(older, suite.gold);
      expect(gold.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expect(hiddenRecord(gold)?.report.readBy).toBe('exec');
      const baseline = await suite.grade(older, null);
      expect(baseline.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(hiddenRecord(baseline)?.report.readBy).toBe('exec');
    },
    SLOW,
  );
});
