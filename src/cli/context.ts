// What every command gets: its output streams, the resolved configuration, and a way to open
// the job store (opened lazily, so usage errors found by the command never touch the
// database: the store's modules load and its database opens on its first call). main.ts loads
// this module only once a command's action runs, never for `--help`.
import { systemClock, type Clock } from '../clock.js';
import { loadConfig, resolveHome, type ProctorConfig } from '../config.js';
import { lazyJobStore } from '../queue/lazy.js';
import type { JobStore } from '../queue/store.js';
import type { Io } from './io.js';

export interface CommandContext {
  io: Io;
  clock: Clock;
  config: ProctorConfig;
  openStore(): JobStore;
}

export function createContext(
  homeFlag: string | undefined,
  io: Io,
  dbFlag?: string,
): CommandContext {
  const config = loadConfig(resolveHome(homeFlag), dbFlag === undefined ? {} : { db: dbFlag });
  const clock = systemClock;
  return {
    io,
    clock,
    config,
    openStore: () =>
      lazyJobStore(async () => (await import('../queue/open.js')).openJobStore(config, clock)),
  };
}
