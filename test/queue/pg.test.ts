// PostgreSQL-only behaviour: database time for leases (the conformance suite runs the PG store
// on a test clock), claims racing across connections, migrations racing across processes, and
// what a user sees when the database is not there.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { backoffDelay } from '../../src/queue/index.js';
import { DEFAULT_PG_MIGRATIONS_FOLDER } from '../../src/queue/pg/db.js';
import { displayUrl } from '../../src/queue/pg/url.js';
import { openPgJobStore } from '../../src/queue/pg/store.js';
import { createRedactor } from '../../src/store/index.js';
import { emptyPgDatabase, tempPgDatabase, tempPgStore } from '../helpers/postgres.js';
import { spawnTs } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { readMigrationFiles } from 'drizzle-orm/migrator';

async function databaseNow(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ now: string }>(
      'SELECT floor(extract(epoch from now()) * 1000)::bigint AS now',
    );
    return Number(rows[0]?.now);
  } finally {
    await client.end();
  }
}

describe('PgJobStore with database time', () => {
  it('counts leases from the database clock, and reclaims them when it passes', async () => {
    const url = await tempPgDatabase();
    const store = await tempPgStore({ url });
    const { job } = await store.enqueue({ kind: 'noop', payload: {} });
    const before = await databaseNow(url);
    const [claimed] = await store.claim('noop', 'w', 1, 300);
    const after = await databaseNow(url);
    expect(claimed!.heartbeatAt).toBeGreaterThanOrEqual(before);
    expect(claimed!.heartbeatAt).toBeLessThanOrEqual(after);
    expect(claimed!.leaseExpiresAt! - claimed!.heartbeatAt!).toBe(300);
    const reclaimed = await waitFor(
      async () => {
        const rows = await store.reclaimExpired();
        return rows.length > 0 && rows;
      },
      { what: 'the 300 ms lease to expire' },
    );
    expect(reclaimed).toEqual([{ id: job.id, attempt: 1, status: 'queued', owner: 'w' }]);
  });

  it('backs off from the database clock', async () => {
    const store = await tempPgStore();
    const { job } = await store.enqueue({ kind: 'noop', payload: {} });
    await store.claim('noop', 'w', 1, 60_000);
    expect(await store.fail({ id: job.id, attempt: 1 }, 'boom')).toBe('retrying');
    const queued = await store.getJob(job.id);
    expect(queued!.runAt - queued!.updatedAt).toBe(backoffDelay(1));
    expect(await store.claim('noop', 'w', 1, 60_000)).toEqual([]);
  });
});

describe('PgJobStore across connections', () => {
  it('gives each of many racing claimers different jobs, every job exactly once', async () => {
    const url = await tempPgDatabase();
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => tempPgStore({ url, maxConnections: 3 })),
    );
    const { jobIds } = await stores[0]!.enqueueBatch({
      jobs: Array.from({ length: 400 }, (_, i) => ({
        kind: 'noop' as const,
        payload: { tag: `${i}` },
      })),
    });
    const seen: number[] = [];
    await Promise.all(
      stores.flatMap((store, s) =>
        [0, 1, 2].map(async (slot) => {
          for (;;) {
            const jobs = await store.claim('noop', `host${s}-${slot}`, 4, 60_000);
            if (jobs.length === 0) return;
            for (const job of jobs) {
              expect(await store.complete(job, null)).toBe(true);
              seen.push(job.id);
            }
          }
        }),
      ),
    );
    expect(seen).toHaveLength(400);
    expect(new Set(seen)).toEqual(new Set(jobIds));
    expect(await stores[1]!.countByStatus()).toMatchObject({ done: 400, queued: 0, running: 0 });
  });

  it('moves its data version when another host commits', async () => {
    const url = await tempPgDatabase();
    const [one, two] = [await tempPgStore({ url }), await tempPgStore({ url })];
    const before = await one.dataVersion();
    await two.enqueue({ kind: 'noop', payload: {} });
    expect(await one.dataVersion()).not.toBe(before);
  });
});

describe('PostgreSQL migrations', () => {
  it('apply once when two processes start on an empty database at the same moment', async () => {
    const url = await emptyPgDatabase();
    const go = join(tempDir(), 'go');
    const children = [0, 1].map(() => spawnTs('test/helpers/pg-migrate-child.ts', [url, go]));
    await waitFor(() => children.every((c) => c.stdout().includes('ready')), {
      what: 'both migrating processes to connect',
    });
    writeFileSync(go, '');
    const exits = await Promise.all(children.map((c) => c.exited));
    expect(
      exits.map((e) => e.code),
      children.map((c) => c.stderr()).join('\n'),
    ).toEqual([0, 0]);
    const applied = children.map((c) => Number(/applied (\d+)/.exec(c.stdout())?.[1])).sort();
    const count = readMigrationFiles({ migrationsFolder: DEFAULT_PG_MIGRATIONS_FOLDER }).length;
    expect(applied).toEqual([0, count]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query('SELECT hash FROM __drizzle_migrations');
    await client.end();
    expect(rows).toHaveLength(count);
  });
});

describe('a database that is not there', () => {
  it('fails with DB_UNREADABLE naming the URL without its password', async () => {
    const dir = tempDir();
    const url = `postgres://proctor:s3cret-pass@localhost:5999/proctor?host=${dir}`;
    const store = openPgJobStore(url, { connectTimeoutMs: 2_000 });
    try {
      const error = await store.countByStatus().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isProctorError(error, 'DB_UNREADABLE')).toBe(true);
      const message = (error as Error).message;
      expect(message).toContain('postgres://***@localhost:5999/proctor');
      expect(message).not.toContain('s3cret');
    } finally {
      await store.close();
    }
  });

  it('refuses a URL that is not postgres://', () => {
    expect(() => openPgJobStore('mysql://a:b@h/db')).toThrow(/not a postgres:\/\/ URL/);
  });
});

describe('database URLs in output', () => {
  it('never show their password, in messages or through the redactor', () => {
    const url = 'postgresql://proctor:hunter2-secret@db.internal:5432/sweeps';
    expect(displayUrl(url)).toBe('postgresql://***@db.internal:5432/sweeps');
    const redacted = createRedactor().text(`worker connected to ${url} as host h1`);
    expect(redacted).not.toContain('hunter2-secret');
    expect(redacted).toContain('db.internal:5432/sweeps');
  });
});

describe('wake-ups across hosts (LISTEN/NOTIFY)', () => {
  it("tells a listener of another host's enqueue and release, and keeps listening after its connection is cut", async () => {
    const url = await tempPgDatabase();
    const [listener, other] = [await tempPgStore({ url }), await tempPgStore({ url })];
    const heard: string[] = [];
    const stop = await listener.subscribe!((kind) => heard.push(kind));
    await other.enqueue({ kind: 'noop', payload: {} });
    await waitFor(() => heard.includes('noop'), { what: 'the enqueue to be heard' });
    const [job] = await other.claim('noop', 'w', 1, 60_000);
    heard.length = 0;
    expect(await other.release(job!, 'shutdown')).toBe(true);
    await waitFor(() => heard.includes('noop'), { what: 'the release to be heard' });

    // Cut the listening connection from the server side: it comes back, and hears again.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const cut = await admin.query<{ pid: number }>(
        "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'proctor-listen' AND datname = current_database()",
      );
      expect(cut.rowCount).toBe(1);
      await waitFor(
        async () =>
          // Listening, not only connected: a NOTIFY committed before its LISTEN is not heard.
          // And a new backend: the terminated one can linger in pg_stat_activity a moment.
          (
            await admin.query(
              "SELECT 1 FROM pg_stat_activity WHERE application_name = 'proctor-listen' AND datname = current_database() AND state = 'idle' AND query ILIKE 'LISTEN %' AND pid <> $1",
              [cut.rows[0]?.pid],
            )
          ).rowCount === 1,
        { what: 'the listener to reconnect and listen' },
      );
    } finally {
      await admin.end();
    }
    heard.length = 0;
    await other.enqueueBatch({
      jobs: [{ kind: 'grade', payload: { bundle: '/b', candidate: 'c' } }],
    });
    await waitFor(() => heard.includes('grade'), { what: 'an enqueue after the reconnect' });
    await stop();
  });
});

describe('PgJobStore batches across hosts', () => {
  it('adds up concurrent appends to one batch', async () => {
    const url = await tempPgDatabase();
    const [a, b] = [await tempPgStore({ url }), await tempPgStore({ url })];
    const noop = (tag: string) => ({ kind: 'noop' as const, payload: { tag } });
    const { batch } = await a.enqueueBatch({ jobs: [noop('first')] });
    const id = batch!.id;
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 === 0 ? a : b).enqueueBatch({ batchId: id, jobs: [noop(`${i}a`), noop(`${i}b`)] }),
      ),
    );
    expect((await a.getBatch(id))?.total).toBe(13);
    expect((await b.batchProgress(id)).counts.queued).toBe(13);
  });
});
