// Proctor's git inside an image with an older git than bookworm's: Debian bullseye's 2.30
// (every script must work with git 2.20 or newer). A repository cloned into /testbed by the
// Dockerfile, as SWE-bench's images do, with refs/remotes/origin/HEAD naming a branch that
// exists, or naming nothing (a single-branch clone whose remote was removed), or owned by
// another user (older git checks ownership but ignores -c safe.directory): the row imports,
// baseline --gold finds it valid (HEAD probe, snapshot stage, template, the oracle's git apply
// and the built-in pytest runner on Python 3.9 and pytest 6.0), a grade of the gold patch
// passes, and a workspace made from the image's template is captured from.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/index.js';
import { capturePatch } from '../../src/sandbox/capture.js';
import { hardenedContainerOptions } from '../../src/sandbox/profile.js';
import { resolveImage } from '../../src/sandbox/image.js';
import { runToCompletion } from '../../src/sandbox/run.js';
import { createWorkspace } from '../../src/sandbox/workspace.js';
import { proctor } from '../helpers/cli.js';
import { dockerScope, execFileAsync, testDocker } from '../helpers/docker.js';
import { leftovers } from '../helpers/home.js';
import { commit, gitIn, newRepo } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';
import { baseImage } from '../helpers/test-tools.js';

const docker = testDocker();
const scope = dockerScope(docker, 'old-git');

const CALC = `def div(a, b):\n    return a / b\n`;
const FIXED = `def div(a, b):\n    if b == 0:\n        return None\n    return a / b\n`;
const TESTS = `from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n`;
const NEW_TESTS = `${TESTS}\n\ndef test_zero():\n    assert div(1, 0) is None\n`;

const diff = (repo: string, a: string, b: string, path: string) =>
  execFileSync('git', ['diff', '--binary', '--full-index', a, b, '--', path], {
    cwd: repo,
    encoding: 'utf8',
  });

/** A row of acme/calc and an environment on bullseye whose Dockerfile clones it by `clone`. */
function fixture(clone: string) {
  const root = tempDir('proctor-old-git-');
  const repo = newRepo(join(root, 'repos', 'acme__calc'));
  const base = commit(
    repo,
    { 'calc.py': CALC, 'tests/test_calc.py': TESTS, 'pytest.ini': '[pytest]\n' },
    'base',
  );
  const fix = commit(repo, { 'calc.py': FIXED, 'tests/test_calc.py': NEW_TESTS }, 'fix');
  const row = {
    instance_id: 'acme__calc-1',
    repo: 'acme/calc',
    base_commit: base,
    patch: diff(repo, base, fix, 'calc.py'),
    test_patch: diff(repo, base, fix, 'tests'),
    FAIL_TO_PASS: ['tests/test_calc.py::test_zero'],
    PASS_TO_PASS: ['tests/test_calc.py::test_div'],
    problem_statement: 'div(1, 0) raises ZeroDivisionError; it should return None.',
    version: '1.0',
  };
  const env = join(root, 'env', 'acme__calc');
  mkdirSync(env, { recursive: true });
  cpSync(repo, join(env, 'src'), { recursive: true });
  writeFileSync(
    join(env, 'Dockerfile'),
    ['FROM proctor-test-pytest-bullseye:latest', 'COPY src /src', `RUN ${clone}`, ''].join('\n'),
  );
  // A forgery the built-in runner's base-configuration layer alone catches: a pytest.ini
  // loading a plugin of the candidate's that reports every test passed.
  gitIn(repo, ['checkout', '-q', '-b', 'forged', base]);
  const forged = commit(
    repo,
    {
      'pytest.ini': '[pytest]\naddopts = -p calc_plugin\n',
      'calc_plugin.py': [
        'import pytest',
        '',
        '',
        '@pytest.hookimpl(hookwrapper=True)',
        'def pytest_runtest_makereport(item, call):',
        '    outcome = yield',
        '    outcome.get_result().outcome = "passed"',
        '',
      ].join('\n'),
    },
    'forged',
  );
  writeFileSync(join(root, 'forged.patch'), diff(repo, base, forged, '.'));
  const rows = join(root, 'rows.jsonl');
  writeFileSync(rows, `${JSON.stringify(row)}\n`);
  const out = join(root, 'suite');
  return { root, rows, repos: join(root, 'repos'), env: join(root, 'env'), out, row };
}

const CLONES: Array<[string, string]> = [
  ['origin/HEAD names an existing branch (git clone)', 'git clone -q /src /testbed'],
  [
    'origin/HEAD names nothing (a single-branch clone whose remote was removed)',
    'git clone -q --depth 1 file:///src /testbed && git -C /testbed remote remove origin' +
      ' && test "$(cat /testbed/.git/refs/remotes/origin/HEAD)" = "ref: refs/remotes/origin/main"',
  ],
  [
    'the work tree belongs to a user that is neither root nor the sandbox uid',
    'git clone -q /src /testbed && chown -R 1234:1234 /testbed',
  ],
];

describe('git 2.30 inside the image (debian:bullseye-slim)', { timeout: 600_000 }, () => {
  beforeAll(() => {
    baseImage('bullseye');
  }, 300_000);

  it.each(CLONES)(
    'imports a row, passes baseline --gold and grades the gold patch PASS when %s',
    async (_, clone) => {
      const f = fixture(clone);
      const imported = await proctor([
        ...['import', 'swebench', f.rows, '--repos', f.repos],
        ...['--environment', f.env, '--out', f.out, '--runner', 'pytest'],
      ]);
      expect(imported.code, imported.stdout + imported.stderr).toBe(0);
      const home = tempDir('proctor-home-');
      const baseline = await proctor(['--home', home, 'baseline', f.out, '--gold', '--wait']);
      expect(baseline.code, baseline.stdout + baseline.stderr).toBe(0);
      expect(baseline.stdout).toMatch(/1 valid, 0 quarantined/);
      // The HEAD probe as another uid than the tree's owner.
      const validated = await proctor(['--home', home, 'validate', f.out]);
      expect(validated.code, validated.stdout + validated.stderr).toBe(0);
      const task = join(f.out, 'acme__calc-1');
      const gold = (await loadBundle(task)).paths.goldPatch ?? '';
      const graded = await proctor(['--home', home, 'grade', task, '--patch', gold, '--wait']);
      expect(graded.code, graded.stdout + graded.stderr).toBe(0);
      expect(graded.stdout).toMatch(/PASS/);
      // The runner reads HEAD's configuration with this git too (the collector's uid does not
      // own the tree): a candidate's pytest.ini that loads its own plugin does not pass.
      const forgery = join(f.root, 'forged.patch');
      const caught = await proctor(['--home', home, 'grade', task, '--patch', forgery, '--wait']);
      expect(caught.code, caught.stdout + caught.stderr).toBe(1);
      expect(caught.stdout).toMatch(/FAIL/);
      expect(await leftovers(home)).toEqual([]);
    },
  );

  it("lets the built-in pytest runner read HEAD's configuration as a uid that does not own the tree", async () => {
    const f = fixture(CLONES[0]?.[1] ?? '');
    const imported = await proctor([
      ...['import', 'swebench', f.rows, '--repos', f.repos],
      ...['--environment', f.env, '--out', f.out, '--runner', 'pytest'],
    ]);
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const bundle = await loadBundle(join(f.out, 'acme__calc-1'));
    const image = (await resolveImage(docker, bundle.environment)).localId;
    // The runner's base-configuration layer: without it a candidate's pytest.ini is obeyed.
    const probe = await runToCompletion(
      docker,
      {
        owner: scope.owner(),
        role: 'probe',
        image,
        uid: 1000,
        gid: 1000,
        workdir: '/testbed',
        // Compressed: one environment string may hold 128 KiB, which the runner passes.
        env: { RUNNER: gzipSync(readFileSync(bundle.paths.runner)).toString('base64') },
        cmd: [
          'python3',
          '-c',
          [
            'import base64, os, types, zlib',
            "m = types.ModuleType('runner')",
            "source = zlib.decompress(base64.b64decode(os.environ['RUNNER']), 31).decode()",
            "exec(compile(source, 'run', 'exec'), m.__dict__)",
            'base = m.BaseConfig.from_git(safe=True)',
            "print(sorted(base.shas) if base is not None else 'no base configuration')",
          ].join('\n'),
        ],
      },
      { timeoutMs: 60_000 },
    );
    expect(probe.stdout.trim(), probe.stderr).toBe("['pytest.ini']");
  });

  it('makes a template and a workspace with nothing but the base commit, and captures from it', async () => {
    const f = fixture(CLONES[1]?.[1] ?? '');
    const imported = await proctor([
      ...['import', 'swebench', f.rows, '--repos', f.repos],
      ...['--environment', f.env, '--out', f.out, '--runner', 'pytest'],
    ]);
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const bundle = await loadBundle(join(f.out, 'acme__calc-1'));
    const image = (await resolveImage(docker, bundle.environment)).localId;
    const owner = scope.templateOwner();
    const spec = {
      owner,
      image,
      repoPath: '/testbed',
      baseCommit: bundle.baseCommit,
      uid: 1000,
      gid: 1000,
    };
    for (const history of ['full', 'none'] as const) {
      const volume = await createWorkspace(docker, { ...spec, role: 'solver', history });
      const probe = await runToCompletion(
        docker,
        {
          owner,
          role: 'probe',
          image,
          uid: 1000,
          gid: 1000,
          workdir: '/workspace',
          workspace: { volume, target: '/workspace' },
          env: { HOME: '/tmp' },
          cmd: [
            'sh',
            '-c',
            'git --version; git rev-parse HEAD; git for-each-ref; git status --porcelain; git rev-list --all | wc -l; echo done',
          ],
        },
        { timeoutMs: 60_000 },
      );
      expect(probe.stderr, history).toBe('');
      const lines = probe.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^git version 2\.30\./);
      expect(lines.slice(1), history).toEqual([bundle.baseCommit, '1', 'done']);
    }

    const volume = await createWorkspace(docker, { ...spec, role: 'solver' });
    const container = await docker.createContainer(
      hardenedContainerOptions({
        owner,
        role: 'solver',
        image,
        cmd: ['sleep', 'infinity'],
        uid: 1000,
        gid: 1000,
        workdir: '/workspace',
        workspace: { volume, target: '/workspace' },
      }),
    );
    await container.start();
    await execFileAsync('docker', [
      ...['exec', container.id, 'sh', '-c'],
      "printf 'def div(a, b):\\n    return None if b == 0 else a / b\\n' > calc.py; echo new > added.txt",
    ]);
    const captured = await capturePatch(docker, {
      owner,
      image,
      repoPath: '/testbed',
      baseCommit: bundle.baseCommit,
      volume,
      solverContainerId: container.id,
      uid: 1000,
      gid: 1000,
      patchBytes: 1024 * 1024,
      candidateFiles: 200,
    });
    expect(captured.files).toBe(2);
    expect(captured.patch.toString()).toContain('+    return None if b == 0 else a / b\n');
  });
});
