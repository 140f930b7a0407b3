// Reading SWE-bench predictions (pure): JSON lines and JSON arrays with the line each entry
// starts on, every malformed entry kept as a problem naming its line, and matching to tasks by
// [source].instance_id, else task id, with duplicates, ambiguity and unknown ids skipped.
import { describe, expect, it } from 'vitest';
import { matchPredictions, parsePredictions } from '../../src/cli/predictions.js';

const line = (instance: string, patch: string | null = 'diff', model = 'm') =>
  JSON.stringify({ instance_id: instance, model_name_or_path: model, model_patch: patch });

function parsed(text: string) {
  const result = parsePredictions(text);
  if (typeof result === 'string') throw new Error(result);
  return result;
}

describe('parsePredictions', () => {
  it('reads JSON lines, skipping blank lines, with each line number', () => {
    const { predictions, skipped } = parsed(`${line('a')}\n\n${line('b', null)}\n`);
    expect(skipped).toEqual([]);
    expect(predictions).toEqual([
      { line: 1, instanceId: 'a', model: 'm', patch: 'diff' },
      { line: 3, instanceId: 'b', model: 'm', patch: null },
    ]);
  });

  it('reads a JSON array, giving each element the line it starts on', () => {
    const text = `[\n  ${line('a', 'x, [y] {z} "q"')},\n\n  ${line('b')}\n]\n`;
    expect(parsed(text).predictions.map((p) => [p.line, p.instanceId, p.patch])).toEqual([
      [2, 'a', 'x, [y] {z} "q"'],
      [4, 'b', 'diff'],
    ]);
    expect(parsed(`[${line('a')}, ${line('b')}]`).predictions.map((p) => p.line)).toEqual([1, 1]);
    expect(parsed('[]').predictions).toEqual([]);
  });

  it('keeps every malformed entry as a problem naming its line, and reads the rest', () => {
    const text = [
      line('a'),
      '{"instance_id": "b", "model_name_or_path": "m"',
      JSON.stringify({ instance_id: 'c', model_name_or_path: 'm' }),
      JSON.stringify({ instance_id: 'd', model_name_or_path: 'm', model_patch: 7 }),
      '"just a string"',
      line('e', 'diff', 'other-model'),
      line('f'),
    ].join('\n');
    const { predictions, skipped } = parsed(text);
    expect(predictions.map((p) => p.instanceId)).toEqual(['a', 'f']);
    expect(skipped.map((s) => [s.line, s.instanceId])).toEqual([
      [2, null],
      [3, 'c'],
      [4, 'd'],
      [5, null],
      [6, 'e'],
    ]);
    expect(skipped[0]?.problem).toMatch(/^not JSON: /);
    expect(skipped[1]?.problem).toMatch(/^prediction\.model_patch: /);
    expect(skipped[2]?.problem).toMatch(/^prediction\.model_patch: /);
    expect(skipped[4]?.problem).toMatch(/"other-model" is not the model of line 1 \("m"\)/);
  });

  it('ignores keys a harness adds beside the three it reads', () => {
    const extra = JSON.stringify({
      instance_id: 'a',
      model_name_or_path: 'm',
      model_patch: 'p',
      cost: 1,
    });
    expect(parsed(extra).predictions).toHaveLength(1);
  });

  it('refuses a file that is one object over many lines, or an array that does not close', () => {
    expect(parsePredictions(`{\n  "a": ${line('a')}\n}\n`)).toMatch(
      /a JSON object; expected JSON lines or a JSON array/,
    );
    expect(parsePredictions(`[${line('a')},\n`)).toMatch(/not a JSON array/);
    expect(parsePredictions(`[${line('a')}] trailing`)).toMatch(/not a JSON array/);
  });
});

describe('matchPredictions', () => {
  const tasks = [
    { id: 'astropy-1', instanceId: 'astropy__astropy-1' },
    { id: 'plain' },
    { id: 'twin-1', instanceId: 'twin' },
    { id: 'twin-2', instanceId: 'twin' },
    { id: 'left-out' },
    { id: 'dup-task' },
  ];

  it('matches by instance_id, else task id; skips duplicates, ambiguity and unknown ids', () => {
    const { predictions } = parsed(
      [
        line('astropy__astropy-1'),
        line('plain'),
        line('twin'),
        line('nope'),
        line('dup-task'),
        line('dup-task'),
      ].join('\n'),
    );
    const { matched, skipped, notSubmitted } = matchPredictions(predictions, tasks);
    expect(matched.map((m) => [m.prediction.line, m.task.id])).toEqual([
      [1, 'astropy-1'],
      [2, 'plain'],
    ]);
    expect(skipped.map((s) => [s.line, s.problem])).toEqual([
      [3, 'ambiguous: tasks twin-1, twin-2 all have instance_id twin'],
      [4, 'unknown instance_id nope: no task of the suite has it as [source].instance_id or id'],
      [5, 'duplicate: instance dup-task is also predicted on line 6'],
      [6, 'duplicate: instance dup-task is also predicted on line 5'],
    ]);
    expect(notSubmitted.map((t) => t.id)).toEqual(['twin-1', 'twin-2', 'left-out', 'dup-task']);
  });

  it('prefers [source].instance_id over a task id that happens to be the same', () => {
    const both = [{ id: 'x' }, { id: 'y', instanceId: 'x' }];
    const { matched } = matchPredictions(parsed(line('x')).predictions, both);
    expect(matched.map((m) => m.task.id)).toEqual(['y']);
  });
});
