// The nearest reported ID to a declared one the report lacks, and the bounded line that names
// them: the hint that shows a task's author the ID format mistake.
import { describe, expect, it } from 'vitest';
import {
  MAX_NAMED_MISSING,
  describeMissing,
  editDistance,
  nearestFinder,
  nearestIds,
  normaliseId,
} from '../../src/oracle/missing-ids.js';

describe('normaliseId', () => {
  it('makes separators one dot and lower-cases, so path and JUnit forms nearly agree', () => {
    expect(normaliseId('tests/test_x.py::TestA::test_y[a-b]')).toBe(
      'tests.test_x.py.testa.test_y.a.b.',
    );
    expect(normaliseId('tests.test_x.TestA::test_y[a-b]')).toBe('tests.test_x.testa.test_y.a.b.');
    expect(normaliseId('tëst_ü::x')).toBe('tëst_ü.x');
  });
});

describe('editDistance', () => {
  it('counts insertions, deletions and substitutions', () => {
    expect(editDistance('', '')).toBe(0);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('sitting', 'kitten')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });
});

describe('nearestIds', () => {
  it('finds the JUnit classname::name of a pytest node id', () => {
    const reported = [
      'tests.test_calc::test_add',
      'tests.test_calc::test_divide_by_zero',
      'tests.test_calc::test_divide',
      'tests.test_other::test_divide',
    ];
    expect(nearestIds('tests/test_calc.py::test_divide', reported)).toEqual([
      'tests.test_calc::test_divide',
    ]);
    expect(nearestIds('tests/test_calc.py::test_divide_by_zero', reported)).toEqual([
      'tests.test_calc::test_divide_by_zero',
    ]);
  });

  it('finds a class-qualified test and a parametrised one', () => {
    const reported = [
      'tests.test_api.TestClient::test_get[http]',
      'tests.test_api.TestClient::test_get[https]',
      'tests.test_api.TestServer::test_get[http]',
    ];
    expect(nearestIds('tests/test_api.py::TestClient::test_get[https]', reported)).toEqual([
      'tests.test_api.TestClient::test_get[https]',
    ]);
  });

  it('tells apart IDs that share a prefix by edit distance, not by length', () => {
    // Both share `tests.t_div` with the target; the shorter edit wins.
    expect(nearestIds('tests/t_div.sh', ['tests::t_div_zero', 'tests::t_div'])).toEqual([
      'tests::t_div',
    ]);
    expect(nearestIds('tests/t_div_zero.sh', ['tests::t_div', 'tests::t_div_zero'])).toEqual([
      'tests::t_div_zero',
    ]);
  });

  it('returns up to `limit` IDs, nearest first, each once, and breaks ties by report order', () => {
    expect(nearestIds('a::x', ['b::x', 'a::y', 'a::x2', 'a::y'], 3)).toEqual([
      'a::x2',
      'b::x',
      'a::y',
    ]);
    expect(nearestIds('q', ['ab', 'ba'])).toEqual(['ab']);
    expect(nearestIds('q', ['ba', 'ab'])).toEqual(['ba']);
    expect(nearestIds('anything', [])).toEqual([]);
    expect(nearestIds('a', ['a'], 0)).toEqual([]);
  });

  it('compares long IDs by their ends and stays fast on a report at its limits', () => {
    const pad = 'p'.repeat(900);
    const reported = Array.from({ length: 100_000 }, (_, i) => `${pad.slice(0, 150)}::test_${i}`);
    const find = nearestFinder(reported);
    const started = performance.now();
    expect(find(`${pad.slice(0, 150)}.py::test_77777`)).toEqual([
      `${pad.slice(0, 150)}::test_77777`,
    ]);
    expect(performance.now() - started).toBeLessThan(5_000);
    const long = [`a${pad}::test_1`, `a${pad}::test_2`, `b${pad}::test_2`];
    expect(nearestIds(`a${pad}.py::test_2`, long)).toEqual([`a${pad}::test_2`]);
  });
});

describe('describeMissing', () => {
  it('names each missing ID with the nearest reported one', () => {
    expect(
      describeMissing({
        phase: 'hidden',
        missing: ['tests/t.py::test_a'],
        declared: 2,
        reported: ['tests.t::test_b', 'tests.t::test_a'],
      }),
    ).toBe(
      '1 of 2 hidden test IDs not in the base report: tests/t.py::test_a (nearest reported: tests.t::test_a)',
    );
  });

  it('says when the report held no other IDs, and where the run was', () => {
    expect(
      describeMissing({
        phase: 'existing',
        missing: ['e::one'],
        declared: 1,
        reported: [],
        where: ' (run 2)',
      }),
    ).toBe(
      '1 of 1 existing test ID not in the base report (run 2): e::one; the report held no undeclared test ID to suggest instead',
    );
  });

  it('names at most MAX_NAMED_MISSING IDs, each cut to one bounded line, and counts the rest', () => {
    const missing = Array.from({ length: 40 }, (_, i) => `m${i}\n${'x'.repeat(900)}`);
    const detail = describeMissing({
      phase: 'hidden',
      missing,
      declared: 40,
      reported: missing.map((id) => id.toUpperCase()),
    });
    expect(detail).not.toContain('\n');
    expect(detail).toContain(`, … and ${40 - MAX_NAMED_MISSING} more`);
    expect(detail.match(/nearest reported: /g)).toHaveLength(MAX_NAMED_MISSING);
    expect(detail.length).toBeLessThan(MAX_NAMED_MISSING * 450 + 100);
    expect(detail).toContain('m0 xxx');
    expect(detail).toContain('(nearest reported: M0 XXX');
  });
});
