/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-explicit-any -- response bodies are parsed JSON, checked by the assertions themselves */
// POST /api/validate over real HTTP on 127.0.0.1, with a real SQLite store: the static checks
// (format, paths) are answered at once, and each bundle that passes them gets a `validate` job
// for the full check (image, HEAD), which the client polls at GET /api/jobs/:id. The request
// itself never reaches Docker: the server here has no engine at all.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_BATCH_JOBS, answers } from '../../src/api/schemas.js';
import { startServer } from '../../src/api/server.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { SHELL_TASK } from '../helpers/bundles.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';

async function validateApi() {
  const root = tempDir();
  const home = join(root, '.proctor');
  const tasks = join(root, 'tasks');
  mkdirSync(home);
  cpSync(SHELL_TASK, join(tasks, 'shell-task'), { recursive: true });
  mkdirSync(join(tasks, 'broken'));
  writeFileSync(join(tasks, 'broken', 'task.toml'), 'id = 7\n');
  writeFileSync(join(home, 'proctor.toml'), 'tasks_root = "tasks"\n');
  const config = loadConfig(home);
  const store = tempStore({ path: config.dbPath });
  let woken = 0;
  const server = await startServer({
    port: 0,
    store,
    artifacts: createArtifactStore({
      root: join(home, 'artifacts'),
      redactor: createRedactor(),
      clock: systemClock,
    }),
    config,
    secrets: [],
    onEnqueued: () => (woken += 1),
  });
  onCleanup(() => server.close());
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  return { call, store, tasks, woken: () => woken };
}

describe('POST /api/validate', () => {
  it("answers a bundle's static checks at once and enqueues a validate job for the rest", async () => {
    const { call, store, tasks, woken } = await validateApi();
    const answer = await call('POST', '/api/validate', { path: 'shell-task' });
    expect(answer.status).toBe(202);
    const { results, batchId, created } = answers.validated.parse(answer.body);
    expect(created).toBe(true);
    expect(results).toEqual([
      { ok: true, dir: join(tasks, 'shell-task'), id: 'shell-div-zero', job: expect.any(Number) },
    ]);
    const job = results[0]?.ok ? results[0].job : -1;
    // The client polls the job like any other.
    const polled = await call('GET', `/api/jobs/${job}`);
    expect(polled.status).toBe(200);
    expect(polled.body.job).toMatchObject({
      kind: 'validate',
      status: 'queued',
      batchId,
      payload: { bundle: join(tasks, 'shell-task') },
      result: null,
    });
    expect((await call('GET', '/api/jobs?kind=validate')).body.items).toHaveLength(1);
    expect(woken()).toBe(1);
    expect((await store.countByStatus()).queued).toBe(1);
  });

  it('answers static problems at once and enqueues nothing for them', async () => {
    const { call, store, woken } = await validateApi();
    const answer = await call('POST', '/api/validate', { path: 'broken' });
    expect(answer.status).toBe(200);
    expect(answers.validated.parse(answer.body)).toMatchObject({
      batchId: null,
      created: false,
      results: [{ ok: false, dir: expect.stringMatching(/broken$/) }],
    });
    expect(answer.body.results[0].problems).toEqual(
      expect.arrayContaining(['task.toml: id: expected a string, got 7', 'tests/run: missing']),
    );
    const outside = await call('POST', '/api/validate', { path: SHELL_TASK });
    expect(outside.body.results).toEqual([
      expect.objectContaining({ ok: false, problems: [expect.stringMatching(/tasks_root/)] }),
    ]);
    expect((await store.countByStatus()).queued).toBe(0);
    expect(woken()).toBe(0);
  });

  it('gives a suite one result per bundle, and one job per bundle that passes, in one batch', async () => {
    const { call, store, tasks } = await validateApi();
    const answer = await call('POST', '/api/validate', { path: '.' });
    expect(answer.status).toBe(202);
    const { results, batchId } = answers.validated.parse(answer.body);
    expect(results.map((r) => [r.dir, r.ok, 'job' in r])).toEqual([
      [join(tasks, 'broken'), false, false],
      [join(tasks, 'shell-task'), true, true],
    ]);
    const batch = await call('GET', `/api/batches/${batchId}`);
    expect(batch.body).toMatchObject({ total: 1, counts: { queued: 1 } });
    expect((await store.countByStatus()).queued).toBe(1);
  });

  it('replays a request with the same idempotency key as the same jobs, and refuses another', async () => {
    const { call, store } = await validateApi();
    const first = await call('POST', '/api/validate', { path: '.', idempotencyKey: 'v1' });
    const again = await call('POST', '/api/validate', { path: '.', idempotencyKey: 'v1' });
    expect([first.status, again.status]).toEqual([202, 200]);
    expect(again.body).toEqual({ ...first.body, created: false });
    expect((await store.countByStatus()).queued).toBe(1);
    const other = await call('POST', '/api/validate', { path: 'broken', idempotencyKey: 'v1' });
    expect(other.status).toBe(200); // nothing to enqueue: the key is not used
    const conflict = await call('POST', '/api/validate', {
      path: 'shell-task',
      idempotencyKey: 'v1',
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('IDEMPOTENCY_CONFLICT');
    expect((await store.countByStatus()).queued).toBe(1);
  });

  it('refuses a malformed body with 400 and enqueues nothing', async () => {
    const { call, store } = await validateApi();
    for (const body of [{}, { path: 'shell-task', docker: true }, { path: 'a\\b' }]) {
      const answer = await call('POST', '/api/validate', body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('PAYLOAD_INVALID');
    }
    expect((await store.countByStatus()).queued).toBe(0);
  });

  it('is described in the OpenAPI document with its job ids', async () => {
    const { call } = await validateApi();
    const doc = (await call('GET', '/api/openapi.json')).body as {
      paths: Record<string, Record<string, any>>;
    };
    const validate = doc.paths['/api/validate']?.['post'];
    expect(Object.keys(validate.responses as object)).toEqual(
      expect.arrayContaining(['200', '202']),
    );
    const body = validate.requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties as object)).toEqual(['path', 'idempotencyKey']);
    const parameters = doc.paths['/api/jobs']?.['get'].parameters as Array<{
      name: string;
      schema: { enum?: string[] };
    }>;
    const list = parameters.find((p) => p.name === 'kind');
    expect(list?.schema.enum).toContain('validate');
  });

  it('refuses a suite of more bundles than a batch holds with 413, before reading any of them', async () => {
    const { call, store, tasks } = await validateApi();
    const big = join(tasks, 'big');
    // Each one malformed: had any been read, the answer would list its problems instead.
    for (let i = 0; i <= MAX_BATCH_JOBS; i++) {
      mkdirSync(join(big, `t${i}`), { recursive: true });
      writeFileSync(join(big, `t${i}`, 'task.toml'), 'id = 7\n');
    }
    const answer = await call('POST', '/api/validate', { path: 'big' });
    expect(answer.status).toBe(413);
    expect(answer.body.error.code).toBe('LIMIT_EXCEEDED');
    expect(answer.body.error.message).toContain(`at most ${MAX_BATCH_JOBS}`);
    expect((await store.countByStatus()).queued).toBe(0);
  });
});
