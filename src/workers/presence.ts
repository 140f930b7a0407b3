// Which worker processes serve a home: each `proctor worker` or `serve` leaves a file named
// by its pid in <home>/workers while it runs. A `--wait` command that finds a live one only
// enqueues and polls; otherwise it runs workers in-process until its own jobs end.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

const dirOf = (home: string) => join(home, 'workers');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Records this process as a worker of `home`; returns the function that withdraws it. */
export function announceWorker(home: string, owner: string): () => void {
  const dir = dirOf(home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${hostname()}-${process.pid}`);
  writeFileSync(file, `${owner}\n`, { mode: 0o600 });
  return () => rmSync(file, { force: true });
}

/** The pids of live workers of `home` on this host; stale entries are removed. */
export function liveWorkers(home: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dirOf(home));
  } catch {
    return [];
  }
  const live: number[] = [];
  const prefix = `${hostname()}-`;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (!Number.isInteger(pid) || pid <= 0) continue;
    if (pid !== process.pid && alive(pid)) live.push(pid);
    else if (pid !== process.pid) rmSync(join(dirOf(home), name), { force: true });
  }
  return live;
}
