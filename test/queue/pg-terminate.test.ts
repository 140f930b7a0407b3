// A connection terminated while a transaction holds it (pg_terminate_backend, as an admin or a
// server shutdown does): the statement in flight fails, and the connection's FATAL error, which
// pg emits on the client as an 'error' event and can come after the client is released, is
// heard rather than killing the process (an unheard 'error' event is an uncaught exception,
// which fails this run). The pool goes on with a fresh connection.
import { createServer, type AddressInfo, type Socket } from 'node:net';
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

/** One PostgreSQL wire message: its type byte, then its length (itself included) and body. */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

it('hears a connection whose handshake ends and whose backend is terminated in one read', async () => {
  // A scripted server on loopback: it completes the handshake (AuthenticationOk, BackendKeyData,
  // ReadyForQuery) and sends a FATAL 57P01 in the same write, as a server terminating a backend
  // just as it connects can. pg hands the client out and emits the error in one parse, before
  // any promise continuation: the pool must have heard the client from birth.
  const int32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    return b;
  };
  const fields = (pairs: Array<[string, string]>) =>
    Buffer.concat([
      ...pairs.map(([k, v]) => Buffer.from(`${k}${v}\0`, 'latin1')),
      Buffer.from([0]),
    ]);
  const answer = Buffer.concat([
    message('R', int32(0)),
    message('K', Buffer.concat([int32(4242), int32(1)])),
    message('Z', Buffer.from('I')),
    message(
      'E',
      fields([
        ['S', 'FATAL'],
        ['V', 'FATAL'],
        ['C', '57P01'],
        ['M', 'terminating connection due to administrator command'],
      ]),
    ),
  ]);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => socket.end(answer)); // the StartupMessage
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  const pool = createPool(`postgres://u:p@127.0.0.1:${port}/db`);
  onCleanup(() => pool.end());
  const client = await pool.connect();
  // The connection is gone, and says so to the next statement; the process lives.
  await expect(client.query('SELECT 1')).rejects.toThrow();
  client.release(true);
});
