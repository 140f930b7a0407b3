// `npm run parity` (scripts/parity.ts) end to end on a repository made here: three rows of one
// small project, an environment of Debian's python3 and pytest, one submission's predictions
// (a fix, a wrong patch, an empty one) and its labels (the first two resolved there, the third
// without a patch). The script imports, baselines, grades and compares with the real proctor
// binary, and prints the table: one disagreement (the wrong patch), one instance empty there.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { leftovers } from '../helpers/home.js';
import { spawnTs } from '../helpers/processes.js';
import { commit, newRepo, toolchainEnvironment } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';

const CALC = `def div(a, b):\n    return a / b\n`;
const FIXED = `def div(a, b):\n    if b == 0:\n        return None\n    return a / b\n`;
const WRONG = `def div(a, b):\n    if b == 0:\n        return 0\n    return a / b\n`;
const TESTS = `from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n`;
const NEW_TESTS = `${TESTS}\n\ndef test_zero():\n    assert div(1, 0) is None\n`;

function diff(repo: string, a: string, b: string, path: string): string {
  return execFileSync('git', ['diff', '--full-index', a, b, '--', path], {
    cwd: repo,
    encoding: 'utf8',
  });
}

function jsonl(path: string, values: unknown[]) {
  writeFileSync(path, values.map((v) => JSON.stringify(v)).join('\n') + '\n');
}

async function parity(args: string[]) {
  const child = spawnTs('scripts/parity.ts', args);
  const { code } = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

describe('npm run parity', { timeout: 900_000 }, () => {
  it('refuses bad options in one line (exit 2)', async () => {
    const rows = join(tempDir('proctor-parity-'), 'rows.jsonl');
    jsonl(rows, [{ instance_id: 'acme__calc-1' }]);
    const cases: Array<[string[], string]> = [
      [['--rows', rows], "parity: pass --repos DIR, the rows' repositories as DIR/<owner>__<name>"],
      [
        ['--rows', rows, '--repos', '.', '--only', 'acme__calc-1,acme__calc-9'],
        `parity: --only: no row acme__calc-9 in ${rows}`,
      ],
      [
        ['--rows', rows, '--repos', '.', '--n', '0'],
        'parity: --n must be a whole number ≥ 1, got 0',
      ],
    ];
    for (const [args, message] of cases) {
      const result = await parity(args);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toBe(`${message}\n`);
      expect(result.stdout).toBe('');
    }
  });

  it('grades a submission on its rows and prints the agreement table against its labels', async () => {
    const root = tempDir('proctor-parity-');
    const repo = newRepo(join(root, 'repos', 'acme__calc'));
    const base = commit(repo, { 'calc.py': CALC, 'tests/test_calc.py': TESTS }, 'base');
    const fix = commit(repo, { 'calc.py': FIXED, 'tests/test_calc.py': NEW_TESTS }, 'fix');
    const wrong = commit(repo, { 'calc.py': WRONG }, 'wrong');
    const row = (n: number) => ({
      instance_id: `acme__calc-${n}`,
      repo: 'acme/calc',
      base_commit: base,
      patch: diff(repo, base, fix, 'calc.py'),
      test_patch: diff(repo, base, fix, 'tests'),
      problem_statement: 'div(1, 0) raises ZeroDivisionError; it should return None.',
      version: '0.1',
      FAIL_TO_PASS: JSON.stringify(['tests/test_calc.py::test_zero']),
      PASS_TO_PASS: JSON.stringify(['tests/test_calc.py::test_div']),
    });
    const rows = join(root, 'rows.jsonl');
    // Row 4 has no prediction: `grade` then prints a line of tasks not submitted after its
    // summary, which the script reads the batch from.
    jsonl(rows, [row(1), row(2), row(3), row(4)]);
    const predictions = join(root, 'predictions');
    mkdirSync(predictions);
    const model = 'acme-model';
    jsonl(join(predictions, `${model}.jsonl`), [
      { instance_id: 'acme__calc-1', model_name_or_path: model, model_patch: row(1).patch },
      {
        instance_id: 'acme__calc-2',
        model_name_or_path: model,
        model_patch: diff(repo, base, wrong, 'calc.py'),
      },
      { instance_id: 'acme__calc-3', model_name_or_path: model, model_patch: '' },
    ]);
    const labels = join(root, 'labels');
    mkdirSync(labels);
    writeFileSync(
      join(labels, `${model}.json`),
      JSON.stringify({
        resolved: ['acme__calc-1', 'acme__calc-2'],
        no_generation: ['acme__calc-3'],
      }),
    );
    const home = join(root, 'home');

    const result = await parity([
      '--rows',
      rows,
      '--repos',
      join(root, 'repos'),
      '--environment',
      toolchainEnvironment(),
      '--predictions',
      predictions,
      '--labels',
      labels,
      '--home',
      home,
    ]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('4 valid, 0 quarantined');
    expect(result.stdout).toContain(
      `| ${model} | 3 | 3 | 3 | 2 | 1 (50 %) | 0.000 | 1 | 1 empty there |`,
    );
    expect(result.stdout).toMatch(
      new RegExp(
        `disagreement ${model} acme__calc-2: here unresolved \\(HIDDEN_FAILED: .*\\), there resolved`,
      ),
    );
    expect(await leftovers(home)).toEqual([]);
  });
});
