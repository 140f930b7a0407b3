// A row on an image built as SWE-bench's harness builds its instance images
// (make_repo_script_list_py): a clone reset to base_commit at /testbed, an environment at
// /opt/miniconda3/envs/testbed, the project installed in develop mode by a step that edits a
// tracked file (as SWE-bench's pre_install seds do) and generates a module the package imports
// and no .gitignore names, then `git commit --allow-empty -am SWE-bench` of the install's
// changes. Pushed to a real registry on 127.0.0.1 and imported with `--images TEMPLATE`, it is
// graded as it is: `validate` names the setup commit's parent, `baseline --gold` finds it valid
// on the setup commit's tree with the generated module, and capture reads a solver's changes on
// top of the setup commit, never the install's. A row whose base_commit is not the setup
// commit's parent is refused in one line.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { capturePatch } from '../../src/sandbox/capture.js';
import { startWithWorkspace } from '../../src/sandbox/workspace-start.js';
import { SETUP_COMMIT } from '../../bench/swebench-layout.js';
import { proctor } from '../helpers/cli.js';
import { dockerScope, execFileAsync, testDocker } from '../helpers/docker.js';
import { leftovers } from '../helpers/home.js';
import { dockerCli, startRegistry } from '../helpers/registry.js';
import {
  DEVELOP_INSTALL,
  erringBaseline,
  pushAsInstances,
  srcCalcImage,
  sweName,
} from '../helpers/swebench-layout.js';
import { tempDir } from '../helpers/temp.js';

const docker = testDocker();
const scope = dockerScope(docker, 'setup-commit');

// The package needs what the install left: the generated module (untracked, not ignored) and
// the tracked mode file as the setup commit has it.
const INIT = `from ._native import SCALE\nfrom .mode import MODE\n\n\ndef div(a, b):\n    return a / b * SCALE\n`;
const FIXED = `from ._native import SCALE\nfrom .mode import MODE\n\n\ndef div(a, b):\n    if b == 0:\n        return None\n    return a / b * SCALE\n`;
const TESTS = `import calc\nfrom calc import div\n\n\ndef test_div():\n    assert calc.MODE == "installed"\n    assert div(6, 3) == 2\n`;
const NEW_TESTS = `${TESTS}\n\ndef test_zero():\n    assert div(1, 0) is None\n`;
const BUILD = `open("src/calc/_native.py", "w").write("SCALE = 1\\n")\n`;

// SWE-bench's setup script, from the install on: pre_install, install, the build's output,
// then the commit of the install's changes to tracked files.
const SETUP_SCRIPT = [
  `RUN sed -i 's/MODE = "source"/MODE = "installed"/' src/calc/mode.py \\`,
  ` && ${DEVELOP_INSTALL} \\`,
  ' && /opt/miniconda3/envs/testbed/bin/python build_native.py \\',
  ` && ${SETUP_COMMIT}`,
];

async function setupCommitImage() {
  const root = tempDir('proctor-setup-commit-');
  const made = await srcCalcImage(
    root,
    'proctor-test-setup-commit',
    SETUP_SCRIPT,
    {
      'build_native.py': BUILD,
      'src/calc/__init__.py': INIT,
      'src/calc/mode.py': 'MODE = "source"\n',
      'tests/test_calc.py': TESTS,
    },
    { 'src/calc/__init__.py': FIXED, 'tests/test_calc.py': NEW_TESTS },
  );
  return { root, ...made };
}

describe('a SWE-bench-built image, graded as it is', { timeout: 900_000 }, () => {
  it('imports with --images, validates, finds the gold patch valid on the setup commit, and refuses a wrong base commit in one line', async () => {
    const { root, tag, row, base, fix } = await setupCommitImage();
    const { host } = await startRegistry();
    const name = (id: string) => sweName(host, id);
    // The same image for a row that says another base commit; only the registry has them.
    const digest = await pushAsInstances(tag, host, ['acme__calc-1', 'acme__calc-2']);
    const rows = join(root, 'rows.jsonl');
    writeFileSync(
      rows,
      [row, { ...row, instance_id: 'acme__calc-2', base_commit: fix }]
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n',
    );
    const out = join(root, 'suite');
    const imported = await proctor([
      'import',
      'swebench',
      rows,
      '--images',
      `${host}/swebench/sweb.eval.{arch}.{instance_id_1776}`,
      '--out',
      out,
    ]);
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const bundle = join(out, 'acme__calc-1');
    const task = readFileSync(join(bundle, 'task.toml'), 'utf8');
    expect(task).toContain(`image = "${name('acme__calc-1')}@${digest}"`);
    expect(task).toContain(`base_commit = "${base}"`);
    expect(task).toContain('setup_commit = true');

    const home = tempDir('proctor-home-');
    const validated = await proctor(['--home', home, 'validate', bundle]);
    expect(validated.code, validated.stdout + validated.stderr).toBe(0);

    const valid = await proctor(['--home', home, 'baseline', bundle, '--gold', '--wait']);
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
    expect(valid.stdout).toMatch(/1 valid, 0 quarantined/);

    // The other row's base commit is not the setup commit's parent: one line, naming both.
    const wrong = await proctor(['--home', home, 'validate', join(out, 'acme__calc-2')]);
    expect(wrong.code).toBe(1);
    const problem = new RegExp(
      `environment\\.base_commit: is ${fix}, but HEAD of /testbed in the image is [0-9a-f]{40} \\(parent ${base}\\), neither the base commit nor one setup commit on it`,
    );
    expect(wrong.stdout + wrong.stderr).toMatch(problem);
    const status = await erringBaseline(home, join(out, 'acme__calc-2'), 'acme__calc-2');
    expect(status).toMatch(
      new RegExp(
        `HEAD of /testbed is [0-9a-f]{40}, neither the base commit ${fix} nor one setup commit on it`,
      ),
    );
    expect(await leftovers(home)).toEqual([]);
  });

  it("gives a solver the setup commit's tree with the install's untracked output, and captures only the solver's changes", async () => {
    const { tag, base } = await setupCommitImage();
    const image = (await dockerCli('image', 'inspect', '--format', '{{.Id}}', tag)).trim();
    // As a solve job does: its container starts on a fresh workspace, capture reads it.
    const where = {
      owner: scope.templateOwner(),
      image,
      repoPath: '/testbed',
      baseCommit: base,
      setupCommit: true,
      uid: 1000,
      gid: 1000,
    };
    const started = await startWithWorkspace(docker, {
      ...where,
      role: 'solver',
      container: { workdir: '/testbed', env: { HOME: '/tmp' } },
    });
    const sh = async (script: string) =>
      (
        await execFileAsync('docker', [
          'exec',
          '-u',
          '1000:1000',
          started.container.id,
          'sh',
          '-c',
          `set -e; ${script}`,
        ])
      ).stdout;

    // The setup commit is HEAD, its parent the base; the install's output is in the tree.
    expect(await sh('git log --format=%s:%P -1')).toBe(`SWE-bench:${base}\n`);
    expect(await sh('cat src/calc/mode.py src/calc/_native.py')).toBe(
      'MODE = "installed"\nSCALE = 1\n',
    );
    expect(await sh('ls -d src/calc.egg-info')).toBe('src/calc.egg-info\n');

    // The solver edits a source file, adds one, and touches the install's own output.
    await sh(
      `sed -i 's/return a \\/ b/return a \\/\\/ b/' src/calc/__init__.py; echo 'X = 1' > src/calc/extra.py; ` +
        `echo 'SCALE = 2' > src/calc/_native.py; echo junk > src/calc.egg-info/PKG-INFO`,
    );
    const captured = await capturePatch(docker, {
      ...where,
      volume: started.workspace,
      solverContainerId: started.container.id,
      patchBytes: 1 << 20,
      candidateFiles: 200,
    });
    const patch = captured.patch.toString('utf8');
    expect(patch.match(/^diff --git .*$/gm)).toEqual([
      'diff --git a/src/calc/__init__.py b/src/calc/__init__.py',
      'diff --git a/src/calc/extra.py b/src/calc/extra.py',
    ]);
    // Against the setup commit: mode.py's install edit is in neither side of the diff.
    expect(patch).not.toContain('MODE = "source"');
    expect(captured.files).toBe(2);
  });
});
