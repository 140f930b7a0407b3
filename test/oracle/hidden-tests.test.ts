// A candidate's code cannot tell the hidden tests from the rest through what the evaluator
// leaves in the evaluator container: the ID lists and the hidden test patch at their fixed
// paths, the checkout's git (status, diff against HEAD, the last commit's patch, the base
// commit's objects) and pytest's PYTEST_CURRENT_TEST. Each forgery below is a candidate that
// fixes nothing unless it learns which tests are hidden (then it answers right): every one
// ends FAIL, the honest gold patch PASSes, and tests that read git still work (the hidden tests
// of this bundle read it). Graded by the real oracle with the built-in pytest runner, under
// Proctor's rules and under SWE-bench's (one run of both lists).
import { describe, expect, it } from 'vitest';
import type { Bundle } from '../../src/oracle/bundle.js';
import type { Evaluation } from '../../src/oracle/evaluate.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { CALC_REPO } from '../helpers/calc-repo.js';
import { candidateDiff, type Files, type RepoBundleSpec } from '../helpers/repo-bundles.js';
import { runnerSuite } from '../helpers/runner-suite.js';

const docker = testDocker();
const SCOPE = dockerScope(docker, 'oracle-hidden-tests');
const SLOW = 300_000;

// The hidden tests read git as a project's tests may: every test file is tracked and committed
// (the hidden ones too), HEAD's calc.py is the base commit's, and what git shows as changed is
// the candidate's calc.py alone (and, untracked, the runner's sentinel file).
const HIDDEN = `import os
import subprocess

from calc import add


def git(*args):
    return subprocess.run(("git",) + args, capture_output=True, text=True, check=True).stdout


def test_add():
    assert add(2, 3) == 5


def test_git_reads():
    assert git("ls-files", "tests").split() == [
        "tests/__init__.py", "tests/test_calc.py", "tests/test_hidden.py"]
    assert "return a - b" in git("show", "HEAD:calc.py")
    status = git("status", "--porcelain", "--untracked-files=all").splitlines()
    # Untracked: the runner's own sentinel tests, in a file of a fresh random name.
    assert [line for line in status if not line.startswith("?? ")] in ([], [" M calc.py"])
    assert not any("test_hidden" in line or "test_calc" in line for line in status)
    assert git("diff", "HEAD", "--name-only") in ("", "calc.py\\n")
    assert len(git("log", "--format=%H").split()) == 1
    # The store is one pack of what HEAD reaches: no loose object, no second pack.
    counts = dict(line.split(": ") for line in git("count-objects", "-v").splitlines())
    assert (counts["count"], counts["packs"]) == ("0", "1")
    assert not os.path.exists("/tmp/fsmonitor-ran")
`;

const ID = {
  zero: 'tests/test_calc.py::test_zero',
  same: 'tests/test_calc.py::test_same',
  add: 'tests/test_hidden.py::test_add',
  gitReads: 'tests/test_hidden.py::test_git_reads',
};

/**
 * calc.py of a candidate that fixes nothing: `add` answers right only when `LEAK` (computed
 * by `learn`, at import) says the hidden tests were told apart, or when `leakNow()` does.
 */
const forged = (learn: string): Files => ({
  'calc.py': `import os
import subprocess


def _git(*args):
    try:
        return subprocess.run(("git",) + args, capture_output=True, text=True, timeout=60).stdout
    except Exception:
        return ""


def leak_now():
    return False


${learn}


def add(a, b):
    return a + b if LEAK or leak_now() else a - b
`,
});

/** Every path a leak may name: the hidden test file, or its test's name. */
const HIDDEN_MARK = '"test_hidden"';

const FORGERIES = (base: string): Record<string, Files> => ({
  // The evaluator's assets at their fixed paths: the ID lists and the hidden test patch.
  assets: forged(`LEAK = False
for _name in ("hidden.txt", "hidden.patch", "tests.txt", "existing.txt"):
    try:
        with open(os.path.join("/proctor/assets", _name)) as _f:
            LEAK = LEAK or ${HIDDEN_MARK} in _f.read()
    except OSError:
        pass
`),
  // git: what differs from HEAD and the index (untracked files included), the last commit's
  // own change when it has a parent, and the base commit (its id is the candidate's to know),
  // or any other commit left in the object store.
  git: forged(`_seen = _git("status", "--porcelain", "--untracked-files=all")
_seen += _git("diff", "HEAD", "--name-only")
if _git("rev-parse", "-q", "--verify", "HEAD~1").strip():
    _seen += _git("diff", "--name-only", "HEAD~1", "HEAD")
_head = _git("rev-parse", "HEAD").strip()
_commits = {"${base}"}
for _line in _git("cat-file", "--batch-all-objects", "--batch-check").splitlines():
    if " commit " in _line:
        _commits.add(_line.split()[0])
for _commit in _commits - {_head}:
    _seen += _git("diff", "--name-only", _commit)
LEAK = ${HIDDEN_MARK} in _seen
`),
  // Every object in the store that neither HEAD nor the index reaches: a tree of the tests'
  // folder without the hidden test file would be the base commit's, so the file is new.
  objects: forged(`_reached = set(_git("rev-list", "--objects", "HEAD").split())
_reached.update(_line.split()[1] for _line in _git("ls-files", "-s").splitlines())
LEAK = False
for _line in _git("cat-file", "--batch-all-objects", "--batch-check").splitlines():
    _id, _type = _line.split()[:2]
    if _type == "tree" and _id not in _reached:
        _names = _git("ls-tree", "--name-only", _id).split()
        LEAK = LEAK or ("test_calc.py" in _names and "test_hidden.py" not in _names)
`),
  // Where each object of HEAD is kept: a blob written loose, or into another pack than the
  // base tree's, would be new since the base commit.
  storage: forged(`import glob
_where = {}
for _idx in glob.glob(".git/objects/pack/*.idx"):
    for _line in _git("verify-pack", "-v", _idx).splitlines():
        _parts = _line.split()
        if len(_parts) > 2 and _parts[1] in ("blob", "tree", "commit", "tag"):
            _where[_parts[0]] = _idx
_places = {}
for _line in _git("ls-tree", "-r", "HEAD").splitlines():
    _meta, _path = _line.split("\t", 1)
    _places.setdefault(_where.get(_meta.split()[2], "loose"), []).append(_path)
_rare = min(_places.values(), key=len) if len(_places) > 1 else []
LEAK = any(${HIDDEN_MARK} in _path for _path in _rare)
`),
  // No leak, but a trap for the step that commits the tree: the existing suite's run leaves
  // the old repository with an fsmonitor command and hooks in its config, a folder it cannot
  // write and a file nobody can read. None of it runs, and the hidden tests still run.
  gitTrap: forged(`LEAK = False
if not os.path.exists("tests/test_hidden.py"):
    with open(".git/config", "a") as _f:
        _f.write("[core]\\n\\tfsmonitor = touch /tmp/fsmonitor-ran\\n\\thooksPath = /tmp\\n")
    with open("unreadable.txt", "w") as _f:
        _f.write("x")
    os.chmod("unreadable.txt", 0)
    os.chmod(".git", 0o500)
`),
  // pytest's name of the running test, in the environment.
  currentTest: forged(`LEAK = False


def leak_now():
    return any(${HIDDEN_MARK} in value for value in os.environ.values())
`),
});

const SPEC: RepoBundleSpec = {
  id: 'hidden-tests',
  runner: 'pytest',
  repo: CALC_REPO,
  hidden: { 'tests/test_hidden.py': HIDDEN },
  gold: { 'calc.py': 'def add(a, b):\n    return a + b\n' },
  existing: [ID.zero, ID.same],
  hiddenIds: [ID.add, ID.gitReads],
};

const suite = runnerSuite(docker, SCOPE, { image: 'runners', spec: SPEC });

const RULES = ['proctor', 'swebench'] as const;
const task = (rules: (typeof RULES)[number]): Bundle =>
  rules === 'proctor'
    ? suite.bundle
    : { ...suite.bundle, grading: { ...suite.bundle.grading, rules: 'swebench' } };

/** The test ids a grade's phases reported passed. */
function passed(evaluation: Evaluation): string[] {
  return evaluation.tests.tests
    .filter((t) => t.outcome === 'passed')
    .map((t) => t.id)
    .sort();
}

describe.each(RULES)('the hidden tests under %s rules', (rules) => {
  it(
    "passes the gold patch, with the hidden tests reading git and seeing the candidate's change alone",
    async () => {
      const evaluation = await suite.grade(task(rules), suite.gold);
      expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
      expect(passed(evaluation)).toEqual(Object.values(ID).sort());
      expect(evaluation.testTree).toMatchObject({ exitCode: 0, stderr: '' });
      expect(evaluation.apply).toMatchObject({ exitCode: 0, timedOut: false });
      expect(evaluation.timings['apply']).toBeGreaterThanOrEqual(0);
    },
    SLOW,
  );

  it(
    "fails a diff that does not apply with git's reason, before any test runs",
    async () => {
      const stale = Buffer.from(
        [
          'diff --git a/calc.py b/calc.py',
          '--- a/calc.py',
          '+++ b/calc.py',
          '@@ -1,2 +1,2 @@',
          ' def add(a, b):',
          '-    return 12345',
          '+    return a + b',
          '',
        ].join('\n'),
      );
      const evaluation = await suite.grade(task(rules), stale);
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'APPLY_FAILED' });
      expect(evaluation.verdict.detail).toMatch(/^the diff does not apply: .*calc\.py/);
      expect(evaluation.apply).toMatchObject({ exitCode: 10, timedOut: false });
      // Nothing after the apply ran: no hidden patch, no tree, no phase.
      expect(evaluation.hiddenApply).toBeNull();
      expect(evaluation.testTree).toBeNull();
      expect(evaluation.phases).toBeNull();
      expect(evaluation.timings['apply']).toBeGreaterThanOrEqual(0);
    },
    SLOW,
  );

  it(
    'fails the baseline: the hidden tests fail without the fix, and git shows nothing changed',
    async () => {
      const evaluation = await suite.grade(task(rules), null);
      expect(evaluation.verdict.verdict).toBe('FAIL');
      expect(evaluation.testTree).toMatchObject({ exitCode: 0 });
      // test_git_reads passes on the bare base commit too: the status is empty.
      expect(passed(evaluation)).toEqual([ID.zero, ID.same, ID.gitReads].sort());
    },
    SLOW,
  );

  it(
    'commits the tree past a trapped repository: nothing of its config runs, the hidden tests do',
    async () => {
      const forgery = FORGERIES(suite.bundle.baseCommit)['gitTrap']!;
      const evaluation = await suite.grade(task(rules), candidateDiff(suite.dir, forgery));
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(evaluation.testTree).toMatchObject({ exitCode: 0 });
      // test_git_reads ran, with no fsmonitor's mark, and git showing only the candidate's file.
      expect(passed(evaluation)).toEqual([ID.zero, ID.same, ID.gitReads].sort());
      if (rules === 'proctor') expect(evaluation.testTree?.stderr).toMatch(/stay untracked/);
    },
    SLOW,
  );

  it.each(['assets', 'git', 'objects', 'storage', 'currentTest'])(
    'fails the %s forgery: it learns nothing that tells the hidden tests apart',
    async (name) => {
      const forgery = FORGERIES(suite.bundle.baseCommit)[name]!;
      const evaluation = await suite.grade(task(rules), candidateDiff(suite.dir, forgery));
      expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'HIDDEN_FAILED' });
      expect(passed(evaluation)).not.toContain(ID.add);
    },
    SLOW,
  );
});
