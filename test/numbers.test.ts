// The one parser of whole numbers given as text, shared by the CLI and the API.
import { describe, expect, it } from 'vitest';
import { integerExpected, parseInteger } from '../src/numbers.js';

const ids = { min: 1, max: Number.MAX_SAFE_INTEGER };

describe('parseInteger', () => {
  it('takes decimal digits within the bounds, up to the largest safe integer', () => {
    expect(parseInteger('1', ids)).toEqual({ ok: true, value: 1 });
    expect(parseInteger('9007199254740991', ids)).toEqual({ ok: true, value: 2 ** 53 - 1 });
    expect(parseInteger('0', { min: 0, max: 65_535 })).toEqual({ ok: true, value: 0 });
    expect(parseInteger('20', { min: 1, max: 20 })).toEqual({ ok: true, value: 20 });
  });

  it.each([
    '1e3',
    '0x10',
    '0b1',
    '0o7',
    '+5',
    '-1',
    '1.0',
    '1.5',
    ' 7',
    '7 ',
    '',
    '１',
    'Infinity',
    'NaN',
    '1_000',
  ])('refuses %j, which is not decimal digits, naming the real bounds', (text) => {
    const parsed = parseInteger(text, { min: 1, max: 200 });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toContain('an integer from 1 to 200 in decimal digits');
  });

  it('refuses ids beyond 2^53 instead of rounding them to another id', () => {
    for (const text of ['9007199254740992', '9007199254740993', '99999999999999999999']) {
      expect(parseInteger(text, ids)).toEqual({
        ok: false,
        problem: `expected an integer from 1 to 9007199254740991, got \`${text}\``,
      });
    }
  });

  it("states the value's own limit, never the safe-integer one", () => {
    const repeat = { min: 1, max: 20 };
    expect(parseInteger('1e308', repeat)).toEqual({
      ok: false,
      problem: 'expected an integer from 1 to 20 in decimal digits, got `1e308`',
    });
    expect(parseInteger('1' + '0'.repeat(308), repeat)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^expected an integer from 1 to 20, got `10{39}…`$/),
    });
    expect(parseInteger('0', repeat)).toMatchObject({
      problem: expect.stringContaining('1 to 20'),
    });
    expect(parseInteger('21', repeat)).toMatchObject({
      problem: expect.stringContaining('1 to 20'),
    });
  });

  it('refuses leading zeros, so one number has one spelling', () => {
    expect(parseInteger('007', ids)).toEqual({
      ok: false,
      problem: 'expected an integer from 1 to 9007199254740991 without leading zeros, got `007`',
    });
    expect(parseInteger('00', { min: 0, max: 5 }).ok).toBe(false);
  });

  it('quotes the value on one line, cut short', () => {
    const parsed = parseInteger('1\n2' + 'x'.repeat(1000), ids);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.problem).not.toContain('\n');
      expect(parsed.problem).toContain('`1\\n2xx');
      expect(parsed.problem.length).toBeLessThan(150);
    }
  });

  it('rejects bounds that are not safe integers (a programming error)', () => {
    expect(() => parseInteger('1', { min: 1, max: 2 ** 53 })).toThrow(RangeError);
    expect(() => parseInteger('1', { min: 5, max: 1 })).toThrow(RangeError);
  });
});

describe('integerExpected', () => {
  it('words a JSON value as parseInteger words text, quoted as JSON on one line, cut short', () => {
    const repeat = { min: 1, max: 20 };
    expect(integerExpected(repeat, 1e308)).toBe('expected an integer from 1 to 20, got `1e+308`');
    expect(integerExpected(repeat, 2.5)).toBe('expected an integer from 1 to 20, got `2.5`');
    expect(integerExpected(repeat, '5')).toBe('expected an integer from 1 to 20, got `"5"`');
    expect(integerExpected(repeat, null)).toBe('expected an integer from 1 to 20, got `null`');
    const long = integerExpected(repeat, `1\n${'x'.repeat(1000)}`);
    expect(long).not.toContain('\n');
    expect(long).toContain('got `"1\\nxx');
    expect(long.length).toBeLessThan(150);
  });
});
