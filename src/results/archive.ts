// A reproducible .tar.gz: the same entries give the same bytes, on any day and by any user.
// Entries are sorted by path, every mtime is fixed, owners are 0/0 with no names, modes are
// 0644 (files) and 0755 (folders), and the gzip header carries no time, no name and OS
// "unknown" (zlib's deflate output for the same input and level is itself deterministic).
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';

/** 2000-01-01T00:00:00Z: any fixed time would do; 0 trips tools that read it as "unset". */
export const ARCHIVE_MTIME = new Date(946_684_800_000);

export interface ArchiveEntry {
  path: string;
  bytes: Buffer;
}

function folders(paths: readonly string[]): string[] {
  const all = new Set<string>();
  for (const path of paths) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) all.add(parts.slice(0, i).join('/'));
  }
  return [...all];
}

/** The archive of `entries` under one top folder `root`, gzipped. */
export async function reproducibleTarGz(
  root: string,
  entries: readonly ArchiveEntry[],
): Promise<Buffer> {
  const seen = new Set<string>();
  for (const e of entries) {
    if (seen.has(e.path)) throw new Error(`duplicate archive entry ${e.path}`);
    seen.add(e.path);
  }
  const files = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const dirs = folders(files.map((f) => f.path));
  const all = [
    ...[root, ...dirs.map((d) => `${root}/${d}`)].map((name) => ({ name, dir: true as const })),
    ...files.map((f) => ({ name: `${root}/${f.path}`, dir: false as const, bytes: f.bytes })),
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    tar.on('end', resolve);
    tar.on('error', reject);
  });
  const common = { mtime: ARCHIVE_MTIME, uid: 0, gid: 0, uname: '', gname: '' };
  for (const entry of all) {
    if (entry.dir) tar.entry({ ...common, name: entry.name, type: 'directory', mode: 0o755 });
    else tar.entry({ ...common, name: entry.name, type: 'file', mode: 0o644 }, entry.bytes);
  }
  tar.finalize();
  await ended;
  const gz = gzipSync(Buffer.concat(chunks), { level: 9 });
  // RFC 1952 header: bytes 4-7 MTIME (Node writes 0 already), byte 9 OS: 255 = unknown, so
  // the bytes do not depend on the platform that wrote them.
  gz.writeUInt32LE(0, 4);
  gz[9] = 0xff;
  return gz;
}
