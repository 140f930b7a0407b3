// How a handler says a failure should not be retried: throw a JobError with retryable false
// (a bad bundle will be just as bad next time). Any other error counts as retryable, since
// it is most likely infrastructure (Docker hiccup, disk full) rather than the job itself.

export class JobError extends Error {
  override readonly name = 'JobError';
  readonly retryable: boolean;

  constructor(message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable ?? false;
  }
}

export function isRetryable(error: unknown): boolean {
  return error instanceof JobError ? error.retryable : true;
}
