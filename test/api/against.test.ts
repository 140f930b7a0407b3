/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are parsed JSON, checked by the assertions themselves */
// POST /api/batches/:id/against over real HTTP on 127.0.0.1: the official file's JSON as the
// body, the same comparison `proctor report ID --against FILE --format json` prints, nothing
// stored; and every bad body refused with the API's one-line error.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_AGAINST_BODY_BYTES, parity } from '../../src/api/results-schemas.js';
import { openApiDocument } from '../../src/api/openapi.js';
import { startServer } from '../../src/api/server.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { proctor } from '../helpers/cli.js';
import { httpCaller, type HttpAnswer } from '../helpers/http.js';
import { ROOT } from '../helpers/processes.js';
import { seedGrades } from '../helpers/results.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');

async function home() {
  const dir = tempDir();
  mkdirSync(join(dir, 'tasks'));
  // The disagreeing task's bundle: its declared IDs (t_add…, t_div…) are read for the tests.
  cpSync(TASK, join(dir, 'tasks', 't2'), { recursive: true });
  const config = loadConfig(dir);
  const store = tempStore({ path: config.dbPath });
  const artifacts = createArtifactStore({
    root: join(dir, 'artifacts'),
    redactor: createRedactor(),
    clock: systemClock,
  });
  const server = await startServer({ port: 0, store, artifacts, config, secrets: [] });
  onCleanup(() => server.close());
  const batch = await seedGrades(store, 'preds', [
    { task: 't1', verdict: 'PASS', instanceId: 'org__t-1' },
    {
      task: 't2',
      verdict: 'FAIL',
      reason: 'HIDDEN_FAILED',
      detail: 'hidden phase: 1 test not passed: t_div_zero (failed)',
      instanceId: 'org__t-2',
      bundle: join(dir, 'tasks', 't2'),
    },
    // The harness lost track of a phase: the machine's fault, class error.
    { task: 't3', verdict: 'FAIL', reason: 'INFRA_ERROR', instanceId: 'org__t-3' },
  ]);
  return { dir, store, batch, call: httpCaller(server.port) };
}

const official = {
  'org__t-1': { resolved: true, tests_status: { FAIL_TO_PASS: { success: [], failure: [] } } },
  'org__t-2': {
    patch_is_None: false,
    patch_exists: true,
    patch_successfully_applied: true,
    resolved: true,
    tests_status: {
      FAIL_TO_PASS: { success: ['t_div', 't_div_zero'], failure: [] },
      PASS_TO_PASS: { success: ['t_add', 't_add_negative'], failure: [] },
    },
  },
  'org__t-3': { resolved: false },
};

function refused(answer: HttpAnswer, status: number, code: string, message: RegExp) {
  expect({ status: answer.status, code: answer.json().error.code }).toEqual({ status, code });
  expect(answer.json().error.message).toMatch(message);
  expect(answer.json().error.message).not.toContain('\n');
}

describe('POST /api/batches/:id/against', () => {
  it('answers the comparison `report --against --format json` prints, and stores nothing', async () => {
    const { dir, store, batch, call } = await home();
    const jobsBefore = (await store.batchProgress(batch)).counts;
    const answer = await call('POST', `/api/batches/${batch}/against`, official);
    expect(answer.status).toBe(200);
    const body = parity.parse(answer.json());
    expect(body.agreement).toMatchObject({ comparable: 2, agree: 1 });
    expect(body.disagreements).toEqual([
      expect.objectContaining({
        instance: 'org__t-2',
        proctor: 'unresolved',
        official: 'resolved',
        tests: [
          { test: 't_div_zero', category: 'FAIL_TO_PASS', proctor: 'failure', official: 'success' },
        ],
      }),
    ]);
    expect(body.notComparable).toEqual([
      expect.objectContaining({ instance: 'org__t-3', why: 'error here' }),
    ]);
    const file = join(dir, 'official.json');
    writeFileSync(file, JSON.stringify(official));
    const cli = await proctor([
      '--home',
      dir,
      'report',
      batch,
      '--against',
      file,
      '--format',
      'json',
    ]);
    expect(cli.stderr).toBe('');
    expect(answer.json()).toEqual(JSON.parse(cli.stdout));
    expect((await store.batchProgress(batch)).counts).toEqual(jobsBefore);
    const doc = openApiDocument().paths as Record<string, Record<string, unknown>>;
    expect(doc['/api/batches/{id}/against']?.['post']).toBeDefined();
  });

  it('answers the instances the batch lacks as not in this suite, apart from those not comparable', async () => {
    const { batch, call } = await home();
    const answer = await call('POST', `/api/batches/${batch}/against`, {
      ...official,
      'org__t-99': { resolved: true },
      'org__t-98': { resolved: false, patch_is_None: true },
    });
    expect(answer.status).toBe(200);
    const body = parity.parse(answer.json());
    expect(body.notInSuite).toEqual([
      { instance: 'org__t-98', official: 'empty' },
      { instance: 'org__t-99', official: 'resolved' },
    ]);
    expect(body.notComparable.map((n) => n.instance)).toEqual(['org__t-3']);
    expect(body.agreement.comparable).toBe(2);
  });

  it('refuses a body of an unknown shape, naming what it accepts', async () => {
    const { batch, call } = await home();
    refused(
      await call('POST', `/api/batches/${batch}/against`, { instances: [] }),
      400,
      'PAYLOAD_INVALID',
      /^body: unknown shape; expected a SWE-bench run report \(resolved_ids/,
    );
    refused(
      await call('POST', `/api/batches/${batch}/against`, { resolved_ids: [7] }),
      400,
      'PAYLOAD_INVALID',
      /^body: resolved_ids\.0: /,
    );
  });

  it('refuses a body that is not JSON, one over the limit, an unknown batch and a baseline sweep', async () => {
    const { store, batch, call } = await home();
    refused(
      await call('POST', `/api/batches/${batch}/against`, '{"resolved_ids": ['),
      400,
      'PAYLOAD_INVALID',
      /^the body is not valid JSON$/,
    );
    const big = await call(
      'POST',
      `/api/batches/${batch}/against`,
      JSON.stringify({ resolved: ['x'.repeat(MAX_AGAINST_BODY_BYTES)] }),
    );
    refused(big, 413, 'PAYLOAD_TOO_LARGE', /larger than/);
    refused(
      await call('POST', '/api/batches/b_nosuch/against', official),
      404,
      'BATCH_NOT_FOUND',
      /^no batch b_nosuch$/,
    );
    const { batch: sweep, jobIds } = await store.enqueueBatch({
      label: 'sweep',
      jobs: [{ kind: 'baseline', payload: { bundle: '/suite/t1' }, maxAttempts: 1 }],
    });
    const [job] = await store.claim('baseline', 'seed', 1, 600_000);
    expect(job?.id).toBe(jobIds[0]);
    await store.complete(
      { id: job!.id, attempt: job!.attempt },
      { verdict: 'PASS', reason: 'PASS', validity: 'valid' },
    );
    refused(
      await call('POST', `/api/batches/${sweep!.id}/against`, official),
      400,
      'USAGE',
      new RegExp(`^batch ${sweep!.id} is a baseline sweep`),
    );
  });
});
