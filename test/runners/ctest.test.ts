// The built-in ctest runner in real grades, through the oracle (evaluate) on Debian's CMake,
// GCC and GoogleTest: a CMake project whose gtest tests pass, fail, skip (GTEST_SKIP, a
// DISABLED_ test), crash (a division by zero) and are parametrized, beside a CTest test named
// by add_test; a candidate that breaks the build (every listed test an error, the compiler's
// lines as the cause); a make check project (scripts by exit, TAP lines by name); under
// Proctor's rules and SWE-bench's; and forgeries (a static constructor that exits 0, one that
// writes gtest's XML report and prints its lines, a build rule that rewrites the hidden test
// file) that must not pass.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadBundle } from '../../src/oracle/bundle.js';
import { resolveImage } from '../../src/sandbox/index.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { discoverInImage } from '../helpers/discover.js';
import {
  expectAllErrors,
  expectBaseline,
  expectSentinelsHeld,
  outcomes,
  swebenchOf,
  swebenchTask,
} from '../helpers/grade.js';
import {
  candidateDiff,
  makeRepoBundle,
  withIds,
  type RepoBundleSpec,
} from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';
import { CALC, CMAKE, GOLD_CALC } from '../helpers/ctest-calc.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-ctest');
const SLOW = 600_000;

// Floor division; a division by zero is 0.
const CALC_TEST = `#include <gtest/gtest.h>
#include "calc.h"
TEST(Add, Small) { EXPECT_EQ(add(1, 2), 3); }
TEST(Add, Wrong) { EXPECT_EQ(add(1, 2), 4); }
TEST(Add, Skipped) { GTEST_SKIP() << "needs a network"; }
TEST(Add, DISABLED_Later) { EXPECT_EQ(1, 2); }
class AddP : public ::testing::TestWithParam<int> {};
TEST_P(AddP, Zero) { EXPECT_EQ(add(GetParam(), 0), GetParam()); }
INSTANTIATE_TEST_SUITE_P(Ints, AddP, ::testing::Values(1, 2));
`;

const DIV_TEST = `#include <gtest/gtest.h>
#include "calc.h"
TEST(Div, Exact) { EXPECT_EQ(divide(6, 3), 2); }
`;

// The hidden tests: ByZero dies of SIGFPE before the fix; Floors/1 fails (-3 / 2 is -2).
const HIDDEN_DIV_TEST = `#include <gtest/gtest.h>
#include "calc.h"
TEST(Div, Exact) { EXPECT_EQ(divide(6, 3), 2); }
TEST(Div, Floor) { EXPECT_EQ(divide(-7, 2), -4); }
TEST(Div, ByZero) { EXPECT_EQ(divide(1, 0), 0); }
TEST(Div, Later) { SUCCEED(); }
class DivP : public ::testing::TestWithParam<int> {};
TEST_P(DivP, Floors) { EXPECT_EQ(divide(-GetParam(), 2), -((GetParam() + 1) / 2)); }
INSTANTIATE_TEST_SUITE_P(Odd, DivP, ::testing::Values(2, 3));
`;

const ID = {
  small: 'Add.Small',
  wrong: 'Add.Wrong',
  skipped: 'Add.Skipped',
  disabled: 'Add.DISABLED_Later',
  zero0: 'Ints/AddP.Zero/0',
  zero1: 'Ints/AddP.Zero/1',
  shell: 'shell-check',
  exact: 'Div.Exact',
  floor: 'Div.Floor',
  byZero: 'Div.ByZero',
  later: 'Div.Later',
  floors0: 'Odd/DivP.Floors/0',
  floors1: 'Odd/DivP.Floors/1',
  nowhere: 'Nope.Nothing',
};

const SPEC: RepoBundleSpec = {
  id: 'ctest-calc',
  runner: 'ctest',
  from: 'proctor-test-ctest:latest',
  install: 'cmake -B build -S . && cmake --build build',
  testSeconds: 300,
  repo: {
    '.gitignore': '/build/\n',
    'CMakeLists.txt': CMAKE,
    'include/calc.h': '#pragma once\nint add(int a, int b);\nint divide(int a, int b);\n',
    'src/calc.cc': CALC,
    'test/calc-test.cc': CALC_TEST,
    'test/div-test.cc': DIV_TEST,
    'test/check.sh': 'exit 0\n',
  },
  hidden: { 'test/div-test.cc': HIDDEN_DIV_TEST },
  gold: { 'src/calc.cc': GOLD_CALC },
  existing: [ID.small, ID.zero0, ID.zero1, ID.shell],
  hiddenIds: [ID.exact, ID.floor, ID.byZero, ID.later, ID.floors0, ID.floors1],
};

const suite = runnerSuite(docker, SCOPE, { image: 'ctest', spec: SPEC });
const { grade } = suite;

describe('the built-in ctest runner on GoogleTest', () => {
  it(
    'fails a baseline on the hidden tests: an assertion fails, a crash fails only its own test, a parametrized test fails',
    async () => {
      const evaluation = await grade(suite.bundle, null);
      expectBaseline(evaluation, {
        existing: {
          [ID.small]: 'passed',
          [ID.zero0]: 'passed',
          [ID.zero1]: 'passed',
          [ID.shell]: 'passed',
        },
        hidden: {
          [ID.exact]: 'passed',
          [ID.floor]: 'failed',
          [ID.byZero]: 'failed',
          [ID.later]: 'passed',
          [ID.floors0]: 'passed',
          [ID.floors1]: 'failed',
        },
      });
    },
    SLOW,
  );

  it(
    'passes the gold patch, and reports a skip and a disabled test as skipped, a failure as failed, and a name found nowhere not at all',
    async () => {
      const fixed = await grade(suite.bundle, suite.gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({
        verdict: 'PASS',
        reason: 'PASS',
      });
      expect(Object.values(outcomes(fixed, 'hidden'))).toEqual(Array(6).fill('passed'));
      const task = await loadBundle(
        withIds(suite.dir, { existing: [ID.wrong, ID.skipped, ID.disabled, ID.nowhere] }),
      );
      const evaluation = await grade(task, suite.gold);
      expect(outcomes(evaluation, 'existing')).toEqual({
        [ID.wrong]: 'failed',
        [ID.skipped]: 'skipped',
        [ID.disabled]: 'skipped',
        [ID.nowhere]: 'missing',
      });
    },
    SLOW,
  );

  it(
    'runs a CTest name by its command, with sentinels that are scripts run the same way when no gtest test is listed',
    async () => {
      const task = await loadBundle(withIds(suite.dir, { existing: [ID.shell] }));
      const evaluation = await grade(task, suite.gold);
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({ verdict: 'PASS' });
      expect(outcomes(evaluation, 'existing')).toEqual({ [ID.shell]: 'passed' });
    },
    SLOW,
  );

  it(
    "makes every listed test an error when the candidate breaks the build, with the compiler's lines as the cause",
    async () => {
      const broken = candidateDiff(suite.dir, {
        'src/calc.cc': GOLD_CALC.replace('return q;', 'return "q";'),
      });
      const evaluation = await grade(suite.bundle, broken);
      expectAllErrors(evaluation, SPEC);
      expect(evaluation.verdict.detail).toMatch(/calc\.cc:\d+:\d+: error/);
    },
    SLOW,
  );
});

describe("the ctest runner under derive's discovery", () => {
  it(
    'runs every gtest test of the build and every other CTest test, and reports each, by hand in the image',
    async () => {
      // In place, in a throwaway container: the install step's build/ knows /repo as its home.
      expect(
        await discoverInImage(
          suite.imageId,
          suite.bundle.paths.runner,
          ['test/calc-test.cc', 'test/check.sh'],
          { inPlace: true },
        ),
      ).toEqual({
        [ID.small]: 'passed',
        [ID.wrong]: 'failed',
        [ID.skipped]: 'skipped',
        [ID.disabled]: 'skipped',
        [ID.zero0]: 'passed',
        [ID.zero1]: 'passed',
        [ID.exact]: 'passed',
        [ID.shell]: 'passed',
      });
    },
    SLOW,
  );
});

describe('the ctest runner’s sentinels', () => {
  it(
    'sit in a test file only where the build compiles it anyway: scripts in the existing phase of a fix to a source file, in the file after a header’s change and in the hidden phase',
    async () => {
      const placed = (evaluation: Awaited<ReturnType<typeof grade>>) =>
        evaluation.phaseRecords.map((phase) =>
          /proctor: sentinels: as scripts, not in test\/calc-test\.cc: the build would not compile it otherwise/.test(
            phase.run?.stderr ?? '',
          )
            ? 'scripts'
            : 'file',
        );
      // The gold patch changes src/calc.cc alone: no test file would be compiled again.
      const fixed = await grade(suite.bundle, suite.gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
      expect(placed(fixed)).toEqual(['scripts', 'file']);
      expectSentinelsHeld(fixed);
      // A change to the header every test file includes compiles them all again.
      const header = candidateDiff(suite.dir, {
        'src/calc.cc': GOLD_CALC,
        'include/calc.h':
          '#pragma once\n// Integer division rounds down.\nint add(int a, int b);\nint divide(int a, int b);\n',
      });
      const both = await grade(suite.bundle, header);
      expect(both.verdict, both.verdict.detail).toMatchObject({ verdict: 'PASS' });
      expect(placed(both)).toEqual(['file', 'file']);
      expectSentinelsHeld(both);
    },
    SLOW,
  );
});

describe('the ctest runner under SWE-bench rules', () => {
  it(
    'records what parse_log_googletest would: PASSED, FAILED, and ABSENT for a skip, a crash, a test after a crash, and a failed parametrized test (gtest prints it `…, where GetParam() = 3`)',
    async () => {
      const task = await swebenchTask(suite.dir, { existing: [...SPEC.existing, ID.skipped] });
      const base = await grade(task, null);
      expect(base.verdict, base.verdict.detail).toMatchObject({ verdict: 'FAIL' });
      expect(swebenchOf(base)).toMatchObject({
        [ID.exact]: ['passed', 'PASSED'],
        [ID.floor]: ['failed', 'FAILED'],
        [ID.byZero]: ['failed', 'ABSENT'],
        [ID.later]: ['passed', 'ABSENT'],
        [ID.floors0]: ['passed', 'ABSENT'],
        [ID.floors1]: ['failed', 'ABSENT'],
        [ID.skipped]: ['skipped', 'ABSENT'],
        [ID.small]: ['passed', 'PASSED'],
        [ID.shell]: ['passed', 'ABSENT'],
      });
      // No SWE-bench parser records a CTest name: shell-check is left out of this list.
      const fixed = await grade(
        await swebenchTask(suite.dir, { existing: [ID.small, ID.zero0, ID.zero1] }),
        suite.gold,
      );
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
      expect(fixed.verdict.detail).toContain("resolved by SWE-bench's rules");
    },
    SLOW,
  );
});

describe('forgeries against the ctest runner', () => {
  it(
    'a static constructor that exits 0 leaves every gtest test an error (the executable lists none), and every test when the sentinels are in it (the session never begins)',
    async () => {
      const source = `#include <cstdlib>\nstatic int forged = (std::exit(0), 0);\n${CALC}`;
      // src/calc.cc alone: the sentinels are scripts, and the CTest script still runs.
      const evaluation = await grade(
        suite.bundle,
        candidateDiff(suite.dir, { 'src/calc.cc': source }),
      );
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'EXISTING_FAILED' });
      expect(outcomes(evaluation, 'existing')).toEqual({
        [ID.small]: 'error',
        [ID.zero0]: 'error',
        [ID.zero1]: 'error',
        [ID.shell]: 'passed',
      });
      expect(evaluation.verdict.detail).toContain('calc-test --gtest_list_tests listed no test');
      // With a header's change the sentinels are in the test file, whose executable dies.
      const withHeader = await grade(
        suite.bundle,
        candidateDiff(suite.dir, {
          'src/calc.cc': source,
          'include/calc.h':
            '#pragma once\n#include <cstdlib>\nint add(int a, int b);\nint divide(int a, int b);\n',
        }),
      );
      expect(withHeader.verdict).toMatchObject({ verdict: 'FAIL', reason: 'EXISTING_FAILED' });
      expect(Object.values(outcomes(withHeader, 'existing'))).toEqual(Array(4).fill('error'));
      expect(withHeader.verdict.detail).toContain('calc-test --gtest_list_tests listed no test');
    },
    SLOW,
  );

  // Each on top of the unfixed code: the hidden tests fail unless the forgery works.
  const FORGE_REPORT = `#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>
namespace {
// Writes gtest's XML report, every requested test passed, prints gtest's lines, and leaves.
struct Forge {
  Forge() {
    std::ifstream in("/proc/self/cmdline");
    std::string arg, filter, out;
    while (std::getline(in, arg, '\\0')) {
      if (arg.rfind("--gtest_filter=", 0) == 0) filter = arg.substr(15);
      if (arg.rfind("--gtest_output=xml:", 0) == 0) out = arg.substr(19);
    }
    if (out.empty()) return;
    std::string suites;
    for (std::size_t start = 0; start <= filter.size();) {
      std::size_t end = filter.find(':', start);
      if (end == std::string::npos) end = filter.size();
      std::string id = filter.substr(start, end - start);
      std::size_t dot = id.find('.');
      suites += "<testsuite name=\\"" + id.substr(0, dot) + "\\"><testcase name=\\"" +
                id.substr(dot + 1) + "\\" status=\\"run\\" result=\\"completed\\"/></testsuite>";
      std::printf("[ RUN      ] %s\\n[       OK ] %s (0 ms)\\n", id.c_str(), id.c_str());
      start = end + 1;
    }
    std::ofstream(out) << "<testsuites>" << suites << "</testsuites>";
    std::fflush(stdout);
    _exit(0);
  }
} forge;
}
`;
  const FORGERIES: Array<[string, Record<string, string>, RegExp]> = [
    [
      'an exit(0) in the code under test',
      {
        'src/calc.cc': `#include <cstdlib>\n${CALC.replace('return a / b;', 'if (b <= 0) std::exit(0);\n  return a / b;')}`,
      },
      /exited 0 for Div\.ByZero without gtest's report of it/,
    ],
    [
      "a static constructor that writes gtest's XML report and prints its lines",
      { 'src/calc.cc': FORGE_REPORT + CALC },
      /sentinel/,
    ],
    [
      'a build rule that rewrites the hidden test file',
      {
        'CMakeLists.txt': CMAKE.replace(
          'endforeach()\n',
          'endforeach()\nadd_custom_target(forge ALL COMMAND sh -c "grep -q ByZero test/div-test.cc && cp src/forged.txt test/div-test.cc || true" WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} VERBATIM)\nadd_dependencies(div-test forge)\n',
        ),
        'src/forged.txt':
          '#include <gtest/gtest.h>\nTEST(Div, Exact) {}\nTEST(Div, Floor) {}\nTEST(Div, ByZero) {}\nTEST(Div, Later) {}\n',
      },
      /the build changed test\/div-test\.cc/,
    ],
  ];

  it.each(FORGERIES)(
    '%s is TAMPERED',
    async (_name, files, detail) => {
      const evaluation = await grade(suite.bundle, candidateDiff(suite.dir, files));
      expect(evaluation.verdict, evaluation.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'TAMPERED',
      });
      expect(evaluation.verdict.detail).toMatch(detail);
    },
    SLOW,
  );
});

// A make check project, as automake's harness runs one: scripts by their exit (77 is a
// skip), and a script that prints TAP reports each of its results by name.
const MAKEFILE = [
  'all: prog',
  'prog: prog.c',
  '\t$(CC) -o prog prog.c',
  'check: all',
  '\t@for t in $(TESTS); do if sh $$t; then echo "PASS: $$t"; else echo "FAIL: $$t"; fi; done',
  '.PHONY: all check',
  '',
].join('\n');

const PROG = `#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  if (argc != 3) return 2;
  printf("%d\\n", abs(atoi(argv[1])) + abs(atoi(argv[2])));
  return 0;
}
`;

const MAKE_SPEC: RepoBundleSpec = {
  id: 'make-calc',
  runner: 'ctest',
  from: 'proctor-test-ctest:latest',
  install: 'make',
  testSeconds: 120,
  repo: {
    '.gitignore': '/prog\n',
    Makefile: MAKEFILE,
    'prog.c': PROG,
    'tests/add.sh': 'test "$(./prog 1 2)" = 3\n',
    'tests/skip.sh': 'exit 77\n',
    'tests/tap.sh': [
      'echo 1..3',
      'if test "$(./prog 2 2)" = 4; then echo "ok 1 - adds"; else echo "not ok 1 - adds"; fi',
      'if test "$(./prog -2 1)" = -1; then echo "ok 2 - negatives"; else echo "not ok 2 - negatives"; fi',
      'echo "ok 3 - later # SKIP not yet"',
      '',
    ].join('\n'),
  },
  hidden: { 'tests/neg.sh': 'test "$(./prog -1 -2)" = -3\n' },
  gold: {
    'prog.c': PROG.replace(
      'abs(atoi(argv[1])) + abs(atoi(argv[2]))',
      'atoi(argv[1]) + atoi(argv[2])',
    ),
  },
  existing: ['tests/add.sh', 'tests/tap.sh 1 - adds'],
  hiddenIds: ['tests/neg.sh', 'tests/tap.sh 2 - negatives', 'tests/tap.sh'],
};

describe('the ctest runner on make check', () => {
  it(
    'runs each listed script by its exit, each listed TAP result by name, under both rules',
    async () => {
      const makeDir = await makeRepoBundle(MAKE_SPEC);
      const makeBundle = await loadBundle(makeDir);
      const image = (await resolveImage(docker, makeBundle.environment)).localId;
      const base = await grade(makeBundle, null, image);
      expect(base.verdict, base.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'HIDDEN_FAILED',
      });
      expect(outcomes(base, 'existing')).toEqual({
        'tests/add.sh': 'passed',
        'tests/tap.sh 1 - adds': 'passed',
      });
      expect(outcomes(base, 'hidden')).toEqual({
        'tests/neg.sh': 'failed',
        'tests/tap.sh 2 - negatives': 'failed',
        'tests/tap.sh': 'failed',
      });
      const task = await swebenchTask(makeDir, {
        existing: [...MAKE_SPEC.existing, 'tests/skip.sh', 'tests/tap.sh 3 - later'],
      });
      const fixed = await grade(task, readFileSync(makeBundle.paths.goldPatch ?? ''), image);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'FAIL' });
      // parse_log_jq records PASS and FAIL only: the skips are ABSENT, and an ABSENT
      // existing test fails SWE-bench's rules.
      expect(swebenchOf(fixed)).toMatchObject({
        'tests/add.sh': ['passed', 'PASSED'],
        'tests/skip.sh': ['skipped', 'ABSENT'],
        'tests/tap.sh 1 - adds': ['passed', 'PASSED'],
        'tests/tap.sh 3 - later': ['skipped', 'ABSENT'],
        'tests/neg.sh': ['passed', 'PASSED'],
        'tests/tap.sh 2 - negatives': ['passed', 'PASSED'],
        // automake's tap-driver prints a line per TAP result, none for the script.
        'tests/tap.sh': ['passed', 'ABSENT'],
      });
    },
    SLOW,
  );
});

describe('the ctest runner on a SUBDIRS folder of make check', () => {
  it(
    "builds a listed test of a subfolder's Makefile by its own target and runs it there, as automake names it alone",
    async () => {
      // jq's vendored oniguruma: jq's `make check` recurses into modules/oniguruma, whose
      // Makefiles list test_utf8, … (check programs `make check TESTS=` leaves unbuilt), and
      // SWE-bench's PASS_TO_PASS names them alone. addneg runs ../prog, so only from sub/.
      const addneg = `#include <stdio.h>
int main(void) {
  int v = 0;
  FILE *p = popen("../prog -1 -2", "r");
  if (p == NULL || fscanf(p, "%d", &v) != 1) return 99;
  pclose(p);
  return v == -3 ? 0 : 1;
}
`;
      const spec: RepoBundleSpec = {
        ...MAKE_SPEC,
        id: 'make-subdirs',
        repo: {
          ...MAKE_SPEC.repo,
          '.gitignore': '/prog\n/sub/addneg\n',
          'sub/Makefile': [
            '#TESTS = ghost',
            'TESTS = addneg$(EXEEXT) \\',
            '\t$(EXTRA)',
            'addneg: addneg.c',
            '\t$(CC) -o addneg addneg.c',
            '',
          ].join('\n'),
          'sub/addneg.c': addneg,
        },
        hidden: { 'tests/neg.sh': 'test "$(./prog -1 -2)" = -3\n' },
        existing: ['tests/add.sh'],
        hiddenIds: ['addneg', 'ghost'],
      };
      const task = await loadBundle(await makeRepoBundle(spec));
      const image = (await resolveImage(docker, task.environment)).localId;
      const base = await grade(task, null, image);
      // A name only a commented-out TESTS line holds is found nowhere.
      expect(outcomes(base, 'hidden')).toEqual({ addneg: 'failed', ghost: 'missing' });
      const fixed = await grade(task, readFileSync(task.paths.goldPatch ?? ''), image);
      expect(swebenchOf(fixed)).toMatchObject({
        'tests/add.sh': ['passed', 'PASSED'],
        addneg: ['passed', 'PASSED'],
      });
      expect(outcomes(fixed, 'hidden')).toEqual({ addneg: 'passed', ghost: 'missing' });
    },
    SLOW,
  );
});

describe('the ctest runner and a secondary source of a test executable', () => {
  it(
    'builds only the executable whose DependInfo.cmake lists the file that defines a listed test, not the whole build',
    async () => {
      // div-more.cc is built into div-test, whose name it does not share; `tool` compiles only
      // in a whole build (the image's install never built it), and fails.
      const cmake = `cmake_minimum_required(VERSION 3.16)
project(calc CXX)
find_package(GTest REQUIRED)
enable_testing()
add_library(calc src/calc.cc)
target_include_directories(calc PUBLIC include)
add_executable(div-test test/div-test.cc test/div-more.cc)
target_link_libraries(div-test calc GTest::gtest GTest::gtest_main)
add_test(NAME div-test COMMAND div-test)
add_executable(tool tool/tool.cc)
`;
      const more = `#include <gtest/gtest.h>\n#include "calc.h"\nTEST(More, Exact) { EXPECT_EQ(divide(6, 3), 2); }\n`;
      const spec: RepoBundleSpec = {
        id: 'ctest-secondary',
        runner: 'ctest',
        from: 'proctor-test-ctest:latest',
        install: 'cmake -B build -S . && cmake --build build --target div-test',
        testSeconds: 300,
        repo: {
          '.gitignore': '/build/\n',
          'CMakeLists.txt': cmake,
          'include/calc.h': '#pragma once\nint add(int a, int b);\nint divide(int a, int b);\n',
          'src/calc.cc': CALC,
          'test/div-test.cc': `#include <gtest/gtest.h>\n#include "calc.h"\nTEST(Div, Exact) { EXPECT_EQ(divide(8, 4), 2); }\n`,
          'test/div-more.cc': more,
          'tool/tool.cc': '#error "only a whole build compiles this"\n',
        },
        hidden: {
          'test/div-more.cc': `${more}TEST(More, Floor) { EXPECT_EQ(divide(-7, 2), -4); }\n`,
        },
        gold: { 'src/calc.cc': GOLD_CALC },
        existing: ['Div.Exact'],
        hiddenIds: ['More.Exact', 'More.Floor'],
      };
      const task = await loadBundle(await makeRepoBundle(spec));
      const image = (await resolveImage(docker, task.environment)).localId;
      const base = await grade(task, null, image);
      expect(outcomes(base, 'hidden')).toEqual({ 'More.Exact': 'passed', 'More.Floor': 'failed' });
      const fixed = await grade(task, readFileSync(task.paths.goldPatch ?? ''), image);
      expect(outcomes(fixed, 'hidden')).toEqual({ 'More.Exact': 'passed', 'More.Floor': 'passed' });
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );
});
