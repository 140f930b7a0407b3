// The built-in junit runner in real grades, through the oracle (evaluate) on Debian's JDK 17
// and JUnit 5.9 (the Console Standalone jar of Debian's junit5): JUnit 5 and JUnit 4 tests that
// pass, fail, are @Disabled or @Ignore'd, whose class setup throws, a parametrized method, a
// whole class, and IDs in the three forms SWE-bench Multilingual writes (Maven's
// `Class#method`, Gradle's `Class > method`, ant's `method(Class)`); a candidate that breaks
// the build (every listed test an error, javac's lines as the cause), under Proctor's rules
// and SWE-bench's; and forgeries (a Surefire XML report and an exit, lines written into the
// launcher's channel, a forged end) that must not pass. The project has a pom.xml: Maven
// cannot build it offline in this image (no plugins in ~/.m2), so the runner falls back to
// javac, as it must.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadBundle } from '../../src/oracle/bundle.js';
import { resolveImage } from '../../src/sandbox/index.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { discoverInImage } from '../helpers/discover.js';
import {
  expectAllErrors,
  expectBaseline,
  expectNotPassed,
  gradeIn,
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
import { CALC, GOLD_CALC } from '../helpers/junit-calc.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-junit');
const SLOW = 300_000;

const POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>calc</artifactId>
  <version>1.0</version>
  <properties><maven.compiler.release>17</maven.compiler.release></properties>
  <dependencies>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>5.9.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
</project>
`;

const CALC_TEST = `package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

public class CalcTest {
    @Test
    public void testAdd() { assertEquals(3, Calc.add(1, 2)); }

    @Test
    public void testWrong() { assertEquals(4, Calc.add(1, 2)); }

    @Disabled("needs a network")
    @Test
    public void testLater() { }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    public void testParam(int n) { assertEquals(n + 1, Calc.add(n, 1)); }
}
`;

const OLD_TEST = `package calc;

import static org.junit.Assert.assertEquals;

import org.junit.Ignore;
import org.junit.Test;

public class OldTest {
    @Test
    public void testOld() { assertEquals(3, Calc.add(1, 2)); }

    @Ignore
    @Test
    public void testIgnored() { }
}
`;

// JUnit 4's Parameterized runner: Gradle and ant name each invocation (`testN[0]`).
const PARAM_OLD_TEST = `package calc;

import static org.junit.Assert.assertEquals;

import java.util.Arrays;
import java.util.Collection;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;

@RunWith(Parameterized.class)
public class ParamOldTest {
    @Parameters
    public static Collection<Object[]> data() { return Arrays.asList(new Object[][] {{1}, {2}}); }

    private final int n;

    public ParamOldTest(int n) { this.n = n; }

    @Test
    public void testN() { assertEquals(1, Calc.add(n, 0)); }
}
`;

const BROKEN_TEST = `package calc;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

public class BrokenTest {
    @BeforeAll
    static void connect() { throw new IllegalStateException("no database"); }

    @Test
    public void testNeedsDb() { }
}
`;

// The hidden tests: a new file; before the fix testFloor fails and testByZero gets an
// ArithmeticException where it wants an IllegalArgumentException.
const DIV_TEST = `package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

public class DivTest {
    @Test
    public void testExact() { assertEquals(2, Calc.div(6, 3)); }

    @Test
    public void testFloor() { assertEquals(-4, Calc.div(-7, 2)); }

    @Test
    public void testByZero() { assertThrows(IllegalArgumentException.class, () -> Calc.div(1, 0)); }
}
`;

const ID = {
  add: 'calc.CalcTest#testAdd',
  wrong: 'calc.CalcTest#testWrong',
  later: 'calc.CalcTest#testLater',
  param: 'calc.CalcTest#testParam',
  old: 'calc.OldTest#testOld',
  ignored: 'calc.OldTest#testIgnored',
  oldClass: 'OldTest',
  broken: 'calc.BrokenTest#testNeedsDb',
  nowhere: 'calc.Nowhere#testNothing',
  gradleAdd: 'calc.CalcTest > testAdd',
  gradleLater: 'calc.CalcTest > testLater',
  antOld: 'testOld(calc.OldTest)',
  gradleParam0: 'calc.ParamOldTest > testN[0]',
  gradleParam1: 'calc.ParamOldTest > testN[1]',
  antParam0: 'testN[0](calc.ParamOldTest)',
  exact: 'calc.DivTest#testExact',
  floor: 'calc.DivTest#testFloor',
  byZero: 'calc.DivTest#testByZero',
};

const SPEC: RepoBundleSpec = {
  id: 'junit-calc',
  runner: 'junit',
  from: 'proctor-test-junit:latest',
  testSeconds: 180,
  repo: {
    'pom.xml': POM,
    'src/main/java/calc/Calc.java': CALC,
    'src/test/java/calc/CalcTest.java': CALC_TEST,
    'src/test/java/calc/OldTest.java': OLD_TEST,
    'src/test/java/calc/BrokenTest.java': BROKEN_TEST,
    'src/test/java/calc/ParamOldTest.java': PARAM_OLD_TEST,
  },
  hidden: { 'src/test/java/calc/DivTest.java': DIV_TEST },
  gold: { 'src/main/java/calc/Calc.java': GOLD_CALC },
  existing: [ID.add, ID.param, ID.old, ID.oldClass],
  hiddenIds: [ID.exact, ID.floor, ID.byZero],
};

const suite = runnerSuite(docker, SCOPE, { image: 'junit', spec: SPEC });
const { grade } = suite;

describe('the built-in junit runner', () => {
  it(
    'fails a baseline on the hidden tests, and runs JUnit 5 and 4 tests, a parametrized method and a whole class',
    async () => {
      const evaluation = await grade(suite.bundle, null);
      expectBaseline(evaluation, {
        existing: {
          [ID.add]: 'passed',
          [ID.param]: 'passed',
          [ID.old]: 'passed',
          // A class with an @Ignore'd method: its test ran and passed.
          [ID.oldClass]: 'passed',
        },
        hidden: {
          [ID.exact]: 'passed',
          [ID.floor]: 'failed',
          [ID.byZero]: 'failed',
        },
      });
    },
    SLOW,
  );

  it(
    'passes the gold patch, and reports @Disabled and @Ignore as skipped, a failure as failed, a class setup that throws as error, and a class found nowhere not at all',
    async () => {
      const fixed = await grade(suite.bundle, suite.gold);
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({
        verdict: 'PASS',
        reason: 'PASS',
      });
      expect(outcomes(fixed, 'hidden')).toEqual({
        [ID.exact]: 'passed',
        [ID.floor]: 'passed',
        [ID.byZero]: 'passed',
      });
      const task = await loadBundle(
        // The first listed test is JUnit 4's: so are the sentinels.
        withIds(suite.dir, { existing: [ID.ignored, ID.later, ID.wrong, ID.broken, ID.nowhere] }),
      );
      const evaluation = await grade(task, suite.gold);
      // Not TAMPERED: the sentinels (JUnit 4's here) reported what they must.
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'TESTS_MISSING' });
      expect(outcomes(evaluation, 'existing')).toEqual({
        [ID.later]: 'skipped',
        [ID.ignored]: 'skipped',
        [ID.wrong]: 'failed',
        [ID.broken]: 'error',
        [ID.nowhere]: 'missing',
      });
    },
    SLOW,
  );

  it(
    "makes every listed test an error when the candidate's code does not compile, with javac's lines as the cause",
    async () => {
      const broken = candidateDiff(suite.dir, {
        'src/main/java/calc/Calc.java': GOLD_CALC.replace(
          'return Math.floorDiv(a, b);',
          'return "q";',
        ),
      });
      const evaluation = await grade(suite.bundle, broken);
      expectAllErrors(evaluation, SPEC);
      expect(evaluation.verdict.detail).toMatch(/Calc\.java:\d+: error: incompatible types/);
    },
    SLOW,
  );
});

describe("the junit runner under derive's discovery", () => {
  it(
    'runs every test of the classes of its paths and reports each as Class#method, by hand in the image',
    async () => {
      expect(
        await discoverInImage(suite.imageId, suite.bundle.paths.runner, [
          'src/test/java/calc/OldTest.java',
        ]),
      ).toEqual({
        [ID.old]: 'passed',
        [ID.ignored]: 'skipped',
      });
    },
    SLOW,
  );
});

describe('the junit runner under SWE-bench rules', () => {
  it(
    "records what SWE-bench's Maven, Gradle and ant parsers would: a skip is PASSED for Maven, ABSENT for Gradle",
    async () => {
      const task = await swebenchTask(suite.dir, {
        existing: [
          ...SPEC.existing,
          ID.gradleAdd,
          ID.antOld,
          ID.ignored,
          ID.gradleLater,
          ID.gradleParam0,
          ID.gradleParam1,
          ID.antParam0,
        ],
      });
      const base = await grade(task, null);
      // The Gradle skip is ABSENT, which PASS_TO_PASS does not allow.
      expect(base.verdict, base.verdict.detail).toMatchObject({
        verdict: 'FAIL',
        reason: 'EXISTING_FAILED',
      });
      expect(base.verdict.detail).toContain(`${ID.gradleLater} (ABSENT)`);
      expect(swebenchOf(base)).toMatchObject({
        [ID.exact]: ['passed', 'PASSED'],
        [ID.floor]: ['failed', 'FAILED'],
        [ID.byZero]: ['failed', 'FAILED'],
        [ID.param]: ['passed', 'PASSED'],
        [ID.oldClass]: ['passed', 'PASSED'],
        [ID.gradleAdd]: ['passed', 'PASSED'],
        [ID.antOld]: ['passed', 'PASSED'],
        [ID.ignored]: ['skipped', 'PASSED'],
        [ID.gradleLater]: ['skipped', 'ABSENT'],
        [ID.gradleParam0]: ['passed', 'PASSED'],
        [ID.gradleParam1]: ['failed', 'FAILED'],
        [ID.antParam0]: ['passed', 'PASSED'],
      });
      const fixed = await grade(await swebenchTask(suite.dir), suite.gold);
      expect(fixed.verdict).toMatchObject({ verdict: 'PASS' });
      expect(fixed.verdict.detail).toContain("resolved by SWE-bench's rules");
    },
    SLOW,
  );
});

describe('forgeries against the junit runner', () => {
  // Java that finds the launcher's channel (its first argument) in the JVM's command line.
  const CHANNEL =
    'String channel = null; for (String part : System.getProperty("sun.java.command").split(" ")) if (part.startsWith("/proc/self/fd/")) channel = part;';
  const fake = (method: string) =>
    `{\\"t\\":\\"test\\",\\"kind\\":\\"finish\\",\\"uid\\":\\"[engine:junit-jupiter]/[class:calc.DivTest]/[method:${method}()]\\",\\"cls\\":\\"calc.DivTest\\",\\"method\\":\\"${method}\\",\\"display\\":\\"${method}()\\",\\"legacy\\":\\"${method}()\\",\\"engine\\":\\"junit-jupiter\\",\\"status\\":\\"passed\\",\\"why\\":null}\\n`;
  const FAKES = ['testExact', 'testFloor', 'testByZero'].map(fake).join('');
  // Each a static initializer of Calc (it runs at the first hidden test), on the unfixed code.
  const FORGERIES: Array<[string, string, RegExp]> = [
    [
      'a Surefire XML report that says every test passed, then System.exit(0)',
      [
        'new java.io.File("target/surefire-reports").mkdirs();',
        'java.nio.file.Files.writeString(java.nio.file.Path.of("target/surefire-reports/TEST-calc.DivTest.xml"), "<testsuite name=\\"calc.DivTest\\" tests=\\"3\\" failures=\\"0\\" errors=\\"0\\"><testcase classname=\\"calc.DivTest\\" name=\\"testFloor\\"/></testsuite>");',
        'System.exit(0);',
      ].join(' '),
      // Calc's first test (the existing phase's testAdd) dies: it fails, the others are errors.
      /^(EXISTING|HIDDEN)_FAILED: /,
    ],
    [
      "lines that imitate the launcher's, written into its channel",
      `${CHANNEL} java.nio.file.Files.writeString(java.nio.file.Path.of(channel), "${FAKES}");`,
      // The existing phase (DivTest does not run): more outcomes than the launcher sent; the
      // hidden phase: the real ones arrive after the forged ones.
      /^TAMPERED: .*(reported twice|sent \d+ outcomes; \d+ arrived)/,
    ],
    [
      "lines that imitate the launcher's, its end, then Runtime.halt(0)",
      `${CHANNEL} java.nio.file.Files.writeString(java.nio.file.Path.of(channel), "${FAKES}{\\"t\\":\\"done\\",\\"sent\\":6,\\"word\\":\\"x\\"}\\n"); Runtime.getRuntime().halt(0);`,
      // Under SWE-bench's rules the one list is sorted, so Calc is first loaded by an existing
      // test, before any DivTest runs: the JVM's end is then what gives the forgery away.
      /^(TAMPERED: .*without the runner's word|EXISTING_FAILED: .*without the launcher's end)/,
    ],
  ];

  it.each(FORGERIES)(
    '%s does not pass',
    async (_name, body, detail) => {
      const source = CALC.replace(
        'public class Calc {\n',
        `public class Calc {\n    static {\n        try { ${body} } catch (Exception e) { throw new RuntimeException(e); }\n    }\n\n`,
      );
      for (const task of [suite.bundle, await swebenchTask(suite.dir)]) {
        const evaluation = await grade(
          task,
          candidateDiff(suite.dir, { 'src/main/java/calc/Calc.java': source }),
        );
        expectNotPassed(evaluation, detail);
      }
    },
    SLOW,
  );
});

describe("the junit runner's javac build of a project it cannot build offline", () => {
  it(
    'leaves out module-info.java, makes src/main/java-templates as Maven would, and never starts a ./gradlew that would download',
    async () => {
      const version = `package calc;

public final class BuildConfig {
    public static final String VERSION = "\${project.version}";
    public static final String NAME = "\${calc.name}";
    public static final String UNKNOWN = "\${no.such.property}";
}
`;
      // gradlew marks that it ran (offline, a real one would try its download first, slowly).
      const gradlew = '#!/bin/sh\ntouch "$(dirname "$0")/gradlew-ran"\nexit 1\n';
      const test = `package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

public class OfflineTest {
    @Test
    public void testVersion() {
        assertEquals("2.5.1", BuildConfig.VERSION);
        assertEquals("calculator", BuildConfig.NAME);
        assertEquals("$" + "{no.such.property}", BuildConfig.UNKNOWN);
    }

    @Test
    public void testNoWrapper() { assertFalse(new java.io.File("gradlew-ran").exists()); }

    @Test
    public void testDiv() { assertEquals(-4, Calc.div(-7, 2)); }
}
`;
      const spec: RepoBundleSpec = {
        id: 'junit-offline',
        runner: 'junit',
        from: 'proctor-test-junit:latest',
        testSeconds: 180,
        repo: {
          'pom.xml': POM.replace('<version>1.0</version>', '<version>2.5.1</version>').replace(
            '<properties>',
            '<properties><calc.name>calculator</calc.name>',
          ),
          'build.gradle': "plugins { id 'java' }\n",
          gradlew,
          'gradle/wrapper/gradle-wrapper.properties':
            'distributionUrl=https\\://services.gradle.org/distributions/gradle-8.5-bin.zip\n',
          'src/main/java/module-info.java': 'module calc {\n    exports calc;\n}\n',
          'src/main/java/calc/Calc.java': CALC,
          'src/main/java-templates/calc/BuildConfig.java': version,
        },
        executable: ['gradlew'],
        hidden: { 'src/test/java/calc/OfflineTest.java': test },
        gold: { 'src/main/java/calc/Calc.java': GOLD_CALC },
        existing: [],
        hiddenIds: [
          'calc.OfflineTest#testVersion',
          'calc.OfflineTest#testNoWrapper',
          'calc.OfflineTest#testDiv',
        ],
      };
      const task = await loadBundle(await makeRepoBundle(spec));
      const image = (await resolveImage(docker, task.environment)).localId;
      const fixed = await gradeIn(
        docker,
        SCOPE,
        image,
        task,
        readFileSync(task.paths.goldPatch ?? ''),
      );
      expect(outcomes(fixed, 'hidden')).toEqual({
        'calc.OfflineTest#testVersion': 'passed',
        'calc.OfflineTest#testNoWrapper': 'passed',
        'calc.OfflineTest#testDiv': 'passed',
      });
      expect(fixed.verdict, fixed.verdict.detail).toMatchObject({ verdict: 'PASS' });
    },
    SLOW,
  );
});
