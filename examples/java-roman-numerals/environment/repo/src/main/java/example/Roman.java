package example;

/** Roman numerals from 1 to 3999. */
public final class Roman {
  private static final int[] VALUES = {1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1};
  private static final String[] SYMBOLS = {
    "M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"
  };

  private Roman() {}

  /** The numeral for n, 1 to 3999. */
  public static String format(int n) {
    if (n < 1 || n > 3999) {
      throw new IllegalArgumentException("out of range: " + n);
    }
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < VALUES.length; i++) {
      while (n >= VALUES[i]) {
        out.append(SYMBOLS[i]);
        n -= VALUES[i];
      }
    }
    return out.toString();
  }

  /** The value of a numeral: the sum of its letters' values. */
  public static int parse(String numeral) {
    if (numeral == null || numeral.isEmpty()) {
      throw new IllegalArgumentException("empty numeral");
    }
    int total = 0;
    for (char c : numeral.toCharArray()) {
      total += value(c);
    }
    return total;
  }

  private static int value(char c) {
    switch (c) {
      case 'I': return 1;
      case 'V': return 5;
      case 'X': return 10;
      case 'L': return 50;
      case 'C': return 100;
      case 'D': return 500;
      case 'M': return 1000;
      default: throw new IllegalArgumentException("not a Roman numeral letter: " + c);
    }
  }
}
