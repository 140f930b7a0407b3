/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are parsed JSON, checked by the assertions themselves */
// Numbers in URLs over real HTTP: job ids in paths and every numeric query parameter are
// parsed by the same strict rule as the command line (src/numbers.ts): decimal digits only,
// within the safe-integer range and the parameter's own bounds, else 400 naming the bounds.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answers } from '../../src/api/schemas.js';
import { startServer } from '../../src/api/server.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { httpCaller } from '../helpers/http.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';

async function api() {
  const home = tempDir();
  const config = loadConfig(home);
  const store = tempStore({ path: config.dbPath });
  const artifacts = createArtifactStore({
    root: join(home, 'artifacts'),
    redactor: createRedactor(),
    clock: systemClock,
  });
  const server = await startServer({ port: 0, store, artifacts, config, secrets: [] });
  onCleanup(() => server.close());
  const call = httpCaller(server.port);
  return { call, store };
}

describe('numbers in the API', () => {
  it.each([
    '1e3',
    '0x10',
    '007',
    '0',
    '-1',
    '+1',
    '1.0',
    '%201',
    '9007199254740992',
    '9007199254740993',
    '99999999999999999999999',
  ])('refuses the job id %s with 400, on every job route', async (id) => {
    const { call, store } = await api();
    // Jobs 1 to 16 exist, so that a loose parse (0x10 = 16, 007 = 7) would find one.
    await store.enqueueBatch({
      jobs: Array.from({ length: 16 }, () => ({ kind: 'noop' as const, payload: {} })),
    });
    for (const [method, path, body] of [
      ['GET', `/api/jobs/${id}`],
      ['GET', `/api/jobs/${id}/log`],
      ['POST', `/api/jobs/${id}/cancel`, '{}'],
    ] as const) {
      const answer = await call(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(400);
      answers.error.parse(answer.json());
      expect(answer.json().error).toMatchObject({ code: 'PAYLOAD_INVALID' });
      expect(answer.json().error.message).toMatch(
        /^id: expected an integer from 1 to 9007199254740991\b/,
      );
    }
    expect((await store.getJob(16))?.status).toBe('queued');
  });

  it('reads a job whose id is written plainly', async () => {
    const { call, store } = await api();
    const { jobIds } = await store.enqueueBatch({ jobs: [{ kind: 'noop', payload: {} }] });
    expect((await call('GET', `/api/jobs/${jobIds[0]}`)).status).toBe(200);
    expect((await call('GET', '/api/jobs/9007199254740991')).status).toBe(404);
  });

  it.each([
    [
      '/api/jobs?limit=1e2',
      'query.limit: expected an integer from 1 to 200 in decimal digits, got `1e2`',
    ],
    ['/api/jobs?limit=0x10', 'query.limit: expected an integer from 1 to 200 in decimal digits'],
    [
      '/api/jobs?limit=',
      'query.limit: expected an integer from 1 to 200 in decimal digits, got ``',
    ],
    ['/api/jobs?limit=050', 'query.limit: expected an integer from 1 to 200 without leading zeros'],
    ['/api/jobs?limit=201', 'query.limit: expected an integer from 1 to 200, got `201`'],
    ['/api/batches?limit=1e2', 'query.limit: expected an integer from 1 to 200 in decimal digits'],
    ['/api/batches?limit=9007199254740993', 'query.limit: expected an integer from 1 to 200, got'],
    [
      '/api/jobs/1/log?limit=1e3',
      'query.limit: expected an integer from 1 to 1048576 in decimal digits',
    ],
    [
      '/api/jobs/1/log?offset=1e3',
      'query.offset: expected an integer from 0 to 9007199254740991 in decimal digits',
    ],
    [
      '/api/jobs/1/log?offset=-1',
      'query.offset: expected an integer from 0 to 9007199254740991 in decimal digits',
    ],
  ])('refuses %s with 400 naming the real bounds', async (path, message) => {
    const { call, store } = await api();
    await store.enqueueBatch({ jobs: [{ kind: 'noop', payload: {} }] });
    const answer = await call('GET', path);
    expect(answer.status).toBe(400);
    expect(answer.json().error.code).toBe('PAYLOAD_INVALID');
    expect(answer.json().error.message).toContain(message);
  });

  it('takes plain query numbers and their defaults', async () => {
    const { call } = await api();
    for (const path of [
      '/api/jobs',
      '/api/jobs?limit=1',
      '/api/jobs?limit=200',
      '/api/batches?limit=7',
    ]) {
      expect((await call('GET', path)).status, path).toBe(200);
    }
  });
});
