/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-return -- response bodies are parsed JSON, checked by the assertions themselves */
// The API routes over real HTTP on 127.0.0.1, with a real SQLite store and artifact store:
// enqueue (one and batch, idempotent), bounded listing, job and batch reads, cancel, log
// slices, artifact downloads rechecked on disk, validation of bundle paths under tasks_root,
// and the OpenAPI document. Requests go through node:http, so Host and Origin are real.
import { request } from 'node:http';
import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/api/app.js';
import { answers } from '../../src/api/schemas.js';
import { startServer } from '../../src/api/server.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { ROOT } from '../helpers/processes.js';
import { httpCaller } from '../helpers/http.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');

async function api() {
  // The home in a temp dir of its own, so that anything written beside it shows (and goes).
  const parent = tempDir();
  const home = join(parent, 'home');
  mkdirSync(home);
  const tasks = join(home, 'tasks');
  mkdirSync(tasks);
  onCleanup(() => expect(readdirSync(parent)).toEqual(['home']));
  cpSync(TASK, join(tasks, 'shell-task'), { recursive: true });
  writeFileSync(
    join(home, 'proctor.toml'),
    `tasks_root = ${JSON.stringify(tasks)}\n[solvers.mini]\nadapter = "flat"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\napi_key_env = "NOPE_KEY"\n`,
  );
  const config = loadConfig(home);
  const store = tempStore({ path: config.dbPath });
  const artifacts = createArtifactStore({
    root: join(home, 'artifacts'),
    redactor: createRedactor(),
    clock: systemClock,
  });
  const server = await startServer({
    port: 0,
    store,
    artifacts,
    config,
    secrets: ['sk-apisecret-0123456789'],
  });
  onCleanup(() => server.close());
  const call = httpCaller(server.port);
  return { call, store, artifacts, tasks, home, port: server.port };
}

describe('API routes', () => {
  it('enqueues a baseline under tasks_root, idempotently, and reads it back', async () => {
    const { call } = await api();
    const first = await call('POST', '/api/jobs', {
      kind: 'baseline',
      bundle: 'shell-task',
      gold: true,
      idempotencyKey: 'k1',
    });
    expect(first.status).toBe(201);
    answers.enqueued.parse(first.json());
    expect(first.json().job).toMatchObject({
      kind: 'baseline',
      status: 'queued',
      payload: { gold: true, repeat: 1 },
    });
    const again = await call('POST', '/api/jobs', {
      kind: 'baseline',
      bundle: 'shell-task',
      gold: true,
      idempotencyKey: 'k1',
    });
    expect(again.status).toBe(200);
    expect(again.json().job.id).toBe(first.json().job.id);
    const conflict = await call('POST', '/api/jobs', {
      kind: 'baseline',
      bundle: 'shell-task',
      idempotencyKey: 'k1',
    });
    expect(conflict.status).toBe(409);
    answers.error.parse(conflict.json());
    const read = await call('GET', `/api/jobs/${first.json().job.id}`);
    answers.job.parse(read.json());
    expect(read.json()).toMatchObject({ job: { id: first.json().job.id }, artifacts: [] });
    expect(read.headers['cache-control']).toBe('no-store');
    expect((await call('GET', '/api/jobs/999')).status).toBe(404);
  });

  it('refuses bad requests with a clear error and writes nothing', async () => {
    const { call, store, tasks } = await api();
    symlinkSync('/etc', join(tasks, 'alias'));
    const cases: Array<[unknown, number, RegExp]> = [
      ['{"kind": "baseline",', 400, /not valid JSON/],
      [{ kind: 'baseline', bundle: 'shell-task', extra: 1 }, 400, /extra/],
      [{ kind: 'nope', bundle: 'shell-task' }, 400, /kind/],
      [{ kind: 'baseline', bundle: '../../etc' }, 422, /outside|tasks_root|not inside/i],
      [{ kind: 'baseline', bundle: 'shell-task\u0000x' }, 400, /NUL/],
      [{ kind: 'baseline', bundle: 'shell\\task' }, 400, /backslash/],
      // Outside tasks_root, whether or not the path exists: the error must not tell.
      [{ kind: 'baseline', bundle: '../no-such-folder' }, 422, /is outside tasks_root/],
      [{ kind: 'baseline', bundle: '/etc' }, 422, /is outside tasks_root/],
      [{ kind: 'baseline', bundle: 'alias' }, 422, /outside|tasks_root|not inside/i],
      [
        { kind: 'solve', bundle: 'shell-task', solver: 'other' },
        400,
        /no solver profile named other/,
      ],
      [
        { kind: 'grade', bundle: 'shell-task', patch: 'key sk-apisecret-0123456789' },
        400,
        /provider key/,
      ],
    ];
    for (const [body, status, message] of cases) {
      const response = await call('POST', '/api/jobs', body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(response.json().error.message).toMatch(message);
    }
    expect((await store.countByStatus()).queued).toBe(0);
    // Page limits beyond the bound, and unknown query parameters.
    expect((await call('GET', '/api/jobs?limit=201')).status).toBe(400);
    expect((await call('GET', '/api/jobs?limit=0')).status).toBe(400);
    expect((await call('GET', '/api/jobs?sort=id')).status).toBe(400);
    const twice = await call('GET', '/api/jobs?limit=1&limit=2');
    expect(twice.status).toBe(400);
    expect(twice.json().error.message).toBe('query.limit: given 2 times');
    expect((await call('GET', '/api/jobs/1/log?limit=2000000')).status).toBe(400);
  });

  it('enqueues a batch with a grade patch as an input artifact, lists pages, shows progress, cancels', async () => {
    const { call, store } = await api();
    const patch = `${'x'.repeat(10)}\n`;
    const made = await call('POST', '/api/batches', {
      label: 'api',
      jobs: [
        { kind: 'baseline', bundle: 'shell-task' },
        { kind: 'grade', bundle: 'shell-task', patch },
        { kind: 'solve', bundle: 'shell-task', solver: 'mini' },
      ],
    });
    expect(made.status).toBe(201);
    const { batch, jobIds } = answers.batchEnqueued.parse(made.json());
    const grade = await store.getJob(jobIds[1]!);
    const candidate = await store.getArtifact((grade?.payload as { candidate: string }).candidate);
    expect(candidate).toMatchObject({ name: 'candidate.diff', size: patch.length, jobId: null });

    const page = await call('GET', `/api/jobs?batch=${batch!.id}&limit=2`);
    expect(answers.jobPage.parse(page.json()).items).toHaveLength(2);
    const next = await call(
      'GET',
      `/api/jobs?batch=${batch!.id}&limit=2&cursor=${encodeURIComponent(page.json().nextCursor)}`,
    );
    expect(next.json().items).toHaveLength(1);
    expect((await call('GET', '/api/jobs?cursor=garbage')).status).toBe(400);

    const progress = await call('GET', `/api/batches/${batch!.id}`);
    answers.batchProgress.parse(progress.json());
    expect(progress.json()).toMatchObject({ counts: { queued: 3 }, total: 3, remaining: 3 });
    const listed = await call('GET', '/api/batches');
    answers.batchPage.parse(listed.json());
    expect(listed.json().items[0]).toMatchObject({ id: batch!.id, label: 'api', finished: 0 });

    const one = await call('POST', `/api/jobs/${jobIds[0]}/cancel`, {});
    answers.jobCancelled.parse(one.json());
    expect(one.json()).toEqual({ id: jobIds[0], outcome: 'cancelled' });
    const rest = await call('POST', `/api/batches/${batch!.id}/cancel`, {});
    expect(Object.values(answers.batchCancelled.parse(rest.json()).outcomes)).toEqual([
      'cancelled',
      'cancelled',
    ]);
    expect((await call('POST', '/api/batches/b_nope/cancel', {})).status).toBe(404);
    // A cross-site form post cannot cancel anything.
    const form = await call('POST', `/api/jobs/${jobIds[0]}/cancel`, 'x=1', {
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'http://evil.example',
    });
    expect(form.status).toBe(403);
  });

  it("answers a failed job with its error code, and a lost worker's job with WORKER_LOST", async () => {
    const { call, store } = await api();
    const { job: failed } = await store.enqueue({ kind: 'noop', payload: {}, maxAttempts: 1 });
    await store.claim('noop', 'w', 1, 60_000);
    await store.fail({ id: failed.id, attempt: 1 }, 'cannot load the bundle: task.toml: id', {
      retryable: false,
      code: 'BUNDLE_INVALID',
    });
    const { job: lost } = await store.enqueue({ kind: 'noop', payload: {} });
    await store.claim('noop', 'w2', 1, -1);
    await store.reclaimExpired();
    for (const [id, code] of [
      [failed.id, 'BUNDLE_INVALID'],
      [lost.id, 'WORKER_LOST'],
    ] as const) {
      const answer = await call('GET', `/api/jobs/${id}`);
      answers.job.parse(answer.json());
      expect(answer.json().job).toMatchObject({ errorCode: code });
    }
  });

  it("serves an agent solve's trajectory, and says when a job has none", async () => {
    const { call, store, artifacts } = await api();
    const { job } = await store.enqueue({ kind: 'noop', payload: {} });
    await store.claim('noop', 'w', 1, 60_000);
    const transcript = await artifacts.write({
      name: 'transcript.json',
      mediaType: 'application/json',
      bytes: '{"events": []}\n',
    });
    const trajectory = await artifacts.write({
      name: 'trajectory.json',
      mediaType: 'application/json',
      bytes: '{"version": 1, "steps": []}\n',
    });
    await store.complete({ id: job.id, attempt: 1 }, { verdict: 'PASS' }, [transcript, trajectory]);
    const slice = await call('GET', `/api/jobs/${job.id}/trajectory`);
    answers.logSlice.parse(slice.json());
    expect(slice.json()).toMatchObject({ artifact: trajectory.id, nextOffset: null });
    // The artifact store's redactor rewrites JSON documents whole.
    expect(JSON.parse((slice.json() as { text: string }).text)).toEqual({ version: 1, steps: [] });
    // The log is still the transcript.
    expect((await call('GET', `/api/jobs/${job.id}/log`)).json()).toMatchObject({
      artifact: transcript.id,
    });
    const { job: other } = await store.enqueue({ kind: 'noop', payload: {} });
    const none = await call('GET', `/api/jobs/${other.id}/trajectory`);
    expect(none.status).toBe(404);
    expect(none.text).toContain(`job ${other.id} has no trajectory`);
  });

  it('serves bounded log slices and downloads artifacts only while their bytes are intact', async () => {
    const { call, store, artifacts, home } = await api();
    const { job } = await store.enqueue({ kind: 'noop', payload: {} });
    await store.claim('noop', 'w', 1, 60_000);
    const log = await artifacts.write({
      name: 'oracle.log',
      mediaType: 'text/plain; charset=utf-8',
      bytes: 'line\n'.repeat(1000),
    });
    await store.complete({ id: job.id, attempt: 1 }, { verdict: 'PASS' }, [log]);

    const slice = await call('GET', `/api/jobs/${job.id}/log?offset=10&limit=100`);
    answers.logSlice.parse(slice.json());
    expect(slice.json()).toMatchObject({
      artifact: log.id,
      size: 5000,
      offset: 10,
      nextOffset: 110,
    });
    expect(slice.json().text).toHaveLength(100);
    const end = await call('GET', `/api/jobs/${job.id}/log?offset=4990&limit=100`);
    expect(end.json()).toMatchObject({ nextOffset: null });

    const download = await call('GET', `/api/artifacts/${log.id}`);
    expect(download.status).toBe(200);
    expect(download.headers['content-disposition']).toMatch(/^attachment; filename="oracle\.log"$/);
    expect(download.text).toBe('line\n'.repeat(1000));

    // The bytes change on disk: no byte is served, and the error says why.
    writeFileSync(join(home, 'artifacts', log.relPath), 'LINE\n'.repeat(1000));
    const tampered = await call('GET', `/api/artifacts/${log.id}`);
    expect(tampered.status).toBe(500);
    expect(tampered.text).not.toContain('LINE');
    expect(tampered.json().error.code).toBe('ARTIFACT_INVALID');
    expect((await call('GET', '/api/artifacts/nope')).status).toBe(404);
  });

  it('cuts log slices on character boundaries, so that each decodes whole', async () => {
    const { call, store, artifacts } = await api();
    const { job } = await store.enqueue({ kind: 'noop', payload: {} });
    await store.claim('noop', 'w', 1, 60_000);
    const text = 'test ✓ passed: é 😀\n'.repeat(20);
    const log = await artifacts.write({ name: 'oracle.log', mediaType: 'text/plain', bytes: text });
    await store.complete({ id: job.id, attempt: 1 }, { verdict: 'PASS' }, [log]);
    let offset: number | null = 0;
    let joined = '';
    while (offset !== null) {
      const slice = (await call('GET', `/api/jobs/${job.id}/log?offset=${offset}&limit=9`)).json();
      expect(slice.offset).toBe(offset);
      expect(slice.size).toBe(Buffer.byteLength(text));
      // call() reads bodies as latin1 (byte for byte): undo that to get the UTF-8 bytes.
      const piece = Buffer.from(slice.text as string, 'latin1');
      expect(piece.length).toBeLessThanOrEqual(9);
      expect(piece.toString('utf8')).not.toContain('\ufffd');
      joined += piece.toString('utf8');
      offset = slice.nextOffset;
    }
    expect(joined).toBe(text);
  });

  it('refuses a body declared larger than the limit before reading it, and writes nothing', async () => {
    const { store, port } = await api();
    const reply = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/batches',
          headers: {
            host: `127.0.0.1:${port}`,
            'content-type': 'application/json',
            'content-length': String(MAX_BODY_BYTES + 1),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      // Only the start of the promised body: the answer must come without the rest.
      req.write('{"jobs": [');
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.text).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await store.countByStatus()).queued).toBe(0);
  });

  it('validates a bundle under tasks_root (static checks without Docker) and serves OpenAPI', async () => {
    const { call, tasks } = await api();
    const valid = await call('POST', '/api/validate', { path: 'shell-task' });
    expect(valid.json().results).toEqual([
      expect.objectContaining({ ok: true, id: 'shell-div-zero' }),
    ]);
    const outside = await call('POST', '/api/validate', { path: TASK });
    expect(outside.json().results).toEqual([expect.objectContaining({ ok: false })]);
    // A suite folder: one result per bundle, the broken one named with its problems.
    mkdirSync(join(tasks, 'broken'));
    writeFileSync(join(tasks, 'broken', 'task.toml'), 'id = 7\n');
    const suite = (await call('POST', '/api/validate', { path: '.' })).json();
    expect(answers.validated.parse(suite).results.map((r) => [r.dir, r.ok])).toEqual([
      [join(tasks, 'broken'), false],
      [join(tasks, 'shell-task'), true],
    ]);
    const doc = (await call('GET', '/api/openapi.json')).json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/api/jobs/{id}/log');
    expect(Object.keys(doc.paths)).toContain('/api/jobs/{id}/trajectory');
    expect(
      doc.paths['/api/jobs'].post.requestBody.content['application/json'].schema.oneOf ??
        doc.paths['/api/jobs'].post.requestBody.content['application/json'].schema.anyOf,
    ).toHaveLength(3);
    // Answers are described too, from the schemas the routes build them to.
    const jobsAnswer = doc.paths['/api/jobs'].get.responses['200'].content['application/json'];
    expect(Object.keys(jobsAnswer.schema.properties)).toEqual(['items', 'nextCursor']);
    expect(jobsAnswer.schema.properties.items.items.properties.status.enum).toContain('queued');
    const errorAnswer = doc.paths['/api/jobs'].post.responses.default.content['application/json'];
    expect(errorAnswer.schema.properties.error.required).toEqual(['code', 'message']);
    expect(doc.paths['/api/jobs/{id}'].get.parameters[0].schema.type).toBe('integer');
    const page = await call('GET', '/');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.text).toContain('src="/app.js"');
  });

  it('never serves a stale answer: a write by this or another connection shows at once', async () => {
    const { call, store, home } = await api();
    const count = async () => (await call('GET', '/api/jobs?limit=200')).json().items.length;
    expect(await count()).toBe(0);
    await store.enqueue({ kind: 'noop', payload: {} });
    expect(await count()).toBe(1);
    const other = tempStore({ path: join(home, 'proctor.db') });
    await other.enqueue({ kind: 'noop', payload: {} });
    expect(await count()).toBe(2);
    await other.cancel([1]);
    expect((await call('GET', '/api/jobs?status=cancelled')).json().items).toHaveLength(1);
  });

  it('refuses to bind anything but 127.0.0.1', async () => {
    const { store, artifacts, home } = await api();
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'localhost']) {
      await expect(
        startServer({ host, port: 0, store, artifacts, config: loadConfig(home), secrets: [] }),
      ).rejects.toThrow(/127\.0\.0\.1/);
    }
  });
});
