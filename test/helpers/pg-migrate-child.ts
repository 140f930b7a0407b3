// A process that migrates a PostgreSQL database at a signal: connects, prints "ready", waits
// for the file named by argv[3] to exist, then migrates and prints how many migrations it
// applied. Two of them started at once race for the same empty database.
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPool, migratePg } from '../../src/queue/pg/db.js';

const [url, go] = process.argv.slice(2) as [string, string];
const pool = createPool(url);
await pool.query('SELECT 1');
process.stdout.write('ready\n');
while (!existsSync(go)) await sleep(5);
const applied = await migratePg(pool, url);
process.stdout.write(`applied ${applied}\n`);
await pool.end();
