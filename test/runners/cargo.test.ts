// The built-in cargo runner (src/runners/cargo/run) through the real oracle, on Debian's cargo
// and rustc: a crate made here (no dependencies, so nothing from crates.io) whose build the
// image keeps (`[environment] install = "cargo test --no-run"`), so that a grade compiles only
// what the candidate and the hidden patch change. Unit tests of the lib and an integration
// test target; a pass, a failure, an ignored test, a panic, a target that does not compile and
// a lib that does not; graded by Proctor's rules and by SWE-bench's (parse_log_cargo: ok →
// PASSED, FAILED → FAILED, ignored → not recorded). Forgeries that print libtest's lines or
// end the test process early never pass; `derive --runner cargo` makes the same lists.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { derive } from '../../src/derive/derive.js';
import { loadBundle } from '../../src/oracle/bundle.js';
import type { Evaluation } from '../../src/oracle/evaluate.js';
import { createImageCache } from '../../src/workers/images.js';
import { dockerScope, execFileAsync, testDocker } from '../helpers/docker.js';
import {
  existingRecord,
  expectSentinelsHeld,
  hiddenRecord,
  swebenchTask,
} from '../helpers/grade.js';
import {
  candidateDiff,
  withIds,
  type Files,
  type RepoBundleSpec,
} from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';
import { leftovers } from '../helpers/home.js';
import { commit, newRepo } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-cargo');
const SLOW = 600_000;

const LIB = `pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

pub fn sub(a: i32, b: i32) -> i32 {
    a + b
}

pub fn div(a: i32, b: i32) -> i32 {
    a / b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        println!("captured by libtest: test tests::other ... ok");
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    #[ignore]
    fn slow() {
        assert_eq!(add(1, 1), 2);
    }
}
`;

const GOLD_LIB = LIB.replace(
  'pub fn sub(a: i32, b: i32) -> i32 {\n    a + b',
  'pub fn sub(a: i32, b: i32) -> i32 {\n    a - b',
)
  .replace('    a / b\n', '    if b == 0 {\n        0\n    } else {\n        a / b\n    }\n')
  .replace('#[cfg(test)]', 'pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n\n#[cfg(test)]');

const HIDDEN = `#[test]
fn subtracts() {
    assert_eq!(calc::sub(5, 3), 2);
}

#[test]
fn divides_by_zero() {
    assert_eq!(calc::div(1, 0), 0);
}

#[test]
fn multiplies() {
    assert_eq!(calc::mul(2, 3), 6);
}
`;

const ID = {
  adds: 'tests::adds',
  slow: 'tests::slow',
  large: 'adds_large',
  subtracts: 'subtracts',
  zero: 'divides_by_zero',
  multiplies: 'multiplies',
};

const SPEC: RepoBundleSpec = {
  id: 'cargo-calc',
  runner: 'cargo',
  from: 'proctor-test-cargo:latest',
  install: 'cargo test --no-run',
  repo: {
    'Cargo.toml': '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2018"\n',
    '.gitignore': '/target\nCargo.lock\n',
    'src/lib.rs': LIB,
    'tests/integration.rs':
      '#[test]\nfn adds_large() {\n    assert_eq!(calc::add(1000, 2000), 3000);\n}\n',
  },
  hidden: { 'tests/hidden.rs': HIDDEN },
  gold: { 'src/lib.rs': GOLD_LIB },
  existing: [ID.adds, ID.large],
  hiddenIds: [ID.subtracts, ID.zero, ID.multiplies],
};

const suite = runnerSuite(docker, SCOPE, { image: 'cargo', spec: SPEC });
const { grade } = suite;

const lib = (code: string): Files => ({ 'src/lib.rs': `${GOLD_LIB}\n${code}` });

function outcomes(evaluation: Evaluation): Record<string, string> {
  return Object.fromEntries(evaluation.tests.tests.map((t) => [t.id, t.outcome]));
}

describe('the built-in cargo runner', () => {
  it(
    "grades by Proctor's rules: the baseline fails (a target that does not build is an error, with the compiler's lines), the gold patch passes, with every sentinel as it must be",
    async () => {
      const base = await grade(suite.bundle, null);
      expect(base.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(outcomes(base)).toMatchObject({
        [ID.adds]: 'passed',
        [ID.large]: 'passed',
        [ID.subtracts]: 'error',
        [ID.multiplies]: 'error',
      });
      expect(base.phases?.hidden?.cause).toMatch(/error\[E0425\]: cannot find function `mul`/);

      const started = Date.now();
      const fixed = await grade(suite.bundle, suite.gold);
      expect(fixed.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expect(Date.now() - started).toBeLessThan(60_000);
      expectSentinelsHeld(fixed);
      for (const phase of fixed.phaseRecords) {
        // The sentinel target that must not compile does so quietly: its error is no part of
        // the runner's output (which a reader takes for the run's own).
        expect(phase.run?.stderr).not.toContain('unavailable:');
      }
      // The sentinels never show among the tests.
      expect(Object.keys(outcomes(fixed)).sort()).toEqual(
        Object.values(ID)
          .filter((id) => id !== ID.slow)
          .sort(),
      );
    },
    SLOW,
  );

  it(
    'reports a failure, a panic and an ignored test as libtest does',
    async () => {
      // mul added, sub and div left as they are: an assertion that fails and a panic.
      const candidate = candidateDiff(suite.dir, {
        'src/lib.rs': LIB.replace(
          '#[cfg(test)]',
          'pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n\n#[cfg(test)]',
        ),
      });
      const task = withIds(suite.dir, { existing: [ID.adds, ID.slow, ID.large] });
      const evaluation = await grade(await loadBundle(task), candidate);
      expect(evaluation.verdict.verdict).toBe('FAIL');
      expect(outcomes(evaluation)).toEqual({
        [ID.adds]: 'passed',
        [ID.slow]: 'skipped',
        [ID.large]: 'passed',
        [ID.subtracts]: 'failed',
        [ID.zero]: 'failed',
        [ID.multiplies]: 'passed',
      });
    },
    SLOW,
  );

  it(
    "grades by SWE-bench's rules: one run after the hidden patch, an ignored test is not recorded (ABSENT)",
    async () => {
      const task = await swebenchTask(suite.dir);
      const base = await grade(task, null);
      expect(base.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(base.verdict.detail).toMatch(/subtracts \(ABSENT\)/);
      expect(base.verdict.detail).toContain('cannot find function `mul`');

      const fixed = await grade(task, suite.gold);
      expect(fixed.verdict).toMatchObject({ verdict: 'PASS' });
      expect(fixed.tests.tests).toEqual(
        expect.arrayContaining([
          { id: ID.adds, list: 'existing', outcome: 'passed', swebench: 'PASSED' },
          { id: ID.zero, list: 'hidden', outcome: 'passed', swebench: 'PASSED' },
        ]),
      );

      const ignored = await grade(
        await swebenchTask(suite.dir, { existing: [ID.adds, ID.slow] }),
        suite.gold,
      );
      expect(ignored.verdict).toMatchObject({ verdict: 'FAIL', reason: 'EXISTING_FAILED' });
      expect(ignored.verdict.detail).toMatch(/tests::slow \(ABSENT\)/);
    },
    SLOW,
  );

  it(
    "fails a candidate whose lib does not compile: every listed test an error, the compiler's first lines the cause",
    async () => {
      const evaluation = await grade(
        suite.bundle,
        candidateDiff(suite.dir, lib('pub fn broken() -> i32 { "no" }\n')),
      );
      expect(evaluation.verdict.verdict).toBe('FAIL');
      expect(Object.values(outcomes(evaluation)).every((o) => o === 'error')).toBe(true);
      expect(evaluation.verdict.detail).toMatch(/error\[E0308\]: mismatched types/);
    },
    SLOW,
  );

  it(
    'moves the sentinels to a target of their own when the one that would hold them does not build: its tests errors, every sentinel as it must be',
    async () => {
      // sub and div fixed, add private, mul missing. The existing integration target, which
      // would hold the existing phase's sentinels, does not compile: they go into a target of
      // their own. Nor does the hidden tests' target: the sentinels the canary step wrote into
      // their file are errors beside them, which fail the grade anyway (nothing tampered).
      const noMul = GOLD_LIB.replace(
        'pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n\n',
        '',
      ).replace('pub fn add(', 'pub(crate) fn add(');
      expect(noMul).not.toContain('pub fn add(');
      const evaluation = await grade(
        suite.bundle,
        candidateDiff(suite.dir, { 'src/lib.rs': noMul }),
      );
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'EXISTING_FAILED' });
      expect(outcomes(evaluation)).toEqual({
        [ID.adds]: 'passed',
        [ID.large]: 'error',
        [ID.subtracts]: 'error',
        [ID.zero]: 'error',
        [ID.multiplies]: 'error',
      });
      // The causes are the targets' own errors, not ones the sentinels made.
      expect(evaluation.phases?.existing?.cause).toMatch(/function `add` is private/);
      expect(evaluation.phases?.hidden?.cause).toMatch(/cannot find function `mul`/);
      const existing = existingRecord(evaluation)?.integrity;
      expect(existing?.tampered).toBeNull();
      expect(existing?.sentinels.map((s) => s.expect).sort()).toEqual([
        'error',
        'failed',
        'passed',
      ]);
      for (const s of existing?.sentinels ?? []) expect(s.status).toBe(s.expect);
      const hidden = hiddenRecord(evaluation);
      expect(hidden?.integrity?.tampered).toBeNull();
      expect(hidden?.integrity?.sentinels).toEqual([]);
      expect(hidden?.canaries?.sentinels.map((s) => s.status)).toEqual(['error', 'error']);
    },
    SLOW,
  );

  it(
    'runs by hand as `run LIST REPORT` in the image: `.` reports every test of every target, the ignored one skipped',
    async () => {
      // A throwaway container (no network, removed at once) on the image with the kept build.
      const script = [
        'cp -a /repo /tmp/w && cd /tmp/w',
        "printf '.\\n' > /tmp/ids",
        '/tmp/w/tests/run /tmp/ids /tmp/report >/dev/null 2>&1',
        'cat /tmp/report',
      ].join(' && ');
      const runner = join(suite.dir, 'tests/run');
      const { stdout } = await execFileAsync('docker', [
        'run',
        '--rm',
        '--network',
        'none',
        '-e',
        'HOME=/tmp',
        '-v',
        `${runner}:/tmp/runner:ro`,
        suite.imageId,
        'sh',
        '-c',
        script.replace('/tmp/w/tests/run', '/tmp/runner'),
      ]);
      const report = JSON.parse(stdout) as { tests: Array<{ id: string; status: string }> };
      expect(Object.fromEntries(report.tests.map((t) => [t.id, t.status]))).toEqual({
        [ID.adds]: 'passed',
        [ID.slow]: 'skipped',
        [ID.large]: 'passed',
      });
    },
    SLOW,
  );

  it(
    'derives the crate with `derive --runner cargo`: each line a path, the lists from the four states',
    async () => {
      const repo = newRepo();
      const base = commit(repo, SPEC.repo, 'base');
      const fix = commit(repo, { ...SPEC.gold, ...SPEC.hidden }, 'calc: sub, div by zero, mul');
      const environment = tempDir('proctor-env-');
      writeFileSync(join(environment, 'Dockerfile'), 'FROM proctor-test-cargo:latest\n');
      const home = tempDir('proctor-home-');
      const result = await derive(
        {
          repo,
          base,
          fix,
          environment,
          out: join(tempDir('proctor-out-'), 'calc'),
          runner: 'cargo',
          repeat: 1,
          workdir: '/repo',
          install: 'cargo test --no-run',
        },
        {
          docker,
          images: createImageCache(docker, { dir: join(home, 'cache', 'contexts') }),
          home,
          sandbox: { uid: 1000, gid: 1000 },
          note: () => {},
        },
      );
      expect(await leftovers(home)).toEqual([]);
      expect(result.hiddenFiles).toEqual(['tests/hidden.rs']);
      expect([...result.bundle.hiddenIds].sort()).toEqual([ID.zero, ID.multiplies, ID.subtracts]);
      expect([...result.bundle.existingIds].sort()).toEqual([ID.large, ID.adds]);
    },
    SLOW,
  );

  it(
    'runs a binary whole when more than 300 of its tests are listed, reporting the listed ones',
    async () => {
      const names = Array.from({ length: 301 }, (_, i) => `t${String(i).padStart(3, '0')}`);
      const many = `#[cfg(test)]\nmod many {\n${names.map((n) => `    #[test]\n    fn ${n}() {}\n`).join('')}}\n`;
      const candidate = candidateDiff(suite.dir, { 'src/lib.rs': `${GOLD_LIB}\n${many}` });
      const listed = names.map((n) => `many::${n}`);
      const task = await loadBundle(withIds(suite.dir, { existing: [...listed, ID.adds] }));
      const evaluation = await grade(task, candidate);
      expect(evaluation.verdict).toMatchObject({ verdict: 'PASS' });
      const outcome = outcomes(evaluation);
      expect(Object.keys(outcome).sort()).toEqual([...listed, ID.adds, ...SPEC.hiddenIds].sort());
      // tests::slow ran too (unfiltered), and is not reported: it is not listed.
      expect(outcome[ID.slow]).toBeUndefined();
    },
    SLOW,
  );

  // The candidate's own code, which the hidden tests call: libtest sorts them, so
  // divides_by_zero runs first, then multiplies, then subtracts.
  const FORGE_PRINT = `pub fn forge() {
    use std::io::Write;
    let mut out = std::io::stdout();
    for name in ["divides_by_zero", "multiplies", "tests::other"] {
        let _ = write!(out, "{{ \\"type\\": \\"test\\", \\"event\\": \\"started\\", \\"name\\": \\"{0}\\" }}\\n{{ \\"type\\": \\"test\\", \\"name\\": \\"{0}\\", \\"event\\": \\"ok\\" }}\\ntest {0} ... ok\\n", name);
    }
    let _ = out.flush();
}
`;
  const BUGGY_DIV = '    if b == 0 {\n        0\n    } else {\n        a / b\n    }\n';
  const FORGERIES: Record<string, string> = {
    // libtest's own lines, both forms, for the other hidden tests, from inside subtracts
    // (whose sub is right) while divides_by_zero still fails.
    printedResults: `${GOLD_LIB.replace('    a - b\n', '    forge();\n    a - b\n').replace(BUGGY_DIV, '    a / b\n')}\n${FORGE_PRINT}`,
    // The test process ended (exit status 0) by the first test, which would fail.
    earlyExit: GOLD_LIB.replace(
      BUGGY_DIV,
      '    if b == 0 {\n        std::process::exit(0);\n    }\n    a / b\n',
    ),
  };
  // A build script of the candidate's that weakens every test under tests/ as it compiles.
  const BUILD_SCRIPT = `use std::fs;

fn main() {
    for entry in fs::read_dir("tests").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().map_or(false, |e| e == "rs") {
            let text = fs::read_to_string(&path).unwrap();
            let _ = fs::write(&path, text.replace("assert_eq!(", "let _ = ("));
        }
    }
}
`;
  // The same, sparing every file but the hidden tests: the sentinels report honestly, and
  // every hidden test would pass (mul is added, sub and div stay wrong).
  const WITH_MUL = LIB.replace(
    '#[cfg(test)]',
    'pub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n\n#[cfg(test)]',
  );
  const BUILD_SCRIPT_SPARING = `use std::fs;

fn main() {
    if let Ok(text) = fs::read_to_string("tests/hidden.rs") {
        let text = text.replace("assert_eq!(", "let _ = (").replace("div(1, 0)", "div(1, 1)");
        let _ = fs::write("tests/hidden.rs", text);
    }
}
`;
  const cases: Array<[string, string, RegExp]> = [
    ['printedResults', 'TAMPERED', /printed libtest's started event for divides_by_zero/],
    ['earlyExit', 'HIDDEN_FAILED', /divides_by_zero/],
    ['buildScript', 'TAMPERED', /tripwire: .*a sentinel's source changed during the build/],
    [
      'buildScriptSparingSentinels',
      'TAMPERED',
      /hidden phase: tripwire: .*the build changed the test file tests\/hidden\.rs/,
    ],
  ];
  it.each(cases)(
    'fails the %s forgery: %s',
    async (name, reason, detail) => {
      const source = FORGERIES[name] ?? '';
      const files: Files =
        name === 'buildScript'
          ? { 'src/lib.rs': LIB, 'build.rs': BUILD_SCRIPT }
          : name === 'buildScriptSparingSentinels'
            ? { 'src/lib.rs': WITH_MUL, 'build.rs': BUILD_SCRIPT_SPARING }
            : { 'src/lib.rs': source };
      const evaluation = await grade(suite.bundle, candidateDiff(suite.dir, files));
      expect(evaluation.verdict.verdict).toBe('FAIL');
      expect(evaluation.verdict.reason).toBe(reason);
      expect(evaluation.verdict.detail).toMatch(detail);
      if (name === 'earlyExit') {
        expect(outcomes(evaluation)).toMatchObject({
          [ID.zero]: 'error',
          [ID.multiplies]: 'error',
          [ID.subtracts]: 'error',
        });
      }
    },
    SLOW,
  );
});

// A package whose manifest turns off test discovery (`autotests = false`) and names its one
// integration target, whose tests live in modules beside it, as ripgrep's does: the sentinels'
// targets are found by no discovery, so the runner declares them for the build.
const UNDISCOVERED: RepoBundleSpec = {
  ...SPEC,
  id: 'cargo-calc-autotests-off',
  repo: {
    ...Object.fromEntries(Object.entries(SPEC.repo).filter(([p]) => p !== 'tests/integration.rs')),
    'Cargo.toml':
      '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2018"\nautotests = false\n\n' +
      '[[test]]\nname = "integration"\npath = "tests/tests.rs"\n',
    'tests/tests.rs': 'mod large;\n',
    'tests/large.rs':
      '#[test]\nfn adds_large() {\n    assert_eq!(calc::add(1000, 2000), 3000);\n}\n',
  },
  hidden: { 'tests/tests.rs': 'mod hidden;\nmod large;\n', 'tests/hidden.rs': HIDDEN },
  existing: [ID.adds, `large::${ID.large}`],
  hiddenIds: [`hidden::${ID.subtracts}`, `hidden::${ID.zero}`, `hidden::${ID.multiplies}`],
};

const undiscovered = runnerSuite(docker, dockerScope(docker, 'runners-cargo-autotests'), {
  image: 'cargo',
  spec: UNDISCOVERED,
});

describe('the built-in cargo runner on a package with autotests = false', () => {
  it(
    'declares its sentinel targets for the build: the baseline fails, the gold patch passes, every sentinel as it must be',
    async () => {
      const base = await undiscovered.grade(undiscovered.bundle, null);
      expect(base.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(outcomes(base)).toMatchObject({ [`large::${ID.large}`]: 'passed' });

      const fixed = await undiscovered.grade(undiscovered.bundle, undiscovered.gold);
      expect(fixed.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expectSentinelsHeld(fixed);
    },
    SLOW,
  );
});

// A package whose one integration test target before the hidden patch is compiled away whole
// here (a crate-wide #![cfg]): sentinels put in it would never run.
const GATED: RepoBundleSpec = {
  ...SPEC,
  id: 'cargo-calc-gated',
  repo: {
    ...Object.fromEntries(Object.entries(SPEC.repo).filter(([p]) => p !== 'tests/integration.rs')),
    'tests/windows.rs': '#![cfg(windows)]\n\n#[test]\nfn on_windows() {}\n',
  },
  existing: [ID.adds],
};

const gated = runnerSuite(docker, dockerScope(docker, 'runners-cargo-gated'), {
  image: 'cargo',
  spec: GATED,
});

describe('the built-in cargo runner on a test target that a crate-wide #![cfg] compiles away', () => {
  it(
    'puts the sentinels in a target of their own: the gold patch passes, every sentinel as it must be',
    async () => {
      const fixed = await gated.grade(gated.bundle, gated.gold);
      expect(fixed.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expectSentinelsHeld(fixed);
    },
    SLOW,
  );
});
