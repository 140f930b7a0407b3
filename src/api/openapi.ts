// The OpenAPI document, generated from the same zod schemas the routes validate requests with
// and build answers to, so that the document and the routes cannot drift.
import { z } from 'zod';
import {
  answers,
  batchRequest,
  emptyRequest,
  jobId,
  jobListQuery,
  jobRequest,
  logQuery,
  MAX_BATCH_JOBS,
  MAX_TRAJECTORY_VIEW_BYTES,
  pageQuery,
  trajectoryStepsQuery,
  validateRequest,
} from './schemas.js';
import {
  MAX_AGAINST_BODY_BYTES,
  MAX_REPORT_BATCHES,
  MAX_REPORT_JOBS,
  againstRequest,
  batchId,
  batchReportQuery,
  exportQuery,
  jobTests,
  parity,
  report,
  reportQuery,
  testsQuery,
} from './results-schemas.js';

const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });
const answerSchema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'output', unrepresentable: 'any' });

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

const error = {
  description: 'an error: `{ error: { code, message } }`',
  content: { 'application/json': { schema: answerSchema(answers.error) } },
};
const json = (s: z.ZodType) => ({
  required: true,
  content: { 'application/json': { schema: schema(s) } },
});
const ok = (description: string, answer: z.ZodType) => ({
  description,
  content: { 'application/json': { schema: answerSchema(answer) } },
});
const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const batchIdParameter = { name: 'id', in: 'path', required: true, schema: schema(batchId) };
const gzip = (description: string) => ({
  description,
  content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
});
const reportLimits = `at most ${MAX_REPORT_BATCHES} batches; together (the reference included) at most ${MAX_REPORT_JOBS} jobs, else 413 LIMIT_EXCEEDED before any job is read; an unknown batch is 404 BATCH_NOT_FOUND`;
const exportDescription =
  'The reproducible archive `proctor export` writes (sorted entries, fixed mtimes and owners), every byte through the redactor; hidden tests, runner and ID lists only with `includeHidden=true`. At most 2,000 jobs and 512 MiB of content (413 LIMIT_EXCEEDED).';
const jobIdParameter = { name: 'id', in: 'path', required: true, schema: schema(jobId) };

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
          summary:
            'static checks of a bundle or suite under tasks_root, at once; a validate job per bundle that passes them',
          requestBody: json(validateRequest),
          responses: {
            202: ok('validate jobs enqueued for the bundles that passed', answers.validated),
            200: ok(
              'nothing new enqueued: every bundle failed, or a replayed key',
              answers.validated,
            ),
            default: error,
          },
        },
      },
      '/api/jobs': {
        get: {
          summary: 'list jobs (newest first, bounded pages)',
          parameters: parameters(jobListQuery),
          responses: { 200: ok('a page of jobs', answers.jobPage), default: error },
        },
        post: {
          summary: 'enqueue one baseline, solve or grade job (validate jobs: POST /api/validate)',
          requestBody: json(jobRequest),
          responses: {
            201: ok('the new job', answers.enqueued),
            200: ok('the job an idempotency key already made', answers.enqueued),
            default: error,
          },
        },
      },
      '/api/jobs/{id}': {
        get: {
          summary: 'one job and its artifacts',
          parameters: [jobIdParameter],
          responses: { 200: ok('the job', answers.job), default: error },
        },
      },
      '/api/jobs/{id}/cancel': {
        post: {
          summary: 'cooperative cancel',
          parameters: [jobIdParameter],
          requestBody: json(emptyRequest),
          responses: { 200: ok('the outcome', answers.jobCancelled), default: error },
        },
      },
      '/api/jobs/{id}/log': {
        get: {
          summary: "a bounded slice of the job's log",
          parameters: [jobIdParameter, ...parameters(logQuery)],
          responses: { 200: ok('the slice', answers.logSlice), default: error },
        },
      },
      '/api/jobs/{id}/trajectory': {
        get: {
          summary: "a bounded slice of an agent solve's trajectory (trajectory.json)",
          parameters: [jobIdParameter, ...parameters(logQuery)],
          responses: { 200: ok('the slice', answers.logSlice), default: error },
        },
      },
      '/api/jobs/{id}/trajectory/steps': {
        get: {
          summary: "an agent solve's trajectory: its totals and stop, and a page of its steps",
          description: `Parses trajectory.json whole: one larger than ${MAX_TRAJECTORY_VIEW_BYTES} bytes is a 413 (LIMIT_EXCEEDED); read it by slices from /api/jobs/{id}/trajectory.`,
          parameters: [jobIdParameter, ...parameters(trajectoryStepsQuery)],
          responses: { 200: ok('the steps', answers.trajectorySteps), default: error },
        },
      },
      '/api/jobs/{id}/tests': {
        get: {
          summary: "a grade's or baseline's per-test statuses",
          description:
            'Each declared test of the result: its list (hidden or existing), its outcome, and the SWE-bench status its report gave. By default the counts and the first 50 tests not passed; `all=true` adds every test (`proctor status JOB --json`, and `tests.json` in an export).',
          parameters: [jobIdParameter, ...parameters(testsQuery)],
          responses: { 200: ok('the statuses', jobTests), default: error },
        },
      },
      '/api/batches': {
        get: {
          summary: 'list batches with progress',
          parameters: parameters(pageQuery),
          responses: { 200: ok('a page of batches', answers.batchPage), default: error },
        },
        post: {
          summary: `enqueue a batch of at most ${MAX_BATCH_JOBS} jobs in one transaction`,
          description: `A batch of more than ${MAX_BATCH_JOBS} jobs is refused at once with 413 LIMIT_EXCEEDED, before any bundle is read. A grade's candidate is identified by its bytes: a replayed key with the same patches answers 200 and stores nothing new.`,
          requestBody: json(batchRequest),
          responses: {
            201: ok('the batch', answers.batchEnqueued),
            200: ok('the batch an idempotency key already made', answers.batchEnqueued),
            413: {
              description: `more than ${MAX_BATCH_JOBS} jobs (LIMIT_EXCEEDED)`,
              content: error.content,
            },
            default: error,
          },
        },
      },
      '/api/batches/{id}': {
        get: {
          summary: 'batch progress: counts, verdicts, rate, ETA',
          parameters: [batchIdParameter],
          responses: { 200: ok('progress', answers.batchProgress), default: error },
        },
      },
      '/api/batches/{id}/report': {
        get: {
          summary: 'the report of one batch: `proctor report ID --format json`',
          description: reportLimits,
          parameters: [batchIdParameter, ...parameters(batchReportQuery)],
          responses: { 200: ok('the report', report), default: error },
        },
      },
      '/api/batches/{id}/against': {
        post: {
          summary:
            "the batch compared with an official grader's outcome, sent as the body: `proctor report ID --against FILE --format json`",
          description: `The body is the official file's JSON (at most ${MAX_AGAINST_BODY_BYTES} bytes, else 413 PAYLOAD_TOO_LARGE); nothing is stored. An unknown shape is 400 PAYLOAD_INVALID naming what is accepted; a baseline sweep 400 USAGE; an unknown batch 404 BATCH_NOT_FOUND.`,
          parameters: [batchIdParameter],
          requestBody: json(againstRequest),
          responses: { 200: ok('the comparison', parity), default: error },
        },
      },
      '/api/report': {
        get: {
          summary:
            'the report of several batches, and with `compare` their comparison: `proctor report A B --compare C --format json`',
          description: `Repeat \`batch\` for each batch (${reportLimits}).`,
          parameters: parameters(reportQuery),
          responses: { 200: ok('the report', report), default: error },
        },
      },
      '/api/batches/{id}/export': {
        get: {
          summary:
            "the debug export of a batch (its solves' grades included): `proctor export --batch ID`",
          description: exportDescription,
          parameters: [batchIdParameter, ...parameters(exportQuery)],
          responses: { 200: gzip('the .tar.gz, as an attachment'), default: error },
        },
      },
      '/api/jobs/{id}/export': {
        get: {
          summary: 'the debug export of one job: `proctor export ID`',
          description: exportDescription,
          parameters: [jobIdParameter, ...parameters(exportQuery)],
          responses: { 200: gzip('the .tar.gz, as an attachment'), default: error },
        },
      },
      '/api/batches/{id}/cancel': {
        post: {
          summary: 'cancel every unfinished job of a batch',
          parameters: [batchIdParameter],
          requestBody: json(emptyRequest),
          responses: { 200: ok('outcomes', answers.batchCancelled), default: error },
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
