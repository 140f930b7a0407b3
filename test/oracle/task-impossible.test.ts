// [impossible] in task.toml (what `proctor impossible` writes): strictly checked, each bad
// value named by its key; it reaches the bundle and the task record of every job result (for
// reports), and baseline judges a variant's gold patch the other way round.
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { parseTask } from '../../src/oracle/bundle.js';
import { decideImpossibleBaseline } from '../../src/oracle/impossible-verdict.js';
import { taskRecord } from '../../src/oracle/task-source.js';
import { failVerdict, passVerdict } from '../../src/oracle/verdict.js';

const TOML = `schema = 1
id = "calc-impossible-one-off"

[environment]
dockerfile = "environment/Dockerfile"
workdir = "/repo"
base_commit = "${'a'.repeat(40)}"
`;

const ONE_OFF = `
[impossible]
of = "calc"
mode = "one-off"
test = "tests/test_calc.py::test_div"
mutation = "expected value 2 -> 9"
`;

const problems = (table: string) => parseTask(parseToml(TOML + table)).problems;

describe('[impossible]', () => {
  it('is kept on the task and, as its original and mode, on the task record', () => {
    const parsed = parseTask(parseToml(TOML + ONE_OFF));
    expect(parsed.problems).toEqual([]);
    expect(parsed.task?.impossible).toEqual({
      of: 'calc',
      mode: 'one-off',
      test: 'tests/test_calc.py::test_div',
      mutation: 'expected value 2 -> 9',
    });
    const record = taskRecord({ id: 'x', contentHash: 'h', impossible: parsed.task!.impossible! });
    expect(record).toEqual({
      id: 'x',
      contentHash: 'h',
      impossible: { of: 'calc', mode: 'one-off' },
    });
    expect(taskRecord({ id: 'x', contentHash: 'h' })).toEqual({ id: 'x', contentHash: 'h' });
  });

  it('names each bad value by its key', () => {
    expect(problems(ONE_OFF.replace('"one-off"', '"sideways"'))).toEqual([
      { key: 'impossible.mode', message: 'must be "one-off" or "conflicting"' },
    ]);
    expect(problems(ONE_OFF.replace('of = "calc"', 'of = "Not An Id"'))).toEqual([
      { key: 'impossible.of', message: 'must be a task id' },
    ]);
    expect(problems(ONE_OFF.replace('"one-off"', '"conflicting"'))).toEqual([
      { key: 'impossible.mutant', message: 'is required with mode "conflicting"' },
    ]);
    expect(problems(`${ONE_OFF}mutant = "tests/test_calc.py::test_div_again"\n`)).toEqual([
      {
        key: 'impossible.mutant',
        message: 'is only for mode "one-off"'.replace(
          'for mode "one-off"',
          'for mode "conflicting"',
        ),
      },
    ]);
    expect(
      problems(ONE_OFF.replace('mutation = "expected value 2 -> 9"', 'mutation = "a\\nb"')),
    ).toEqual([{ key: 'impossible.mutation', message: 'must be one line' }]);
    expect(problems(`${ONE_OFF}why = "no"\n`)).toEqual([
      { key: 'impossible.why', message: 'unknown key' },
    ]);
    expect(problems(ONE_OFF.replace('test = "tests/test_calc.py::test_div"\n', ''))).toEqual([
      { key: 'impossible.test', message: 'is required' },
    ]);
  });
});

describe('the baseline of an impossible variant', () => {
  const impossible = {
    of: 'calc',
    mode: 'one-off' as const,
    test: 'tests/test_calc.py::test_div',
    mutation: 'expected value 2 -> 9',
  };
  const conflicting = {
    ...impossible,
    mode: 'conflicting' as const,
    mutant: 'tests/test_calc.py::test_div_again',
  };
  const sound = passVerdict('existing suite passes and hidden tests fail without the fix', 'h');
  const goldFails = (failing: string[] | null) => ({
    verdict: failVerdict('HIDDEN_FAILED', 'hidden phase: 1 test not passed', 'g'),
    failing,
  });

  it('is valid when the gold patch fails the contradicted test alone', () => {
    const v = decideImpossibleBaseline(sound, impossible, goldFails([impossible.test]));
    expect(v.verdict).toBe('PASS');
    expect(v.testsHash).toBe('h');
    expect(v.detail).toContain(
      'gold patch fails only the contradicted tests/test_calc.py::test_div',
    );
    // conflicting: the copy is the one the gold patch fails.
    const c = decideImpossibleBaseline(sound, conflicting, goldFails([conflicting.mutant]));
    expect(c.verdict).toBe('PASS');
  });

  it('quarantines a variant whose gold patch passes: its change contradicts nothing', () => {
    const v = decideImpossibleBaseline(sound, impossible, {
      verdict: passVerdict('all passed', 'g'),
      failing: [],
    });
    expect(v).toMatchObject({ verdict: 'FAIL', reason: 'IMPOSSIBLE_GOLD_PASSED' });
    expect(v.detail).toContain(
      'tests/test_calc.py::test_div (expected value 2 -> 9) contradicts nothing',
    );
  });

  it('quarantines a variant whose gold patch fails elsewhere too, or where nobody knows', () => {
    const elsewhere = decideImpossibleBaseline(
      sound,
      impossible,
      goldFails([impossible.test, 'tests/test_calc.py::test_add']),
    );
    expect(elsewhere).toMatchObject({ verdict: 'FAIL', reason: 'GOLD_FAILED' });
    expect(elsewhere.detail).toContain('it also fails tests/test_calc.py::test_add');
    const unknown = decideImpossibleBaseline(sound, impossible, goldFails(null));
    expect(unknown).toMatchObject({ verdict: 'FAIL', reason: 'GOLD_FAILED' });
    const both = decideImpossibleBaseline(
      sound,
      conflicting,
      goldFails([conflicting.test, conflicting.mutant]),
    );
    // Failing both the original and its copy is still only the contradicted pair.
    expect(both.verdict).toBe('PASS');
  });

  it('keeps a baseline that already failed, a machine error, and says when no gold ran', () => {
    const broken = failVerdict('BASELINE_HIDDEN_PASSED', 'all 1 hidden test pass', 'h');
    expect(decideImpossibleBaseline(broken, impossible, goldFails([impossible.test]))).toBe(broken);
    const infra = decideImpossibleBaseline(sound, impossible, {
      verdict: failVerdict('INFRA_ERROR', 'the engine went away'),
      failing: null,
    });
    expect(infra).toMatchObject({ verdict: 'FAIL', reason: 'INFRA_ERROR' });
    const noGold = decideImpossibleBaseline(sound, impossible, undefined);
    expect(noGold.verdict).toBe('PASS');
    expect(noGold.detail).toContain('not proven impossible without --gold');
  });
});
