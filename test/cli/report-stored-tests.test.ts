/* eslint-disable @typescript-eslint/no-unsafe-member-access -- response bodies are parsed JSON, checked by the assertions themselves */
// Grades' stored per-test statuses, read by `report --format swebench`, `report --against`,
// `status JOB`, export and GET /api/jobs/:id/tests, on a real SQLite home over the real CLI and
// real HTTP: where the stored statuses and SWE-bench's grading rules say otherwise than the
// verdict would (a skipped existing test is a PASS_TO_PASS success; a missing hidden test
// fails alone), and a database made before they were kept (the previous migration, its grades
// without any) migrated and read with the verdict's inference, which is said.
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { jobTests } from '../../src/api/results-schemas.js';
import { openApiDocument } from '../../src/api/openapi.js';
import { startServer } from '../../src/api/server.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { DeclaredTests } from '../../src/oracle/index.js';
import { DEFAULT_MIGRATIONS_FOLDER } from '../../src/queue/db.js';
import { encodeTestStatuses, exportJobs } from '../../src/results/index.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { proctor } from '../helpers/cli.js';
import { httpCaller } from '../helpers/http.js';
import { ROOT } from '../helpers/processes.js';
import { seedGrades } from '../helpers/results.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');

/** t1: every hidden test passed; existing t_add_negative skipped (EXISTING_FAILED here). */
const skipped: DeclaredTests = {
  lists: { hidden: 'reported', existing: 'reported' },
  tests: [
    { id: 't_div', list: 'hidden', outcome: 'passed', swebench: 'PASSED' },
    { id: 't_div_zero', list: 'hidden', outcome: 'passed', swebench: 'PASSED' },
    { id: 't_add', list: 'existing', outcome: 'passed', swebench: 'PASSED' },
    { id: 't_add_negative', list: 'existing', outcome: 'skipped', swebench: 'SKIPPED' },
  ],
};

/** t2: t_div_zero missing from the report (TESTS_MISSING), everything else passed. */
const missing: DeclaredTests = {
  lists: { hidden: 'reported', existing: 'reported' },
  tests: [
    { id: 't_div', list: 'hidden', outcome: 'passed' },
    { id: 't_div_zero', list: 'hidden', outcome: 'missing' },
    { id: 't_add', list: 'existing', outcome: 'passed' },
    { id: 't_add_negative', list: 'existing', outcome: 'passed' },
  ],
};

/** A home whose tasks/t1 and tasks/t2 are copies of the shell task (declared IDs read). */
function bundles(dir: string) {
  for (const t of ['t1', 't2']) cpSync(TASK, join(dir, 'tasks', t), { recursive: true });
  return { t1: join(dir, 'tasks', 't1'), t2: join(dir, 'tasks', 't2') };
}

function readReport(out: string, id: string) {
  const text = readFileSync(join(out, id, 'report.json'), 'utf8');
  return (JSON.parse(text) as Record<string, { tests_status: unknown }>)[id]?.tests_status;
}

/** The shipped SQLite migrations up to (without) the one whose tag ends with `suffix`. */
function migrationsBefore(suffix: string): string {
  const folder = join(tempDir(), 'drizzle');
  cpSync(DEFAULT_MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as {
    entries: Array<{ tag: string }>;
  };
  const cut = journal.entries.findIndex((e) => e.tag.endsWith(suffix));
  expect(cut).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, cut);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
}

/** `proctor report BATCH --format swebench` into a new folder, which must succeed. */
async function reportSwebench(dir: string, batch: string) {
  const out = join(tempDir(), 'swebench');
  const result = await proctor([
    '--home',
    dir,
    'report',
    batch,
    '--format',
    'swebench',
    '--out',
    out,
  ]);
  expect(result.code, result.stderr).toBe(0);
  return { out, result };
}

async function storedHome() {
  const dir = tempDir();
  const paths = bundles(dir);
  const config = loadConfig(dir);
  const store = tempStore({ path: config.dbPath });
  const batch = await seedGrades(store, 'preds', [
    {
      task: 't1',
      verdict: 'FAIL',
      reason: 'EXISTING_FAILED',
      detail: 'existing phase: 1 test not passed: t_add_negative (skipped)',
      instanceId: 'org__t-1',
      bundle: paths.t1,
      tests: encodeTestStatuses(skipped),
    },
    {
      task: 't2',
      verdict: 'FAIL',
      reason: 'TESTS_MISSING',
      detail: 'hidden phase: 1 declared test missing from the report: t_div_zero',
      instanceId: 'org__t-2',
      bundle: paths.t2,
      tests: encodeTestStatuses(missing),
    },
  ]);
  const jobs = (await store.listJobs({ batchId: batch }, { order: 'asc' })).items.map((j) => j.id);
  return { dir, config, store, batch, jobs };
}

describe('stored per-test statuses', () => {
  it("make report --format swebench's tests_status by SWE-bench's grading rules, not the verdict's", async () => {
    const { dir, batch } = await storedHome();
    const { out, result } = await reportSwebench(dir, batch);
    expect(result.stdout.trim()).toBe(`wrote ${join(out, 'summary.json')} and 2 report.json files`);
    // SWE-bench counts a skipped PASS_TO_PASS test as maintained; the verdict failed on it.
    expect(readReport(out, 'org__t-1')).toEqual({
      FAIL_TO_PASS: { success: ['t_div', 't_div_zero'], failure: [] },
      PASS_TO_PASS: { success: ['t_add', 't_add_negative'], failure: [] },
    });
    // Only the missing test fails; the verdict alone would have failed every test.
    expect(readReport(out, 'org__t-2')).toEqual({
      FAIL_TO_PASS: { success: ['t_div'], failure: ['t_div_zero'] },
      PASS_TO_PASS: { success: ['t_add', 't_add_negative'], failure: [] },
    });
  });

  it('make report --against compare them with the official tests_status, and say so', async () => {
    const { dir, batch } = await storedHome();
    const official = join(tempDir(), 'official.json');
    const split = (success: string[], failure: string[] = []) => ({ success, failure });
    writeFileSync(
      official,
      JSON.stringify({
        'org__t-1': {
          resolved: true,
          tests_status: {
            FAIL_TO_PASS: split(['t_div', 't_div_zero']),
            PASS_TO_PASS: split(['t_add', 't_add_negative']),
          },
        },
        'org__t-2': {
          resolved: true,
          tests_status: {
            FAIL_TO_PASS: split(['t_div', 't_div_zero']),
            PASS_TO_PASS: split(['t_add', 't_add_negative']),
          },
        },
      }),
    );
    const json = await proctor([
      '--home',
      dir,
      'report',
      batch,
      '--against',
      official,
      '--format',
      'json',
    ]);
    expect(json.code, json.stderr).toBe(0);
    const parity = JSON.parse(json.stdout);
    expect(parity.disagreements).toEqual([
      expect.objectContaining({ instance: 'org__t-1', tests: [], testsFrom: 'stored' }),
      expect.objectContaining({
        instance: 'org__t-2',
        testsFrom: 'stored',
        tests: [
          { test: 't_div_zero', category: 'FAIL_TO_PASS', proctor: 'failure', official: 'success' },
        ],
      }),
    ]);
    const table = await proctor(['--home', dir, 'report', batch, '--against', official]);
    expect(table.stdout).toContain(
      'org__t-1 (task t1): Proctor unresolved (EXISTING_FAILED), official resolved',
    );
    expect(table.stdout).toContain('    tests: no per-test difference\n');
    expect(table.stdout).toContain(
      '    tests that differ (1):\n      FAIL_TO_PASS t_div_zero: Proctor failure, official success',
    );
  });

  it('show in status JOB as counts and the tests not passed, every test with --json', async () => {
    const { dir, jobs } = await storedHome();
    const [t1] = jobs;
    const shown = await proctor(['--home', dir, 'status', String(t1)]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      [
        `job ${t1} tests hidden: 2 passed`,
        `job ${t1} tests existing: 1 passed, 1 skipped`,
        '  existing skipped (SWE-bench SKIPPED): t_add_negative',
      ].join('\n'),
    );
    const json = await proctor(['--home', dir, 'status', String(t1), '--json']);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.jobs[0].tests.tests).toEqual(skipped.tests);
    expect(parsed.jobs[0].tests.summary.existing.counts).toMatchObject({ passed: 1, skipped: 1 });
  });

  it('are in an export as tests.json', async () => {
    const { config, store, jobs } = await storedHome();
    const artifacts = createArtifactStore({
      root: join(config.home, 'artifacts'),
      redactor: createRedactor(),
      clock: systemClock,
    });
    const listed = (await store.listJobs({}, { order: 'asc' })).items;
    const { archive } = await exportJobs({ store, artifacts, redactor: createRedactor() }, listed);
    const tar = gunzipSync(archive).toString('utf8');
    expect(tar).toContain(`jobs/${jobs[1]}/tests.json`);
    expect(tar).toContain(
      '"id": "t_div_zero",\n      "list": "hidden",\n      "outcome": "missing"',
    );
  });

  it('are served by GET /api/jobs/:id/tests: a bounded summary, every test with all=true', async () => {
    const { config, store, jobs } = await storedHome();
    const artifacts = createArtifactStore({
      root: join(config.home, 'artifacts'),
      redactor: createRedactor(),
      clock: systemClock,
    });
    const server = await startServer({ port: 0, store, artifacts, config, secrets: [] });
    onCleanup(() => server.close());
    const call = httpCaller(server.port);
    const [t1] = jobs;
    const brief = await call('GET', `/api/jobs/${t1}/tests`);
    expect(brief.status).toBe(200);
    const body = jobTests.parse(brief.json());
    expect(body.tests).toBeNull();
    expect(body.summary?.notPassed).toEqual([
      { id: 't_add_negative', list: 'existing', outcome: 'skipped', swebench: 'SKIPPED' },
    ]);
    const all = jobTests.parse((await call('GET', `/api/jobs/${t1}/tests?all=true`)).json());
    expect(all.tests).toEqual(skipped.tests);
    // A job without stored statuses: null, not an error.
    const { job } = await store.enqueue({ kind: 'noop', payload: {} });
    expect(jobTests.parse((await call('GET', `/api/jobs/${job.id}/tests`)).json())).toEqual({
      job: job.id,
      summary: null,
      tests: null,
    });
    const unknown = await call('GET', '/api/jobs/999999/tests');
    expect(unknown.status).toBe(404);
    expect(unknown.json().error.code).toBe('JOB_NOT_FOUND');
    const bad = await call('GET', `/api/jobs/${t1}/tests?all=maybe`);
    expect(bad.status).toBe(400);
    expect(bad.json().error.message).toBe(
      'query.all: Invalid option: expected one of "true"|"false"',
    );
    expect(Object.keys(openApiDocument().paths)).toContain('/api/jobs/{id}/tests');
  });

  it('are absent from grades made before they were kept: the database migrates, reports infer and say so', async () => {
    const dir = tempDir();
    const paths = bundles(dir);
    const config = loadConfig(dir);
    mkdirSync(config.home, { recursive: true });
    const old = tempStore({
      path: config.dbPath,
      migrationsFolder: migrationsBefore('_stormy_red_shift'),
    });
    // Today's store writes a batch's spend, a later column than the statuses: it stands in the
    // old database only while the grades are seeded, and goes before the report migrates it.
    const raw = (sql: string) => {
      const db = new Database(config.dbPath);
      try {
        db.exec(sql);
      } finally {
        db.close();
      }
    };
    raw('ALTER TABLE batches ADD spent_usd real DEFAULT 0 NOT NULL');
    const batch = await seedGrades(old, 'old', [
      {
        task: 't2',
        verdict: 'FAIL',
        reason: 'HIDDEN_FAILED',
        detail: 'hidden phase: 1 test not passed: t_div_zero (failed)',
        instanceId: 'org__t-2',
        bundle: paths.t2,
      },
    ]);
    const [job] = (await old.listJobs({ batchId: batch })).items;
    await old.close();
    raw('ALTER TABLE batches DROP COLUMN spent_usd');
    const tables = () => {
      const db = new Database(config.dbPath, { readonly: true });
      try {
        return db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
      } finally {
        db.close();
      }
    };
    expect(tables()).not.toContain('test_statuses');

    const { out, result } = await reportSwebench(dir, batch);
    expect(tables()).toContain('test_statuses');
    expect(result.stdout.trim()).toBe(
      `wrote ${join(out, 'summary.json')} and 1 report.json files (1 with tests_status inferred from the verdict: no per-test statuses stored)`,
    );
    expect(readdirSync(out).sort()).toEqual(['org__t-2', 'summary.json']);
    expect(readReport(out, 'org__t-2')).toEqual({
      FAIL_TO_PASS: { success: ['t_div'], failure: ['t_div_zero'] },
      PASS_TO_PASS: { success: ['t_add', 't_add_negative'], failure: [] },
    });
    const shown = await proctor(['--home', dir, 'status', String(job?.id)]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toContain('tests hidden');
    const json = JSON.parse(
      (await proctor(['--home', dir, 'status', String(job?.id), '--json'])).stdout,
    );
    expect(json.jobs[0].tests).toBeNull();
  });
});
