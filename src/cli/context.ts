// What every command gets: its output streams, the resolved configuration, and a way to open
// the job store (opened lazily, so `--help` and usage errors never touch the database).
import { systemClock, type Clock } from '../clock.js';
import { loadConfig, resolveHome, type ProctorConfig } from '../config.js';
import { openSqliteJobStore, type JobStore } from '../queue/index.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text + '\n'),
  err: (text) => process.stderr.write(text + '\n'),
};

export interface CommandContext {
  io: Io;
  clock: Clock;
  config: ProctorConfig;
  openStore(): JobStore;
}

export function createContext(homeFlag: string | undefined, io: Io): CommandContext {
  const config = loadConfig(resolveHome(homeFlag));
  const clock = systemClock;
  return {
    io,
    clock,
    config,
    openStore: () =>
      openSqliteJobStore(config.dbPath, { clock, synchronous: config.queue.synchronous }),
  };
}

export function parseJobIds(values: string[]): number[] {
  return values.map((value) => {
    if (!/^[1-9][0-9]{0,15}$/.test(value)) {
      throw new UsageError(`JOB must be a job id (a positive integer), got \`${value}\``);
    }
    return Number(value);
  });
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}
