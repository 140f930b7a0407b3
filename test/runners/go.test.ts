// The built-in go runner in real grades, through the oracle (evaluate) on Debian's golang-go
// (Go 1.19, whose test2json framing has no marker): passing, failing and skipped tests,
// subtests named as `go test -v` prints them (a space becomes `_`), a subtest that panics (the
// running test fails, the listed tests after it are errors), a package the candidate breaks
// (every listed test of it an error, the compiler's lines as the cause), under Proctor's rules
// and SWE-bench's; and forgeries (an init() that exits 0, lines that imitate `--- PASS`) that
// must not pass.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/bundle.js';
import { runnerSource } from '../../src/runners/index.js';
import { dockerScope, execFileAsync, fixtureImage, testDocker } from '../helpers/docker.js';
import { discoverInImage } from '../helpers/discover.js';
import {
  expectAllErrors,
  expectBaseline,
  expectNotPassed,
  expectSentinelsHeld,
  outcomes,
  swebenchOf,
  swebenchTask,
} from '../helpers/grade.js';
import { candidateDiff, withIds, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';
import { CALC, GOLD_CALC } from '../helpers/go-calc.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-go');
const SLOW = 300_000;

const CALC_TEST = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("1 + 2")
	}
}

func TestSkip(t *testing.T) { t.Skip("needs a network") }

func TestTable(t *testing.T) {
	t.Run("small", func(t *testing.T) {})
	t.Run("big case", func(t *testing.T) {})
}

func TestWrong(t *testing.T) { t.Fatal("always wrong") }
`;

// The hidden tests: a new file; by_zero panics before the fix, and TestDivLater then never runs.
const DIV_TEST = `package calc

import "testing"

func TestDiv(t *testing.T) {
	t.Run("exact", func(t *testing.T) {
		if q, _ := Div(6, 3); q != 2 {
			t.Fatal(q)
		}
	})
	t.Run("floor", func(t *testing.T) {
		if q, _ := Div(-7, 2); q != -4 {
			t.Fatalf("Div(-7, 2) = %d", q)
		}
	})
	t.Run("by_zero", func(t *testing.T) {
		if _, err := Div(1, 0); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestDivLater(t *testing.T) {}
`;

const ID = {
  add: 'TestAdd',
  skip: 'TestSkip',
  small: 'TestTable/small',
  bigCase: 'TestTable/big_case',
  wrong: 'TestWrong',
  format: 'TestFormat',
  div: 'TestDiv',
  exact: 'TestDiv/exact',
  floor: 'TestDiv/floor',
  byZero: 'TestDiv/by_zero',
  later: 'TestDivLater',
  nowhere: 'TestNowhere',
};

const SPEC: RepoBundleSpec = {
  id: 'go-calc',
  runner: 'go',
  from: 'proctor-test-go:latest',
  repo: {
    'go.mod': 'module example.com/calc\n\ngo 1.19\n',
    'calc/calc.go': CALC,
    'calc/calc_test.go': CALC_TEST,
    'text/text.go': 'package text\n\nfunc Format(n int) string { return "n" }\n',
    'text/text_test.go':
      'package text_test\n\nimport (\n\t"testing"\n\n\t"example.com/calc/text"\n)\n\nfunc TestFormat(t *testing.T) {\n\tif text.Format(1) != "n" {\n\t\tt.Fatal("format")\n\t}\n}\n',
  },
  hidden: { 'calc/div_test.go': DIV_TEST },
  gold: { 'calc/calc.go': GOLD_CALC },
  existing: [ID.add, ID.small, ID.bigCase, ID.format],
  hiddenIds: [ID.exact, ID.floor, ID.byZero, ID.div, ID.later],
};

const suite = runnerSuite(docker, SCOPE, { image: 'go', spec: SPEC });
const { grade } = suite;

describe('the built-in go runner', () => {
  it(
    "fails a baseline on the hidden tests: a subtest's assertion fails, one panics, and the test after it is an error",
    async () => {
      const evaluation = await grade(suite.bundle, null);
      expectBaseline(evaluation, {
        existing: {
          [ID.add]: 'passed',
          [ID.small]: 'passed',
          [ID.bigCase]: 'passed',
          [ID.format]: 'passed',
        },
        hidden: {
          [ID.exact]: 'passed',
          [ID.floor]: 'failed',
          [ID.byZero]: 'failed',
          [ID.div]: 'failed',
          [ID.later]: 'error',
        },
      });
      // The report's cause: the panic that ended the binary.
      expect(JSON.stringify(evaluation.phaseRecords)).toContain(
        'panic: runtime error: integer divide by zero',
      );
    },
    SLOW,
  );

  it(
    'passes the gold patch, and reports a skip as skipped, a failure as failed, and a name found nowhere not at all',
    async () => {
      const fixed = await grade(suite.bundle, suite.gold);
      expect(fixed.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      // The existing phase's sentinels: the one that must be an error is listed and defined
      // nowhere, the package's binary dying after its tests (a TestMain of the sentinels' file);
      // the hidden phase's are in the hidden test file.
      expectSentinelsHeld(fixed);
      expect(outcomes(fixed, 'hidden')).toEqual({
        [ID.exact]: 'passed',
        [ID.floor]: 'passed',
        [ID.byZero]: 'passed',
        [ID.div]: 'passed',
        [ID.later]: 'passed',
      });
      const task = await loadBundle(
        withIds(suite.dir, { existing: [ID.skip, ID.wrong, ID.nowhere] }),
      );
      const evaluation = await grade(task, suite.gold);
      expect(outcomes(evaluation, 'existing')).toEqual({
        [ID.skip]: 'skipped',
        [ID.wrong]: 'failed',
        [ID.nowhere]: 'missing',
      });
    },
    SLOW,
  );

  it(
    'holds its sentinels beside a package with a TestMain of its own: the one that must be an error in a package of its own',
    async () => {
      // A package with a TestMain (here the candidate's, which also runs every test): the
      // sentinel that must be an error runs in a package of its own, after one that panics.
      // (Without one, the sentinels' file defines the package's TestMain, which dies once the
      // tests ran: the gold grade above.)
      const own = candidateDiff(suite.dir, {
        'calc/calc.go': GOLD_CALC,
        'calc/main_test.go':
          'package calc\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(m.Run()) }\n',
      });
      const fallback = await grade(suite.bundle, own);
      expect(fallback.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expectSentinelsHeld(fallback);
    },
    SLOW,
  );

  it(
    "makes every listed test of a package that does not build an error, with the compiler's lines as the cause",
    async () => {
      const broken = candidateDiff(suite.dir, {
        'calc/calc.go': GOLD_CALC.replace('return q, nil', 'return "q", nil'),
      });
      const evaluation = await grade(suite.bundle, broken);
      // The sentinels live in the package that does not build: the session never began.
      expectAllErrors(evaluation, {
        existing: [ID.add, ID.small, ID.bigCase],
        hiddenIds: SPEC.hiddenIds,
      });
      expect(evaluation.verdict.detail).toMatch(/calc\/calc\.go:\d+:\d+: cannot use "q"/);
    },
    SLOW,
  );
});

describe("the go runner under derive's discovery", () => {
  it(
    'runs every test of the packages of its paths (a _test.go file, a folder) and reports each, subtests included, by hand in the image',
    async () => {
      // `go test` exits 1 (TestWrong fails): the report is what counts.
      expect(
        await discoverInImage(suite.imageId, suite.bundle.paths.runner, [
          'calc/calc_test.go',
          'text',
        ]),
      ).toEqual({
        [ID.add]: 'passed',
        [ID.skip]: 'skipped',
        [ID.small]: 'passed',
        [ID.bigCase]: 'passed',
        TestTable: 'passed',
        [ID.wrong]: 'failed',
        [ID.format]: 'passed',
      });
    },
    SLOW,
  );
});

describe('the go runner under SWE-bench rules', () => {
  it(
    'records what parse_log_gotest would: PASSED, FAILED, SKIPPED, and ABSENT for a test with no `---` line',
    async () => {
      const task = await swebenchTask(suite.dir, { existing: [...SPEC.existing, ID.skip] });
      const base = await grade(task, null);
      expect(base.verdict, base.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'HIDDEN_FAILED',
      });
      expect(swebenchOf(base)).toMatchObject({
        [ID.exact]: ['passed', 'PASSED'],
        [ID.floor]: ['failed', 'FAILED'],
        [ID.byZero]: ['failed', 'FAILED'],
        [ID.later]: ['error', 'ABSENT'],
        [ID.skip]: ['skipped', 'SKIPPED'],
        [ID.format]: ['passed', 'PASSED'],
      });
      const fixed = await grade(task, suite.gold);
      expect(fixed.verdict).toMatchObject({ verdict: 'PASS' });
      expect(fixed.verdict.detail).toContain("resolved by SWE-bench's rules");
    },
    SLOW,
  );

  it(
    'quotes the compiler when the candidate breaks the build',
    async () => {
      const task = await swebenchTask(suite.dir);
      const broken = candidateDiff(suite.dir, { 'text/text.go': 'package text\n\nfunc Format(' });
      const evaluation = await grade(task, broken);
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'EXISTING_FAILED' });
      expect(swebenchOf(evaluation)[ID.format]).toEqual(['error', 'ABSENT']);
      expect(evaluation.verdict.detail).toMatch(/the runner says: .*text\/text\.go:3:/);
    },
    SLOW,
  );
});

describe('forgeries against the go runner', () => {
  // Each on top of the unfixed code: the hidden tests fail unless the forgery works.
  const FORGERIES: Array<[string, string, RegExp]> = [
    // No test ran in the sentinels' package: the session never began, every test is an error.
    [
      'an init() that exits 0 before any test',
      'os.Exit(0)',
      /^EXISTING_FAILED: .*\((error|ABSENT)\)/,
    ],
    [
      'lines that imitate go test -v for the hidden tests',
      [
        'fmt.Println("=== RUN   TestDiv")',
        ...['exact', 'floor', 'by_zero'].map(
          (s) => `fmt.Println("    --- PASS: TestDiv/${s} (0.00s)")`,
        ),
        'fmt.Println("--- PASS: TestDiv (0.00s)")',
        'fmt.Println("=== RUN   TestDivLater")',
        'fmt.Println("--- PASS: TestDivLater (0.00s)")',
      ].join('\n\t'),
      /reported twice|sentinel/,
    ],
    [
      'lines that imitate go test -v, then an exit before the real tests',
      [
        'fmt.Println("=== RUN   TestDiv")',
        'fmt.Println("--- PASS: TestDiv (0.00s)")',
        'os.Exit(0)',
      ].join('\n\t'),
      /reported twice|sentinel|go reported no result/,
    ],
  ];

  it.each(FORGERIES)(
    '%s does not pass',
    async (_name, body, detail) => {
      const source = CALC.replace(
        'package calc\n',
        `package calc\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nvar _ = fmt.Sprint\nvar _ = os.Exit\n\nfunc init() {\n\t${body}\n}\n`,
      );
      for (const task of [suite.bundle, await swebenchTask(suite.dir)]) {
        const evaluation = await grade(task, candidateDiff(suite.dir, { 'calc/calc.go': source }));
        expectNotPassed(evaluation, detail);
      }
    },
    SLOW,
  );

  it(
    'a raw exit after lines that imitate the rest of a run does not pass: go then reports no result for the package',
    async () => {
      // The gold's floor division; on a division by zero (the hidden by_zero subtest), lines
      // that close the running tests as passed, then an exit that no test hook sees.
      const source = GOLD_CALC.replace(
        'import "errors"',
        'import (\n\t"errors"\n\t"fmt"\n\t"syscall"\n)',
      ).replace(
        'return 0, errors.New("division by zero")',
        [
          'fmt.Println("    --- PASS: TestDiv/by_zero (0.00s)")',
          'fmt.Println("--- PASS: TestDiv (0.00s)")',
          'fmt.Println("=== RUN   TestDivLater")',
          'fmt.Println("--- PASS: TestDivLater (0.00s)")',
          'syscall.Exit(0)',
          'return 0, errors.New("division by zero")',
        ].join('\n\t\t'),
      );
      for (const task of [suite.bundle, await swebenchTask(suite.dir)]) {
        const evaluation = await grade(task, candidateDiff(suite.dir, { 'calc/calc.go': source }));
        expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TAMPERED' });
        expect(evaluation.verdict.detail).toMatch(
          /tripwire: example\.com\/calc\/calc ran tests but go reported no result for it/,
        );
      }
    },
    SLOW,
  );
});

describe("the go runner's build cache", () => {
  it(
    'is seeded from the sealed one: outputs linked, the rest copied, trim.txt fresh, and go runs no tool again for what it holds',
    async () => {
      const image = await fixtureImage('go');
      const runner = gzipSync(await runnerSource('go')).toString('base64');
      // In the image with its root read-only, as under the evaluator: its /gocache is sealed.
      const check = String.raw`
import json, os, runpy, shutil, subprocess, time
run = runpy.run_path("/tmp/run", run_name="go_runner")
seed = run["sealed_cache"]("/gocache")
run["seed_cache"](seed, "/tmp/c")
wrong, links, copies = [], 0, 0
for root, _, names in os.walk("/gocache"):
    for name in names:
        source = os.path.join(root, name)
        place = os.path.join("/tmp/c", os.path.relpath(source, "/gocache"))
        if name == "trim.txt":
            continue
        if name.endswith("-d"):
            links += 1
            if not (os.path.islink(place) and os.readlink(place) == source):
                wrong.append(place)
        else:
            copies += 1
            with open(source, "rb") as a, open(place, "rb") as b:
                if os.path.islink(place) or a.read() != b.read():
                    wrong.append(place)
trim = open("/tmp/c/trim.txt").read()
def tools(cache):
    env = dict(os.environ, GOCACHE=cache, GOFLAGS="", GOPROXY="off")
    done = subprocess.run(["go", "vet", "-x", "errors"], cwd="/tmp", env=env, capture_output=True, text=True)
    return done.returncode, sum(1 for line in done.stderr.splitlines() if "pkg/tool/" in line)
shutil.copytree("/gocache", "/tmp/copied")
print(json.dumps({"seed": seed, "links": links, "copies": copies, "wrong": wrong,
                  "trimAge": time.time() - int(trim), "seeded": tools("/tmp/c"),
                  "again": tools("/tmp/c"), "copied": tools("/tmp/copied"), "empty": tools("/tmp/empty")}))
`;
      const { stdout } = await execFileAsync(
        'docker',
        [
          ...['run', '--rm', '--network', 'none', '--read-only', '--tmpfs', '/tmp:exec,size=1g'],
          ...[image, 'sh', '-c', 'echo "$1" | base64 -d | gunzip > /tmp/run && python3 -c "$2"'],
          ...['check', runner, check],
        ],
        { maxBuffer: 16 * 1024 * 1024 },
      );
      const seeded = JSON.parse(stdout) as {
        seed: string;
        links: number;
        copies: number;
        wrong: string[];
        trimAge: number;
        seeded: [number, number];
        again: [number, number];
        copied: [number, number];
        empty: [number, number];
      };
      expect(seeded.seed).toBe('/gocache');
      expect(seeded.links).toBeGreaterThan(100);
      expect(seeded.copies).toBeGreaterThan(100);
      expect(seeded.wrong).toEqual([]);
      expect(seeded.trimAge).toBeGreaterThanOrEqual(0);
      expect(seeded.trimAge).toBeLessThan(120);
      // go's tools run as often on the seeded cache as on a whole copy of it (the vet of a
      // package of the standard library and of what it imports, cached in the image), twice;
      // an empty cache runs them for each package.
      expect(seeded.copied[0]).toBe(0);
      expect(seeded.seeded).toEqual(seeded.copied);
      expect(seeded.again).toEqual(seeded.copied);
      expect(seeded.empty[0]).toBe(0);
      expect(seeded.empty[1]).toBeGreaterThan(seeded.copied[1] + 20);
    },
    SLOW,
  );
});
