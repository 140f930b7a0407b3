import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { effectiveSeconds } from '../../src/sandbox/limits.js';

describe('effectiveSeconds', () => {
  it('lowers a task limit, never raises it', () => {
    expect(effectiveSeconds(1800)).toBe(1800);
    expect(effectiveSeconds(1800, 60)).toBe(60);
    expect(effectiveSeconds(1800, 7200)).toBe(1800);
  });

  it.each([0, -5, Number.NaN, Infinity])('rejects %s', (value) => {
    expect(() => effectiveSeconds(60, value)).toThrow(/--timeout must be a positive number/);
    try {
      effectiveSeconds(60, value);
    } catch (error) {
      expect(isProctorError(error, 'USAGE')).toBe(true);
    }
  });
});
