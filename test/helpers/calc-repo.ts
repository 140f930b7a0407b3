// The smallest Python repository the oracle's pytest tests grade: `add` subtracts, and the
// existing suite passes anyway (it only adds zero).
export const CALC = 'def add(a, b):\n    return a - b\n';

export const CALC_EXISTING = `from calc import add


def test_zero():
    assert add(0, 0) == 0


def test_same():
    assert add(2, 0) == 2
`;

/** The repository's files: calc.py and its existing tests. */
export const CALC_REPO = {
  'calc.py': CALC,
  'tests/__init__.py': '',
  'tests/test_calc.py': CALC_EXISTING,
} as const;
