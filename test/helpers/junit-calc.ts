// The junit runner's fixture class (test/runners/junit.test.ts, junit-canary.test.ts): a
// calculator before and after the gold fix (floor division, zero an error).

export const CALC = `package calc;

public class Calc {
    public static int add(int a, int b) { return a + b; }

    /** a / b. */
    public static int div(int a, int b) { return a / b; }
}
`;

export const GOLD_CALC = `package calc;

public class Calc {
    public static int add(int a, int b) { return a + b; }

    /** a / b rounded down; b = 0 is an IllegalArgumentException. */
    public static int div(int a, int b) {
        if (b == 0) throw new IllegalArgumentException("division by zero");
        return Math.floorDiv(a, b);
    }
}
`;
