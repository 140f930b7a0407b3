// A work tree laid out as Django's own for the django runner's tests: tests/runtests.py in
// small (the labels' apps installed, --settings, DiscoverRunner), the settings module
// test_sqlite, and an app whose tests end in every way unittest has; plus running the runner
// and SWE-bench's own command on it in an image, and reading what they wrote.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';
import { runnerSource } from '../../src/runners/index.js';
import { execFileAsync } from './docker.js';
import { ROOT } from './processes.js';
import type { Files } from './repo-bundles.js';

export const CALC = 'def add(a, b):\n    return a - b\n';

// Django's runtests.py in small: the labels' apps installed, --settings, DiscoverRunner. It
// imports the project under test first, as Django's imports django.
export const RUNTESTS = `#!/usr/bin/env python3
import argparse
import os
import sys

RUNTESTS_DIR = os.path.abspath(os.path.dirname(__file__))
sys.path.insert(1, os.path.dirname(RUNTESTS_DIR))

import calc  # noqa: E402  the project under test

import django  # noqa: E402
from django.conf import settings  # noqa: E402
from django.test.utils import get_runner  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("modules", nargs="*")
    parser.add_argument("-v", "--verbosity", default=1, type=int)
    parser.add_argument("--settings")
    parser.add_argument("--parallel", type=int, default=0)
    options = parser.parse_args()
    os.environ["DJANGO_SETTINGS_MODULE"] = options.settings or "test_sqlite"
    apps = sorted({label.split(".")[0] for label in options.modules})
    settings.INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth"] + apps
    django.setup()
    runner = get_runner(settings)(verbosity=options.verbosity, parallel=options.parallel)
    if runner.run_tests(options.modules):
        sys.exit(1)


if __name__ == "__main__":
    main()
`;

export const OUTCOMES = `import unittest

from django.test import SimpleTestCase, TestCase

from calc import add


class Outcomes(SimpleTestCase):
    def test_small(self):
        self.assertEqual(add(2, 0), 2)

    def test_wrong(self):
        self.assertEqual(1, 2)

    def test_broken(self):
        raise KeyError("no such key")

    @unittest.skip("needs a network")
    def test_remote(self):
        pass

    @unittest.expectedFailure
    def test_known_bug(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_fixed_bug(self):
        self.assertEqual(1, 1)

    def test_documented(self):
        """Adding zero changes nothing."""
        self.assertEqual(add(7, 0), 7)

    def test_documented_wrong(self):
        """Two and two make five."""
        self.assertEqual(2 + 2, 5)

    def test_cases(self):
        for a in range(3):
            with self.subTest(a=a):
                self.assertEqual(a % 2, 0)

    def test_cases_pass(self):
        for a in range(3):
            with self.subTest(a=a):
                self.assertEqual(add(a, 0), a)

    def test_z_after_subtests(self):
        pass


class Database(TestCase):
    def test_query(self):
        from django.contrib.auth.models import User

        User.objects.create(username="x")
        self.assertEqual(User.objects.count(), 1)


class Unavailable(SimpleTestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("no service")

    def test_one(self):
        pass
`;

export const HIDDEN = `from django.test import SimpleTestCase

from calc import add


class Adding(SimpleTestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_negative(self):
        """Adding negatives gives their sum."""
        self.assertEqual(add(-1, -1), -2)

    def test_sums(self):
        for a, b in [(1, 1), (2, 5)]:
            with self.subTest(a=a, b=b):
                self.assertEqual(add(a, b), a + b)
`;

export const REPO = {
  'calc.py': CALC,
  'tests/runtests.py': RUNTESTS,
  'tests/test_sqlite.py':
    'DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3"}}\nSECRET_KEY = "django_tests_secret_key"\nDEFAULT_AUTO_FIELD = "django.db.models.AutoField"\n',
  'tests/outcomes/__init__.py': '',
  'tests/outcomes/tests.py': OUTCOMES,
};

export interface Report {
  tests: Array<{ id: string; status: string; swebench?: string }>;
  cause?: string;
  integrity?: unknown;
}

/** A work tree of REPO plus `files` in a host folder, removed after the file. */
export function workTree(files: Files = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'proctor-django-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries({ ...REPO, ...files })) {
    if (text === null) continue;
    mkdirSync(dirname(join(root, 'repo', path)), { recursive: true });
    writeFileSync(join(root, 'repo', path), text, {
      mode: path.endsWith('runtests.py') ? 0o755 : 0o644,
    });
  }
  return root;
}

/** Runs `script` in `image` with the work tree at /w (the checkout is /w/repo). */
export async function inImage(image: string, root: string, script: string): Promise<void> {
  writeFileSync(join(root, 'run'), await runnerSource('django'), { mode: 0o755 });
  writeFileSync(
    join(root, 'parse_log_django.py'),
    readFileSync(join(ROOT, 'test/fixtures/django/parse_log_django.py')),
  );
  await execFileAsync(
    'docker',
    // The runner exits 1 when a test fails, as runtests.py does: what counts is the report.
    [
      'run',
      '--rm',
      '--network',
      'none',
      '-v',
      `${root}:/w`,
      '-w',
      '/w/repo',
      image,
      'sh',
      '-c',
      `${script}; true`,
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
}

export function readReport(root: string): Report {
  return JSON.parse(readFileSync(join(root, 'report.json'), 'utf8')) as Report;
}

export function statuses(report: Report): Record<string, [string, string | undefined]> {
  return Object.fromEntries(report.tests.map((t) => [t.id, [t.status, t.swebench]]));
}
