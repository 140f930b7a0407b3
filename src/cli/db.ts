// `proctor db migrate`: applies the schema migrations the job database lacks, and says where.
// Every command migrates on first use anyway (PostgreSQL under an advisory lock, so hosts
// starting at once do not race); this lets an operator do it once, before starting hosts.
import { displayUrl, openSqliteJobStore } from '../queue/index.js';
import { openPgJobStore } from '../queue/pg/store.js';
import type { CommandContext } from './context.js';

export async function migrateCommand(context: CommandContext): Promise<number> {
  const { config, io, clock } = context;
  if (config.dbUrl !== undefined) {
    const store = openPgJobStore(config.dbUrl);
    try {
      const applied = await store.migrate();
      io.out(`${displayUrl(config.dbUrl)}: up to date (${applied} migration(s) applied)`);
    } finally {
      await store.close();
    }
    return 0;
  }
  // Opening the file applies its migrations, in one BEGIN IMMEDIATE transaction.
  const store = openSqliteJobStore(config.dbPath, { clock, synchronous: config.queue.synchronous });
  await store.close();
  io.out(`${config.dbPath}: up to date`);
  return 0;
}
