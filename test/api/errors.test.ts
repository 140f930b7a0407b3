import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createErrorHandler,
  errorResponse,
  GENERIC_MESSAGE,
  notFound,
  onError,
} from '../../src/api/errors.js';
import { ERROR_CODES, type ErrorCode, ProctorError } from '../../src/errors.js';
import type { LogFields } from '../../src/logger.js';

const EXPECTED: Record<ErrorCode, number> = {
  USAGE: 400,
  PAYLOAD_INVALID: 400,
  CURSOR_INVALID: 400,
  PATCH_INVALID: 400,
  CONFIG_INVALID: 400,
  BUNDLE_INVALID: 422,
  DERIVE_FAILED: 422,
  IMPOSSIBLE_FAILED: 422,
  JOB_NOT_FOUND: 404,
  BATCH_NOT_FOUND: 404,
  ARTIFACT_NOT_FOUND: 404,
  IDEMPOTENCY_CONFLICT: 409,
  CANCELLED: 409,
  LIMIT_EXCEEDED: 413,
  WORKER_LOST: 500,
  DOCKER_UNAVAILABLE: 503,
  ARTIFACT_INVALID: 500,
  DB_UNREADABLE: 500,
  DOCKER_ERROR: 500,
  SANDBOX_INVALID: 500,
  IMAGE_INVALID: 500,
  CANDIDATE_REJECTED: 500,
  REPORT_INVALID: 500,
  INTERNAL: 500,
};

describe('errorResponse', () => {
  it.each(ERROR_CODES.map((code) => [code, EXPECTED[code]] as const))(
    'answers a ProctorError %s with %i, its code and its message',
    (code, status) => {
      const message = `something about ${code}`;
      expect(errorResponse(new ProctorError(code, message))).toEqual({
        status,
        body: { error: { code, message } },
      });
    },
  );

  it('answers a plain Error with a generic 500 that leaks neither message nor stack', () => {
    const error = new Error(
      'SQLITE_CORRUPT: database disk image is malformed at /home/ada/.proctor',
    );
    const { status, body } = errorResponse(error);
    expect(status).toBe(500);
    expect(body).toEqual({ error: { code: 'INTERNAL', message: GENERIC_MESSAGE } });
    const text = JSON.stringify(body);
    expect(text).not.toContain('SQLITE');
    expect(text).not.toContain('/home/ada');
    expect(text).not.toContain('at ');
  });

  it('answers thrown non-errors, a ZodError and a TypeError with the same generic 500', () => {
    const zodError = z.object({ a: z.string() }).safeParse({ a: 1 }).error;
    for (const thrown of [
      'a string',
      42,
      null,
      undefined,
      { message: 'x' },
      zodError,
      new TypeError('t'),
    ]) {
      expect(errorResponse(thrown)).toEqual({
        status: 500,
        body: { error: { code: 'INTERNAL', message: GENERIC_MESSAGE } },
      });
    }
  });

  it('keeps the status of an HTTPException and its message below 500', () => {
    expect(
      errorResponse(new HTTPException(400, { message: 'Malformed JSON in request body' })),
    ).toEqual({
      status: 400,
      body: { error: { code: 'BAD_REQUEST', message: 'Malformed JSON in request body' } },
    });
    expect(errorResponse(new HTTPException(413))).toEqual({
      status: 413,
      body: { error: { code: 'PAYLOAD_TOO_LARGE', message: 'payload too large' } },
    });
    expect(errorResponse(new HTTPException(418, { message: 'teapot' }))).toEqual({
      status: 418,
      body: { error: { code: 'HTTP_418', message: 'teapot' } },
    });
  });

  it('hides the message of an HTTPException of 500 or more', () => {
    expect(errorResponse(new HTTPException(502, { message: 'upstream 10.0.0.3 refused' }))).toEqual(
      {
        status: 502,
        body: { error: { code: 'INTERNAL', message: GENERIC_MESSAGE } },
      },
    );
    expect(errorResponse(new HTTPException(503, { message: 'pool at /srv' })).body.error).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: GENERIC_MESSAGE,
    });
  });

  it('passes sent messages through the given redaction', () => {
    const error = new ProctorError('CONFIG_INVALID', 'bad url https://u:hunter2@x.example');
    const { body } = errorResponse(error, { redact: (t) => t.replace('hunter2', '[REDACTED]') });
    expect(body.error.message).toBe('bad url https://u:[REDACTED]@x.example');
  });
});

describe('onError and notFound', () => {
  function app(handler = onError) {
    const a = new Hono();
    a.get('/job', () => {
      throw new ProctorError('JOB_NOT_FOUND', 'No job 42');
    });
    a.get('/boom', () => {
      throw new Error('secret detail');
    });
    a.notFound(notFound);
    a.onError(handler);
    return a;
  }

  it('answers a thrown ProctorError as JSON with its status', async () => {
    const res = await app().request('/job');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ error: { code: 'JOB_NOT_FOUND', message: 'No job 42' } });
  });

  it('answers an unexpected error with the generic 500', async () => {
    const res = await app().request('/boom');
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('secret detail');
    expect(JSON.parse(text)).toEqual({ error: { code: 'INTERNAL', message: GENERIC_MESSAGE } });
  });

  it('logs the real message of a 5xx, and nothing for a 4xx', async () => {
    const logged: Array<{ message: string; fields?: LogFields }> = [];
    const logger = {
      debug() {},
      info() {},
      warn() {},
      error: (message: string, fields?: LogFields) => logged.push({ message, fields }),
    };
    const a = app(createErrorHandler({ logger }));
    expect((await a.request('/job')).status).toBe(404);
    expect(logged).toEqual([]);
    expect((await a.request('/boom')).status).toBe(500);
    expect(logged).toEqual([
      {
        message: 'API request failed',
        fields: { method: 'GET', path: '/boom', code: 'INTERNAL', error: 'secret detail' },
      },
    ]);
  });

  it('answers an unknown route with a JSON 404', async () => {
    const res = await app().request('/nothing', { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      error: { code: 'NOT_FOUND', message: 'No route for DELETE /nothing' },
    });
  });
});
