// Canaries through the built-in junit runner and the real oracle (src/runners/core/canary.py with
// the junit runner's canary_mutate_file, canary_targets, canary_taken and canary_id), on Debian's
// JDK 17 and JUnit 5.9: the trusted step places after each hidden test method a copy of it with
// a check made to fail, in its class: where a two-argument assertEquals or an AssertJ isEqualTo
// compares a literal whole, the call kept and that literal changed (`3` to `2`), JUnit 3's
// TestCase tests too; else the check turned over (JUnit's assertEquals to assertNotEquals,
// written qualified; an AssertJ chain's isTrue to isFalse). The copies build and run as listed
// tests. A candidate that makes the repository's own copy of AssertJ lenient (which the
// sentinels, on JUnit's Assertions from the JUnit jar, do not use) passes every hidden test
// and holds every sentinel, and now ends TAMPERED, VACUOUS_TEST; so does one whose value has
// an always-true equals, compared first (its turned-over copy failed); the gold patch stays PASS
// with every mutant failing; a check in an assertDoesNotThrow's block gets a copy too; a test
// whose only check is assertThrows is named uncovered. The sentinels go into the hidden test
// classes (JUnit 3's too), and a class listed whole gets copies.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerScope, testDocker } from '../helpers/docker.js';
import {
  expectGoldWithCanaries,
  expectHonestFail,
  expectInFileSentinelCatch,
  expectVacuousTest,
} from '../helpers/grade.js';
import { loadBundle } from '../../src/oracle/bundle.js';
import { candidateDiff, withIds, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';
import { CALC, GOLD_CALC } from '../helpers/junit-calc.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-junit-canary');
const SLOW = 300_000;

// Maven cannot build it offline in this image (no plugins in ~/.m2): javac does, and the pom
// says which Jupiter the tests are written for (5.9: assertNotEquals has every overload).
const POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>calc</artifactId>
  <version>1.0</version>
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

// The gold patch here also adds half(a), rounded down (OldDivTest#testValueFirst).
const HALF = '\n\n    public static int half(int a) { return Math.floorDiv(a, 2); }\n}\n';
const GOLD = GOLD_CALC.replace('\n}\n', HALF);

// Division by zero an error, no floor division: the hidden floor checks fail honestly.
const ZERO_ONLY = GOLD.replace('Math.floorDiv(a, b)', 'a / b');

// A forgery of the operator-overloading kind: half's value an object whose equals always holds,
// which the hidden testValueFirst compares first (assertEquals calls its equals). Its copy turned
// over (assertNotEquals) fails as honest code's would; its copy with the literal changed passes.
const ALWAYS_EQUAL = GOLD.replace(
  'public static int half(int a) { return Math.floorDiv(a, 2); }',
  `public static Object half(int a) {
        return new Object() {
            @Override public boolean equals(Object other) { return true; }
            @Override public int hashCode() { return 0; }
        };
    }`,
);

// The part of AssertJ the tests use, as AssertJ has it: a copy in the repository, as a
// repository may vendor one.
const ASSERTJ = `package org.assertj.core.api;

public class Assertions {
    public static ObjectAssert assertThat(Object actual) { return new ObjectAssert(actual); }
}
`;
const OBJECT_ASSERT = `package org.assertj.core.api;

import java.util.Objects;

public class ObjectAssert {
    private final Object actual;

    ObjectAssert(Object actual) { this.actual = actual; }

    private void check(boolean holds, String message) {
        if (!holds) throw new AssertionError(message);
    }

    public ObjectAssert isEqualTo(Object expected) {
        check(Objects.equals(actual, expected), "expected " + expected + " but was " + actual);
        return this;
    }

    public ObjectAssert isNotEqualTo(Object other) {
        check(!Objects.equals(actual, other), "expected not " + other);
        return this;
    }

    public ObjectAssert isTrue() { return isEqualTo(Boolean.TRUE); }

    public ObjectAssert isFalse() { return isEqualTo(Boolean.FALSE); }
}
`;
// The forgery's copy: every assertion holds.
const LENIENT = OBJECT_ASSERT.replace('if (!holds) throw', 'if (holds && !holds) throw');

const CALC_TEST = `package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

public class CalcTest {
    @Test
    public void testAdd() { assertEquals(3, Calc.add(1, 2)); }
}
`;

const OLD_TEST = `package calc;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class OldTest {
    @Test
    public void testOld() { assertEquals(3, Calc.add(1, 2)); }
}
`;

const DIV_TEST = `package calc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

public class DivTest {
    /** Exact: { "braces" } in a comment. */
    @Test
    public void testExact() { assertEquals(2, Calc.div(6, 3)); }

    @Test
    public void testFloor() {
        assertThat(Calc.div(-7, 2)).isEqualTo(-4);
    }

    @Test
    public void testFloorOfNine() {
        int q = Calc.div(-9, 2);
        assertThat(q).isEqualTo(-5);
        assertThat(q < 0).isTrue();
    }

    @Test
    public void testByZero() { assertThrows(IllegalArgumentException.class, () -> Calc.div(1, 0)); }
}
`;

// Hidden JUnit 4 tests: testHalf (that truncating division passes too), and testValueFirst,
// the candidate's value first. Their copies change JUnit 4's assertEquals' literal.
const OLD_DIV_TEST = `package calc;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class OldDivTest {
    @Test
    public void testHalf() { assertEquals(3, Calc.div(7, 2)); }

    @Test
    public void testValueFirst() { assertEquals(Calc.half(-7), -4); }
}
`;

// A forgery aimed at the tests of git-tracked classes (the hidden ones, committed in the
// grade's work tree): a Jupiter extension, autodetected through a junit-platform.properties
// on the classpath, that swallows what their test methods throw. The sentinels' classes of
// their own (untracked) ran as they must; a must-fail sentinel in the hidden test class does not.
const LENIENT_EXTENSION = `package calc;

import java.lang.reflect.Method;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;

public class Lenient implements InvocationInterceptor {
    @Override
    public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> context,
                                    ExtensionContext extension) throws Throwable {
        String path = "src/test/java/" + context.getTargetClass().getName().replace('.', '/') + ".java";
        Process git = new ProcessBuilder("git", "ls-files", "--error-unmatch", path).redirectErrorStream(true).start();
        git.getInputStream().readAllBytes();
        if (git.waitFor() != 0) {
            invocation.proceed();
            return;
        }
        try {
            invocation.proceed();
        } catch (Throwable swallowed) {
            // the tracked tests pass
        }
    }
}
`;

// A hidden JUnit 3 test (a TestCase's testX(), run by its name): its copy, named testThird and a
// word with no annotation, changes the literal of TestCase's assertEquals; the sentinels go
// into its class as methods JUnit 3 finds as it finds the test.
const LEGACY_DIV_TEST = `package calc;

import junit.framework.TestCase;

public class LegacyDivTest extends TestCase {
    public void testThird() {
        assertEquals(3, Calc.div(9, 3));
    }
}
`;

// A hidden class whose only test is in a class nested in it (@Nested, as javaparser's NodeTest
// has its hidden tests): listed whole, the copy and the sentinels go into the nested class.
const NESTED_DIV_TEST = `package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

public class NestedDivTest {
    @Nested
    class Quarters {
        @Test
        void testQuarter() {
            assertEquals(2, Calc.div(8, 4));
        }
    }
}
`;

// The part of Google Truth gson's tests use, as Truth has it (isEqualTo compares with equals),
// and a hidden JUnit 4 test that checks half through it.
const TRUTH = `package com.google.common.truth;

public final class Truth {
    public static Subject assertThat(Object actual) { return new Subject(actual); }
}
`;
const SUBJECT = `package com.google.common.truth;

import java.util.Objects;

public class Subject {
    private final Object actual;

    Subject(Object actual) { this.actual = actual; }

    private void check(boolean holds, String message) {
        if (!holds) throw new AssertionError(message);
    }

    public void isEqualTo(Object expected) {
        check(Objects.equals(actual, expected), "expected " + expected + " but was " + actual);
    }

    public void isNotEqualTo(Object other) { check(!Objects.equals(actual, other), "expected not " + other); }
}
`;
const TRUTH_TEST = `package calc;

import static com.google.common.truth.Truth.assertThat;

import org.junit.Test;

public class TruthDivTest {
    @Test
    public void testHalfTruth() {
        assertThat(Calc.half(-7)).isEqualTo(-4);
    }
}
`;
const TRUTH_ID = 'calc.TruthDivTest#testHalfTruth';

// A JUnit 5 check in the block of an assertDoesNotThrow: the block's last check is the test's.
const QUIET_TEST = `package calc;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

public class QuietDivTest {
    @Test
    public void testQuietHalf() {
        assertDoesNotThrow(() -> {
            assertEquals(Calc.half(-7), -4);
        }, "half of -7");
    }
}
`;
const QUIET_ID = 'calc.QuietDivTest#testQuietHalf';

const ID = {
  add: 'calc.CalcTest#testAdd',
  old: 'calc.OldTest#testOld',
  exact: 'calc.DivTest#testExact',
  floor: 'calc.DivTest#testFloor',
  nine: 'calc.DivTest#testFloorOfNine',
  byZero: 'calc.DivTest#testByZero',
  half: 'calc.OldDivTest#testHalf',
  valueFirst: 'calc.OldDivTest#testValueFirst',
  third: 'calc.LegacyDivTest#testThird',
};
const HIDDEN_IDS = [ID.exact, ID.floor, ID.nine, ID.byZero, ID.half, ID.valueFirst, ID.third];
const EXISTING = [ID.add, ID.old];

const SPEC: RepoBundleSpec = {
  id: 'junit-canary',
  runner: 'junit',
  from: 'proctor-test-junit:latest',
  testSeconds: 180,
  repo: {
    'pom.xml': POM,
    'src/main/java/calc/Calc.java': CALC,
    'src/main/java/org/assertj/core/api/Assertions.java': ASSERTJ,
    'src/main/java/org/assertj/core/api/ObjectAssert.java': OBJECT_ASSERT,
    'src/test/java/calc/CalcTest.java': CALC_TEST,
    'src/test/java/calc/OldTest.java': OLD_TEST,
  },
  hidden: {
    'src/test/java/calc/DivTest.java': DIV_TEST,
    'src/test/java/calc/OldDivTest.java': OLD_DIV_TEST,
    'src/test/java/calc/LegacyDivTest.java': LEGACY_DIV_TEST,
    // Listed by the test of classes listed whole alone.
    'src/test/java/calc/NestedDivTest.java': NESTED_DIV_TEST,
  },
  gold: { 'src/main/java/calc/Calc.java': GOLD },
  existing: EXISTING,
  hiddenIds: HIDDEN_IDS,
};

const suite = runnerSuite(docker, SCOPE, { image: 'junit', spec: SPEC });

describe('canaries through the built-in junit runner', () => {
  it(
    'passes the gold patch with a failing copy of each covered hidden test, in its class, JUnit 3, 4 and 5 and AssertJ',
    async () => {
      const evaluation = await suite.grade(suite.bundle, suite.gold);
      // The existing tests (both sampled for canaries, and reported in the hidden run too) get
      // no copy: one would pass where its test fails honestly, which that phase does not excuse.
      const covered = [ID.exact, ID.floor, ID.nine, ID.half, ID.valueFirst, ID.third];
      const canaries = expectGoldWithCanaries(evaluation, covered, [...HIDDEN_IDS, ...EXISTING]);
      const byTest = new Map(canaries.mutants.map((m) => [m.test, m]));
      for (const m of canaries.mutants) {
        expect(m.status, `${m.id}: ${m.mutation}`).toBe('failed');
        // The copy's name is the method's with a word, in its class.
        expect(
          m.id.startsWith(`${m.test}`) && /^[A-Z][a-z]+$/.test(m.id.slice(m.test.length)),
          m.id,
        ).toBe(true);
      }
      // A literal compared whole is changed (JUnit 3's, 4's and 5's assertEquals of two
      // arguments, AssertJ's isEqualTo), the candidate's value first too; else the check turned.
      expect(byTest.get(ID.exact)?.mutation).toBe("assertEquals's literal 2 changed to 1");
      expect(byTest.get(ID.half)?.mutation).toBe("assertEquals's literal 3 changed to 2");
      expect(byTest.get(ID.valueFirst)?.mutation).toBe("assertEquals's literal -4 changed to -3");
      expect(byTest.get(ID.third)?.mutation).toBe("assertEquals's literal 3 changed to 2");
      expect(byTest.get(ID.floor)?.mutation).toBe(
        "assertThat(…).isEqualTo's literal -4 changed to -3",
      );
      expect(byTest.get(ID.nine)?.mutation).toMatch(
        /^assertThat\(…\)\.(isEqualTo's literal -5 changed to -4|isTrue turned to \.isFalse)$/,
      );
      const existing =
        'an existing test: its copy would pass where the test fails honestly at that check';
      expect([...canaries.uncovered].sort((a, b) => a.test.localeCompare(b.test))).toEqual([
        { test: ID.add, why: existing },
        {
          test: ID.byZero,
          why: "no check the mutator turns over (JUnit's assertEquals, assertTrue, assertNull, assertSame, an AssertJ or Truth assertThat chain) that always runs, with only checks after it",
        },
        { test: ID.old, why: existing },
      ]);
      // The sentinels, a must-pass and a must-fail method in each hidden test class, before a
      // hidden test method (expectGoldWithCanaries saw each report what it must).
      expect(canaries.sentinelsWhy).toBeNull();
      // A pair in each hidden test file (DivTest's, OldDivTest's and, without @Test, named as
      // JUnit 3 finds its tests, LegacyDivTest's).
      expect(canaries.sentinels.map((s) => s.expect).sort()).toEqual([
        'failed',
        'failed',
        'failed',
        'passed',
        'passed',
        'passed',
      ]);
      expect(canaries.sentinels.filter((s) => s.test === ID.third)).toHaveLength(2);
      for (const s of canaries.sentinels) {
        expect(HIDDEN_IDS).toContain(s.test);
        expect(s.id.startsWith(s.test.replace(/#.*/, '#'))).toBe(true);
      }
      // What the canary step cost, beside the grade's other steps (the report's figures).
      console.log(`junit canaries: timings ${JSON.stringify(evaluation.timings)}`);
    },
    SLOW,
  );

  it(
    "fails the repository's AssertJ made lenient as TAMPERED, VACUOUS_TEST, the sentinels holding",
    async () => {
      const forged = candidateDiff(suite.dir, {
        'src/main/java/calc/Calc.java': ZERO_ONLY,
        'src/main/java/org/assertj/core/api/ObjectAssert.java': LENIENT,
      });
      // The sentinels, on JUnit's own Assertions (the JUnit jar comes first), do not see it;
      // without the canaries every declared hidden test passed.
      expectVacuousTest(
        await suite.grade(suite.bundle, forged),
        /^hidden phase: VACUOUS_TEST: .*calc\.DivTest#testFloor/,
        [...HIDDEN_IDS, ...EXISTING],
      );
    },
    SLOW,
  );

  it(
    'fails a value whose equals always holds, compared first, as TAMPERED, VACUOUS_TEST: the copy with the literal changed passed',
    async () => {
      // Every hidden test passes, and passed the canaries when its copy turned assertEquals over
      // (assertNotEquals calls the same equals, and fails as honest code's would).
      const forged = candidateDiff(suite.dir, { 'src/main/java/calc/Calc.java': ALWAYS_EQUAL });
      expectVacuousTest(
        await suite.grade(suite.bundle, forged),
        /^hidden phase: VACUOUS_TEST: .*calc\.OldDivTest#testValueFirst/,
        [...HIDDEN_IDS, ...EXISTING],
      );
    },
    SLOW,
  );

  it(
    "changes the literal of Google Truth's isEqualTo, as gson's tests use it, and of a check in an assertDoesNotThrow's block: the gold patch's copies fail, and a value whose equals always holds ends VACUOUS_TEST",
    async () => {
      const listed = [TRUTH_ID, QUIET_ID];
      const dir = withIds(suite.dir, { hidden: listed, existing: EXISTING });
      writeFileSync(
        join(dir, 'tests/hidden.patch'),
        candidateDiff(suite.dir, {
          'src/test/java/com/google/common/truth/Truth.java': TRUTH,
          'src/test/java/com/google/common/truth/Subject.java': SUBJECT,
          'src/test/java/calc/TruthDivTest.java': TRUTH_TEST,
          'src/test/java/calc/QuietDivTest.java': QUIET_TEST,
        }),
      );
      const task = await loadBundle(dir);
      const canaries = expectGoldWithCanaries(await suite.grade(task, suite.gold), listed, [
        ...listed,
        ...EXISTING,
      ]);
      expect(canaries.mutants.sort((a, b) => a.test.localeCompare(b.test))).toMatchObject([
        { test: QUIET_ID, mutation: "assertEquals's literal -4 changed to -3", status: 'failed' },
        {
          test: TRUTH_ID,
          mutation: "assertThat(…).isEqualTo's literal -4 changed to -3",
          status: 'failed',
        },
      ]);
      // half's value equal to everything passed the hidden tests, and their copies: without
      // the copies (before Truth's assertThat, and a check in assertDoesNotThrow's block, were
      // read as checks) this passed.
      const forged = candidateDiff(suite.dir, { 'src/main/java/calc/Calc.java': ALWAYS_EQUAL });
      const evaluation = await suite.grade(task, forged);
      expectVacuousTest(evaluation, /^hidden phase: VACUOUS_TEST: /, [...listed, ...EXISTING]);
      expect(evaluation.verdict.detail).toContain('calc.TruthDivTest#testHalfTruth');
      expect(evaluation.verdict.detail).toContain('calc.QuietDivTest#testQuietHalf');
    },
    SLOW,
  );

  it(
    'fails an extension that swallows what the tracked test classes throw as TAMPERED: the must-fail sentinel in the hidden class passed',
    async () => {
      const forged = candidateDiff(suite.dir, {
        // Truncating division still (the hidden floor checks fail, and are swallowed).
        'src/main/java/calc/Calc.java': CALC.replace('\n}\n', HALF),
        'src/main/java/calc/Lenient.java': LENIENT_EXTENSION,
        'src/main/resources/junit-platform.properties':
          'junit.jupiter.extensions.autodetection.enabled=true\n',
        'src/main/resources/META-INF/services/org.junit.jupiter.api.extension.Extension':
          'calc.Lenient\n',
      });
      expectInFileSentinelCatch(await suite.grade(suite.bundle, forged));
    },
    SLOW,
  );

  it(
    "covers a class listed whole, as SWE-bench's Java rows list them: copies of its methods and its @Nested classes' apart from the class's status, and the lenient AssertJ ends VACUOUS_TEST",
    async () => {
      const listed = ['calc.DivTest', 'calc.NestedDivTest', ID.half];
      const task = await loadBundle(withIds(suite.dir, { hidden: listed, existing: EXISTING }));
      const gold = await suite.grade(task, suite.gold);
      // Three of DivTest's four methods have a check to turn (testByZero only assertThrows),
      // and NestedDivTest's one, in its @Nested class: each copy failed, and each class, whose
      // own methods all passed, passed.
      const canaries = expectGoldWithCanaries(
        gold,
        ['calc.DivTest', 'calc.DivTest', 'calc.DivTest', 'calc.NestedDivTest', ID.half],
        [...listed, ...EXISTING],
      );
      expect(
        canaries.mutants
          .filter((m) => m.test === 'calc.DivTest')
          .map((m) => m.id.replace(/[A-Z][a-z]+$/, ''))
          .sort(),
      ).toEqual([ID.exact, ID.floor, ID.nine]);
      expect(canaries.mutants.find((m) => m.test === 'calc.NestedDivTest')?.id).toMatch(
        /^calc\.NestedDivTest\$Quarters#testQuarter[A-Z][a-z]+$/,
      );
      // The sentinels beside a nested test are methods of the nested class.
      for (const s of canaries.sentinels.filter((x) => x.test === 'calc.NestedDivTest')) {
        expect(s.id).toMatch(/^calc\.NestedDivTest\$Quarters#testQuarter[A-Z][a-z]+$/);
      }
      const forged = candidateDiff(suite.dir, {
        'src/main/java/calc/Calc.java': ZERO_ONLY,
        'src/main/java/org/assertj/core/api/ObjectAssert.java': LENIENT,
      });
      expectVacuousTest(
        await suite.grade(task, forged),
        /^hidden phase: VACUOUS_TEST: .*calc\.DivTest \(assertThat/,
        [...listed, ...EXISTING],
      );
    },
    SLOW,
  );

  it(
    'keeps an honest wrong candidate a plain FAIL: its floor checks fail, and the copies that pass are excused',
    async () => {
      const evaluation = await suite.grade(
        suite.bundle,
        candidateDiff(suite.dir, { 'src/main/java/calc/Calc.java': ZERO_ONLY }),
      );
      expectHonestFail(evaluation);
    },
    SLOW,
  );
});
