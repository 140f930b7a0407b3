// The built-in django runner before Python 3.11: Debian bullseye's python3-django 2.2 on
// Python 3.9, where unittest's str(test) is `test_x (module.Class)` and nothing is printed
// after a test whose subtest failed (the next test's `... ok` ends the same line). Every ID
// SWE-bench's parse_log_django takes from SWE-bench's own command, and the tests it records
// nothing for, are listed, and the runner must say what the parser said for each; then a
// grade through the oracle on this Python (protocol 2, Django 2.2's test classes as sentinels).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Evaluation } from '../../src/oracle/evaluate.js';
import { declaredOutcomes } from '../../src/oracle/verdict.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { HIDDEN, inImage, readReport, REPO, statuses, workTree } from '../helpers/django-tree.js';
import { type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-django-bullseye');
const SLOW = 300_000;
const IMAGE = 'proctor-test-django-bullseye:latest';

const id = (method: string, cls: string) => `${method} (outcomes.tests.${cls})`;

const ONE_LINE = 'One line is printed by every Python.';
// Django's own style: a docstring whose text starts on the line after its opening quotes.
const DESCRIBED = `from django.test import SimpleTestCase


class Described(SimpleTestCase):
    def test_blank_first(self):
        """
        Its text starts on the second line.
        """

    def test_blank_first_wrong(self):
        """
        This one fails.
        """
        self.assertEqual(1, 2)

    def test_one_line(self):
        """${ONE_LINE}"""
`;

const SPEC: RepoBundleSpec = {
  id: 'django-bullseye',
  runner: 'django',
  from: IMAGE,
  repo: REPO,
  hidden: { 'tests/adding/__init__.py': '', 'tests/adding/tests.py': HIDDEN },
  gold: { 'calc.py': 'def add(a, b):\n    return a + b\n' },
  existing: [id('test_small', 'Outcomes'), 'Adding zero changes nothing.'],
  hiddenIds: [
    'test_add (adding.tests.Adding)',
    'Adding negatives gives their sum.',
    'test_sums (adding.tests.Adding)',
  ],
  testSeconds: 120,
};

const suite = runnerSuite(docker, SCOPE, { image: 'django-bullseye', spec: SPEC });
/** The bundle graded against `candidate` (null: a baseline). */
const grade = (candidate: Buffer | null): Promise<Evaluation> =>
  suite.grade(suite.bundle, candidate);

describe('the built-in django runner on Python 3.9 and Django 2.2', () => {
  it(
    "says what parse_log_django says for every ID it takes from SWE-bench's command, and for the tests it records nothing for",
    async () => {
      const root = workTree();
      await inImage(
        IMAGE,
        root,
        [
          'python3 tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 outcomes.tests > /w/swebench.log 2>&1',
          'python3 /w/parse_log_django.py /w/swebench.log > /w/parsed.json',
        ].join('; '),
      );
      const parsed = JSON.parse(readFileSync(join(root, 'parsed.json'), 'utf8')) as Record<
        string,
        string
      >;
      // The line a failed subtest leaves open, ended by the next test's status.
      const merged = `${id('test_cases', 'Outcomes')} ... ${id('test_cases_pass', 'Outcomes')}`;
      expect(parsed[merged]).toBe('PASSED');
      const unrecorded = [
        id('test_cases', 'Outcomes'),
        id('test_cases_pass', 'Outcomes'),
        id('test_known_bug', 'Outcomes'),
        id('test_fixed_bug', 'Outcomes'),
        id('test_one', 'Unavailable'),
        id('test_documented', 'Outcomes'),
      ];
      for (const test of unrecorded) expect(parsed[test]).toBeUndefined();
      const listed = [...Object.keys(parsed), ...unrecorded];
      writeFileSync(join(root, 'list'), listed.join('\n') + '\n');
      await inImage(IMAGE, root, 'python3 /w/run /w/list /w/report.json > /w/runner.log 2>&1');
      const report = statuses(readReport(root));
      for (const test of listed) {
        expect([test, report[test]?.[1]]).toEqual([test, parsed[test] ?? 'ABSENT']);
      }
      expect(report[id('test_cases', 'Outcomes')]).toEqual(['failed', 'ABSENT']);
      expect(report[id('test_cases_pass', 'Outcomes')]).toEqual(['passed', 'ABSENT']);
      expect(report[id('test_one', 'Unavailable')]).toEqual(['error', 'ABSENT']);
      expect(report['Adding zero changes nothing.']).toEqual(['passed', 'PASSED']);
    },
    SLOW,
  );

  it(
    "reports a test whose docstring's first line is blank under the form the list uses: by name as SWE-bench's Python 3.6 printed it, or by its text as 3.9 prints it",
    async () => {
      const root = workTree({
        'tests/described/__init__.py': '',
        'tests/described/tests.py': DESCRIBED,
      });
      const named = (m: string) => `${m} (described.tests.Described)`;
      // SWE-bench's django 3.0 to 3.2 rows (Python 3.6) name such tests, as its unittest
      // printed no description for them (bpo-39450, fixed in 3.7.7 and 3.8.2).
      const old = [named('test_blank_first'), named('test_blank_first_wrong'), ONE_LINE];
      writeFileSync(join(root, 'list'), old.join('\n') + '\n');
      await inImage(IMAGE, root, 'python3 /w/run /w/list /w/report.json > /w/runner.log 2>&1');
      expect(statuses(readReport(root))).toEqual({
        [old[0]!]: ['passed', 'PASSED'],
        [old[1]!]: ['failed', 'FAILED'],
        [old[2]!]: ['passed', 'PASSED'],
      });
      // The same tests listed as Python 3.9's unittest prints them, checked against the real
      // parser on SWE-bench's own command.
      const current = ['Its text starts on the second line.', 'This one fails.', ONE_LINE];
      writeFileSync(join(root, 'list'), [...current, named('test_blank_first')].join('\n') + '\n');
      await inImage(
        IMAGE,
        root,
        [
          'python3 /w/run /w/list /w/report.json > /w/runner.log 2>&1',
          'python3 tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 described.tests > /w/swebench.log 2>&1',
          'python3 /w/parse_log_django.py /w/swebench.log > /w/parsed.json',
        ].join('; '),
      );
      const parsed = JSON.parse(readFileSync(join(root, 'parsed.json'), 'utf8')) as Record<
        string,
        string
      >;
      expect(parsed).toEqual({
        'Its text starts on the second line.': 'PASSED',
        'This one fails.': 'FAILED',
        [ONE_LINE]: 'PASSED',
        test_blank_first_wrong: 'FAILED',
      });
      expect(statuses(readReport(root))).toEqual({
        [current[0]!]: ['passed', 'PASSED'],
        [current[1]!]: ['failed', 'FAILED'],
        [current[2]!]: ['passed', 'PASSED'],
        [named('test_blank_first')]: ['passed', 'ABSENT'],
      });
    },
    SLOW,
  );

  it(
    'fails the baseline and passes the gold patch with the sentinels holding',
    async () => {
      const baseline = await grade(null);
      expect(baseline.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      const check = baseline.phases?.hidden?.check;
      expect(check && Object.fromEntries(declaredOutcomes(check))).toEqual({
        'test_add (adding.tests.Adding)': 'failed',
        'Adding negatives gives their sum.': 'failed',
        'test_sums (adding.tests.Adding)': 'failed',
      });
      const evaluation = await grade(suite.gold);
      expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      for (const phase of evaluation.phaseRecords) {
        expect(phase.integrity?.tampered).toBeNull();
        for (const s of phase.integrity?.sentinels ?? []) expect(s.status).toBe(s.expect);
      }
    },
    SLOW,
  );
});
