// Lease owner ids: "<hostname>/<pid>/<random>". The random part tells two pools in one
// process apart; host and pid let a worker starting on the same host see that an earlier
// owner's process is gone and reclaim its jobs at once, instead of waiting out the lease.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export function createOwnerId(): string {
  return `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
}

/** True only when `owner` ran on this host in a process that no longer exists. */
export function isDeadLocalOwner(owner: string): boolean {
  const parts = owner.split('/');
  if (parts.length !== 3 || parts[0] !== hostname()) return false;
  const pid = Number(parts[1]);
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
