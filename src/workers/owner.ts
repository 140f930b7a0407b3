// Lease owner ids: "<host>/<pid>/<random>", where host is the host identity (ProctorConfig.host;
// the machine's hostname by default). The random part tells two pools in one process apart;
// the host lets a worker starting on the same host judge whether an earlier owner is gone and
// reclaim its jobs at once, instead of waiting out the lease. Hosts that share one machine
// (network namespaces, each with its own engine) have distinct identities, so none of them
// judges another's pids.
import { randomBytes } from 'node:crypto';
import { machineHost } from '../config.js';
import { ownerPresence } from './presence.js';

export function createOwnerId(host: string = machineHost()): string {
  return `${host}/${process.pid}/${randomBytes(4).toString('hex')}`;
}

/**
 * True only when `owner` ran on this host (`host`, default the machine's hostname) in a process that no longer exists. With `home`,
 * the owner's presence lock decides (see presence.ts): it is freed when its process dies,
 * even when the pid has since been reused. Without a lock file (an owner from before presence
 * locks, or a file already removed) only the pid can tell, and a reused pid keeps the jobs
 * until their lease expires: later, never wrongly.
 */
export function isDeadLocalOwner(
  owner: string,
  home?: string,
  host: string = machineHost(),
): boolean {
  const parts = owner.split('/');
  if (parts.length !== 3 || parts[0] !== host) return false;
  const pid = Number(parts[1]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (home !== undefined) {
    // Before the pid test: a dead worker's pid may be this very process's now.
    const presence = ownerPresence(home, owner);
    if (presence !== 'unknown') return presence === 'dead';
  }
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
