/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-explicit-any -- response bodies are parsed JSON, checked by the assertions themselves */
// The enqueue routes over real HTTP on 127.0.0.1, with a real SQLite store and artifact store:
// a replayed grade (one job or a batch) answers with the first job and stores nothing new; a
// refused or failed enqueue leaves no artifact file or row behind; a batch over the maximum
// is refused before any bundle is read; a client that goes away stops the work.
import { request } from 'node:http';
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_BATCH_JOBS } from '../../src/api/schemas.js';
import { startServer } from '../../src/api/server.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { SHELL_TASK, slowBundles } from '../helpers/bundles.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

async function api() {
  const home = tempDir();
  const tasks = join(home, 'tasks');
  mkdirSync(tasks);
  cpSync(SHELL_TASK, join(tasks, 'shell-task'), { recursive: true });
  writeFileSync(join(home, 'proctor.toml'), `tasks_root = ${JSON.stringify(tasks)}\n`);
  const config = loadConfig(home);
  const store = tempStore({ path: config.dbPath });
  const root = join(home, 'artifacts');
  const artifacts = createArtifactStore({ root, redactor: createRedactor(), clock: systemClock });
  const log: string[] = [];
  const server = await startServer({
    port: 0,
    store,
    artifacts,
    config,
    secrets: [],
    logger: createLogger({ level: 'debug', write: (line) => log.push(line) }),
  });
  onCleanup(() => server.close());
  const base = `http://127.0.0.1:${server.port}`;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as any };
  };
  /** Artifact directories on disk and rows in the database. */
  const stored = () => ({
    files: existsSync(root) ? readdirSync(root).length : 0,
    rows: store.database.sqlite.prepare('SELECT count(*) FROM artifacts').pluck().get(),
  });
  return { home, tasks, store, server, base, post, stored, log };
}

const grade = (patch: string, extra: Record<string, unknown> = {}) => ({
  kind: 'grade',
  bundle: 'shell-task',
  patch,
  ...extra,
});

describe('idempotent grade enqueue', () => {
  it('answers a replayed grade with the first job and stores no new artifact', async () => {
    const { post, stored } = await api();
    const body = grade('diff --git a/x b/x\n', { idempotencyKey: 'k1' });
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await post('/api/jobs', body));
    expect(answers.map((a) => a.status)).toEqual([201, 200, 200, 200, 200]);
    expect(answers.map((a) => a.json.created)).toEqual([true, false, false, false, false]);
    const first = answers[0]!.json.job;
    for (const a of answers) expect(a.json.job.id).toBe(first.id);
    expect(stored()).toEqual({ files: 1, rows: 1 });

    // The same key with other patch bytes is a conflict, and leaves nothing behind.
    const other = await post('/api/jobs', grade('diff --git a/y b/y\n', { idempotencyKey: 'k1' }));
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('IDEMPOTENCY_CONFLICT');
    expect(stored()).toEqual({ files: 1, rows: 1 });
  });

  it('answers concurrent replays with one job, and one artifact', async () => {
    const { post, stored } = await api();
    const body = grade('diff --git a/z b/z\n', { idempotencyKey: 'same' });
    const answers = await Promise.all(Array.from({ length: 5 }, () => post('/api/jobs', body)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => a.json.job.id)).size).toBe(1);
    expect(stored()).toEqual({ files: 1, rows: 1 });
  });

  it('answers a replayed batch with the first batch and stores no new artifact', async () => {
    const { post, stored } = await api();
    const body = {
      idempotencyKey: 'b1',
      jobs: [
        grade('patch one\n'),
        grade('patch two\n'),
        { kind: 'baseline', bundle: 'shell-task' },
      ],
    };
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await post('/api/batches', body));
    expect(answers.map((a) => a.status)).toEqual([201, 200, 200, 200, 200]);
    for (const a of answers) {
      expect(a.json.jobIds).toEqual(answers[0]!.json.jobIds);
      expect(a.json.batch?.id ?? answers[0]!.json.batch.id).toBe(answers[0]!.json.batch.id);
    }
    expect(stored()).toEqual({ files: 2, rows: 2 });

    const changed = { ...body, jobs: [grade('patch one\n'), grade('patch 2\n')] };
    const conflict = await post('/api/batches', changed);
    expect(conflict.status).toBe(409);
    expect(stored()).toEqual({ files: 2, rows: 2 });
  });
});

describe('refused enqueues leave nothing behind', () => {
  it('keeps no artifact of a batch refused for an invalid bundle, a conflict or a store error', async () => {
    const { post, stored, store } = await api();
    const big = `${'+'.repeat(1023)}\n`.repeat(5 * 1024); // 5 MiB
    const invalid = await post('/api/batches', {
      jobs: [grade(big), { kind: 'baseline', bundle: 'no-such-bundle' }],
    });
    expect(invalid.status).toBe(422);
    expect(stored()).toEqual({ files: 0, rows: 0 });

    // A job key already naming another request: refused inside the enqueue's transaction.
    expect(
      (await post('/api/jobs', { kind: 'baseline', bundle: 'shell-task', idempotencyKey: 'j' }))
        .status,
    ).toBe(201);
    const conflict = await post('/api/batches', {
      jobs: [
        grade(big),
        { kind: 'baseline', bundle: 'shell-task', gold: true, idempotencyKey: 'j' },
      ],
    });
    expect(conflict.status).toBe(409);
    expect(stored()).toEqual({ files: 0, rows: 0 });

    // The database refuses the insert (a real SQLite error, raised by a trigger).
    store.database.sqlite.exec(
      "CREATE TRIGGER refuse BEFORE INSERT ON jobs BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    const failed = await post('/api/jobs', grade(big));
    expect(failed.status).toBe(500);
    expect(stored()).toEqual({ files: 0, rows: 0 });
    store.database.sqlite.exec('DROP TRIGGER refuse');
    expect((await post('/api/jobs', grade(big))).status).toBe(201);
    expect(stored()).toEqual({ files: 1, rows: 1 });
  });
});

describe('bounded API work', () => {
  it(`refuses a batch of more than ${MAX_BATCH_JOBS} jobs with 413 before reading any bundle`, async () => {
    const { post, stored, store, base } = await api();
    const jobs = Array.from({ length: MAX_BATCH_JOBS + 1 }, (_, i) =>
      // Bundles that do not exist: reading any would answer 422 instead.
      i === 0 ? grade('p\n') : { kind: 'baseline', bundle: `missing-${i}` },
    );
    const started = performance.now();
    const answer = await post('/api/batches', { jobs });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(answer.status).toBe(413);
    expect(answer.json.error.code).toBe('LIMIT_EXCEEDED');
    expect(answer.json.error.message).toContain(String(MAX_BATCH_JOBS));
    expect(stored()).toEqual({ files: 0, rows: 0 });
    expect((await store.countByStatus()).queued).toBe(0);
    // The OpenAPI document states the same limit.
    const doc = (await (await fetch(`${base}/api/openapi.json`)).json()) as any;
    const batches = doc.paths['/api/batches'].post;
    expect(batches.responses['413'].description).toContain(String(MAX_BATCH_JOBS));
    const schema = batches.requestBody.content['application/json'].schema;
    expect(schema.properties.jobs.maxItems).toBe(MAX_BATCH_JOBS);
  });

  it('reads each distinct bundle of a batch once', async () => {
    const { post, tasks } = await api();
    const [slow] = slowBundles(tasks, 1);
    // One slow bundle named a thousand times: a load per job would take minutes.
    const jobs = Array.from({ length: MAX_BATCH_JOBS }, () => ({ kind: 'baseline', bundle: slow }));
    const started = performance.now();
    const answer = await post('/api/batches', { jobs });
    expect(answer.status).toBe(201);
    expect(answer.json.jobIds).toHaveLength(MAX_BATCH_JOBS);
    expect(performance.now() - started).toBeLessThan(15_000);
  }, 30_000);

  it('stops the work of a request whose client went away, and enqueues nothing', async () => {
    const { tasks, server, base, store, stored, log } = await api();
    const names = slowBundles(tasks, 40);
    const body = JSON.stringify({
      jobs: [grade('p\n'), ...names.map((bundle) => ({ kind: 'baseline', bundle }))],
    });
    const req = request({
      host: '127.0.0.1',
      port: server.port,
      method: 'POST',
      path: '/api/batches',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('error', () => undefined);
    req.end(body);
    await waitFor(() => server.busy() === 1, { what: 'the server to work on the batch' });
    req.destroy();
    // Forty slow bundles take many seconds to read; the work must stop long before that.
    await waitFor(() => server.busy() === 0, {
      what: 'the server to drop the abandoned work',
      timeoutMs: 3_000,
    });
    expect(log.join('\n')).toMatch(/request abandoned/);
    const started = performance.now();
    const list = await fetch(`${base}/api/batches`);
    expect(list.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(((await list.json()) as any).items).toEqual([]);
    expect((await store.countByStatus()).queued).toBe(0);
    expect(stored()).toEqual({ files: 0, rows: 0 });
  }, 30_000);
});
