// One error type for every expected failure in Proctor. Callers branch on `code`, never on
// the message; the CLI prints the message as one line, the API maps codes to statuses.

export const ERROR_CODES = [
  'USAGE',
  'CONFIG_INVALID',
  'DB_UNREADABLE',
  'PAYLOAD_INVALID',
  'IDEMPOTENCY_CONFLICT',
  'JOB_NOT_FOUND',
  'BATCH_NOT_FOUND',
  'CURSOR_INVALID',
  'DOCKER_UNAVAILABLE',
  'DOCKER_ERROR',
  'SANDBOX_INVALID',
  'IMAGE_INVALID',
  'CANDIDATE_REJECTED',
  'BUNDLE_INVALID',
  'REPORT_INVALID',
  'PATCH_INVALID',
  'ARTIFACT_INVALID',
  'ARTIFACT_NOT_FOUND',
  'CANCELLED',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

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
}

export function isProctorError(error: unknown, code?: ErrorCode): error is ProctorError {
  return error instanceof ProctorError && (code === undefined || error.code === code);
}

/** A short, single-line description of any thrown value. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}

/** The first problem zod found, as a dotted path under `root` and a readable detail. */
export function zodProblem(
  error: {
    issues: ReadonlyArray<{ path: PropertyKey[]; message: string; code: string; keys?: string[] }>;
  },
  root: string,
): { path: string; detail: string } {
  const issue = error.issues[0];
  const path = [root, ...(issue?.path ?? []).map(String)].join('.');
  const detail =
    issue?.code === 'unrecognized_keys' && issue.keys
      ? `unknown key ${issue.keys.map((k) => `\`${k}\``).join(', ')}`
      : (issue?.message ?? 'invalid');
  return { path, detail };
}
