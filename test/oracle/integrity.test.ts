// Which integrity layers a task has, and validate's warning about a pytest task that lets a
// candidate's conftest.py through.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/oracle/bundle.js';
import { BUILTIN_RUNNERS, runnerSource } from '../../src/runners/index.js';
import {
  deniesConftest,
  integrityLayers,
  integrityWarnings,
  runsPytest,
} from '../../src/oracle/integrity.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const PY_TASK = join(ROOT, 'examples/py-duration-parse');
const NODE_TASK = join(ROOT, 'examples/node-version-compare');
const GO_TASK = join(ROOT, 'examples/go-text-ellipsis');
const RUST_TASK = join(ROOT, 'examples/rust-ini-values');
// A runner of its own that does not speak protocol 2 (the shell example's).
const OWN_RUNNER = join(ROOT, 'examples/sh-country-codes/tests/run');
const grading = (deny: string[], runner = OWN_RUNNER) => ({
  grading: {
    allow: ['**'],
    deny,
    allowSymlinks: false,
    tamper: 'flag' as const,
    rules: 'proctor' as const,
  },
  paths: { runner },
});

/** A copy of the pytest example with its deny list replaced, or its runner, or a [tests] env. */
function pyTask(edit: { deny?: string; runner?: string; env?: string }): string {
  const dir = join(tempDir(), 'py');
  cpSync(PY_TASK, dir, { recursive: true });
  const toml = join(dir, 'task.toml');
  if (edit.deny !== undefined) {
    writeFileSync(toml, readFileSync(toml, 'utf8').replace(/^deny = .*$/m, edit.deny));
  }
  if (edit.env !== undefined) {
    writeFileSync(toml, `${readFileSync(toml, 'utf8')}\n[tests]\nenv = { ${edit.env} }\n`);
  }
  if (edit.runner !== undefined) writeFileSync(join(dir, 'tests/run'), edit.runner);
  return dir;
}

describe('integrityLayers', () => {
  it('always lists the screen, and conftest-denied when every conftest.py is denied', async () => {
    expect(await integrityLayers(grading(['tests/**']))).toEqual(['screen']);
    expect(await integrityLayers(grading(['tests/**', '**/conftest.py']))).toEqual([
      'screen',
      'conftest-denied',
    ]);
    expect(await integrityLayers(grading(['**/*.py']))).toEqual(['screen', 'conftest-denied']);
  });

  it('adds the protocol-2 layers for a runner that says it speaks it (the built-in ones)', async () => {
    for (const name of BUILTIN_RUNNERS) {
      const runner = join(ROOT, 'src/runners', name, 'run');
      expect(await integrityLayers(grading(['tests/**', '**/conftest.py'], runner))).toEqual([
        'screen',
        'conftest-denied',
        'sentinels',
        'collector',
        'tripwires',
        'base-config',
        // Every built-in runner places canaries: the Python, go, cargo, junit and ctest runners
        // with src/runners/core/canary.py, and Proctor the JavaScript runners' (js-canaries.ts).
        'canaries',
      ]);
    }
    // The line must be the runner's own, within its first 4 KiB.
    const late = join(tempDir(), 'run');
    writeFileSync(late, `#!/bin/sh\n${'#\n'.repeat(3000)}# proctor-runner-protocol: 2\n`);
    expect(await integrityLayers(grading(['tests/**'], late))).toEqual(['screen']);
  });

  it('does not count a glob that misses the root conftest.py or a deep one', () => {
    expect(deniesConftest(grading(['conftest.py']))).toBe(false);
    expect(deniesConftest(grading(['*/conftest.py']))).toBe(false);
    expect(deniesConftest(grading(['src/**/conftest.py']))).toBe(false);
    expect(deniesConftest(grading(['{,**/}conftest.py']))).toBe(true);
  });
});

describe('integrityWarnings', () => {
  it('tells a pytest task by its runner', async () => {
    expect(await runsPytest(await loadBundle(PY_TASK))).toBe(true);
    expect(await runsPytest(await loadBundle(NODE_TASK))).toBe(false);
    const builtin = pyTask({ runner: readFileSync(join(ROOT, 'src/runners/pytest/run'), 'utf8') });
    expect(await runsPytest(await loadBundle(builtin))).toBe(true);
    // Django's runtests.py loads no conftest.py: no pytest warning for a django task.
    const django = pyTask({ runner: readFileSync(join(ROOT, 'src/runners/django/run'), 'utf8') });
    expect(await runsPytest(await loadBundle(django))).toBe(false);
    // The go runner as written into a bundle holds the canaries' shared part, which names
    // pytest: it runs none.
    const go = pyTask({ runner: (await runnerSource('go')).toString('utf8') });
    expect(await runsPytest(await loadBundle(go))).toBe(false);
    // Nor for a go or cargo task (the cargo runner's comments once named pytest's runner).
    expect(await runsPytest(await loadBundle(GO_TASK))).toBe(false);
    expect(await runsPytest(await loadBundle(RUST_TASK))).toBe(false);
  });

  it('warns about a pytest task whose deny list lets a conftest.py through, and no other', async () => {
    const open = await loadBundle(pyTask({ deny: 'deny = ["tests/**"]' }));
    expect(await integrityWarnings(open)).toEqual([
      expect.stringMatching(
        /^task\.toml: grading\.deny: a pytest task should deny \*\*\/conftest\.py /,
      ),
    ]);
    expect(await integrityWarnings(await loadBundle(PY_TASK))).toEqual([]);
    // A node task has no use for the glob.
    expect(await integrityWarnings(await loadBundle(NODE_TASK))).toEqual([]);
    expect(await integrityWarnings(await loadBundle(GO_TASK))).toEqual([]);
    expect(await integrityWarnings(await loadBundle(RUST_TASK))).toEqual([]);
  });

  it('warns about a jest task whose RUNNER_JEST_IDS is no form the jest runner reads, and no other', async () => {
    const jest = readFileSync(join(ROOT, 'src/runners/jest/run'), 'utf8');
    const task = (env: string, runner = jest) => loadBundle(pyTask({ runner, env }));
    expect(await integrityWarnings(await task('RUNNER_JEST_IDS = "Json"'))).toEqual([
      'task.toml: tests.env: RUNNER_JEST_IDS: must be "verbose" or "json", not "Json"; the jest runner makes every listed test an error',
    ]);
    expect(await integrityWarnings(await task('RUNNER_JEST_IDS = ""'))).toHaveLength(1);
    expect(await integrityWarnings(await task('RUNNER_JEST_IDS = "json"'))).toEqual([]);
    expect(await integrityWarnings(await task('RUNNER_JEST_IDS = "verbose"'))).toEqual([]);
    // Another runner does not read it.
    const vitest = readFileSync(join(ROOT, 'src/runners/vitest/run'), 'utf8');
    expect(await integrityWarnings(await task('RUNNER_JEST_IDS = "Json"', vitest))).toEqual([]);
  });
});
