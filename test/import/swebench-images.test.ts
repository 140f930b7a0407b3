// SWE-bench rows on prebuilt images, end to end: an image laid out as SWE-bench's are (the
// project at /testbed at its base commit with its own history, installed in develop mode into
// a Python environment at /opt/miniconda3/envs/testbed that Debian's python3 does not see, run
// as root) is pushed to a real registry on 127.0.0.1; `proctor import swebench rows.parquet
// --images TEMPLATE` pins each row's image by digest with no Dockerfile and no repository, and
// `proctor baseline --gold --wait` pulls it and finds the task valid, its tests run on the
// environment's interpreter. A row whose image's HEAD is not its base_commit is quarantined,
// naming both; one whose image the registry lacks is skipped at import, in one line.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/index.js';
import { hostArch } from '../../src/import/images.js';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { writeRowsParquet } from '../helpers/parquet.js';
import { dockerCli, pushImage, startRegistry } from '../helpers/registry.js';
import { commit, gitIn, newRepo } from '../helpers/repos.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

const CALC = `def div(a, b):\n    return a / b\n`;
const FIXED = `def div(a, b):\n    if b == 0:\n        return None\n    return a / b\n`;
const TESTS = `from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n`;
const NEW_TESTS = `${TESTS}\n\ndef test_zero():\n    assert div(1, 0) is None\n`;
// A src layout: only an interpreter the project is installed into can import `calc`.
const SETUP = `from setuptools import setup\n\nsetup(name="calc", version="0.1", packages=["calc"], package_dir={"": "src"})\n`;

const DOCKERFILE = [
  'FROM debian:bookworm-slim',
  'RUN apt-get update \\',
  ' && apt-get install -y --no-install-recommends git python3 python3-venv python3-pytest python3-setuptools \\',
  ' && rm -rf /var/lib/apt/lists/*',
  // conda's layout, imitated: the project's environment under /opt/miniconda3/envs/testbed.
  'RUN python3 -m venv --system-site-packages /opt/miniconda3/envs/testbed',
  'COPY testbed /testbed',
  'WORKDIR /testbed',
  'RUN /opt/miniconda3/envs/testbed/bin/pip install --no-deps --no-build-isolation --no-index -e .',
  '',
].join('\n');

function diff(repo: string, a: string, b: string, path: string): string {
  return execFileSync('git', ['diff', '--binary', '--full-index', a, b, '--', path], {
    cwd: repo,
    encoding: 'utf8',
  });
}

/** The repository, its row, and an image of it at the base commit, tagged locally. */
async function swebenchImage() {
  const root = tempDir('proctor-images-');
  const repo = newRepo(join(root, 'repo'));
  const base = commit(
    repo,
    {
      'setup.py': SETUP,
      'src/calc/__init__.py': CALC,
      'tests/test_calc.py': TESTS,
      '.gitignore': '*.egg-info/\nbuild/\n__pycache__/\n',
    },
    'base',
  );
  const fix = commit(
    repo,
    { 'src/calc/__init__.py': FIXED, 'tests/test_calc.py': NEW_TESTS },
    'fix',
  );
  // The image's own clone, at the base commit, with no remote (as SWE-bench's are made).
  const context = join(root, 'context');
  execFileSync('git', ['clone', '-q', repo, join(context, 'testbed')]);
  gitIn(join(context, 'testbed'), ['reset', '-q', '--hard', base]);
  gitIn(join(context, 'testbed'), ['remote', 'remove', 'origin']);
  writeFileSync(join(context, 'Dockerfile'), DOCKERFILE);
  const tag = `proctor-test-swebench-layout:${randomBytes(4).toString('hex')}`;
  await dockerCli('build', '-q', '--network', 'host', '-t', tag, context);
  onCleanup(async () => {
    await dockerCli('rmi', tag).catch(() => undefined);
  });
  const row = {
    instance_id: 'acme__calc-1',
    repo: 'acme/calc',
    base_commit: base,
    patch: diff(repo, base, fix, 'src'),
    test_patch: diff(repo, base, fix, 'tests'),
    problem_statement: 'div(1, 0) raises ZeroDivisionError; it should return None.',
    hints_text: '',
    created_at: '2024-02-01T00:00:00Z',
    version: '0.1',
    environment_setup_commit: base,
    FAIL_TO_PASS: JSON.stringify(['tests/test_calc.py::test_zero']),
    PASS_TO_PASS: JSON.stringify(['tests/test_calc.py::test_div']),
  };
  return { root, tag, row, fix };
}

describe('proctor import swebench --images', { timeout: 900_000 }, () => {
  it('refuses an unknown convention or placeholder, and --images with --repos, in one line (exit 2)', async () => {
    const root = tempDir('proctor-images-');
    const rows = join(root, 'rows.jsonl');
    writeFileSync(rows, '');
    const out = join(root, 'suite');
    const cases: Array<[string[], string]> = [
      [
        ['--images', 'swe-bench'],
        '--images swe-bench: not a known convention (swebench, epoch) nor a template with a placeholder ({instance_id}, {instance_id_1776}, {repo}, {arch}, {version})',
      ],
      [
        ['--images', 'r/{nope}'],
        '--images r/{nope}: unknown placeholder {nope}; the placeholders are {instance_id}, {instance_id_1776}, {repo}, {arch}, {version}',
      ],
      [
        ['--images', 'swebench', '--repos', root],
        "--images takes each row's repository and environment from its image; drop --repos",
      ],
      [['--environment', root], '--repos is needed (or --images, for prebuilt images)'],
    ];
    for (const [args, message] of cases) {
      const result = await proctor(['import', 'swebench', rows, ...args, '--out', out]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toBe(`proctor: ${message}\n`);
      expect(result.stdout).toBe('');
    }
    expect(existsSync(out)).toBe(false);
  });

  it('pins each row to its image by digest, and baseline --gold pulls it and finds the task valid', async () => {
    const { root, tag, row, fix } = await swebenchImage();
    const { host } = await startRegistry();
    const name = (id: string) =>
      `${host}/swebench/sweb.eval.${hostArch()}.${id.toLowerCase().replaceAll('__', '_1776_')}:latest`;
    const digest = await pushImage(tag, name('acme__calc-1'));
    // The same image for a row that says another base commit.
    await pushImage(tag, name('acme__calc-2'));
    // Only the registry has them now: baseline must pull.
    await dockerCli('rmi', name('acme__calc-1'), name('acme__calc-2'));
    const rows = join(root, 'test-00000-of-00001.parquet');
    writeRowsParquet(rows, [
      row,
      { ...row, instance_id: 'acme__calc-2', base_commit: fix },
      { ...row, instance_id: 'acme__calc-3' },
    ]);
    const out = join(root, 'suite');
    const template = `${host}/swebench/sweb.eval.{arch}.{instance_id_1776}`;
    const imported = await proctor([
      'import',
      'swebench',
      rows,
      '--images',
      template,
      '--out',
      out,
    ]);
    expect(imported.code, imported.stdout + imported.stderr).toBe(1);
    expect(imported.stdout).toMatch(
      new RegExp(
        `written\\s+acme__calc-1 {2}row 1 \\(acme__calc-1\\) {2}runner pytest \\([^)]*\\)[^\\n]*environment image ${name('acme__calc-1').replaceAll('.', '\\.')}@${digest}`,
      ),
    );
    expect(imported.stdout).toContain(
      `skipped row 3 (acme__calc-3): image ${name('acme__calc-3')}: the registry refused: `,
    );
    expect(imported.stdout).toContain('2 written, 0 rewritten, 0 unchanged, 1 skipped');

    // No Dockerfile, no snapshot: the image, its work tree and the interpreter of its tests.
    const bundle = join(out, 'acme__calc-1');
    expect(existsSync(join(bundle, 'environment'))).toBe(false);
    const task = readFileSync(join(bundle, 'task.toml'), 'utf8');
    expect(task).toContain(`image = "${name('acme__calc-1')}@${digest}"`);
    expect(task).toContain('workdir = "/testbed"');
    expect(task).toContain(`base_commit = "${row.base_commit}"`);
    expect(task).toContain('RUNNER_PYTHON = "/opt/miniconda3/envs/testbed/bin/python"');
    await loadBundle(bundle);

    const home = tempDir('proctor-home-');
    const valid = await proctor(['--home', home, 'baseline', bundle, '--gold', '--wait']);
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
    expect(valid.stdout).toMatch(/1 valid, 0 quarantined/);
    // Pulled by digest: the engine now holds the pinned manifest.
    const pulled = await dockerCli('image', 'inspect', '--format', '{{json .RepoDigests}}', tag);
    expect(pulled).toContain(`@${digest}`);

    const wrongHead = await proctor([
      '--home',
      home,
      'baseline',
      join(out, 'acme__calc-2'),
      '--gold',
      '--wait',
    ]);
    expect(wrongHead.code, wrongHead.stdout + wrongHead.stderr).not.toBe(0);
    // The job errs (not judged: the image is not the task it claims), naming both commits.
    const job = /^acme__calc-2\s+error\s.*\s(\d+)\s*$/m.exec(wrongHead.stdout)?.[1];
    expect(job, wrongHead.stdout).toBeDefined();
    const status = await proctor(['--home', home, 'status', job ?? '', '--json']);
    expect(status.stdout).toContain(
      `HEAD of /testbed is ${row.base_commit}, not the base commit ${fix}`,
    );
    expect(await leftovers(home)).toEqual([]);
  });
});
