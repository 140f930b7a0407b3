// proctor import swebench on rows made from a real repository: the bundles it writes, every
// malformed field listed with its reason, id collisions, missing repositories and commits,
// re-runs and --force, and a written bundle that passes baseline --gold in real Docker.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/index.js';
import { proctor } from '../helpers/cli.js';
import { ROOT, spawnTs } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { leftovers } from '../helpers/home.js';
import { commit, newRepo, toolchainEnvironment } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';

const CALC = `def div(a, b):\n    return a / b\n`;
const FIXED = `def div(a, b):\n    if b == 0:\n        return None\n    return a / b\n`;
const TESTS = `from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n`;
const NEW_TESTS = `${TESTS}\n\ndef test_zero():\n    assert div(1, 0) is None\n`;

function diff(repo: string, a: string, b: string, path: string): string {
  return execFileSync('git', ['diff', '--binary', '--full-index', a, b, '--', path], {
    cwd: repo,
    encoding: 'utf8',
  });
}

/** Repositories under DIR/<owner>__<name>, one row's worth of fields, and an environment. */
function fixture(big = false) {
  const root = tempDir('proctor-import-');
  const repos = join(root, 'repos');
  const repo = newRepo(join(repos, 'acme__calc'));
  // A big incompressible file makes each row's snapshot slow enough to interrupt.
  const blob: Record<string, Buffer> = big
    ? { 'data/blob.bin': randomBytes(48 * 1024 * 1024) }
    : {};
  const base = commit(repo, { 'calc.py': CALC, 'tests/test_calc.py': TESTS, ...blob }, 'base');
  const fix = commit(repo, { 'calc.py': FIXED, 'tests/test_calc.py': NEW_TESTS }, 'fix');
  const row = {
    instance_id: 'acme__calc-1',
    repo: 'acme/calc',
    base_commit: base,
    patch: diff(repo, base, fix, 'calc.py'),
    test_patch: diff(repo, base, fix, 'tests'),
    FAIL_TO_PASS: JSON.stringify(['tests/test_calc.py::test_zero']),
    PASS_TO_PASS: JSON.stringify(['tests/test_calc.py::test_div']),
    problem_statement: 'div(1, 0) raises ZeroDivisionError; it should return None.',
    version: '1.0',
    created_at: '2024-02-01T00:00:00Z',
  };
  return { root, repos, row, environment: toolchainEnvironment(), out: join(root, 'suite') };
}

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

function rowsFile(root: string, text: string, name = 'rows.jsonl'): string {
  const path = join(root, name);
  writeFileSync(path, text);
  return path;
}

const importArgs = (f: ReturnType<typeof fixture>, rows: string, ...more: string[]) => [
  'import',
  'swebench',
  rows,
  '--repos',
  f.repos,
  '--environment',
  f.environment,
  '--out',
  f.out,
  // acme/calc has no dialect in the table (dialects.test.ts covers the table and its reasons).
  '--runner',
  'pytest',
  ...more,
];

describe('proctor import swebench', { timeout: 300_000 }, () => {
  it('writes one bundle per row, with its lists, patches, description and [source]', async () => {
    const f = fixture();
    const lower = {
      ...f.row,
      instance_id: 'acme__calc-2',
      FAIL_TO_PASS: undefined,
      PASS_TO_PASS: undefined,
      fail_to_pass: ['tests/test_calc.py::test_zero'],
      pass_to_pass: [],
      dataset: 'SWE-bench/SWE-bench_Multilingual',
    };
    const rows = rowsFile(f.root, jsonl([f.row, lower]));
    const result = await proctor(importArgs(f, rows));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('2 written, 0 rewritten, 0 unchanged, 0 skipped');
    const bundle = await loadBundle(join(f.out, 'acme__calc-1'));
    expect(bundle.hiddenIds).toEqual(['tests/test_calc.py::test_zero']);
    expect(bundle.existingIds).toEqual(['tests/test_calc.py::test_div']);
    expect(bundle.workdir).toBe('/testbed');
    expect(bundle.grading.deny).toEqual(['tests/test_calc.py', '**/conftest.py']);
    expect(readFileSync(bundle.paths.hiddenPatch, 'utf8')).toBe(f.row.test_patch);
    expect(readFileSync(bundle.paths.goldPatch ?? '', 'utf8')).toBe(f.row.patch);
    expect(readFileSync(bundle.paths.runner, 'utf8')).toContain("Proctor's built-in pytest runner");
    const toml = readFileSync(join(bundle.dir, 'task.toml'), 'utf8');
    expect(toml).toContain('instance_id = "acme__calc-1"');
    expect(toml).toContain(`base_commit = "${f.row.base_commit}"`);
    expect(toml).toContain('version = "1.0"');
    // [source] dataset: the rows file's name, unless the row names its dataset.
    expect(toml).toContain('dataset = "rows.jsonl"');
    const second = await loadBundle(join(f.out, 'acme__calc-2'));
    expect(second.existingIds).toEqual([]);
    expect(readFileSync(join(second.dir, 'task.toml'), 'utf8')).toContain(
      'dataset = "SWE-bench/SWE-bench_Multilingual"',
    );

    // Again: nothing changes; a changed row is refused unless --force.
    const again = await proctor(importArgs(f, rows));
    expect(again.stdout).toContain('0 written, 0 rewritten, 2 unchanged, 0 skipped');
    const changed = rowsFile(f.root, jsonl([{ ...f.row, problem_statement: 'Other words.' }]));
    const refused = await proctor(importArgs(f, changed));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/skipped row 1 \(acme__calc-1\): .*exists and differs; --force/);
    const forced = await proctor(importArgs(f, changed, '--force'));
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('1 rewritten');
    expect(readFileSync(join(f.out, 'acme__calc-1', 'description.md'), 'utf8')).toBe(
      'Other words.\n',
    );
  });

  it('lists every malformed field, collision and missing repository, and imports the rest', async () => {
    const f = fixture();
    const bad = (fields: Record<string, unknown>, id: string) => ({
      ...f.row,
      instance_id: id,
      ...fields,
    });
    const rows = [
      f.row,
      bad({ instance_id: undefined }, ''),
      bad({ repo: 'acme' }, 'r-repo'),
      bad({ base_commit: 'HEAD' }, 'r-base'),
      bad({ patch: '' }, 'r-patch'),
      bad({ test_patch: undefined }, 'r-test-patch'),
      bad({ FAIL_TO_PASS: '[not json' }, 'r-f2p-json'),
      bad({ FAIL_TO_PASS: '[]' }, 'r-f2p-empty'),
      bad({ PASS_TO_PASS: 7 }, 'r-p2p'),
      bad({ problem_statement: ' ' }, 'r-statement'),
      bad({ version: { major: 1 } }, 'r-version'),
      bad({ environment_setup_commit: 'abc' }, 'r-setup'),
      bad({ repo: 'acme/missing' }, 'r-no-repo'),
      bad({ base_commit: 'f'.repeat(40) }, 'r-no-commit'),
      bad({}, 'ACME__calc-1'),
      bad({}, 'acme__calc-3'),
    ];
    const text = jsonl(rows) + '{"instance_id": \n' + '[1, 2]\n';
    const result = await proctor(importArgs(f, rowsFile(f.root, text)));
    expect(result.code).toBe(1);
    const out = result.stdout;
    expect(out).toContain('skipped row 2: instance_id is missing');
    expect(out).toContain('skipped row 3 (r-repo): repo must be owner/name');
    expect(out).toContain('skipped row 4 (r-base): base_commit must be 40 lowercase hex digits');
    expect(out).toContain('skipped row 5 (r-patch): patch is empty');
    expect(out).toContain('skipped row 6 (r-test-patch): test_patch is missing');
    expect(out).toContain('skipped row 7 (r-f2p-json): FAIL_TO_PASS is a string but not JSON');
    expect(out).toContain('skipped row 8 (r-f2p-empty): FAIL_TO_PASS is empty');
    expect(out).toContain(
      'skipped row 9 (r-p2p): PASS_TO_PASS must be a list or a JSON-encoded list',
    );
    expect(out).toContain('skipped row 10 (r-statement): problem_statement is empty');
    expect(out).toContain('skipped row 11 (r-version): version must be a string or a number');
    expect(out).toContain(
      'skipped row 12 (r-setup): environment_setup_commit must be 40 lowercase hex digits',
    );
    expect(out).toMatch(/skipped row 13 \(r-no-repo\): repository acme\/missing not found/);
    expect(out).toContain(`skipped row 14 (r-no-commit): base_commit ${'f'.repeat(40)} is not in`);
    expect(out).toContain(
      'skipped row 1 (acme__calc-1): id acme__calc-1 collides with row 15 (instance_id "ACME__calc-1")',
    );
    expect(out).toContain(
      'skipped row 15 (ACME__calc-1): id acme__calc-1 collides with row 1 (instance_id "acme__calc-1")',
    );
    expect(out).toContain('skipped row 17: is not valid JSON');
    expect(out).toContain('skipped row 18: is not a JSON object');
    expect(out).toMatch(/written\s+acme__calc-3 {2}row 16/);
    expect(out).toContain('1 written, 0 rewritten, 0 unchanged, 17 skipped');
  });

  it("finds a bare <owner>__<name>.git and prefers that repository's own Dockerfile", async () => {
    const f = fixture();
    const bare = join(f.repos, 'acme__calc.git');
    execFileSync('git', ['clone', '-q', '--bare', join(f.repos, 'acme__calc'), bare]);
    rmSync(join(f.repos, 'acme__calc'), { recursive: true, force: true });
    // A shared context holding one repository's own folder, and one for another repository.
    const envs = tempDir('proctor-envs-');
    writeFileSync(join(envs, 'Dockerfile'), 'FROM debian:bookworm-slim\n# shared\n');
    writeFileSync(join(envs, 'shared.txt'), 'for every repository\n');
    mkdirSync(join(envs, 'acme__calc'));
    writeFileSync(join(envs, 'acme__calc', 'Dockerfile'), 'FROM debian:bookworm-slim\n# calc\n');
    mkdirSync(join(envs, 'acme__other'));
    writeFileSync(join(envs, 'acme__other', 'Dockerfile'), 'FROM debian:bookworm-slim\n# other\n');
    const other = newRepo(join(f.repos, 'acme__web'));
    const otherBase = commit(other, { 'web.py': 'x = 1\n' }, 'base');
    const rows = [
      f.row,
      { ...f.row, instance_id: 'acme__web-1', repo: 'acme/web', base_commit: otherBase },
    ];
    const result = await proctor([
      ...['import', 'swebench', rowsFile(f.root, jsonl(rows))],
      ...['--repos', f.repos, '--environment', envs, '--out', f.out, '--runner', 'pytest'],
    ]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const own = join(f.out, 'acme__calc-1', 'environment');
    expect(readFileSync(join(own, 'Dockerfile'), 'utf8')).toMatch(
      /^FROM debian:bookworm-slim\n# calc\n/,
    );
    expect(readdirSync(own).sort()).toEqual(['Dockerfile', 'proctor-base.bundle']);
    // The shared context, without the folders that are other repositories' own contexts.
    const shared = join(f.out, 'acme__web-1', 'environment');
    expect(readFileSync(join(shared, 'Dockerfile'), 'utf8')).toMatch(
      /^FROM debian:bookworm-slim\n# shared\n/,
    );
    expect(readdirSync(shared).sort()).toEqual(['Dockerfile', 'proctor-base.bundle', 'shared.txt']);
  });

  it("takes the environment of the row's version, then of its repository, then DIR, and says which", async () => {
    const f = fixture();
    const envs = tempDir('proctor-envs-');
    const dockerfile = (dir: string, tag: string) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'Dockerfile'), `FROM debian:bookworm-slim\n# ${tag}\n`);
    };
    dockerfile(envs, 'shared');
    dockerfile(join(envs, 'acme__calc'), 'calc');
    writeFileSync(join(envs, 'acme__calc', 'calc.txt'), 'for every version of calc\n');
    dockerfile(join(envs, 'acme__calc', '1.0'), 'calc 1.0');
    dockerfile(join(envs, 'acme__calc', '1.11'), 'calc 1.11');
    // Versions only, no Dockerfile of the repository's own: a version not there takes DIR's.
    dockerfile(join(envs, 'acme__other', '0.1'), 'other 0.1');
    const other = newRepo(join(f.repos, 'acme__other'));
    const otherBase = commit(other, { 'o.py': 'x = 1\n' }, 'base');
    const rows = [
      f.row,
      { ...f.row, instance_id: 'acme__calc-2', version: '1.11' },
      { ...f.row, instance_id: 'acme__calc-3', version: '2.0' },
      { ...f.row, instance_id: 'acme__calc-4', version: undefined },
      {
        ...f.row,
        instance_id: 'acme__other-1',
        repo: 'acme/other',
        base_commit: otherBase,
        version: '0.2',
      },
    ];
    const result = await proctor([
      ...['import', 'swebench', rowsFile(f.root, jsonl(rows))],
      ...['--repos', f.repos, '--environment', envs, '--out', f.out, '--runner', 'pytest'],
    ]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const used = (id: string) =>
      new RegExp(`^written\\s+${id} .*  environment (\\S+)$`, 'm').exec(result.stdout)?.[1];
    expect(used('acme__calc-1')).toBe(join(envs, 'acme__calc', '1.0'));
    expect(used('acme__calc-2')).toBe(join(envs, 'acme__calc', '1.11'));
    expect(used('acme__calc-3')).toBe(join(envs, 'acme__calc'));
    expect(used('acme__calc-4')).toBe(join(envs, 'acme__calc'));
    expect(used('acme__other-1')).toBe(envs);
    const context = (id: string) => join(f.out, id, 'environment');
    expect(readFileSync(join(context('acme__calc-2'), 'Dockerfile'), 'utf8')).toMatch(
      /^FROM debian:bookworm-slim\n# calc 1.11\n/,
    );
    expect(readdirSync(context('acme__calc-1')).sort()).toEqual([
      'Dockerfile',
      'proctor-base.bundle',
    ]);
    // The repository's own context, without its version folders; DIR's, without any
    // repository's folder.
    expect(readdirSync(context('acme__calc-3')).sort()).toEqual([
      'Dockerfile',
      'calc.txt',
      'proctor-base.bundle',
    ]);
    expect(readdirSync(context('acme__other-1')).sort()).toEqual([
      'Dockerfile',
      'proctor-base.bundle',
    ]);
    const json = await proctor([
      ...['import', 'swebench', rowsFile(f.root, jsonl(rows.slice(0, 1))), '--json'],
      ...['--repos', f.repos, '--environment', envs, '--out', f.out, '--runner', 'pytest'],
    ]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      rows: [
        { id: 'acme__calc-1', status: 'unchanged', environment: join(envs, 'acme__calc', '1.0') },
      ],
    });
  });

  it('refuses a row whose version folder has no Dockerfile, naming the folder, and one with no Dockerfile anywhere', async () => {
    const f = fixture();
    const envs = tempDir('proctor-envs-');
    writeFileSync(join(envs, 'README'), 'no Dockerfile here\n');
    mkdirSync(join(envs, 'acme__calc', '1.0'), { recursive: true });
    writeFileSync(join(envs, 'acme__calc', '1.0', 'install.sh'), 'true\n');
    const rows = [f.row, { ...f.row, instance_id: 'acme__calc-2', version: '3.0' }];
    const result = await proctor([
      ...['import', 'swebench', rowsFile(f.root, jsonl(rows))],
      ...['--repos', f.repos, '--environment', envs, '--out', f.out, '--runner', 'pytest'],
    ]);
    expect(result.code).toBe(1);
    const versioned = join(envs, 'acme__calc', '1.0');
    expect(result.stdout).toContain(
      `skipped row 1 (acme__calc-1): ${versioned} exists but holds no Dockerfile (the environment of version 1.0)\n`,
    );
    const own = join(envs, 'acme__calc');
    expect(result.stdout).toContain(
      `skipped row 2 (acme__calc-2): no Dockerfile in ${join(own, '3.0')}, ${own} or ${envs}\n`,
    );
    expect(result.stdout).toContain('0 written, 0 rewritten, 0 unchanged, 2 skipped');
  });

  it('refuses a ROWS, --repos, --environment or --out that cannot be one, and a pretty-printed row, in one line (exit 2)', async () => {
    const f = fixture();
    const rows = rowsFile(f.root, jsonl([f.row]));
    const file = rowsFile(f.root, 'not a folder\n', 'file.txt');
    const cases: Array<[string[], RegExp]> = [
      // A folder is read as a task repository (task-repo.test.ts); this one is none.
      [
        importArgs(f, f.root),
        /^proctor: \S+: a folder, but not a task repository \(no sweb\.yaml, no tasks\/ folder\); ROWS is a rows file or a task repository$/,
      ],
      [importArgs(f, join(f.root, 'none.jsonl')), /^proctor: \S+none.jsonl: cannot be read$/],
      [
        [...importArgs(f, rows), '--repos', join(f.root, 'nowhere')],
        /^proctor: --repos \S+nowhere: not a folder$/,
      ],
      [
        [...importArgs(f, rows), '--environment', file],
        /^proctor: --environment \S+file.txt: not a folder$/,
      ],
      [
        [...importArgs(f, rows), '--out', file],
        /^proctor: --out \S+file.txt: exists and is not a folder$/,
      ],
      [
        [...importArgs(f, rows), '--out', join(file, 'suite')],
        /^proctor: --out \S+file.txt\/suite: \S+file.txt is not a folder$/,
      ],
      [
        importArgs(f, rowsFile(f.root, JSON.stringify(f.row, null, 2), 'row.json')),
        /^proctor: \S+row.json: one JSON object over several lines; expected JSON lines \(a row per line\) or a JSON array$/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await proctor(args);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr.trimEnd()).toMatch(message);
      expect(result.stdout).toBe('');
    }
    expect(readdirSync(f.root).sort()).toEqual(['file.txt', 'repos', 'row.json', 'rows.jsonl']);
  });

  it('notes a base commit with a submodule it cannot vendor, which the workspace leaves empty', async () => {
    const f = fixture();
    const repo = join(f.repos, 'acme__calc');
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
    git('checkout', '-q', f.row.base_commit);
    git('update-index', '--add', '--cacheinfo', `160000,${'a'.repeat(40)},modules/onig`);
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'submodule');
    const withSubmodule = {
      ...f.row,
      instance_id: 'acme__calc-5',
      base_commit: git('rev-parse', 'HEAD'),
    };
    const rows = rowsFile(f.root, jsonl([f.row, withSubmodule]));
    const result = await proctor(importArgs(f, rows));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    const at = lines.findIndex((l) => /written\s+acme__calc-5 /.test(l));
    expect(lines[at + 1]).toBe(
      `  note: submodule modules/onig is left empty: .gitmodules names no URL for modules/onig, so no mirror of commit ${'a'.repeat(40)} can be looked up (tests in or needing it will be absent; docs/suites.md, Submodules)`,
    );
    // The row without one has no note.
    const plain = lines.findIndex((l) => /written\s+acme__calc-1 /.test(l));
    expect(lines[plain + 1]).not.toContain('note:');
    const json = await proctor(importArgs(f, rows, '--json'));
    const outcomes = (JSON.parse(json.stdout) as { rows: Array<{ id: string; notes: string[] }> })
      .rows;
    expect(outcomes.find((o) => o.id === 'acme__calc-5')?.notes).toHaveLength(1);
    expect(outcomes.find((o) => o.id === 'acme__calc-1')?.notes).toEqual([]);
  });

  it('names the rest of the malformed fields, and reads a file that starts with a byte-order mark', async () => {
    const f = fixture();
    const rows = [
      { ...f.row, instance_id: 'r-hints', hints_text: 3 },
      { ...f.row, instance_id: 'r-created', created_at: 20240101 },
      { ...f.row, instance_id: 'r-f2p-items', FAIL_TO_PASS: ['ok', 4] },
      { ...f.row, instance_id: 'r-f2p-line', FAIL_TO_PASS: ['a\nb'] },
      { ...f.row, instance_id: 'r-p2p-object', PASS_TO_PASS: '{"a": 1}' },
      { ...f.row, instance_id: 'r-none', test_patch: 'not a diff at all\n' },
      { ...f.row, instance_id: 'r-patch-type', patch: 12 },
      { ...f.row, instance_id: 'r-nulls', version: null, hints_text: null, dataset: null },
      { ...f.row, instance_id: 'r-dataset', dataset: ' ' },
    ];
    const result = await proctor(importArgs(f, rowsFile(f.root, '\uFEFF' + jsonl(rows))));
    expect(result.code).toBe(1);
    const out = result.stdout;
    expect(out).toContain('skipped row 1 (r-hints): hints_text must be a string');
    expect(out).toContain('skipped row 2 (r-created): created_at must be a string');
    expect(out).toContain(
      'skipped row 3 (r-f2p-items): FAIL_TO_PASS must be a list of non-empty strings',
    );
    expect(out).toContain(
      'skipped row 4 (r-f2p-line): FAIL_TO_PASS has an ID with a line break or NUL: "a\\nb"',
    );
    expect(out).toContain(
      'skipped row 5 (r-p2p-object): PASS_TO_PASS must be a list of non-empty strings',
    );
    expect(out).toMatch(/skipped row 6 \(r-none\): test_patch is not a git diff/);
    expect(out).toContain('skipped row 7 (r-patch-type): patch must be a string');
    expect(out).toMatch(/written\s+r-nulls {2}row 8/);
    expect(out).toContain('skipped row 9 (r-dataset): dataset is empty');
    expect(out).toContain('1 written, 0 rewritten, 0 unchanged, 8 skipped');
  });

  it('reads a JSON array, imports only the rows asked for, and its bundle passes baseline --gold', async () => {
    const f = fixture();
    const other = { ...f.row, instance_id: 'acme__calc-9', repo: 'acme/missing' };
    const rows = rowsFile(f.root, JSON.stringify([other, f.row]), 'rows.json');
    const home = tempDir('proctor-home-');
    // Ids apart, or joined by commas.
    const result = await proctor(
      importArgs(f, rows, '--only', 'acme__calc-1,nope', 'nope2', '--json'),
    );
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as {
      rows: Array<{ id: string; status: string }>;
      unknownOnly: string[];
    };
    expect(report.rows).toEqual([
      expect.objectContaining({ id: 'acme__calc-1', status: 'written' }),
    ]);
    expect(report.unknownOnly).toEqual(['nope', 'nope2']);
    const baseline = await proctor(['--home', home, 'baseline', f.out, '--gold', '--wait']);
    expect(baseline.code, baseline.stdout + baseline.stderr).toBe(0);
    expect(baseline.stdout).toMatch(/1 valid, 0 quarantined/);
    expect(await leftovers(home)).toEqual([]);
  });

  it('keeps the bundles written so far and no half-written one when interrupted (exit 130)', async () => {
    const f = fixture(true);
    const rows = Array.from({ length: 8 }, (_, i) => ({
      ...f.row,
      instance_id: `acme__calc-${i}`,
    }));
    const child = spawnTs(join(ROOT, 'bin', 'proctor.js'), [
      ...['--home', tempDir('proctor-home-')],
      ...importArgs(f, rowsFile(f.root, jsonl(rows))),
    ]);
    await waitFor(() => /^written /m.test(child.stdout()), {
      what: 'the first bundle to be written',
      timeoutMs: 60_000,
    });
    child.process.kill('SIGINT');
    const { code } = await child.exited;
    expect(code, child.stdout() + child.stderr()).toBe(130);
    expect(child.stderr()).toContain('proctor: import: interrupted; the bundles written so far');
    const written = [...child.stdout().matchAll(/^written\s+(\S+)/gm)].map((m) => m[1]);
    expect(written.length).toBeGreaterThan(0);
    expect(written.length).toBeLessThan(8);
    expect(readdirSync(f.out).sort()).toEqual([...written].sort());
    for (const id of written) await loadBundle(join(f.out, id ?? ''));
  });
});
