// One error type for every expected failure in Proctor. Callers branch on `code`, never on
// the message; the CLI prints the message as one line, the API maps codes to statuses, and the
// worker pool asks the code whether a failed job is worth another attempt.

/**
 * Every code, what it means, and whether a job that failed with it may succeed on another
 * attempt. A failure that will recur (a bad bundle, a missing profile) is not retryable;
 * a failure of the machinery (Docker, the database, a worker) is.
 */
export const ERROR_TABLE = {
  USAGE: { retryable: false, meaning: 'a command or request is malformed' },
  CONFIG_INVALID: { retryable: false, meaning: 'proctor.toml or a solver profile is wrong' },
  DB_UNREADABLE: { retryable: true, meaning: 'the job database cannot be opened or read' },
  PAYLOAD_INVALID: { retryable: false, meaning: 'a job payload or request body is invalid' },
  IDEMPOTENCY_CONFLICT: {
    retryable: false,
    meaning: 'an idempotency key already names a different request',
  },
  JOB_NOT_FOUND: { retryable: false, meaning: 'no such job' },
  BATCH_NOT_FOUND: { retryable: false, meaning: 'no such batch' },
  CURSOR_INVALID: { retryable: false, meaning: 'a page cursor is malformed' },
  LIMIT_EXCEEDED: { retryable: false, meaning: 'a request asks for more than Proctor allows' },
  DOCKER_UNAVAILABLE: { retryable: true, meaning: 'no Docker engine answers' },
  DOCKER_ERROR: { retryable: true, meaning: 'a Docker call failed' },
  SANDBOX_INVALID: { retryable: false, meaning: 'the sandbox settings or workspace are wrong' },
  IMAGE_INVALID: { retryable: false, meaning: "the task's image cannot be built or verified" },
  CANDIDATE_REJECTED: { retryable: false, meaning: 'a candidate patch breaks a capture rule' },
  BUNDLE_INVALID: { retryable: false, meaning: 'a task bundle is malformed' },
  DERIVE_FAILED: {
    retryable: false,
    meaning: 'a bundle cannot be derived from the commits and tests given',
  },
  IMPOSSIBLE_FAILED: {
    retryable: false,
    meaning: 'an impossible variant cannot be written: the mutation step failed',
  },
  REPORT_INVALID: { retryable: false, meaning: "a runner's report is malformed" },
  PATCH_INVALID: { retryable: false, meaning: 'a patch is malformed or too large' },
  ARTIFACT_INVALID: { retryable: false, meaning: 'a stored artifact fails its checks' },
  ARTIFACT_NOT_FOUND: { retryable: false, meaning: 'no such artifact' },
  WORKER_LOST: { retryable: true, meaning: "a job's worker died or lost its lease" },
  CANCELLED: { retryable: false, meaning: 'the work was cancelled' },
  INTERNAL: { retryable: true, meaning: 'an unexpected failure (a bug, or the machine)' },
} as const satisfies Record<string, { retryable: boolean; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];

export class ProctorError extends Error {
  override readonly name = 'ProctorError';
  readonly code: ErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { data?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data;
  }

  get retryable(): boolean {
    return ERROR_TABLE[this.code].retryable;
  }
}

export function isProctorError(error: unknown, code?: ErrorCode): error is ProctorError {
  return error instanceof ProctorError && (code === undefined || error.code === code);
}

/** The code of any thrown value: a ProctorError's own, else INTERNAL. */
export function errorCode(error: unknown): ErrorCode {
  return error instanceof ProctorError ? error.code : 'INTERNAL';
}

/**
 * Whether a job that failed with `error` may succeed on another attempt: a ProctorError's
 * code decides; anything else is most likely the machine (a Docker hiccup, a full disk).
 */
export function isRetryable(error: unknown): boolean {
  return error instanceof ProctorError ? error.retryable : true;
}

/**
 * The same failure with `what` before its message (`cannot load the bundle: …`), keeping its
 * code and cause; a value that is not a ProctorError is returned as it is.
 */
export function withContext(error: unknown, what: string): unknown {
  if (!(error instanceof ProctorError)) return error;
  return new ProctorError(error.code, `${what}: ${error.message}`, {
    ...(error.data === undefined ? {} : { data: error.data }),
    cause: error,
  });
}

/** A short, single-line description of any thrown value. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}
