// The built-in pytest, django and sympy runners on the newest Python the machine can have:
// Debian trixie's python3 (3.13), with its python3-pytest (8.3), python3-django (4.2) and a
// work tree of its python3-sympy (1.13), all in one fixture image (python-trixie). Each runner
// grades a small real task through the oracle as it does on bookworm's 3.11 and bullseye's 3.9
// (runners/pytest, django, django-bullseye and sympy tests): the baseline fails the hidden
// tests, the gold patch passes with every sentinel holding, and a broken candidate fails.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundle, type Bundle } from '../../src/oracle/bundle.js';
import { writeRunner } from '../../src/runners/index.js';
import { requireDocker, resolveImage } from '../../src/sandbox/index.js';
import {
  dockerScope,
  execFileAsync,
  fixtureImage,
  readFromImage,
  testDocker,
} from '../helpers/docker.js';
import { HIDDEN as DJANGO_HIDDEN, REPO as DJANGO_REPO } from '../helpers/django-tree.js';
import { expectSentinelsHeld, gradeIn } from '../helpers/grade.js';
import { candidateDiff, patchFrom, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'runners-python-trixie');
const SLOW = 600_000;
const FIXTURE = 'python-trixie';
const IMAGE = `proctor-test-${FIXTURE}:latest`;

const PYTEST: RepoBundleSpec = {
  id: 'trixie-pytest',
  runner: 'pytest',
  from: IMAGE,
  repo: {
    'calc.py': 'def add(a, b):\n    return a - b\n',
    'tests/test_calc.py': 'from calc import add\n\n\ndef test_zero():\n    assert add(2, 0) == 2\n',
  },
  hidden: {
    'tests/test_calc.py':
      'from calc import add\n\n\ndef test_zero():\n    assert add(2, 0) == 2\n\n\n' +
      'def test_add():\n    assert add(2, 3) == 5\n',
  },
  gold: { 'calc.py': 'def add(a, b):\n    return a + b\n' },
  existing: ['tests/test_calc.py::test_zero'],
  hiddenIds: ['tests/test_calc.py::test_add'],
};

const DJANGO: RepoBundleSpec = {
  id: 'trixie-django',
  runner: 'django',
  from: IMAGE,
  repo: DJANGO_REPO,
  hidden: { 'tests/adding/__init__.py': '', 'tests/adding/tests.py': DJANGO_HIDDEN },
  gold: { 'calc.py': 'def add(a, b):\n    return a + b\n' },
  // Python 3.11 and later name a test `name (module.Class.name)`.
  existing: ['test_small (outcomes.tests.Outcomes.test_small)', 'Adding zero changes nothing.'],
  hiddenIds: [
    'test_add (adding.tests.Adding.test_add)',
    'Adding negatives gives their sum.',
    'test_sums (adding.tests.Adding.test_sums)',
  ],
  testSeconds: 120,
};

const pytest = runnerSuite(docker, SCOPE, { image: FIXTURE, spec: PYTEST });
const django = runnerSuite(docker, SCOPE, { image: FIXTURE, spec: DJANGO });

/** What every runner's task must do: fail at the base, pass with gold, fail when broken. */
async function gradesLikeOlderPythons(
  grade: (candidate: Buffer | null) => ReturnType<typeof gradeIn>,
  gold: Buffer,
  broken: Buffer,
) {
  const baseline = await grade(null);
  expect(baseline.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
  const passed = await grade(gold);
  expect(passed.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
  expectSentinelsHeld(passed);
  const failed = await grade(broken);
  expect(failed.verdict.verdict).toBe('FAIL');
}

describe('the Python runners on Debian trixie (Python 3.13)', () => {
  beforeAll(async () => {
    await requireDocker(docker);
    await fixtureImage(FIXTURE);
  }, SLOW);

  it(
    'runs on Python 3.13 with pytest 8, Django 4.2 and sympy 1.13',
    async () => {
      const { stdout } = await execFileAsync('docker', [
        ...['run', '--rm', '--network', 'none', '--workdir', '/sympy', IMAGE, 'python3', '-c'],
        'import sys, pytest, django, sympy; print(sys.version_info[:2], pytest.__version__.split(".")[0], django.get_version()[:3], sympy.__version__[:4])',
      ]);
      expect(stdout.trim()).toBe('(3, 13) 8 4.2 1.13');
    },
    SLOW,
  );

  it(
    'the pytest runner: the base fails, the gold patch passes, a broken candidate fails',
    async () => {
      const broken = candidateDiff(pytest.dir, { 'calc.py': 'def add(a, b):\n    return a * b\n' });
      await gradesLikeOlderPythons((c) => pytest.grade(pytest.bundle, c), pytest.gold, broken);
    },
    SLOW,
  );

  it(
    'the django runner: the base fails, the gold patch passes, a broken candidate fails',
    async () => {
      const broken = candidateDiff(django.dir, { 'calc.py': 'def add(a, b):\n    return b\n' });
      await gradesLikeOlderPythons((c) => django.grade(django.bundle, c), django.gold, broken);
    },
    SLOW,
  );

  it("carries the sympy fixture's own files for its work tree, unchanged", () => {
    const files = [
      'bin/test',
      'sympy/calc/__init__.py',
      'sympy/calc/tests/__init__.py',
      'sympy/calc/tests/test_calc.py',
    ];
    for (const file of files) {
      const here = readFileSync(
        new URL(`../fixtures/images/${FIXTURE}/sympy/${file}`, import.meta.url),
      );
      const there = readFileSync(new URL(`../fixtures/images/sympy/repo/${file}`, import.meta.url));
      expect(here.equals(there), file).toBe(true);
    }
  });

  describe('the sympy runner', () => {
    const CALC_TESTS = readFileSync(
      join(
        import.meta.dirname,
        '../fixtures/images/python-trixie/sympy/sympy/calc/tests/test_calc.py',
      ),
      'utf8',
    );
    let bundle: Bundle;
    let imageId: string;
    let spec: RepoBundleSpec;

    beforeAll(async () => {
      await fixtureImage(FIXTURE);
      const base = await readFromImage(IMAGE, '/sympy_base_commit');
      const calc = await readFromImage(IMAGE, '/sympy/sympy/calc/__init__.py');
      // The scratch repository the patches are made in holds the files they change.
      spec = {
        id: 'trixie-sympy',
        runner: 'sympy',
        repo: {
          'sympy/calc/__init__.py': `${calc}\n`,
          'sympy/calc/tests/test_calc.py': CALC_TESTS,
        },
        hidden: {
          'sympy/calc/tests/test_calc.py': `${CALC_TESTS}\n\ndef test_add():\n    assert add(2, 3) == 5\n`,
        },
        gold: { 'sympy/calc/__init__.py': 'def add(a, b):\n    return a + b\n' },
        existing: ['test_zero', 'test_same'],
        hiddenIds: ['test_add'],
      };
      const root = mkdtempSync(join(tmpdir(), 'proctor-trixie-sympy-'));
      afterAll(() => rmSync(root, { recursive: true, force: true }));
      const dir = join(root, spec.id);
      mkdirSync(join(dir, 'environment'), { recursive: true });
      mkdirSync(join(dir, 'solution'), { recursive: true });
      writeFileSync(join(dir, 'environment/Dockerfile'), `FROM ${IMAGE}\n`);
      await writeRunner('sympy', join(dir, 'tests'));
      writeFileSync(join(dir, 'tests/hidden.patch'), patchFrom(spec, spec.hidden));
      writeFileSync(join(dir, 'solution/gold.patch'), patchFrom(spec, spec.gold));
      writeFileSync(join(dir, 'tests/existing.txt'), 'test_zero\ntest_same\n');
      writeFileSync(join(dir, 'tests/hidden.txt'), 'test_add\n');
      writeFileSync(join(dir, 'description.md'), 'Make add add.\n');
      writeFileSync(
        join(dir, 'task.toml'),
        `schema = 1
id = "${spec.id}"

[environment]
dockerfile = "environment/Dockerfile"
workdir = "/sympy"
base_commit = "${base}"

[grading]
deny = ["**/tests/**", "bin/test", "sympy/testing/runtests.py"]

[limits]
test_seconds = 300
`,
      );
      bundle = await loadBundle(dir);
      imageId = (await resolveImage(docker, bundle.environment)).localId;
    }, SLOW);

    it(
      'the base fails, the gold patch passes, a broken candidate fails',
      async () => {
        const gold = readFileSync(join(bundle.dir, 'solution/gold.patch'));
        const broken = patchFrom(spec, {
          'sympy/calc/__init__.py': 'def add(a, b):\n    return 0\n',
        });
        await gradesLikeOlderPythons(
          (c) => gradeIn(docker, SCOPE, imageId, bundle, c),
          gold,
          broken,
        );
      },
      SLOW,
    );
  });
});
