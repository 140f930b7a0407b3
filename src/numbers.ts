// Whole numbers given as text (command-line values, URL path ids, query parameters), parsed by
// one strict rule so that the CLI and the API accept exactly the same spellings: decimal digits
// only, without sign, exponent, hex prefix, spaces or leading zeros (`Number()` would take
// `1e3`, `0x10` and ` 7`, and round `9007199254740993` to another job's id). The value must lie
// within the safe-integer range and within its own bounds, and the message names those bounds,
// never the safe-integer limit when the real one is smaller. Whole numbers given as JSON (API
// bodies) are worded the same way (integerExpected).

/** The inclusive bounds of one number; both safe integers, `min <= max`. */
export interface IntegerBounds {
  min: number;
  max: number;
}

export type IntegerParse = { ok: true; value: number } | { ok: false; problem: string };

const DIGITS = /^[0-9]+$/;
const SHOWN_CHARS = 40;

/** The value as it can be quoted on one line: control characters escaped, long ones cut. */
function shown(text: string): string {
  const cut = text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
  return JSON.stringify(cut).slice(1, -1);
}

/**
 * `text` as an integer within `bounds`, or what is wrong with it as a phrase to put after the
 * value's name (`expected an integer from 1 to 20, got \`1e308\``).
 */
export function parseInteger(text: string, bounds: IntegerBounds): IntegerParse {
  const { min, max } = bounds;
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min > max) {
    throw new RangeError(`bounds must be safe integers with min <= max, got ${min}..${max}`);
  }
  const range = `an integer from ${min} to ${max}`;
  const got = `got \`${shown(text)}\``;
  if (!DIGITS.test(text)) {
    return { ok: false, problem: `expected ${range} in decimal digits, ${got}` };
  }
  if (text.length > 1 && text.startsWith('0')) {
    return { ok: false, problem: `expected ${range} without leading zeros, ${got}` };
  }
  // More digits than the largest safe integer has is out of range whatever they are; with at
  // most that many, Number() is exact up to 2^53, and anything it rounds is above max anyway.
  const value = text.length > String(Number.MAX_SAFE_INTEGER).length ? Infinity : Number(text);
  if (value < min || value > max) return { ok: false, problem: `expected ${range}, ${got}` };
  return { ok: true, value };
}

/**
 * What is wrong with a JSON value (an API body's field) that is not an integer within
 * `bounds`, in parseInteger's words: `expected an integer from 1 to 20, got \`1e+308\``. The
 * value is quoted as JSON, so that `"5"` shows it came as a string.
 */
export function integerExpected(bounds: IntegerBounds, value: unknown): string {
  // JSON is one line with its control characters escaped already; only a long one is cut.
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  const cut = text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
  return `expected an integer from ${bounds.min} to ${bounds.max}, got \`${cut}\``;
}
