// Real git repositories for derive and import tests: commits with fixed identities and dates
// (so every id is reproducible), and small environments (Debian with git and pytest) whose
// image layers the engine caches between runs.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from './temp.js';

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'author',
  GIT_AUTHOR_EMAIL: 'author@example.invalid',
  GIT_COMMITTER_NAME: 'author',
  GIT_COMMITTER_EMAIL: 'author@example.invalid',
};

export function gitIn(cwd: string, args: string[], date = '2024-01-01T00:00:00Z'): string {
  return execFileSync('git', args, {
    cwd,
    env: { ...GIT_ENV, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
    encoding: 'utf8',
  }).trim();
}

/** Path → contents (a Buffer for binary data), or null to delete the file. */
export type Files = Record<string, string | Buffer | null>;

/** A new repository at `dir` (default: a temp folder) on branch main; returns its path. */
export function newRepo(dir = join(tempDir('proctor-repo-'), 'repo')): string {
  mkdirSync(dir, { recursive: true });
  gitIn(dir, ['init', '-q', '-b', 'main']);
  return dir;
}

let day = 1;

/** Writes `files` and commits them (on the current branch); returns the commit id. */
export function commit(repo: string, files: Files, message: string): string {
  for (const [path, content] of Object.entries(files)) {
    const target = join(repo, path);
    if (content === null) {
      rmSync(target, { force: true });
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  gitIn(repo, ['add', '-A']);
  day += 1;
  const date = `2024-02-${String((day % 27) + 1).padStart(2, '0')}T00:00:00Z`;
  gitIn(repo, ['commit', '-q', '--allow-empty', '-m', message], date);
  return gitIn(repo, ['rev-parse', 'HEAD']);
}

/**
 * A build context with git, pytest and node installed (Debian's packages; the same layer as
 * test/fixtures/images/runners, so the engine builds it once).
 */
export function toolchainEnvironment(): string {
  const dir = tempDir('proctor-env-');
  writeFileSync(
    join(dir, 'Dockerfile'),
    [
      'FROM debian:bookworm-slim',
      'RUN apt-get update \\',
      ' && apt-get install -y --no-install-recommends git python3 python3-pytest nodejs \\',
      ' && rm -rf /var/lib/apt/lists/*',
      '',
    ].join('\n'),
  );
  return dir;
}

// An author's own pytest runner: LIST holds node ids, or (PROCTOR_DISCOVER=1) paths to run
// everything under; the report is Proctor's JSON keyed by node id, xfail/xpass as skipped.
const PYTEST_RUNNER = String.raw`#!/usr/bin/env python3
import json, os, sys
import pytest

# As \`python3 -m pytest\` does: the work tree is importable.
sys.path.insert(0, os.getcwd())
lst, out = sys.argv[1], sys.argv[2]
args = [l.rstrip('\r') for l in open(lst, encoding='utf-8').read().split('\n') if l.strip()]
results = {}

class Report:
    def pytest_runtest_logreport(self, report):
        if hasattr(report, 'wasxfail') or report.skipped:
            status = 'skipped'
        elif report.failed:
            status = 'failed' if report.when == 'call' else 'error'
        elif report.when == 'call':
            status = 'passed'
        else:
            return
        if results.get(report.nodeid) in ('failed', 'error', 'skipped'):
            return
        results[report.nodeid] = status

code = pytest.main(['-q', '-p', 'no:cacheprovider', '--rootdir', '.', *args], plugins=[Report()])
with open(out, 'w', encoding='utf-8') as f:
    json.dump({'schema': 1, 'tests': [{'id': k, 'status': v} for k, v in results.items()]}, f)
`;

/** The author's pytest runner as a file. */
export function pytestRunner(): string {
  const path = join(tempDir('proctor-runner-'), 'run');
  writeFileSync(path, PYTEST_RUNNER);
  chmodSync(path, 0o755);
  return path;
}
