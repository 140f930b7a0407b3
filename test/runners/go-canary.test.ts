// Canaries through the built-in go runner and the real oracle (src/runners/core/canary.py with
// the go runner's canary_mutate_file, canary_targets and canary_taken), on Debian's golang-go:
// the trusted step places after each hidden test function a copy of it with a check turned
// over (an `if` that fails the test, testify's assert), one in each listed subtest, and the
// copy's subtests fail as the listed ones are named. A candidate that makes the repository's
// own assertion package lenient (its testify copy, which the sentinels do not use) passes every
// hidden test and holds every sentinel, and now ends TAMPERED, VACUOUS_TEST; the gold patch
// stays PASS with every mutant failing; a test whose checks run only in a loop is named
// uncovered, and the package still builds with the copies in it.
import { describe, expect, it } from 'vitest';
import { dockerScope, testDocker } from '../helpers/docker.js';
import {
  expectGoldWithCanaries,
  expectHonestFail,
  expectInFileSentinels,
  expectVacuousTest,
} from '../helpers/grade.js';
import { CALC, GOLD_CALC } from '../helpers/go-calc.js';
import { candidateDiff, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-go-canary');
const SLOW = 300_000;

// testify's assert, the four functions the tests use, as testify has them: a copy in the
// repository (go.mod replaces the module with it), as a repository may vendor one.
const ASSERT = `// Package assert is the part of testify's assert the tests use.
package assert

import "reflect"

type TestingT interface {
	Errorf(format string, args ...interface{})
}

func Equal(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if !reflect.DeepEqual(expected, actual) {
		t.Errorf("Not equal: expected %v, actual %v", expected, actual)
		return false
	}
	return true
}

func NotEqual(t TestingT, expected, actual interface{}, msgAndArgs ...interface{}) bool {
	if reflect.DeepEqual(expected, actual) {
		t.Errorf("Should not be: %v", actual)
		return false
	}
	return true
}

func NoError(t TestingT, err error, msgAndArgs ...interface{}) bool {
	if err != nil {
		t.Errorf("Received unexpected error: %v", err)
		return false
	}
	return true
}

func Error(t TestingT, err error, msgAndArgs ...interface{}) bool {
	if err == nil {
		t.Errorf("An error is expected but got nil.")
		return false
	}
	return true
}
`;

// The forgery's copy: every assertion holds.
const LENIENT = ASSERT.replace(/\tif (.*) \{\n\t\tt\.Errorf/g, '\tif false && $1 {\n\t\tt.Errorf');

// Division by zero an error, no floor division: the hidden floor checks fail honestly.
const ZERO_ONLY = GOLD_CALC.replace(
  '\tif (a%b != 0) && ((a < 0) != (b < 0)) {\n\t\tq--\n\t}\n',
  '',
);

const HIDDEN = `package calc

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDiv(t *testing.T) {
	t.Run("exact", func(t *testing.T) {
		q, err := Div(6, 3)
		if err != nil {
			t.Fatal(err)
		}
		assert.Equal(t, 2, q)
	})
	t.Run("floor of negatives", func(t *testing.T) {
		q, _ := Div(-7, 2)
		assert.Equal(t, -4, q)
	})
	t.Run("table", func(t *testing.T) {
		for _, c := range []struct{ a, b, q int }{{8, 4, 2}, {-8, 4, -2}} {
			q, _ := Div(c.a, c.b)
			assert.Equal(t, c.q, q)
		}
	})
}

func TestDivByZero(t *testing.T) {
	_, err := Div(1, 0)
	assert.Error(t, err)
}

func TestDivTable(t *testing.T) {
	for _, c := range []struct{ a, b, q int }{{9, 2, 4}, {-9, 2, -5}} {
		q, _ := Div(c.a, c.b)
		assert.Equal(t, c.q, q)
	}
}

func TestDivRows(t *testing.T) {
	rows := []struct{ a, b, q int }{{-1, 2, -1}}
	for _, r := range rows {
		t.Run(fmt.Sprint(r.a, r.b), func(t *testing.T) {
			q, _ := Div(r.a, r.b)
			assert.Equal(t, r.q, q)
		})
	}
}

func TestDivSkips(t *testing.T) {
	for _, c := range []struct{ a, b, q int }{{4, 0, 0}, {4, 2, 2}} {
		if c.b == 0 {
			continue
		}
		q, _ := Div(c.a, c.b)
		assert.Equal(t, c.q, q)
	}
}

func TestDivSign(t *testing.T) {
	q, err := Div(-9, 3)
	if err != nil || q != -3 {
		t.Fatalf("Div(-9, 3) = %d, %v", q, err)
	}
}
`;

const HIDDEN_IDS = [
  'TestDiv/exact',
  'TestDiv/floor_of_negatives',
  'TestDivByZero',
  'TestDiv/table',
  'TestDivTable',
  'TestDivRows',
  'TestDivSkips',
  'TestDivSign',
];

const SPEC: RepoBundleSpec = {
  id: 'go-canary',
  runner: 'go',
  from: 'proctor-test-go:latest',
  repo: {
    'go.mod':
      'module example.com/calc\n\ngo 1.19\n\nrequire github.com/stretchr/testify v1.8.0\n\nreplace github.com/stretchr/testify => ./third_party/testify\n',
    'third_party/testify/go.mod': 'module github.com/stretchr/testify\n\ngo 1.19\n',
    'third_party/testify/assert/assert.go': ASSERT,
    'calc/calc.go': CALC,
    'calc/calc_test.go':
      'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("1 + 2")\n\t}\n}\n',
  },
  hidden: { 'calc/div_test.go': HIDDEN },
  gold: { 'calc/calc.go': GOLD_CALC },
  existing: ['TestAdd'],
  hiddenIds: HIDDEN_IDS,
};

const suite = runnerSuite(docker, SCOPE, { image: 'go', spec: SPEC });

describe('canaries through the built-in go runner', () => {
  it(
    'passes the gold patch with a failing copy of each covered test, a check turned in each listed subtest',
    async () => {
      const evaluation = await suite.grade(suite.bundle, suite.gold);
      // The existing test sampled for canaries (TestAdd) is reported in the hidden run too.
      const covered = [
        'TestDiv/exact',
        'TestDiv/floor_of_negatives',
        'TestDiv/table',
        'TestDivByZero',
        'TestDivTable',
        'TestDivRows',
        'TestDivSign',
        'TestAdd',
      ];
      const canaries = expectGoldWithCanaries(evaluation, covered, [...HIDDEN_IDS, 'TestAdd']);
      const byTest = new Map(canaries.mutants.map((m) => [m.test, m]));
      for (const m of canaries.mutants) {
        expect(m.status, `${m.id}: ${m.mutation}`).toBe('failed');
        // The copy's name is the test's with a word, its subtest the listed one.
        expect(m.id).toMatch(
          /^(TestDiv|TestDivByZero|TestDivTable|TestDivRows|TestDivSign|TestAdd)[A-Z][a-z]+(\/[a-z_]+)?$/,
        );
        expect(m.id.split('/')[1]).toBe(m.test.split('/')[1]);
      }
      // One copy of TestDiv, a check turned in each of its listed subtests that has one (the
      // check in table's loop over rows of its own, which runs on every row, among them).
      const [exact, floor, table] = [
        'TestDiv/exact',
        'TestDiv/floor_of_negatives',
        'TestDiv/table',
      ].map((t) => byTest.get(t));
      expect(exact?.id.split('/')[0]).toBe(floor?.id.split('/')[0]);
      expect(table?.id.split('/')[0]).toBe(floor?.id.split('/')[0]);
      expect(exact?.mutation).toMatch(
        /in exact: .*; in floor_of_negatives: assert\.Equal turned to assert\.NotEqual; in table: assert\.Equal turned to assert\.NotEqual$/,
      );
      // A table's loop: over a literal, or over a name bound to one and used nowhere else, the
      // check in a t.Run of the loop too; any other condition of an `if` is negated whole.
      expect(byTest.get('TestDivTable')?.mutation).toBe('assert.Equal turned to assert.NotEqual');
      expect(byTest.get('TestDivRows')?.mutation).toBe('assert.Equal turned to assert.NotEqual');
      expect(byTest.get('TestDivSign')?.mutation).toBe(
        'the condition of an `if` that fails the test negated',
      );
      expect(byTest.get('TestDivByZero')?.mutation).toBe('assert.Error turned to assert.NoError');
      expect(byTest.get('TestAdd')?.mutation).toBe(
        '`!=` turned to `==` in an `if` that fails the test',
      );
      // A loop that may leave a row before its check (a `continue`) is not used.
      expect([...canaries.uncovered]).toEqual([
        {
          test: 'TestDivSkips',
          why: "no check the mutator turns over (an `if` that fails the test, testify's assert or require)",
        },
      ]);
      // The sentinels, in the hidden test file, each a top-level test right before a hidden
      // one (comparing two numbers of its own): each held, and no file of their own.
      const sentinels = expectInFileSentinels(evaluation, HIDDEN_IDS, ['']);
      for (const s of sentinels) expect(s.id).toMatch(/^Test[A-Za-z]+[A-Z][a-z]+$/);
    },
    SLOW,
  );

  it(
    'fails an assertion package made lenient as TAMPERED, VACUOUS_TEST, the sentinels holding',
    async () => {
      const forged = candidateDiff(suite.dir, {
        'calc/calc.go': ZERO_ONLY,
        'third_party/testify/assert/assert.go': LENIENT,
      });
      // The sentinels, in a file of their own and calling no assertion package, do not see it;
      // without the canaries every declared hidden test passed.
      expectVacuousTest(
        await suite.grade(suite.bundle, forged),
        /^hidden phase: VACUOUS_TEST: .*TestDiv/,
        [...HIDDEN_IDS, 'TestAdd'],
      );
    },
    SLOW,
  );

  it(
    'keeps an honest wrong candidate a plain FAIL: its floor checks fail, and so do their copies',
    async () => {
      const evaluation = await suite.grade(
        suite.bundle,
        candidateDiff(suite.dir, { 'calc/calc.go': ZERO_ONLY }),
      );
      expectHonestFail(evaluation);
    },
    SLOW,
  );
});
