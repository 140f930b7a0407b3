import { describe, expect, it } from 'vitest';
import { setupCommitProblem } from '../../src/oracle/validate-image.js';

const base = 'b'.repeat(40);
const head = 'c'.repeat(40);
const bundle = { baseCommit: base, workdir: '/testbed' };
const hidden = ['tests/test_calc.py', 'tests/new_test.py'];

describe('a setup commit on the base commit', () => {
  it('is accepted when its only parent is the base commit and it changes no hidden test file', () => {
    const commit = { head, parents: [base], changed: ['setup.cfg', 'src/calc/mode.py'] };
    expect(setupCommitProblem(bundle, commit, hidden)).toBeUndefined();
    // An empty commit (--allow-empty: the install changed no tracked file) too.
    expect(setupCommitProblem(bundle, { head, parents: [base], changed: [] }, hidden)).toBe(
      undefined,
    );
  });

  it('is refused in one line, naming what git shows, when it sits on another commit, is a merge or a root', () => {
    const other = 'd'.repeat(40);
    const cases: Array<[string[], string]> = [
      [[other], `parent ${other}`],
      [[base, other], `parent ${base} and ${other}`],
      [[other, base], `parent ${other} and ${base}`],
      [[], 'no parent'],
    ];
    for (const [parents, named] of cases) {
      expect(setupCommitProblem(bundle, { head, parents, changed: [] }, hidden)).toBe(
        `task.toml: environment.base_commit: is ${base}, but HEAD of /testbed in the image is ${head} (${named}), neither the base commit nor one setup commit on it`,
      );
    }
  });

  it('is refused when it changes a file of the hidden test patch, naming each', () => {
    const commit = {
      head,
      parents: [base],
      changed: ['setup.cfg', 'tests/new_test.py', 'tests/test_calc.py'],
    };
    expect(setupCommitProblem(bundle, commit, hidden)).toBe(
      `task.toml: environment.setup_commit: HEAD of /testbed in the image is ${head}, whose setup commit changes what tests/hidden.patch touches: tests/new_test.py, tests/test_calc.py`,
    );
  });
});
