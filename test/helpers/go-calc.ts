// The go runner's fixture package (test/runners/go.test.ts, go-canary.test.ts): a calculator
// whose division truncates and panics on zero, and the gold fix (floor division, zero an error).

export const CALC = `package calc

func Add(a, b int) int { return a + b }

// Div divides a by b.
func Div(a, b int) (int, error) { return a / b, nil }
`;

export const GOLD_CALC = `package calc

import "errors"

func Add(a, b int) int { return a + b }

// Div divides a by b, rounding down; b = 0 is an error.
func Div(a, b int) (int, error) {
	if b == 0 {
		return 0, errors.New("division by zero")
	}
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q, nil
}
`;
