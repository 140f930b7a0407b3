// File digests remembered by a process (a worker's runtime): the content hash of a bundle is
// taken on every job, and a bundle whose environment/ holds a large repository would be read
// whole each time. A file whose device, inode, size, mtime and ctime (nanoseconds) are those
// recorded is taken as unchanged and not read again (the bundle walk's lstat is what is looked
// up, so such a file is not even opened); a file written in the last RACY_NS when recorded is
// not remembered, since a second write within the clock's granularity would keep its mtime.
// Bounded: past `limit` entries the record starts afresh.
import type { BigIntStats } from 'node:fs';

const RACY_NS = 2_000_000_000n;

export interface FileDigests {
  /** The recorded digest of `path` when `stat` matches the record, else undefined. */
  get(path: string, stat: BigIntStats): string | undefined;
  /** Records a digest read from a file with this `stat` (taken before the read). */
  set(path: string, stat: BigIntStats, digest: string): void;
}

const identity = (s: BigIntStats) => `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;

export function createFileDigests(
  options: { limit?: number; nowNs?: () => bigint } = {},
): FileDigests {
  const limit = options.limit ?? 200_000;
  const nowNs = options.nowNs ?? (() => BigInt(Date.now()) * 1_000_000n);
  const records = new Map<string, { id: string; digest: string }>();
  return {
    get(path, stat) {
      const record = records.get(path);
      return record?.id === identity(stat) ? record.digest : undefined;
    },
    set(path, stat, digest) {
      const now = nowNs();
      if (now - stat.mtimeNs < RACY_NS || now - stat.ctimeNs < RACY_NS) return;
      if (records.size >= limit) records.clear();
      records.set(path, { id: identity(stat), digest });
    },
  };
}
