// Which processes run jobs of a home, proved by a lock that dies with them. Each `proctor
// worker` or `serve` (role `worker`), and each in-process pool of a `--wait` command (role
// `pool`), holds an exclusive transaction on its own small SQLite file in <home>/workers for
// its whole life. SQLite takes POSIX record locks, which the kernel drops when the process
// ends, even by SIGKILL; a pid proves nothing, since a dead worker's pid may name any live
// process by the time anyone looks. A checker opens a file with busy_timeout 0: SQLITE_BUSY
// means its owner lives; a file it can read belongs to a dead process, and is removed once
// that owner's jobs have been reclaimed.
//
// SQLite is used here only as a portable holder of that lock (no table of the queue, no
// migration): it is host-local by nature, whatever store holds the jobs. Files of other hosts
// (owner ids that start with another host identity) are left alone, as their locks cannot be
// judged from here.
import Database from 'better-sqlite3';
import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { machineHost } from '../config.js';
import { join } from 'node:path';

/** `worker` serves the home until stopped; `pool` runs a `--wait` command's jobs and stops. */
export type PresenceRole = 'worker' | 'pool';

const dirOf = (home: string) => join(home, 'workers');
const fileName = (owner: string, role: PresenceRole) => `${role}-${encodeURIComponent(owner)}.lock`;
const NAME = /^(worker|pool)-(.+)\.lock$/;
// What Proctor wrote before presence locks: `<host>-<pid>`. It proves nothing, and is removed.
const LEGACY = /^(.+)-[0-9]+$/;

// The lock lives as long as its connection: a connection that only a forgotten closure
// referenced would be closed by the garbage collector, and the live worker would look dead.
const held = new Set<Database.Database>();

function ownerHost(owner: string): string | undefined {
  return owner.split('/')[0];
}

/**
 * Records this process as running jobs of `home` under `owner`, for as long as it lives (or
 * until the returned function withdraws it). Call it before the pool claims anything, so
 * every lease the owner holds is backed by the lock.
 */
export function announceWorker(
  home: string,
  owner: string,
  role: PresenceRole = 'worker',
): () => void {
  const dir = dirOf(home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, fileName(owner, role));
  // Locked under a name checkers skip, then renamed (the lock stays with the inode): a
  // checker never sees the file unlocked, so never removes a starting worker's file.
  const pending = join(dir, `.${process.pid}-${encodeURIComponent(owner)}.tmp`);
  const db = new Database(pending);
  try {
    db.pragma('journal_mode = DELETE');
    db.exec('CREATE TABLE IF NOT EXISTS presence (owner TEXT NOT NULL, role TEXT NOT NULL)');
    db.prepare('INSERT INTO presence (owner, role) VALUES (?, ?)').run(owner, role);
    // In rollback-journal mode an exclusive transaction bars even readers of the file.
    db.exec('BEGIN EXCLUSIVE');
    renameSync(pending, file);
  } catch (error) {
    db.close();
    rmSync(pending, { force: true });
    throw error;
  }
  held.add(db);
  return () => {
    if (!held.delete(db)) return;
    rmSync(file, { force: true });
    db.close();
  };
}

type Probe = 'held' | 'free' | 'gone';

/**
 * Whether some process holds the lock of `path`. SQLite asks for the shared lock before it
 * reads a byte, so any answer but SQLITE_BUSY (data read, or not a database) means no one
 * holds it: such a file proves nothing.
 */
function probe(path: string): Probe {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: 0 });
  } catch {
    return 'gone'; // removed meanwhile (or never there): nothing to judge
  }
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return 'free';
  } catch (error) {
    return (error as { code?: string }).code === 'SQLITE_BUSY' ? 'held' : 'free';
  } finally {
    db.close();
  }
}

interface Entry {
  name: string;
  owner: string;
  role: PresenceRole;
}

/** The presence files of `host` in `home`, and the names of old pid-named ones. */
function entries(home: string, host: string): { current: Entry[]; legacy: string[] } {
  let names: string[];
  try {
    names = readdirSync(dirOf(home));
  } catch {
    return { current: [], legacy: [] };
  }
  const current: Entry[] = [];
  const legacy: string[] = [];
  for (const name of names) {
    const match = NAME.exec(name);
    if (!match) {
      if (LEGACY.exec(name)?.[1] === host) legacy.push(name);
      continue;
    }
    const owner = decodeOwner(match[2] as string);
    if (owner !== undefined && ownerHost(owner) === host)
      current.push({ name, owner, role: match[1] as PresenceRole });
  }
  return { current, legacy };
}

/**
 * The owners of live workers (role `worker`) of `home` on `host` (this host's identity,
 * ProctorConfig.host; default the machine's hostname). Only reads: a dead
 * owner's file stays until its jobs are reclaimed (see sweepPresence), so that the lock can
 * still prove it dead when its pid has been reused. A `--wait` command calls this every
 * second or two; it costs a directory read and one open per file.
 */
export function liveWorkers(home: string, host: string = machineHost()): string[] {
  return entries(home, host)
    .current.filter((e) => e.role === 'worker' && probe(join(dirOf(home), e.name)) === 'held')
    .map((e) => e.owner)
    .sort();
}

/**
 * What the lock of `owner` (either role) says: `alive` while its process holds it, `dead`
 * once it is free, `unknown` when there is no file (an owner from before presence locks).
 */
export function ownerPresence(home: string, owner: string): 'alive' | 'dead' | 'unknown' {
  let dead = false;
  for (const role of ['worker', 'pool'] as const) {
    const state = probe(join(dirOf(home), fileName(owner, role)));
    if (state === 'held') return 'alive';
    if (state === 'free') dead = true;
  }
  return dead ? 'dead' : 'unknown';
}

/**
 * Removes the files of dead owners that hold no running job any more (`running`: the owners
 * that still do, read after the dead ones' jobs were reclaimed), and old pid-named files,
 * which prove nothing; only those of `host`. A pool runs it at start.
 */
export function sweepPresence(
  home: string,
  running: ReadonlySet<string>,
  host: string = machineHost(),
): void {
  const dir = dirOf(home);
  const { current, legacy } = entries(home, host);
  for (const name of legacy) rmSync(join(dir, name), { force: true });
  for (const entry of current) {
    if (running.has(entry.owner)) continue;
    if (probe(join(dir, entry.name)) === 'free') rmSync(join(dir, entry.name), { force: true });
  }
}

function decodeOwner(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}
