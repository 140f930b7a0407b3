// How the API turns a thrown value into an HTTP answer: one table from ProctorError codes to
// statuses, used by `app.onError`, and the JSON 404 for unknown routes. Every error body has
// the shape `{ error: { code, message } }`, the same as the guards' refusals.
//
// ProctorError messages are written for users (the CLI prints them as they are), so they are
// sent; anything else is an unexpected failure whose message may hold SQL, paths or stack
// details, so the client gets only a generic message and the logger gets the rest.
import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { describeError, type ErrorCode, ProctorError } from '../errors.js';
import type { Logger } from '../logger.js';

export interface ErrorBody {
  error: { code: string; message: string };
}

export interface ErrorResponse {
  status: number;
  body: ErrorBody;
}

export interface ErrorResponseOptions {
  /**
   * Applied to every message sent (e.g. `createRedactor(...).text`), since a ProctorError
   * message may quote a configured value. Default: messages are sent unchanged.
   */
  redact?: (text: string) => string;
}

// A Record over every code, so that adding a code to ERROR_CODES forces a decision here.
const STATUS_BY_CODE: Record<ErrorCode, number> = {
  // The request itself is wrong.
  USAGE: 400,
  PAYLOAD_INVALID: 400,
  CURSOR_INVALID: 400,
  PATCH_INVALID: 400,
  CONFIG_INVALID: 400,
  // The request is well formed, but the bundle it names fails validation.
  BUNDLE_INVALID: 422,
  DERIVE_FAILED: 422,
  IMPOSSIBLE_FAILED: 422,
  JOB_NOT_FOUND: 404,
  BATCH_NOT_FOUND: 404,
  ARTIFACT_NOT_FOUND: 404,
  // Conflicts with the current state: a reused idempotency key with a different payload, or
  // an operation on a cancelled job.
  IDEMPOTENCY_CONFLICT: 409,
  // More than Proctor takes in one request (a batch over its maximum size, say).
  LIMIT_EXCEEDED: 413,
  CANCELLED: 409,
  DOCKER_UNAVAILABLE: 503,
  // An artifact that no longer matches its recorded size or checksum is an integrity failure
  // on our side, not something the client can fix by asking differently.
  ARTIFACT_INVALID: 500,
  // Failures of the machinery; the API should rarely see these, since it never runs Docker.
  DB_UNREADABLE: 500,
  DOCKER_ERROR: 500,
  SANDBOX_INVALID: 500,
  IMAGE_INVALID: 500,
  CANDIDATE_REJECTED: 500,
  REPORT_INVALID: 500,
  WORKER_LOST: 500,
  INTERNAL: 500,
};

// Codes for statuses raised by hono itself or its middleware as HTTPException.
const CODE_BY_STATUS: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

/** What a client sees of an unexpected failure. */
export const GENERIC_MESSAGE = 'Internal error; see the server log for details';

function response(status: number, code: string, message: string): ErrorResponse {
  return { status, body: { error: { code, message } } };
}

/**
 * The status and JSON body for a thrown value: a ProctorError keeps its code and message with
 * the status from the table above; an HTTPException keeps its status (and its message below
 * 500); anything else is a 500 INTERNAL with a generic message. zod errors are not special:
 * routes convert them to PAYLOAD_INVALID with `zodProblem`, so one that arrives here is a bug.
 */
export function errorResponse(error: unknown, options: ErrorResponseOptions = {}): ErrorResponse {
  const redact = options.redact ?? ((text: string) => text);
  if (error instanceof ProctorError) {
    return response(STATUS_BY_CODE[error.code], error.code, redact(error.message));
  }
  if (error instanceof HTTPException) {
    const status = error.status;
    const code = CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : `HTTP_${status}`);
    if (status >= 500) return response(status, code, GENERIC_MESSAGE);
    return response(status, code, redact(error.message || code.replaceAll('_', ' ').toLowerCase()));
  }
  return response(500, 'INTERNAL', GENERIC_MESSAGE);
}

export interface ErrorHandlerOptions extends ErrorResponseOptions {
  /** Where 5xx failures are logged with their real message. Default: not logged. */
  logger?: Logger;
}

/** An `app.onError` handler answering with errorResponse() and logging every 5xx. */
export function createErrorHandler(options: ErrorHandlerOptions = {}): ErrorHandler {
  return (error, c) => {
    const { status, body } = errorResponse(error, options);
    if (status >= 500 && options.logger) {
      const message = describeError(error);
      options.logger.error('API request failed', {
        method: c.req.method,
        path: c.req.path,
        code: body.error.code,
        error: options.redact ? options.redact(message) : message,
      });
    }
    return c.json(body, status as ContentfulStatusCode);
  };
}

/** `app.onError(onError)`: errorResponse() without logging or redaction. */
export const onError: ErrorHandler = createErrorHandler();

/** `app.notFound(notFound)`: a JSON 404 naming the method and path. */
export const notFound: NotFoundHandler = (c: Context) =>
  c.json(
    {
      error: { code: 'NOT_FOUND', message: `No route for ${c.req.method} ${c.req.path}` },
    } satisfies ErrorBody,
    404,
  );
