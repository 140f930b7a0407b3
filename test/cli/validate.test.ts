import { randomBytes } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { ROOT } from '../helpers/processes.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { testDocker } from '../helpers/docker.js';
import { listImageTemplates, readReady, removeTemplate } from '../../src/sandbox/template.js';

const VALID = join(ROOT, 'test/fixtures/bundles/valid');

/** A suite folder holding copies of the valid bundle, each edited by `edit`. */
function suite(bundles: Record<string, (dir: string) => void>): string {
  const root = tempDir();
  for (const [name, edit] of Object.entries(bundles)) {
    const dir = join(root, name);
    cpSync(VALID, dir, { recursive: true });
    edit(dir);
  }
  return root;
}

const retoml = (dir: string, from: string | RegExp, to: string) => {
  const file = join(dir, 'task.toml');
  writeFileSync(file, readFileSync(file, 'utf8').replace(from, to));
};

describe('proctor validate', () => {
  it('accepts a valid bundle after building its image and reading its commit, exit 0', async () => {
    const result = await proctor(['--home', tempDir(), 'validate', VALID]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^ok {6}calc-divide-by-zero .*\(local_build sha256:[0-9a-f]{64}\)$/m,
    );
    expect(result.stdout).toContain('1 valid, 0 invalid');
  }, 300_000);

  it("makes the evaluator's template of the image it checks, so that a grade in another home prepares none", async () => {
    // An image of this test's own (a label only): no other test's grade makes its template.
    const dir = join(tempDir(), 'calc');
    cpSync(VALID, dir, { recursive: true });
    const dockerfile = join(dir, 'environment/Dockerfile');
    const label = `LABEL proctor.test.validate=${randomBytes(6).toString('hex')}\n`;
    writeFileSync(dockerfile, readFileSync(dockerfile, 'utf8') + label);
    const validated = await proctor(['--home', tempDir(), 'validate', '--json', dir]);
    expect(validated.code, validated.stderr).toBe(0);
    const { results } = JSON.parse(validated.stdout) as { results: Array<{ localId: string }> };
    const image = results[0]?.localId ?? '';
    const docker = testDocker();
    const made = (await listImageTemplates(docker)).filter((t) => t.image === image);
    expect(made).toHaveLength(1);
    onCleanup(async () => void (await removeTemplate(docker, made[0]?.name ?? '')));
    expect((await readReady(docker, '', made[0]!))?.key).toBe(made[0]?.key);
    // A grade in a fresh home takes it: its job spent no time on a template.
    const home = tempDir();
    const patch = join(home, 'fix.diff');
    writeFileSync(
      patch,
      'diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,3 @@\n def divide(a, b):\n+    # checked\n     return a / b\n',
    );
    const graded = await proctor([
      '--home',
      home,
      'grade',
      dir,
      '--patch',
      patch,
      '--wait',
      '--json',
    ]);
    expect(graded.code, graded.stderr).toBeLessThan(2);
    const status = await proctor(['--home', home, 'status', '1', '--json']);
    const { jobs } = JSON.parse(status.stdout) as {
      jobs: Array<{ result: { timings: Record<string, number> } }>;
    };
    expect(jobs[0]?.result.timings).toHaveProperty('workspace');
    expect(jobs[0]?.result.timings).not.toHaveProperty('template');
    expect((await listImageTemplates(docker)).filter((t) => t.image === image)).toEqual(made);
  }, 300_000);

  it('reports every problem of every bundle in a suite with its file and key, exit 1', async () => {
    const root = suite({
      a_good: () => {},
      b_wrong_commit: (dir) => {
        retoml(dir, /base_commit = "[0-9a-f]+"/, `base_commit = "${'1'.repeat(40)}"`);
        retoml(dir, 'calc-divide-by-zero', 'wrong-commit');
      },
      c_bad_format: (dir) => {
        retoml(dir, 'calc-divide-by-zero', 'bad-format');
        retoml(dir, '[limits]', '[limits]\nmemory_mb = 1\nsurprise = true');
      },
    });
    const result = await proctor(['--home', tempDir(), 'validate', root]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ok {6}calc-divide-by-zero /m);
    expect(result.stdout).toContain(
      `task.toml: environment.base_commit: is ${'1'.repeat(40)}, but HEAD of /repo in the image is`,
    );
    expect(result.stdout).toMatch(/task\.toml: limits\.memory_mb: /);
    expect(result.stdout).toMatch(/task\.toml: .*surprise/);
    expect(result.stdout).toContain('1 valid, 2 invalid');
  }, 300_000);

  it('runs only the static checks with --static, and needs no Docker for them', async () => {
    const root = suite({ x: (dir) => writeFileSync(join(dir, 'tests/hidden.txt'), '') });
    const result = await proctor(
      ['--home', tempDir(), 'validate', '--static', '--json', VALID, root],
      { DOCKER_HOST: 'tcp://127.0.0.1:1' },
    );
    expect(result.code).toBe(1);
    const parsed = JSON.parse(result.stdout) as {
      valid: number;
      invalid: number;
      results: Array<{ ok: boolean; problems?: string[] }>;
    };
    expect(parsed).toMatchObject({ valid: 1, invalid: 1 });
    expect(parsed.results[1]?.problems?.join('\n')).toContain('tests/hidden.txt');
  });

  it('lists integrity layers and warns about a pytest task that lets conftest.py through, exit unchanged', async () => {
    const root = tempDir();
    cpSync(join(ROOT, 'examples/py-duration-parse'), join(root, 'a_denied'), { recursive: true });
    const open = join(root, 'b_open');
    cpSync(join(ROOT, 'examples/py-duration-parse'), open, { recursive: true });
    retoml(open, /^deny = .*$/m, 'deny = ["tests/**"]');
    retoml(open, 'py-duration-parse', 'py-open');
    const result = await proctor(['--home', tempDir(), 'validate', '--static', root]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      expect.stringMatching(/^ok {6}py-duration-parse .*a_denied {2}\(format and paths\)$/),
      '  integrity: screen, conftest-denied, sentinels, collector, tripwires, base-config, canaries',
      expect.stringMatching(/^ok {6}py-open .*b_open {2}\(format and paths\)$/),
      '  integrity: screen, sentinels, collector, tripwires, base-config, canaries',
      "  warning: task.toml: grading.deny: a pytest task should deny **/conftest.py (a candidate's conftest.py is a pytest plugin that can rewrite any outcome)",
      '2 valid, 0 invalid',
      '',
    ]);
    const json = await proctor(['--home', tempDir(), 'validate', '--static', '--json', open]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      valid: 1,
      results: [
        {
          ok: true,
          layers: ['screen', 'sentinels', 'collector', 'tripwires', 'base-config', 'canaries'],
          warnings: [expect.stringMatching(/conftest/)],
        },
      ],
    });
  });

  it("prints each task's canary coverage, naming every hidden test the mutator does not understand", async () => {
    const root = tempDir();
    cpSync(join(ROOT, 'examples/py-duration-parse'), join(root, 'py'), { recursive: true });
    const result = await proctor(['--home', tempDir(), 'validate', root, VALID]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    const py = lines.findIndex((l) => l.startsWith('ok      py-duration-parse '));
    expect(lines.slice(py + 2, py + 4)).toEqual([
      '  canaries: 1 of 2 hidden tests covered (1 mutant)',
      '    uncovered tests/test_durations.py::test_format_parse_roundtrip: no assertion the mutator understands',
    ]);
    // The valid fixture's runner is its own: it places none.
    const calc = lines.findIndex((l) => l.startsWith('ok      calc-divide-by-zero '));
    expect(lines[calc + 2]).toBe('  canaries: none (the runner places no canaries)');
  }, 300_000);

  it('says in one line, exit 2, when no Docker engine answers', async () => {
    const result = await proctor(['--home', tempDir(), 'validate', VALID], {
      DOCKER_HOST: 'tcp://127.0.0.1:1',
    });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^proctor: no Docker engine answers at tcp:\/\/127\.0\.0\.1:1/);
  });

  it('names a path that does not exist', async () => {
    const result = await proctor([
      '--home',
      tempDir(),
      'validate',
      '--static',
      '/nonexistent/suite',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('/nonexistent/suite');
  });

  it('shows in proctor status a validate job with its validity, and the image or first problem', async () => {
    const home = tempDir();
    const store = tempStore({ path: join(home, 'proctor.db') });
    const { jobIds } = await store.enqueueBatch({
      jobs: ['/t/a', '/t/b'].map((bundle) => ({ kind: 'validate' as const, payload: { bundle } })),
    });
    const [valid, invalid] = await store.claim('validate', 'w', 2, 60_000);
    const imageId = `sha256:${'c'.repeat(64)}`;
    await store.complete(
      { id: valid!.id, attempt: 1 },
      {
        validity: 'valid',
        problems: [],
        detail: `local_build ${imageId}`,
      },
    );
    const problem = `task.toml: environment.base_commit: is ${'1'.repeat(40)}, but HEAD of /repo in the image is ${'2'.repeat(40)}`;
    await store.complete(
      { id: invalid!.id, attempt: 1 },
      {
        validity: 'invalid',
        problems: [problem, 'tests/run: missing'],
        detail: problem,
      },
    );
    const result = await proctor(['--home', home, 'status', ...jobIds.map(String)]);
    expect(result.code).toBe(0);
    const rows = result.stdout.split('\n');
    expect(rows.find((r) => r.startsWith(`${valid!.id} `))).toMatch(
      new RegExp(`\\svalidate\\s+done\\s+1/3\\s+\\S+\\s+valid: local_build ${imageId}$`),
    );
    expect(rows.find((r) => r.startsWith(`${invalid!.id} `))).toMatch(
      /\svalidate\s+done\s+1\/3\s+\S+\s+invalid: task\.toml: environment\.base_commit: is 1{40}, but HEAD of \/repo in the image is 2+…$/,
    );
  });
});
