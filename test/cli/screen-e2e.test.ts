// The screen of the diff and conftest.py's deny end to end: `proctor grade … --patch F --wait --json`
// (the real binary, a real SQLite home, the real Docker engine) of the py-duration-parse
// example against a forged candidate — a root conftest.py that rewrites every report to
// passed, and a package module that imports `_pytest.reports` — under `tamper = "flag"` (the
// default) and `tamper = "fail"`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyBundle, candidateDiff } from '../helpers/bundles.js';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const EXAMPLE = join(ROOT, 'examples/py-duration-parse');

// Forges a pass for every test, failed or not: pytest loads a conftest.py at the rootdir
// as a plugin before any test runs.
const FORGING_CONFTEST = `import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
`;

/** The example's durations.py with an import of pytest's internals, and the fix or not. */
function durations(fixed: boolean): string {
  let text = readFileSync(join(EXAMPLE, 'environment/repo/durations.py'), 'utf8');
  text = text.replace('import re\n', 'import re\n\nimport _pytest.reports  # noqa: F401\n');
  if (fixed) text = text.replace('seconds = int(value)', 'seconds += int(value)');
  return text;
}

interface GradeJson {
  job: number;
  verdict: string;
  reason: string;
  detail: string;
  timings: Record<string, number>;
  suspicious?: { count: number; hits: unknown[]; unscreened: number };
}

async function grade(home: string, bundle: string, patch: Buffer) {
  const file = join(tempDir(), 'candidate.patch');
  writeFileSync(file, patch);
  const result = await proctor([
    '--home',
    home,
    'grade',
    bundle,
    '--patch',
    file,
    '--wait',
    '--json',
  ]);
  // Warnings about other homes (a gone home's template another test still uses) are the
  // machine's, not this grade's: no error line.
  const errors = result.stderr
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('proctor warn: '));
  expect(errors).toEqual([]);
  const [json, gate] = result.stdout.trimEnd().split('\n');
  expect(gate).toMatch(/^tests_hash=[0-9a-f]{64}$/);
  return { code: result.code, json: JSON.parse(json ?? '') as GradeJson };
}

describe('the screen and the conftest.py deny, graded in Docker', () => {
  it('drops a forging conftest.py, flags the import of _pytest, and with tamper = "fail" fails it before any container', async () => {
    const home = tempDir();
    const flag = copyBundle({}, EXAMPLE);
    const fail = copyBundle(
      { editToml: (t) => t.replace('[grading]\n', '[grading]\ntamper = "fail"\n') },
      EXAMPLE,
    );
    expect(readFileSync(join(fail, 'task.toml'), 'utf8')).toContain('tamper = "fail"');
    const forged = candidateDiff(
      { files: { 'conftest.py': FORGING_CONFTEST, 'durations.py': durations(false) } },
      EXAMPLE,
    );
    const hit = {
      rule: 'pytest-internals',
      file: 'durations.py',
      line: 5,
      excerpt: 'import _pytest.reports  # noqa: F401',
    };

    // tamper = "flag" (the default): the conftest.py is denied and dropped, so the bug stays
    // and the hidden tests fail, as they should; the import is listed as suspicious.
    const flagged = await grade(home, flag, forged);
    expect(flagged.code).toBe(1);
    expect(flagged.json).toMatchObject({
      verdict: 'FAIL',
      reason: 'HIDDEN_FAILED',
      suspicious: { count: 1, hits: [hit], unscreened: 0 },
    });
    const log = await proctor(['--home', home, 'status', String(flagged.json.job), '--log']);
    expect(log.stdout).toContain('dropped conftest.py (denied by **/conftest.py, add, 1 hunk)');
    expect(log.stdout).toContain('suspicious: 1 hit of the screen');
    expect(log.stdout).toContain(
      '  suspicious pytest-internals durations.py:5: import _pytest.reports  # noqa: F401',
    );
    expect(log.stdout).toContain(`job ${flagged.json.job} suspicious: 1 hit of the screen`);

    // tamper = "fail": FAIL TAMPER_SUSPECTED, decided on the host: no container time at all.
    const failed = await grade(home, fail, forged);
    expect(failed.code).toBe(1);
    expect(failed.json).toMatchObject({
      verdict: 'FAIL',
      reason: 'TAMPER_SUSPECTED',
      detail: '1 screen hit in the candidate (tamper = "fail"): pytest-internals durations.py:5',
      suspicious: { count: 1, hits: [hit] },
    });
    for (const step of ['container', 'workspace', 'apply', 'existing', 'hidden']) {
      expect(failed.json.timings).not.toHaveProperty(step);
    }
    const status = await proctor(['--home', home, 'status', String(failed.json.job), '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({
      jobs: [{ outcome: 'unresolved', suspicious: 1 }],
    });

    // The gold patch is no suspect: it passes under tamper = "fail".
    const gold = await grade(home, fail, readFileSync(join(EXAMPLE, 'solution/gold.patch')));
    expect(gold.json).toMatchObject({
      verdict: 'PASS',
      suspicious: { count: 0, hits: [], unscreened: 0 },
    });
    expect(gold.code).toBe(0);
    expect(await leftovers(home)).toEqual([]);
  }, 900_000);
});
