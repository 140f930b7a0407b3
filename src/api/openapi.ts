// The OpenAPI document, generated from the same zod schemas the routes validate with, so the
// two cannot drift.
import { z } from 'zod';
import {
  batchRequest,
  jobListQuery,
  jobRequest,
  logQuery,
  pageQuery,
  validateRequest,
} from './schemas.js';

const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });

/** Query parameters of an object schema, as OpenAPI parameters. */
function parameters(s: z.ZodObject) {
  const json = schema(s) as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema: property,
  }));
}

const error = { description: 'an error: `{ error: { code, message } }`' };
const json = (s: z.ZodType) => ({
  required: true,
  content: { 'application/json': { schema: schema(s) } },
});
const ok = (description: string) => ({ description, content: { 'application/json': {} } });
const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };

export function openApiDocument() {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Proctor loopback API',
      version: '1',
      description: 'Bound to 127.0.0.1; Host and Origin must be loopback; bodies are JSON.',
    },
    paths: {
      '/api/validate': {
        post: {
          summary: 'validate a bundle or suite under tasks_root',
          requestBody: json(validateRequest),
          responses: { 200: ok('the validation result'), default: error },
        },
      },
      '/api/jobs': {
        get: {
          summary: 'list jobs (newest first, bounded pages)',
          parameters: parameters(jobListQuery),
          responses: { 200: ok('a page of jobs'), default: error },
        },
        post: {
          summary: 'enqueue one baseline, solve or grade job',
          requestBody: json(jobRequest),
          responses: {
            201: ok('the new job'),
            200: ok('the job an idempotency key already made'),
            default: error,
          },
        },
      },
      '/api/jobs/{id}': {
        get: {
          summary: 'one job and its artifacts',
          parameters: [id],
          responses: { 200: ok('the job'), default: error },
        },
      },
      '/api/jobs/{id}/cancel': {
        post: {
          summary: 'cooperative cancel',
          parameters: [id],
          requestBody: json(z.object({}).strict()),
          responses: { 200: ok('the outcome'), default: error },
        },
      },
      '/api/jobs/{id}/log': {
        get: {
          summary: "a bounded slice of the job's log",
          parameters: [id, ...parameters(logQuery)],
          responses: { 200: ok('the slice'), default: error },
        },
      },
      '/api/batches': {
        get: {
          summary: 'list batches with progress',
          parameters: parameters(pageQuery),
          responses: { 200: ok('a page of batches'), default: error },
        },
        post: {
          summary: 'enqueue a batch in one transaction',
          requestBody: json(batchRequest),
          responses: { 201: ok('the batch'), default: error },
        },
      },
      '/api/batches/{id}': {
        get: {
          summary: 'batch progress: counts, verdicts, rate, ETA',
          parameters: [id],
          responses: { 200: ok('progress'), default: error },
        },
      },
      '/api/batches/{id}/cancel': {
        post: {
          summary: 'cancel every unfinished job of a batch',
          parameters: [id],
          requestBody: json(z.object({}).strict()),
          responses: { 200: ok('outcomes'), default: error },
        },
      },
      '/api/artifacts/{id}': {
        get: {
          summary: 'download a registered artifact (rechecked)',
          parameters: [id],
          responses: { 200: { description: 'the bytes, as an attachment' }, default: error },
        },
      },
    },
  };
}
