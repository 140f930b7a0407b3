import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  ERROR_TABLE,
  ProctorError,
  errorCode,
  isRetryable,
  withContext,
} from '../src/errors.js';

describe('ProctorError', () => {
  it('takes its retryable flag from the code table', () => {
    for (const code of ERROR_CODES) {
      expect(new ProctorError(code, 'x').retryable).toBe(ERROR_TABLE[code].retryable);
    }
    expect(isRetryable(new ProctorError('BUNDLE_INVALID', 'bad'))).toBe(false);
    expect(isRetryable(new ProctorError('DOCKER_ERROR', 'hiccup'))).toBe(true);
  });

  it('counts a value that is not a ProctorError as a retryable INTERNAL failure', () => {
    expect(isRetryable(new Error('socket hang up'))).toBe(true);
    expect(errorCode(new Error('socket hang up'))).toBe('INTERNAL');
    expect(errorCode(new ProctorError('IMAGE_INVALID', 'x'))).toBe('IMAGE_INVALID');
  });

  it('adds context to a message without losing the code or the cause', () => {
    const cause = new ProctorError('BUNDLE_INVALID', 'task.toml: id: is required', {
      data: { problems: [] },
    });
    const wrapped = withContext(cause, 'cannot load the bundle') as ProctorError;
    expect(wrapped).toBeInstanceOf(ProctorError);
    expect(wrapped.code).toBe('BUNDLE_INVALID');
    expect(wrapped.message).toBe('cannot load the bundle: task.toml: id: is required');
    expect(wrapped.data).toEqual({ problems: [] });
    expect(wrapped.cause).toBe(cause);
    const plain = new Error('ECONNRESET');
    expect(withContext(plain, 'cannot load the bundle')).toBe(plain);
  });
});
