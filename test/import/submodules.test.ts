// proctor import swebench and a base commit with submodules: a submodule whose repository
// --repos mirrors (found by its .gitmodules URL) is vendored into the snapshot as ordinary
// files, nested ones too; one whose mirror is absent or lacks the commit stays empty, with a
// note naming what to add; and a bundle whose code and gold patch live in a vendored
// submodule passes baseline --gold through the real oracle in Docker.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoOfUrl } from '../../src/import/submodules.js';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { commit, gitIn, newRepo, toolchainEnvironment } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';

const HELPER = `def safe(a, b):\n    return a / b\n`;
const FIXED_HELPER = `def safe(a, b):\n    if b == 0:\n        return None\n    return a / b\n`;
const CALC = `from modules.onig.helper import safe\n\n\ndef div(a, b):\n    return safe(a, b)\n`;
const TESTS = `from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n`;
const NEW_TESTS = `${TESTS}\n\ndef test_zero():\n    assert div(1, 0) is None\n`;

/** A gitlink at `path` to `target` in `repo`'s index, and .gitmodules naming `url` for it. */
function addSubmodule(repo: string, path: string, target: string, url: string | undefined) {
  if (url !== undefined) {
    const file = join(repo, '.gitmodules');
    const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
    writeFileSync(file, `${before}[submodule "${path}"]\n\tpath = ${path}\n\turl = ${url}\n`);
    gitIn(repo, ['add', '.gitmodules']);
  }
  gitIn(repo, ['update-index', '--add', '--cacheinfo', `160000,${target},${path}`]);
}

/**
 * Commits `files` with the gitlinks staged so far (`commit` adds with -A, which would drop a
 * gitlink whose folder the work tree lacks).
 */
function commitWith(repo: string, files: Record<string, string>, message: string): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), content);
    gitIn(repo, ['add', '--', path]);
  }
  gitIn(repo, ['commit', '-q', '--allow-empty', '-m', message]);
  return gitIn(repo, ['rev-parse', 'HEAD']);
}

/**
 * DIR/acme__calc, whose base commit has modules/onig (github.com/kkos/onig, mirrored at
 * DIR/kkos__onig.git), which itself has deps/inner (a relative URL, ../inner.git: kkos/inner,
 * mirrored at DIR/kkos__inner); the row's fix is in the submodule's helper.py.
 */
function fixture() {
  const root = tempDir('proctor-submodules-');
  const repos = join(root, 'repos');
  const inner = newRepo(join(root, 'work', 'inner'));
  const innerCommit = commit(inner, { 'inner.txt': 'inner\n' }, 'inner');
  const onig = newRepo(join(root, 'work', 'onig'));
  addSubmodule(onig, 'deps/inner', innerCommit, '../inner.git');
  const onigCommit = commitWith(onig, { 'helper.py': HELPER }, 'onig');
  const calc = newRepo(join(repos, 'acme__calc'));
  addSubmodule(calc, 'modules/onig', onigCommit, 'https://github.com/kkos/onig.git');
  const base = commitWith(calc, { 'calc.py': CALC, 'tests/test_calc.py': TESTS }, 'base');
  // The fix as a candidate would write it in a workspace where the submodule is plain files.
  const scratch = newRepo(join(root, 'work', 'scratch'));
  const before = commit(scratch, { 'modules/onig/helper.py': HELPER }, 'before');
  const after = commit(scratch, { 'modules/onig/helper.py': FIXED_HELPER }, 'after');
  const patch = gitIn(scratch, ['diff', '--full-index', before, after]) + '\n';
  const fix = commitWith(calc, { 'tests/test_calc.py': NEW_TESTS }, 'tests');
  const testPatch = gitIn(calc, ['diff', '--full-index', base, fix, '--', 'tests']) + '\n';
  execFileSync('git', ['clone', '-q', '--bare', onig, join(repos, 'kkos__onig.git')]);
  execFileSync('git', ['clone', '-q', inner, join(repos, 'kkos__inner')]);
  const row = {
    instance_id: 'acme__calc-1',
    repo: 'acme/calc',
    base_commit: base,
    patch,
    test_patch: testPatch,
    FAIL_TO_PASS: JSON.stringify(['tests/test_calc.py::test_zero']),
    PASS_TO_PASS: JSON.stringify(['tests/test_calc.py::test_div']),
    problem_statement: 'div(1, 0) raises ZeroDivisionError; it should return None.',
  };
  const rows = join(root, 'rows.jsonl');
  writeFileSync(rows, JSON.stringify(row) + '\n');
  const out = join(root, 'suite');
  const args = [
    'import',
    'swebench',
    rows,
    '--repos',
    repos,
    '--environment',
    toolchainEnvironment(),
    '--out',
    out,
    '--runner',
    'pytest',
  ];
  return { root, repos, calc, onig, inner, onigCommit, innerCommit, base, rows, out, args };
}

/** The notes of the one row imported, from --json. */
async function importNotes(args: string[]): Promise<string[]> {
  const result = await proctor([...args, '--json']);
  expect(result.code, result.stdout + result.stderr).toBe(0);
  const report = JSON.parse(result.stdout) as { rows: Array<{ status: string; notes: string[] }> };
  expect(report.rows.map((r) => r.status)).toEqual(['written']);
  return report.rows[0]?.notes ?? [];
}

/** A work tree of the bundle's snapshot, checked out as the image's build does. */
function snapshotTree(out: string): string {
  const clone = join(tempDir(), 'tree');
  const bundle = join(out, 'acme__calc-1', 'environment', 'proctor-base.bundle');
  execFileSync('git', ['clone', '-q', '-b', 'proctor-base', bundle, clone]);
  return clone;
}

describe('proctor import swebench and submodules', { timeout: 300_000 }, () => {
  it('reads OWNER/NAME from the URLs .gitmodules holds, relative ones against the superproject', () => {
    const cases: Array<[string, string | undefined]> = [
      ['https://github.com/kkos/oniguruma.git', 'kkos/oniguruma'],
      ['https://github.com/kkos/oniguruma', 'kkos/oniguruma'],
      ['https://github.com/kkos/oniguruma/', 'kkos/oniguruma'],
      ['git@github.com:kkos/oniguruma.git', 'kkos/oniguruma'],
      ['ssh://git@github.com/kkos/oniguruma.git', 'kkos/oniguruma'],
      ['git://github.com/kkos/oniguruma', 'kkos/oniguruma'],
      ['https://gitlab.com/group/sub/lib.git', 'sub/lib'],
      ['../oniguruma.git', 'jqlang/oniguruma'],
      ['./nested', 'jq/nested'],
      ['../../kkos/oniguruma', 'kkos/oniguruma'],
      ['https://github.com/kkos', undefined],
      ['/srv/git/oniguruma.git', undefined],
      ['file:///srv/git/oniguruma.git', undefined],
      ['../../../x', undefined],
      ['https://github.com/kkos/..', undefined],
      ['oniguruma', undefined],
    ];
    for (const [url, expected] of cases) {
      expect([url, repoOfUrl(url, 'jqlang/jq')]).toEqual([url, expected]);
    }
  });

  it('vendors a mirrored submodule and its nested one as ordinary files, and names where from', async () => {
    const f = fixture();
    const notes = await importNotes(f.args);
    expect(notes).toEqual([
      `submodule modules/onig vendored from ${join(f.repos, 'kkos__onig.git')} at ${f.onigCommit}`,
      `submodule modules/onig/deps/inner vendored from ${join(f.repos, 'kkos__inner')} at ${f.innerCommit}`,
    ]);
    const tree = snapshotTree(f.out);
    expect(readFileSync(join(tree, 'modules', 'onig', 'helper.py'), 'utf8')).toBe(HELPER);
    expect(readFileSync(join(tree, 'modules', 'onig', 'deps', 'inner', 'inner.txt'), 'utf8')).toBe(
      'inner\n',
    );
    // Ordinary tracked files, no gitlink left, and a clean status.
    expect(gitIn(tree, ['ls-tree', '-r', 'HEAD'])).not.toMatch(/^160000 /m);
    expect(gitIn(tree, ['ls-files', 'modules'])).toBe(
      [
        'modules/onig/.gitmodules',
        'modules/onig/deps/inner/inner.txt',
        'modules/onig/helper.py',
      ].join('\n'),
    );
    expect(gitIn(tree, ['status', '--porcelain', '--ignored'])).toBe('');
    expect(gitIn(tree, ['log', '-1', '--format=%B'])).toBe(
      [
        `Proctor snapshot of ${f.base}`,
        '',
        `Vendored submodule modules/onig at ${f.onigCommit}`,
        `Vendored submodule modules/onig/deps/inner at ${f.innerCommit}`,
      ].join('\n'),
    );
    const toml = readFileSync(join(f.out, 'acme__calc-1', 'task.toml'), 'utf8');
    expect(toml).toContain(`base_commit = "${gitIn(tree, ['rev-parse', 'HEAD'])}"`);
    // The same import again is the same bundle: the vendored snapshot is reproducible.
    const again = await proctor([...f.args, '--json']);
    const rows = (JSON.parse(again.stdout) as { rows: Array<{ status: string }> }).rows;
    expect(rows.map((r) => r.status)).toEqual(['unchanged']);
  });

  it('leaves a submodule empty with a note naming the mirror to add, or the commit it lacks', async () => {
    const f = fixture();
    rmSync(join(f.repos, 'kkos__onig.git'), { recursive: true });
    expect(await importNotes(f.args)).toEqual([
      `submodule modules/onig is left empty: no mirror of kkos/onig (https://github.com/kkos/onig.git); add ${join(f.repos, 'kkos__onig')}.git (a bare clone) to --repos with commit ${f.onigCommit} (tests in or needing it will be absent; docs/suites.md, Submodules)`,
    ]);
    const tree = snapshotTree(f.out);
    expect(gitIn(tree, ['ls-tree', 'HEAD', 'modules/onig'])).toBe(
      `160000 commit ${f.onigCommit}\tmodules/onig`,
    );
    expect(gitIn(tree, ['log', '-1', '--format=%B'])).toBe(`Proctor snapshot of ${f.base}`);

    // A mirror made before the gitlink's commit lacks it; the nested submodule is not reached.
    const g = fixture();
    const stale = join(g.repos, 'kkos__onig.git');
    rmSync(stale, { recursive: true });
    execFileSync('git', ['init', '-q', '--bare', stale]);
    expect(await importNotes(g.args)).toEqual([
      `submodule modules/onig is left empty: ${stale} lacks commit ${g.onigCommit}; fetch it into that mirror (tests in or needing it will be absent; docs/suites.md, Submodules)`,
    ]);

    // The nested one's mirror absent: the outer submodule is vendored, the inner one noted.
    const h = fixture();
    rmSync(join(h.repos, 'kkos__inner'), { recursive: true });
    const notes = await importNotes(h.args);
    expect(notes[0]).toBe(
      `submodule modules/onig vendored from ${join(h.repos, 'kkos__onig.git')} at ${h.onigCommit}`,
    );
    expect(notes[1]).toBe(
      `submodule modules/onig/deps/inner is left empty: no mirror of kkos/inner (../inner.git); add ${join(h.repos, 'kkos__inner')}.git (a bare clone) to --repos with commit ${h.innerCommit} (tests in or needing it will be absent; docs/suites.md, Submodules)`,
    );
    expect(notes).toHaveLength(2);
    const nested = snapshotTree(h.out);
    expect(readFileSync(join(nested, 'modules', 'onig', 'helper.py'), 'utf8')).toBe(HELPER);
    expect(gitIn(nested, ['ls-tree', 'HEAD', 'modules/onig/deps/inner'])).toBe(
      `160000 commit ${h.innerCommit}\tmodules/onig/deps/inner`,
    );
  });

  it('notes a gitlink that .gitmodules names no URL for, and a URL that names no repository', async () => {
    const f = fixture();
    const target = f.onigCommit;
    addSubmodule(f.calc, 'vendor/bare', target, undefined);
    addSubmodule(f.calc, 'vendor/local', target, '/srv/git/local.git');
    const base = commitWith(f.calc, {}, 'more submodules');
    const row = JSON.parse(readFileSync(f.rows, 'utf8')) as Record<string, unknown>;
    writeFileSync(f.rows, JSON.stringify({ ...row, base_commit: base }) + '\n');
    const notes = await importNotes(f.args);
    expect(notes).toEqual([
      expect.stringMatching(/^submodule modules\/onig vendored from /),
      expect.stringMatching(/^submodule modules\/onig\/deps\/inner vendored from /),
      `submodule vendor/bare is left empty: .gitmodules names no URL for vendor/bare, so no mirror of commit ${target} can be looked up (tests in or needing it will be absent; docs/suites.md, Submodules)`,
      `submodule vendor/local is left empty: its URL /srv/git/local.git names no OWNER/NAME to look up in --repos (commit ${target}) (tests in or needing it will be absent; docs/suites.md, Submodules)`,
    ]);
  });

  it("grades through the real oracle a task whose code and gold patch are in a vendored submodule's files", async () => {
    const f = fixture();
    await importNotes(f.args);
    const home = tempDir('proctor-home-');
    const baseline = await proctor(['--home', home, 'baseline', f.out, '--gold', '--wait']);
    expect(baseline.code, baseline.stdout + baseline.stderr).toBe(0);
    expect(baseline.stdout).toMatch(/1 valid, 0 quarantined/);
    expect(await leftovers(home)).toEqual([]);

    // Without the mirror, the submodule's module is absent: the existing test cannot even run,
    // and the baseline says the task is not sound.
    const g = fixture();
    rmSync(join(g.repos, 'kkos__onig.git'), { recursive: true });
    await importNotes(g.args);
    const other = tempDir('proctor-home-');
    const broken = await proctor(['--home', other, 'baseline', g.out, '--gold', '--wait']);
    expect(broken.stdout).toMatch(/0 valid, 1 quarantined/);
    expect(await leftovers(other)).toEqual([]);
  });
});
