// A connection terminated while a transaction holds it (pg_terminate_backend, as an admin or a
// server shutdown does): the statement in flight fails, and the connection's FATAL error, which
// pg emits on the client as an 'error' event and can come after the client is released, is
// heard rather than killing the process (an unheard 'error' event is an uncaught exception,
// which fails this run). The pool goes on with a fresh connection.
import pg from 'pg';
import { expect, it } from 'vitest';
import { createPool, inTransaction } from '../../src/queue/pg/db.js';
import { emptyPgDatabase } from '../helpers/postgres.js';
import { onCleanup } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

it('survives its connection being terminated inside a transaction, and the pool goes on', async () => {
  const url = await emptyPgDatabase();
  const pool = createPool(url);
  onCleanup(() => pool.end());
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  onCleanup(() => admin.end());
  let pid = 0;
  for (let round = 0; round < 5; round += 1) {
    await expect(
      inTransaction(pool, async (client) => {
        pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        await client.query('SELECT 1');
      }),
    ).rejects.toThrow();
    // The backend is gone; the process is alive, and the next transaction gets a new one.
    await waitFor(
      async () =>
        (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0,
      { what: 'the terminated backend to go' },
    );
    const next = await inTransaction(pool, async (client) => {
      return (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    });
    expect(next).not.toBe(pid);
  }
});
