// SWE-bench 5's task repositories (sweb.yaml, tasks/<instance_id>/ with task.yaml, tests.json,
// problem_statement.md, gold.patch, test.patch, eval.sh and a Dockerfile), imported as they are:
// `proctor import swebench DIR` writes a bundle per published instance on its own Dockerfile,
// whose image holds the project at /testbed at its base commit (as SWE-bench's images do), and
// `proctor baseline --gold --wait` finds it valid, its tests run on the interpreter eval.sh
// activates. A malformed instance (no task.yaml, a tests.json not of the format, no Dockerfile)
// is one line and writes nothing; a folder that is no task repository, a sweb.yaml naming no
// datasets, and --repos beside a task repository are one line and exit 2.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activatedPython, evaluatorFilesCopied, testCommand } from '../../src/import/task-repo.js';
import { loadBundle } from '../../src/oracle/index.js';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { gitIn } from '../helpers/repos.js';
import { DEVELOP_INSTALL, TESTBED_STEPS, diff, srcCalcRepo } from '../helpers/swebench-layout.js';
import { tempDir } from '../helpers/temp.js';

// As SWE-bench's instance Dockerfiles: the project at /testbed at its base commit, installed
// into conda's environment (imitated by a venv at its path) that Debian's python3 does not see.
// The clone comes from the instance's own folder (SWE-bench builds there), not the network.
const DOCKERFILE = [...TESTBED_STEPS, `RUN ${DEVELOP_INSTALL}`, ''].join('\n');

/** eval.sh as SWE-bench writes it: activation, the test patch, the command between markers. */
const evalScript = (base: string, testPatch: string) =>
  [
    '#!/bin/bash',
    'set -uxo pipefail',
    'source /opt/miniconda3/bin/activate',
    'conda activate testbed',
    'cd /testbed',
    `git checkout ${base} tests/test_calc.py`,
    "git apply -v - <<'EOF_114329324912'",
    testPatch.trimEnd(),
    'EOF_114329324912',
    ": '>>>>> Start Test Output'",
    'pytest -rA tests/test_calc.py',
    ": '>>>>> End Test Output'",
    `git checkout ${base} tests/test_calc.py`,
    '',
  ].join('\n');

function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

const SWEB_YAML = 'datasets:\n- acme/calc-bench\nsplits:\n- test\n';

/** The files of one instance folder, the testbed clone aside. */
function instanceFiles(
  id: string,
  base: string,
  patch: string,
  testPatch: string,
  split = 'test',
): Record<string, string> {
  return {
    'task.yaml': [
      `base_commit: '${base}'`,
      'created_at: 2024-02-01T00:00:00Z',
      'datasets:',
      '- acme/calc-bench',
      'eval_type: pass_and_fail',
      `image: swebench/sweb.eval.x86_64.${id.replace('__', '_1776_')}:latest`,
      `instance_id: ${id}`,
      'log_parser: parse_log_pytest',
      'repo: acme/calc',
      `split: ${split}`,
      // Unquoted: YAML's core schema would make it the number 1.
      'version: 1.0',
      '',
    ].join('\n'),
    'tests.json': `${JSON.stringify(
      {
        FAIL_TO_PASS: ['tests/test_calc.py::test_zero'],
        PASS_TO_PASS: ['tests/test_calc.py::test_div'],
      },
      null,
      2,
    )}\n`,
    'problem_statement.md': 'div(1, 0) raises ZeroDivisionError; it should return None.\n',
    'gold.patch': patch,
    'test.patch': testPatch,
    'eval.sh': evalScript(base, testPatch),
    Dockerfile: DOCKERFILE,
  };
}

/** A task repository of `ids`, each a task of the same small project; returns its folder. */
function taskRepo(ids: Array<{ id: string; split?: string }>) {
  const root = tempDir('proctor-task-repo-');
  // A src layout: only the interpreter the project is installed into can import `calc`.
  const { repo, base, fix } = srcCalcRepo(join(root, 'upstream'));
  const dir = join(root, 'swe-bench-tasks');
  write(dir, { 'sweb.yaml': SWEB_YAML });
  for (const { id, split } of ids) {
    const folder = join(dir, 'tasks', id);
    write(
      folder,
      instanceFiles(id, base, diff(repo, base, fix, 'src'), diff(repo, base, fix, 'tests'), split),
    );
    // A file of the build context's own, as a relative symlink, which must stay one.
    symlinkSync('testbed/setup.py', join(folder, 'setup-link.py'));
    // The instance's own clone at the base commit, with no remote (as SWE-bench's are made).
    execFileSync('git', ['clone', '-q', repo, join(folder, 'testbed')]);
    gitIn(join(folder, 'testbed'), ['reset', '-q', '--hard', base]);
    gitIn(join(folder, 'testbed'), ['remote', 'remove', 'origin']);
  }
  return { root, dir, base };
}

describe('reading a task repository', () => {
  it("takes the test command from between eval.sh's markers, or says which marker is missing", () => {
    const script = evalScript('a'.repeat(40), 'diff --git a/x b/x\n');
    expect(testCommand(script)).toEqual({ command: 'pytest -rA tests/test_calc.py' });
    expect(testCommand('#!/bin/bash\npytest\n')).toEqual({
      reason: "eval.sh has no '>>>>> Start Test Output' marker",
    });
    expect(testCommand(": '>>>>> Start Test Output'\npytest\n")).toEqual({
      reason: "eval.sh has no '>>>>> End Test Output' marker after its start",
    });
  });

  it('finds the interpreter eval.sh activates: conda environment, venv, or none', () => {
    const script = evalScript('a'.repeat(40), '');
    expect(activatedPython(script)).toBe('/opt/miniconda3/envs/testbed/bin/python');
    expect(activatedPython("source /opt/venv/bin/activate\n: '>>>>> Start Test Output'\n")).toBe(
      '/opt/venv/bin/python',
    );
    expect(activatedPython("cd /testbed\n: '>>>>> Start Test Output'\n")).toBeUndefined();
  });

  it("names the evaluator's files a Dockerfile copies, and nothing else", () => {
    expect(
      evaluatorFilesCopied(
        'FROM x\nCOPY testbed /testbed\nCOPY --chown=1:1 ./test.patch gold.patch /tmp/\nADD ["eval.sh", "/e"]\nCOPY --from=b /tests.json /t\n',
      ),
    ).toEqual(['test.patch', 'gold.patch', 'eval.sh']);
    expect(evaluatorFilesCopied(DOCKERFILE)).toEqual([]);
  });
});

describe('proctor import swebench TASK_REPO', { timeout: 900_000 }, () => {
  it('writes a bundle per published instance on its own Dockerfile, and baseline --gold finds it valid', async () => {
    const { root, dir, base } = taskRepo([
      { id: 'acme__calc-1' },
      { id: 'acme__calc-2', split: 'deprecated' },
    ]);
    const out = join(root, 'suite');
    const imported = await proctor(['import', 'swebench', dir, '--out', out]);
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const folder = join(dir, 'tasks', 'acme__calc-1');
    expect(imported.stdout).toContain(
      `written   acme__calc-1  tasks/acme__calc-1 (acme__calc-1)  runner pytest (its test IDs are pytest's node IDs (path::name))  environment ${folder}\n`,
    );
    expect(imported.stdout).toContain(
      'unpublished tasks/acme__calc-2 (acme__calc-2): split "deprecated" is not one sweb.yaml publishes (test); --only acme__calc-2 imports it\n',
    );
    expect(imported.stdout).toContain(
      '1 written, 0 rewritten, 0 unchanged, 0 skipped, 1 unpublished',
    );
    expect(readdirSync(out)).toEqual(['acme__calc-1']);

    const bundle = join(out, 'acme__calc-1');
    // The instance's folder is the build context, without a file of the evaluator's.
    expect(readdirSync(join(bundle, 'environment')).sort()).toEqual([
      'Dockerfile',
      'setup-link.py',
      'testbed',
    ]);
    expect(readlinkSync(join(bundle, 'environment/setup-link.py'))).toBe('testbed/setup.py');
    expect(readFileSync(join(bundle, 'environment/Dockerfile'), 'utf8')).toBe(DOCKERFILE);
    const task = readFileSync(join(bundle, 'task.toml'), 'utf8');
    expect(task).toContain('dockerfile = "environment/Dockerfile"');
    expect(task).toContain('workdir = "/testbed"');
    expect(task).toContain(`base_commit = "${base}"`);
    expect(task).toContain('RUNNER_PYTHON = "/opt/miniconda3/envs/testbed/bin/python"');
    expect(task).toContain('dataset = "acme/calc-bench"');
    expect(task).toContain('version = "1.0"');
    expect(readFileSync(join(bundle, 'tests/hidden.txt'), 'utf8')).toBe(
      'tests/test_calc.py::test_zero\n',
    );
    expect(readFileSync(join(bundle, 'tests/existing.txt'), 'utf8')).toBe(
      'tests/test_calc.py::test_div\n',
    );
    expect(readFileSync(join(bundle, 'solution/gold.patch'), 'utf8')).toBe(
      readFileSync(join(folder, 'gold.patch'), 'utf8'),
    );
    await loadBundle(bundle);

    // --only imports an instance from any split, as SWE-bench builds one by id.
    const only = await proctor([
      ...['import', 'swebench', dir, '--out', out, '--only', 'acme__calc-2'],
    ]);
    expect(only.code, only.stdout + only.stderr).toBe(0);
    expect(only.stdout).toContain('written   acme__calc-2  tasks/acme__calc-2 (acme__calc-2)');
    expect(readdirSync(out).sort()).toEqual(['acme__calc-1', 'acme__calc-2']);

    // Again: the same bundle, left alone.
    const again = await proctor(['import', 'swebench', dir, '--out', out]);
    expect(again.stdout).toContain('0 written, 0 rewritten, 1 unchanged, 0 skipped, 1 unpublished');

    const home = tempDir('proctor-home-');
    const valid = await proctor(['--home', home, 'baseline', bundle, '--gold', '--wait']);
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
    expect(valid.stdout).toMatch(/1 valid, 0 quarantined/);
    expect(await leftovers(home)).toEqual([]);
  });

  it("tells the jest runner an instance's ids are parse_log_jest_json's when its task.yaml names that parser, and only then", async () => {
    const ids = ['acme__calc-1', 'acme__calc-2', 'acme__calc-3'];
    const { root, dir } = taskRepo(ids.map((id) => ({ id })));
    const parsers = ['parse_log_jest_json', 'parse_log_jest', 'parse_log_immutable_js'];
    for (const [i, id] of ids.entries()) {
      const yaml = join(dir, 'tasks', id, 'task.yaml');
      writeFileSync(yaml, readFileSync(yaml, 'utf8').replace('parse_log_pytest', parsers[i]!));
    }
    const out = join(root, 'suite');
    const result = await proctor(['import', 'swebench', dir, '--out', out, '--runner', 'jest']);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const env = async (id: string) => (await loadBundle(join(out, id))).testsEnv;
    expect(await env('acme__calc-1')).toEqual({ RUNNER_JEST_IDS: 'json' });
    // parse_log_jest, and immutable-js's own parser for a row that is not its 2005.
    for (const id of ['acme__calc-2', 'acme__calc-3']) expect(await env(id), id).toEqual({});
    expect(result.stdout).toContain(
      '  note: its ids are parse_log_jest_json\'s (describe blocks and title joined by " > "): [tests] env RUNNER_JEST_IDS = "json"\n',
    );
    expect(result.stdout.match(/note: its ids are/g)).toHaveLength(1);
  });

  it('skips a malformed instance in one line and writes nothing for it', async () => {
    const cases: Array<[string, (folder: string) => void, string]> = [
      [
        'no task.yaml',
        (folder) => rmSync(join(folder, 'task.yaml')),
        'skipped tasks/acme__calc-1 (acme__calc-1): no task.yaml, so it is not a task',
      ],
      [
        'a tests.json of another format',
        (folder) =>
          writeFileSync(join(folder, 'tests.json'), '{"FAIL_TO_PASS": "tests/test_calc.py::x"}\n'),
        'skipped tasks/acme__calc-1 (acme__calc-1): tests.json: FAIL_TO_PASS is not a list; tests.json has no PASS_TO_PASS',
      ],
      [
        'a tests.json that is not JSON',
        (folder) => writeFileSync(join(folder, 'tests.json'), 'FAIL_TO_PASS: [x]\n'),
        'skipped tasks/acme__calc-1 (acme__calc-1): tests.json is not valid JSON: ',
      ],
      [
        'a task.yaml that is not YAML',
        (folder) => writeFileSync(join(folder, 'task.yaml'), 'repo: [acme/calc\n'),
        'skipped tasks/acme__calc-1 (acme__calc-1): task.yaml is not valid YAML: ',
      ],
      [
        'a task.yaml naming another instance',
        (folder) =>
          writeFileSync(
            join(folder, 'task.yaml'),
            readFileSync(join(folder, 'task.yaml'), 'utf8').replace(
              'instance_id: acme__calc-1',
              'instance_id: acme__calc-9',
            ),
          ),
        'skipped tasks/acme__calc-1 (acme__calc-1): task.yaml: instance_id is "acme__calc-9", not its folder\'s name',
      ],
      [
        'an eval.sh without its markers',
        (folder) => writeFileSync(join(folder, 'eval.sh'), '#!/bin/bash\npytest -rA\n'),
        "skipped tasks/acme__calc-1 (acme__calc-1): eval.sh has no '>>>>> Start Test Output' marker",
      ],
      [
        'a task whose test patch needs binary assets',
        (folder) =>
          writeFileSync(
            join(folder, 'task.yaml'),
            `${readFileSync(join(folder, 'task.yaml'), 'utf8')}image_assets:\n  test_patch:\n  - path: tests/expected.png\n`,
          ),
        'skipped tasks/acme__calc-1 (acme__calc-1): task.yaml: image_assets names binary files the test or gold patch needs, which a bundle cannot carry yet',
      ],
      [
        'a fail_only task',
        (folder) =>
          writeFileSync(
            join(folder, 'task.yaml'),
            readFileSync(join(folder, 'task.yaml'), 'utf8').replace('pass_and_fail', 'fail_only'),
          ),
        'skipped tasks/acme__calc-1 (acme__calc-1): task.yaml: eval_type "fail_only": only pass_and_fail is graded as SWE-bench grades it (fail_only counts a test missing from the log as passed)',
      ],
      [
        'no Dockerfile',
        (folder) => rmSync(join(folder, 'Dockerfile')),
        'skipped tasks/acme__calc-1 (acme__calc-1): missing Dockerfile',
      ],
      [
        'a Dockerfile that copies the test patch',
        (folder) =>
          writeFileSync(join(folder, 'Dockerfile'), `${DOCKERFILE}COPY test.patch /tmp/\n`),
        'skipped tasks/acme__calc-1 (acme__calc-1): Dockerfile copies test.patch, which stays with the evaluator (not in the build context)',
      ],
    ];
    for (const [what, spoil, message] of cases) {
      const { root, dir } = taskRepo([{ id: 'acme__calc-1' }]);
      spoil(join(dir, 'tasks', 'acme__calc-1'));
      const out = join(root, 'suite');
      const result = await proctor(['import', 'swebench', dir, '--out', out]);
      expect(result.code, what).toBe(1);
      expect(result.stderr, what).toBe('');
      const lines = result.stdout.trimEnd().split('\n');
      expect(lines, what).toHaveLength(2);
      expect(lines[0], what).toContain(message);
      expect(lines[1], what).toBe('0 written, 0 rewritten, 0 unchanged, 1 skipped');
      // Nothing written, nothing staged.
      expect(existsSync(out), what).toBe(false);
      expect(readdirSync(root).sort(), what).toEqual(['swe-bench-tasks', 'upstream']);
    }
  });

  it('refuses a folder that is no task repository, a sweb.yaml without datasets, and --repos, in one line (exit 2)', async () => {
    const { root, dir } = taskRepo([{ id: 'acme__calc-1' }]);
    const out = join(root, 'suite');
    const empty = tempDir('proctor-not-tasks-');
    const cases: Array<[string[], string]> = [
      [
        [empty],
        `${empty}: a folder, but not a task repository (no sweb.yaml, no tasks/ folder); ROWS is a rows file or a task repository`,
      ],
      [
        [dir, '--repos', root],
        `${dir} is a task repository: each instance's Dockerfile is its environment; drop --repos`,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await proctor(['import', 'swebench', ...args, '--out', out]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toBe(`proctor: ${message}\n`);
      expect(result.stdout).toBe('');
    }
    writeFileSync(join(dir, 'sweb.yaml'), 'datasets: [acme/calc-bench\n');
    const notYaml = await proctor(['import', 'swebench', dir, '--out', out]);
    expect(notYaml.code).toBe(2);
    expect(notYaml.stderr).toMatch(
      new RegExp(
        `^proctor: ${join(dir, 'sweb.yaml')}: not valid YAML: [^\\n]+ at line \\d+, column \\d+\\n$`,
      ),
    );
    writeFileSync(join(dir, 'sweb.yaml'), 'splits:\n- test\n');
    const noDatasets = await proctor(['import', 'swebench', dir, '--out', out]);
    expect(noDatasets.code).toBe(2);
    expect(noDatasets.stderr).toBe(
      `proctor: ${join(dir, 'sweb.yaml')}: does not name any datasets (datasets: [...])\n`,
    );
    expect(existsSync(out)).toBe(false);
  });
});
