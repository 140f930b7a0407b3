import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isProctorError, type ProctorError } from '../../src/errors.js';
import {
  imageReferenceProblem,
  loadBundle,
  loadSuite,
  readDescription,
  type BundleProblem,
} from '../../src/oracle/bundle.js';
import { parseImageReference } from '../../src/sandbox/image.js';
import { tempDir } from '../helpers/temp.js';

const COMMIT = 'a'.repeat(40);
const DIGEST = `sha256:${'b'.repeat(64)}`;

const TOML = `schema = 1
id = "calc-divide-by-zero"

[environment]
dockerfile = "environment/Dockerfile"
workdir = "/repo"
base_commit = "${COMMIT}"
`;

const BASE_FILES: Record<string, string> = {
  'task.toml': TOML,
  'description.md': 'Make `divide(1, 0)` raise ZeroDivisionError.\n',
  'environment/Dockerfile': 'FROM debian:bookworm-slim\n',
  'tests/run': '#!/bin/sh\nexec pytest "$@"\n',
  'tests/existing.txt': 'tests/test_calc.py::test_add\n',
  'tests/hidden.txt': 'tests/test_calc.py::test_divide_by_zero\n',
  'tests/hidden.patch': '--- a/x\n+++ b/x\n',
};

/** Writes a bundle into a fresh temp dir: the valid base, with `files` replaced (null removes). */
function makeBundle(
  files: Record<string, string | null> = {},
  dir = join(tempDir(), 'bundle'),
): string {
  for (const [path, text] of Object.entries({ ...BASE_FILES, ...files })) {
    if (text === null) continue;
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  if (files['tests/run'] !== null) chmodSync(join(dir, 'tests/run'), 0o755);
  return dir;
}

/** A bundle whose task.toml is the base with `from` replaced by `to`. */
function withToml(...edits: Array<[string | RegExp, string]>): string {
  let toml = TOML;
  for (const [from, to] of edits) {
    const next = toml.replace(from, to);
    if (next === toml) throw new Error(`test setup: ${String(from)} not in task.toml`);
    toml = next;
  }
  return makeBundle({ 'task.toml': toml });
}

async function failure(promise: Promise<unknown>): Promise<ProctorError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isProctorError(error, 'BUNDLE_INVALID'))
    throw new Error(`expected BUNDLE_INVALID, got ${String(error)}`);
  return error;
}

async function problemsOf(dir: string, options?: { tasksRoot?: string }): Promise<BundleProblem[]> {
  return (await failure(loadBundle(dir, options))).data?.['problems'] as BundleProblem[];
}

/** Expects exactly one problem, on `file` (and `key`), whose message matches `message`. */
async function expectOnly(dir: string, file: string, key: string | undefined, message: RegExp) {
  const problems = await problemsOf(dir);
  expect(problems).toEqual([
    key === undefined
      ? { file, message: expect.stringMatching(message) }
      : { file, key, message: expect.stringMatching(message) },
  ]);
}

describe('loadBundle: valid bundles', () => {
  it('loads a Dockerfile bundle with every default filled in', async () => {
    const dir = makeBundle({ 'tests/existing.txt': 'a\r\n\r\nb\n\n' });
    const real = realpathSync(dir);
    const bundle = await loadBundle(dir);
    expect(bundle).toEqual({
      dir: real,
      id: 'calc-divide-by-zero',
      environment: {
        kind: 'dockerfile',
        contextDir: join(real, 'environment'),
        dockerfile: 'Dockerfile',
      },
      workdir: '/repo',
      baseCommit: COMMIT,
      grading: { allow: ['**'], deny: [], allowSymlinks: false, tamper: 'flag', rules: 'proctor' },
      testsEnv: {},
      limits: {
        solverSeconds: 1800,
        testSeconds: 600,
        cpus: 1,
        memoryMb: 2048,
        pids: 256,
        outputBytes: 1048576,
        patchBytes: 1048576,
        candidateFiles: 200,
      },
      paths: {
        description: join(real, 'description.md'),
        runner: join(real, 'tests/run'),
        existing: join(real, 'tests/existing.txt'),
        hidden: join(real, 'tests/hidden.txt'),
        hiddenPatch: join(real, 'tests/hidden.patch'),
      },
      existingIds: ['a', 'b'],
      hiddenIds: ['tests/test_calc.py::test_divide_by_zero'],
      contentHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(await readDescription(bundle)).toBe(BASE_FILES['description.md']);
  });

  it('loads an image bundle with every section set, a gold patch and an empty existing suite', async () => {
    const dir = makeBundle({
      'task.toml': `schema = 1
id = "x.y_z-1"
[environment]
image = "registry.example:5000/org/img:1.2@${DIGEST}"
workdir = "/work/repo"
base_commit = "${'c'.repeat(64)}"
[grading]
deny = ["tests/**", "*.lock"]
allow = ["src/**"]
allow_symlinks = true
tamper = "fail"
rules = "swebench"
[tests]
env = { DJANGO_SETTINGS_MODULE = "app.settings", LANG = "" }
[limits]
solver_seconds = 10
test_seconds = 21600
cpus = 2
memory_mb = 64
pids = 65536
output_bytes = 1024
patch_bytes = 67108864
candidate_files = 1
`,
      'environment/Dockerfile': null,
      'tests/existing.txt': '',
      'solution/gold.patch': '--- a/x\n+++ b/x\n',
    });
    const bundle = await loadBundle(dir);
    expect(bundle).toMatchObject({
      id: 'x.y_z-1',
      environment: { kind: 'image', reference: `registry.example:5000/org/img:1.2@${DIGEST}` },
      workdir: '/work/repo',
      baseCommit: 'c'.repeat(64),
      grading: {
        allow: ['src/**'],
        deny: ['tests/**', '*.lock'],
        allowSymlinks: true,
        tamper: 'fail',
        rules: 'swebench',
      },
      testsEnv: { DJANGO_SETTINGS_MODULE: 'app.settings', LANG: '' },
      limits: {
        solverSeconds: 10,
        testSeconds: 21600,
        cpus: 2,
        memoryMb: 64,
        pids: 65536,
        outputBytes: 1024,
        patchBytes: 67108864,
        candidateFiles: 1,
      },
      existingIds: [],
    });
    expect(bundle.paths.goldPatch).toBe(join(realpathSync(dir), 'solution/gold.patch'));
  });

  it('accepts a symlink that stays inside the bundle, and extra files', async () => {
    const dir = makeBundle({ 'docs/notes.md': 'notes', 'environment/app/setup.cfg': '' });
    symlinkSync('../description.md', join(dir, 'docs/link.md'));
    symlinkSync('app', join(dir, 'environment/app-link'));
    await expect(loadBundle(dir)).resolves.toMatchObject({ id: 'calc-divide-by-zero' });
  });

  it('accepts a bundle inside tasksRoot', async () => {
    const root = tempDir();
    const dir = makeBundle({}, join(root, 'nested', 'task'));
    await expect(loadBundle(dir, { tasksRoot: root })).resolves.toMatchObject({
      dir: realpathSync(dir),
    });
  });
});

describe('loadBundle: task.toml problems name the key', () => {
  it('reports unknown keys at the top level and in every table', async () => {
    const dir = withToml(
      ['schema = 1', 'schema = 1\nextra = true'],
      ['workdir', 'wrokdir = "/x"\nworkdir'],
      [
        /$/,
        '[grading]\nallow_symlink = true\n[tests]\nenvironment = {}\n[limits]\nmemory = 1\n[other]\n',
      ],
    );
    const problems = await problemsOf(dir);
    expect(problems).toEqual(
      expect.arrayContaining([
        { file: 'task.toml', key: 'extra', message: 'unknown key' },
        { file: 'task.toml', key: 'other', message: 'unknown key' },
        { file: 'task.toml', key: 'environment.wrokdir', message: 'unknown key' },
        { file: 'task.toml', key: 'grading.allow_symlink', message: 'unknown key' },
        { file: 'task.toml', key: 'tests.environment', message: 'unknown key' },
        { file: 'task.toml', key: 'limits.memory', message: 'unknown key' },
      ]),
    );
    expect(problems).toHaveLength(6);
  });

  it('refuses a [grading] tamper other than "flag" or "fail", naming the key', async () => {
    for (const value of ['"block"', '"FAIL"', 'true', '1']) {
      await expectOnly(
        withToml([/$/, `[grading]\ntamper = ${value}\n`]),
        'task.toml',
        'grading.tamper',
        /^must be "flag" or "fail"$/,
      );
    }
  });

  it('refuses a [grading] rules other than "proctor" or "swebench", naming the key', async () => {
    for (const value of ['"SWE-bench"', '"official"', 'true']) {
      await expectOnly(
        withToml([/$/, `[grading]\nrules = ${value}\n`]),
        'task.toml',
        'grading.rules',
        /^must be "proctor" or "swebench"$/,
      );
    }
  });

  it('requires exactly one of dockerfile and image', async () => {
    await expectOnly(
      withToml([
        'dockerfile = "environment/Dockerfile"',
        `dockerfile = "environment/Dockerfile"\nimage = "x@${DIGEST}"`,
      ]),
      'task.toml',
      'environment',
      /both `dockerfile` and `image`/,
    );
    await expectOnly(
      withToml(['dockerfile = "environment/Dockerfile"\n', '']),
      'task.toml',
      'environment',
      /exactly one of `dockerfile` or `image`/,
    );
  });

  it('requires a digest on an image reference', async () => {
    const image = (ref: string) =>
      withToml(['dockerfile = "environment/Dockerfile"', `image = "${ref}"`]);
    await expectOnly(
      image('debian:bookworm'),
      'task.toml',
      'environment.image',
      /must carry a digest/,
    );
    await expectOnly(
      image('debian@sha256:abc'),
      'task.toml',
      'environment.image',
      /malformed digest/,
    );
    await expectOnly(
      image(`Debian@${DIGEST}`),
      'task.toml',
      'environment.image',
      /malformed image name/,
    );
  });

  it('judges image references as the sandbox does', () => {
    const references = [
      `debian@${DIGEST}`,
      `debian:12@${DIGEST}`,
      `localhost:5000/a/b:tag@${DIGEST}`,
      `ghcr.io/org/img__x@${DIGEST}`,
      `debian:bookworm`,
      `UPPER@${DIGEST}`,
      `debian@sha256:${'B'.repeat(64)}`,
      `debian:-bad@${DIGEST}`,
      `@${DIGEST}`,
      `a//b@${DIGEST}`,
    ];
    for (const reference of references) {
      const sandboxAccepts = (() => {
        try {
          parseImageReference(reference);
          return true;
        } catch {
          return false;
        }
      })();
      expect([reference, imageReferenceProblem(reference) === undefined]).toEqual([
        reference,
        sandboxAccepts,
      ]);
    }
  });

  it('refuses a bad id', async () => {
    for (const id of ['"Calc"', '"-calc"', `"${'a'.repeat(129)}"`, '""', '7']) {
      const problems = await problemsOf(withToml(['"calc-divide-by-zero"', id]));
      expect(problems).toEqual([{ file: 'task.toml', key: 'id', message: expect.any(String) }]);
    }
    await expectOnly(
      withToml(['"calc-divide-by-zero"', '7']),
      'task.toml',
      'id',
      /expected a string, got 7/,
    );
  });

  it('refuses a base_commit that is not 40 or 64 lowercase hex digits', async () => {
    for (const commit of ['abc123', 'A'.repeat(40), 'a'.repeat(41), 'g'.repeat(40)]) {
      await expectOnly(
        withToml([COMMIT, commit]),
        'task.toml',
        'environment.base_commit',
        /lowercase hex/,
      );
    }
  });

  it('refuses a workdir that is relative, /, has `..` or empty components, or is where sandboxes mount', async () => {
    const cases: Array<[string, RegExp]> = [
      ['/proctor/repo', /under \/proctor\*/],
      ['/proctor-init', /under \/proctor\*/],
      ['/tmp/repo', /under \/tmp/],
      ['/proc', /under \/proc,/],
      ['repo', /absolute POSIX path/],
      ['/', /must not be \//],
      ['/repo/../etc', /`\.\.`/],
      ['/repo/', /normalised/],
      ['/re\\\\po', /backslash/],
    ];
    for (const [workdir, message] of cases) {
      await expectOnly(
        withToml(['"/repo"', `"${workdir}"`]),
        'task.toml',
        'environment.workdir',
        message,
      );
    }
  });

  it('takes [environment] install with the work tree and base commit it runs at, and refuses an empty or non-string one', async () => {
    const command = 'python3 -m pip install --no-deps --no-build-isolation -e .';
    const dir = withToml(['workdir = "/repo"', `workdir = "/repo"\ninstall = "${command}"`]);
    const bundle = await loadBundle(dir);
    expect(bundle.environment).toMatchObject({
      kind: 'dockerfile',
      install: { command, workdir: '/repo', baseCommit: COMMIT },
    });
    const cases: Array<[string, RegExp]> = [
      ['" "', /must be a shell command, not empty/],
      ['7', /expected a string, got 7/],
      [`"${'x'.repeat(16_385)}"`, /16384/],
    ];
    for (const [value, message] of cases) {
      await expectOnly(
        withToml(['workdir = "/repo"', `workdir = "/repo"\ninstall = ${value}`]),
        'task.toml',
        'environment.install',
        message,
      );
    }
  });

  it('refuses limits out of bounds or of the wrong type', async () => {
    const dir = withToml([
      /$/,
      '[limits]\nmemory_mb = 32\ncpus = 100\nsolver_seconds = 5\npids = 1.5\ntest_seconds = "600"\noutput_bytes = true\ncandidate_files = 0\n',
    ]);
    expect(await problemsOf(dir)).toEqual([
      { file: 'task.toml', key: 'limits.solver_seconds', message: 'must be ≥ 10' },
      { file: 'task.toml', key: 'limits.test_seconds', message: 'expected an integer, got "600"' },
      { file: 'task.toml', key: 'limits.cpus', message: 'must be ≤ 64' },
      { file: 'task.toml', key: 'limits.memory_mb', message: 'must be ≥ 64' },
      { file: 'task.toml', key: 'limits.pids', message: 'expected an integer, got 1.5' },
      { file: 'task.toml', key: 'limits.output_bytes', message: 'expected an integer, got true' },
      { file: 'task.toml', key: 'limits.candidate_files', message: 'must be ≥ 1' },
    ]);
  });

  it('reports the line and column of unparseable TOML', async () => {
    await expectOnly(
      withToml(['workdir = "/repo"', 'workdir = "/repo']),
      'task.toml',
      undefined,
      /^line 6, column \d+: /,
    );
  });

  it('refuses a wrong schema and a missing table', async () => {
    const problems = await problemsOf(makeBundle({ 'task.toml': 'schema = 2\nid = "x"\n' }));
    expect(problems).toEqual([
      { file: 'task.toml', key: 'schema', message: expect.stringMatching(/must be 1/) },
      { file: 'task.toml', key: 'environment', message: 'is required' },
    ]);
  });

  it('refuses bad grading globs', async () => {
    const dir = withToml([/$/, `[grading]\nallow = []\ndeny = ["", "a\\u0000b", 3]\n`]);
    expect(await problemsOf(dir)).toEqual([
      { file: 'task.toml', key: 'grading.deny[0]', message: 'must not be empty' },
      { file: 'task.toml', key: 'grading.deny[1]', message: 'must not contain NUL' },
      { file: 'task.toml', key: 'grading.deny[2]', message: 'expected a string, got 3' },
      { file: 'task.toml', key: 'grading.allow', message: 'must have at least 1 entries' },
    ]);
  });

  it('refuses credential-like, reserved and malformed names in [tests].env', async () => {
    const dir = withToml([
      /$/,
      '[tests]\nenv = { OPENAI_API_KEY = "x", GITHUB_TOKEN = "x", db_password = "x", HOME = "/h", TZ = "x", PROCTOR_X = "1", "1BAD" = "x", OK = "a\\u0000" }\n',
    ]);
    const problems = await problemsOf(dir);
    const byKey = Object.fromEntries(problems.map((p) => [p.key, p.message]));
    expect(byKey).toEqual({
      'tests.env.OPENAI_API_KEY': expect.stringMatching(/credential/),
      'tests.env.GITHUB_TOKEN': expect.stringMatching(/credential/),
      'tests.env.db_password': expect.stringMatching(/credential/),
      'tests.env.HOME': expect.stringMatching(/set by Proctor/),
      'tests.env.TZ': expect.stringMatching(/set by Proctor/),
      'tests.env.PROCTOR_X': expect.stringMatching(/reserved/),
      'tests.env.1BAD': expect.stringMatching(/not a valid environment variable name/),
      'tests.env.OK': 'must not contain NUL',
    });
    expect(problems.every((p) => p.file === 'task.toml')).toBe(true);
  });
});

describe('loadBundle: the dockerfile path', () => {
  const cases: Array<[string, RegExp]> = [
    ['/etc/passwd', /not absolute/],
    ['environment/../../Dockerfile', /`\.\.`/],
    ['environment\\\\Dockerfile', /backslash/],
    ['environment/Docker\\u0000file', /NUL/],
    ['tests/run', /inside environment\//],
    ['environment//Dockerfile', /normalised/],
  ];
  for (const [path, message] of cases) {
    it(`refuses ${JSON.stringify(path)}`, async () => {
      await expectOnly(
        withToml(['"environment/Dockerfile"', `"${path}"`]),
        'task.toml',
        'environment.dockerfile',
        message,
      );
    });
  }

  it('accepts another Dockerfile inside environment/ and reports it when missing', async () => {
    const dir = withToml(['"environment/Dockerfile"', '"environment/ci/Dockerfile.test"']);
    await expectOnly(dir, 'environment/ci/Dockerfile.test', undefined, /^missing$/);
    mkdirSync(join(dir, 'environment/ci'));
    writeFileSync(join(dir, 'environment/ci/Dockerfile.test'), 'FROM scratch\n');
    const bundle = await loadBundle(dir);
    expect(bundle.environment).toEqual({
      kind: 'dockerfile',
      contextDir: join(realpathSync(dir), 'environment'),
      dockerfile: 'ci/Dockerfile.test',
    });
  });

  it('refuses a Dockerfile that is a symlink', async () => {
    const dir = makeBundle({
      'environment/Dockerfile': null,
      'environment/real': 'FROM scratch\n',
    });
    symlinkSync('real', join(dir, 'environment/Dockerfile'));
    await expectOnly(dir, 'environment/Dockerfile', undefined, /not a symlink/);
  });
});

describe('loadBundle: files', () => {
  it('names every missing file', async () => {
    const dir = makeBundle({
      'description.md': null,
      'tests/run': null,
      'tests/existing.txt': null,
      'tests/hidden.txt': null,
      'tests/hidden.patch': null,
      'environment/Dockerfile': null,
    });
    const problems = await problemsOf(dir);
    expect(problems.map((p) => [p.file, p.message]).sort()).toEqual([
      ['description.md', 'missing'],
      ['environment/Dockerfile', 'missing'],
      ['tests/existing.txt', 'missing'],
      ['tests/hidden.patch', 'missing'],
      ['tests/hidden.txt', 'missing'],
      ['tests/run', 'missing'],
    ]);
  });

  it('reports a missing task.toml', async () => {
    await expectOnly(makeBundle({ 'task.toml': null }), 'task.toml', undefined, /^missing$/);
  });

  it('refuses a runner that is not executable', async () => {
    const dir = makeBundle();
    chmodSync(join(dir, 'tests/run'), 0o644);
    await expectOnly(dir, 'tests/run', undefined, /not executable/);
  });

  it('refuses a runner that is a folder', async () => {
    const dir = makeBundle({ 'tests/run': null, 'tests/run/x': '' });
    await expectOnly(dir, 'tests/run', undefined, /is a folder/);
  });

  it('refuses an empty hidden.txt, description and hidden.patch, but not an empty existing.txt', async () => {
    const dir = makeBundle({
      'tests/hidden.txt': '\n\r\n  \n',
      'tests/existing.txt': '',
      'description.md': ' \n',
      'tests/hidden.patch': '',
    });
    expect(await problemsOf(dir)).toEqual([
      { file: 'description.md', message: 'is empty' },
      { file: 'tests/hidden.patch', message: 'is empty' },
      { file: 'tests/hidden.txt', message: expect.stringMatching(/no test IDs/) },
    ]);
  });

  it('refuses duplicate, over-long and NUL-holding test IDs', async () => {
    const dir = makeBundle({
      'tests/existing.txt': `a\nb\r\na\n${'x'.repeat(1001)}\nn\0ul\n`,
      'tests/hidden.txt': 'h\nh\r\n',
    });
    expect(await problemsOf(dir)).toEqual([
      { file: 'tests/existing.txt', message: 'line 3: duplicate test ID "a" (first on line 1)' },
      { file: 'tests/existing.txt', message: 'line 4: test ID longer than 1000 characters' },
      { file: 'tests/existing.txt', message: 'line 5: test ID contains NUL' },
      { file: 'tests/hidden.txt', message: 'line 2: duplicate test ID "h" (first on line 1)' },
    ]);
  });

  it('refuses a description that is not UTF-8 or too large', async () => {
    const dir = makeBundle();
    writeFileSync(join(dir, 'description.md'), Buffer.from([0x68, 0xff, 0xfe]));
    await expectOnly(dir, 'description.md', undefined, /not valid UTF-8/);
    writeFileSync(join(dir, 'description.md'), 'x'.repeat(1024 * 1024 + 1));
    await expectOnly(dir, 'description.md', undefined, /larger than 1048576 bytes/);
  });

  it('refuses an empty gold patch', async () => {
    await expectOnly(
      makeBundle({ 'solution/gold.patch': '' }),
      'solution/gold.patch',
      undefined,
      /is empty/,
    );
  });
});

describe('loadBundle: path rules for every file', () => {
  it('refuses a symlink that leaves the bundle', async () => {
    const outside = join(tempDir(), 'secret');
    writeFileSync(outside, 'secret');
    const dir = makeBundle();
    symlinkSync(relative(dir, outside), join(dir, 'leak'));
    await expectOnly(dir, 'leak', undefined, /leaves the bundle/);
  });

  it('refuses an absolute symlink, even to a file inside the bundle', async () => {
    const dir = makeBundle();
    symlinkSync(join(dir, 'description.md'), join(dir, 'abs'));
    await expectOnly(dir, 'abs', undefined, /absolute path/);
  });

  it('refuses a dangling symlink', async () => {
    const dir = makeBundle();
    symlinkSync('nowhere', join(dir, 'tests/dangling'));
    await expectOnly(dir, 'tests/dangling', undefined, /dangling symlink/);
  });

  it('refuses a symlink in environment/ that reaches the evaluator assets', async () => {
    const dir = makeBundle();
    symlinkSync('../tests/hidden.patch', join(dir, 'environment/hidden.patch'));
    await expectOnly(dir, 'environment/hidden.patch', undefined, /leaves environment\//);
  });

  it('refuses named files that are symlinks or reached through one', async () => {
    const dir = makeBundle({ 'tests/hidden.txt': null, 'real/hidden.txt': 'h\n' });
    symlinkSync('../real/hidden.txt', join(dir, 'tests/hidden.txt'));
    await expectOnly(dir, 'tests/hidden.txt', undefined, /not a symlink/);

    const other = makeBundle({ 'tests/run': null });
    renameSync(join(other, 'tests'), join(other, 'evaluator'));
    writeFileSync(join(other, 'evaluator/run'), '#!/bin/sh\n', { mode: 0o755 });
    symlinkSync('evaluator', join(other, 'tests'));
    const problems = await problemsOf(other);
    expect(problems.map((p) => p.file).sort()).toEqual([
      'tests/existing.txt',
      'tests/hidden.patch',
      'tests/hidden.txt',
      'tests/run',
    ]);
    expect(problems.every((p) => /reached through the symlink tests/.test(p.message))).toBe(true);
  });

  it('refuses a FIFO without blocking on it', async () => {
    const dir = makeBundle();
    execFileSync('mkfifo', [join(dir, 'tests/pipe')]);
    await expectOnly(dir, 'tests/pipe', undefined, /is a FIFO/);
    rmSync(join(dir, 'tests/hidden.txt'));
    execFileSync('mkfifo', [join(dir, 'tests/hidden.txt')]);
    const problems = await problemsOf(dir);
    expect(problems.map((p) => p.file).sort()).toEqual(['tests/hidden.txt', 'tests/pipe']);
  });

  it('refuses a file name with a backslash', async () => {
    await expectOnly(
      makeBundle({ 'docs\\notes.md': 'x' }),
      'docs\\notes.md',
      undefined,
      /backslash/,
    );
  });

  it('refuses a bundle outside tasksRoot, judged by realpath', async () => {
    const root = tempDir();
    const dir = makeBundle();
    const error = await failure(loadBundle(dir, { tasksRoot: root }));
    expect(error.data?.['problems']).toEqual([
      { file: '.', message: expect.stringMatching(/is outside tasks_root/) },
    ]);
    symlinkSync(dir, join(root, 'linked'));
    await expect(loadBundle(join(root, 'linked'), { tasksRoot: root })).rejects.toThrow(
      /is outside tasks_root/,
    );
    // Outside the root, a path that does not exist is refused as outside, like one that does:
    // the error tells nothing about what lies outside. (A sibling of the root, since a fixed
    // name like /tmp/x may exist.)
    const missing = join(root, '..', `${basename(root)}-missing`);
    await expect(loadBundle(missing, { tasksRoot: root })).rejects.toThrow(/is outside tasks_root/);
    await expect(loadBundle(join(root, 'nope'), { tasksRoot: root })).rejects.toThrow(
      /cannot be read/,
    );
  });
});

describe('loadBundle: reporting', () => {
  it('reports every problem at once, one line each', async () => {
    const dir = makeBundle({
      'task.toml': TOML.replace('"/repo"', '"repo"') + '[limits]\nmemory_mb = 32\nbogus = 1\n',
      'tests/hidden.txt': '',
      'description.md': null,
    });
    chmodSync(join(dir, 'tests/run'), 0o600);
    symlinkSync('/etc/passwd', join(dir, 'passwd'));
    const error = await failure(loadBundle(dir));
    const real = realpathSync(dir);
    expect(error.message.split('\n')).toEqual([
      `${real}: 7 problems`,
      '  passwd: symlink to an absolute path "/etc/passwd"; it must be relative',
      '  task.toml: environment.workdir: must be an absolute POSIX path such as /repo',
      '  task.toml: limits.memory_mb: must be ≥ 64',
      '  task.toml: limits.bogus: unknown key',
      '  description.md: missing',
      '  tests/run: not executable (chmod +x tests/run)',
      '  tests/hidden.txt: declares no test IDs; a task needs at least one hidden test',
    ]);
    expect(error.data?.['problems']).toHaveLength(7);
  });
});

describe('readDescription', () => {
  it('reads the description again, refusing one swapped for a symlink since loading', async () => {
    const dir = makeBundle();
    const bundle = await loadBundle(dir);
    writeFileSync(join(dir, 'description.md'), 'Changed.\n');
    expect(await readDescription(bundle)).toBe('Changed.\n');
    rmSync(join(dir, 'description.md'));
    symlinkSync('/etc/passwd', join(dir, 'description.md'));
    await expect(readDescription(bundle)).rejects.toMatchObject({
      code: 'BUNDLE_INVALID',
      data: { problems: [{ file: 'description.md', message: expect.stringMatching(/symlink/) }] },
    });
  });
});

describe('contentHash', () => {
  it('is stable, and changes when any file’s bytes, name or execute bit change', async () => {
    const dir = makeBundle();
    const hash = async () => (await loadBundle(dir)).contentHash;
    const first = await hash();
    utimesSync(join(dir, 'description.md'), new Date(0), new Date(0));
    mkdirSync(join(dir, 'empty'));
    chmodSync(join(dir, 'description.md'), 0o600);
    expect(await hash()).toBe(first);
    // The same bundle built elsewhere hashes the same.
    expect((await loadBundle(makeBundle())).contentHash).toBe(first);

    const seen = new Set([first]);
    const changed = async () => {
      const next = await hash();
      expect(seen.has(next)).toBe(false);
      seen.add(next);
    };
    writeFileSync(join(dir, 'environment/Dockerfile'), 'FROM debian:trixie-slim\n');
    await changed();
    writeFileSync(join(dir, 'extra.txt'), '');
    await changed();
    renameSync(join(dir, 'extra.txt'), join(dir, 'extra2.txt'));
    await changed();
    chmodSync(join(dir, 'extra2.txt'), 0o755);
    await changed();
    symlinkSync('extra2.txt', join(dir, 'link'));
    await changed();
    rmSync(join(dir, 'link'));
    symlinkSync('description.md', join(dir, 'link'));
    await changed();
  });
});

describe('loadSuite', () => {
  it('loads each sub-folder holding a task.toml, sorted by name, skipping others and dot-folders', async () => {
    const root = tempDir();
    makeBundle({ 'task.toml': TOML.replace('calc-divide-by-zero', 'b-task') }, join(root, 'b'));
    makeBundle({}, join(root, 'a'));
    // A bundle being written (derive, import) is a dot-folder: it must not clash with `a`.
    makeBundle({}, join(root, '.a.tmp-1f2e3d4c'));
    mkdirSync(join(root, 'notes'));
    writeFileSync(join(root, 'README.md'), 'x');
    const suite = await loadSuite(root, { tasksRoot: root });
    expect(suite.problems).toEqual([]);
    expect(suite.bundles.map((b) => [b.id, b.dir])).toEqual([
      ['calc-divide-by-zero', join(realpathSync(root), 'a')],
      ['b-task', join(realpathSync(root), 'b')],
    ]);
  });

  it('treats a folder holding a task.toml as a suite of one', async () => {
    const dir = makeBundle();
    const suite = await loadSuite(dir);
    expect(suite.bundles.map((b) => b.dir)).toEqual([realpathSync(dir)]);
  });

  it('lists a bad bundle with its error and still loads the others', async () => {
    const root = tempDir();
    makeBundle({}, join(root, 'good'));
    makeBundle({ 'tests/hidden.txt': '' }, join(root, 'bad'));
    const suite = await loadSuite(root);
    expect(suite.bundles.map((b) => b.id)).toEqual(['calc-divide-by-zero']);
    expect(suite.problems).toEqual([
      { dir: join(realpathSync(root), 'bad'), error: expect.anything() },
    ]);
    expect(suite.problems[0]?.error.code).toBe('BUNDLE_INVALID');
    expect(suite.problems[0]?.error.message).toMatch(/tests\/hidden\.txt: declares no test IDs/);
  });

  it('refuses every bundle of a duplicated id, naming both folders', async () => {
    const root = tempDir();
    makeBundle({}, join(root, 'one'));
    makeBundle({}, join(root, 'two'));
    makeBundle({ 'task.toml': TOML.replace('calc-divide-by-zero', 'unique') }, join(root, 'three'));
    const real = realpathSync(root);
    const suite = await loadSuite(root);
    expect(suite.bundles.map((b) => b.id)).toEqual(['unique']);
    expect(suite.problems.map((p) => p.dir)).toEqual([join(real, 'one'), join(real, 'two')]);
    for (const { error } of suite.problems) {
      expect(error.code).toBe('BUNDLE_INVALID');
      expect(error.data?.['problems']).toEqual([
        {
          file: 'task.toml',
          key: 'id',
          message: expect.stringMatching(/duplicate id "calc-divide-by-zero"/),
        },
      ]);
    }
    expect(suite.problems[0]?.error.message).toContain(join(real, 'two'));
    expect(suite.problems[1]?.error.message).toContain(join(real, 'one'));
  });

  it('refuses a folder that holds no bundle', async () => {
    const root = tempDir();
    mkdirSync(join(root, 'empty'));
    const error = await failure(loadSuite(root));
    expect(error.message).toMatch(/holds no task bundle/);
  });

  it('refuses a suite outside tasksRoot', async () => {
    const root = tempDir();
    const error = await failure(loadSuite(tempDir(), { tasksRoot: root }));
    expect(error.message).toMatch(/is outside tasks_root/);
  });
});
