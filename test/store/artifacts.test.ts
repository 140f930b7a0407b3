import { createHash } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { manualClock, systemClock, type Clock } from '../../src/clock.js';
import type {
  ArtifactRecord as QueueArtifactRecord,
  SqliteJobStore,
} from '../../src/queue/index.js';
import {
  createArtifactStore,
  createRedactor,
  registerOrDiscard,
  utf8Cut,
  type ArtifactIndex,
  type ArtifactRecord,
  type ArtifactStore,
} from '../../src/store/index.js';
import { tempDir, tempStore } from '../helpers/temp.js';

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const mode = (path: string) => statSync(path).mode & 0o777;

function setup(options: { clock?: Clock; secrets?: string[]; maxBytes?: number } = {}) {
  const clock = options.clock ?? systemClock;
  const root = join(tempDir(), 'home', 'artifacts');
  const artifacts = createArtifactStore({
    root,
    clock,
    redactor: createRedactor({ home: '/home/alice', secrets: options.secrets ?? [] }),
    ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
  });
  return { root, artifacts, clock };
}

/** A running noop job and its lease. */
async function claimedJob(store: SqliteJobStore, leaseMs = 60_000) {
  await store.enqueue({ kind: 'noop', payload: {} });
  const [job] = await store.claim('noop', 'w1', 1, leaseMs);
  if (!job) throw new Error('nothing claimed');
  return { id: job.id, attempt: job.attempt };
}

function artifactRow(store: SqliteJobStore, id: string) {
  return store.database.sqlite.prepare('SELECT * FROM artifacts WHERE id = ?').get(id) as
    Record<string, unknown> | undefined;
}

/** What JobStore.getArtifact would be, over the same table. */
function indexOf(store: SqliteJobStore): ArtifactIndex {
  return {
    getArtifact: async (id) =>
      store.database.sqlite
        .prepare(
          'SELECT id, name, media_type AS mediaType, sha256, size, rel_path AS relPath FROM artifacts WHERE id = ?',
        )
        .get(id) as ArtifactRecord | undefined,
  };
}

async function drain(stream: Readable): Promise<{ bytes: Buffer; error?: unknown }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { bytes: Buffer.concat(chunks) };
  } catch (error) {
    return { bytes: Buffer.concat(chunks), error };
  }
}

const filePath = (root: string, record: ArtifactRecord) => join(root, record.relPath);

describe('artifact store', () => {
  it('writes an artifact that the completion registers and that reads back verified', async () => {
    const store = tempStore();
    const { artifacts } = setup();
    const lease = await claimedJob(store);
    const bytes = Buffer.from('diff --git a/x b/x\n+hello\n');

    const record = await artifacts.write({
      name: 'candidate.patch',
      mediaType: 'text/x-diff',
      bytes,
    });
    const queued: QueueArtifactRecord = record; // the shape JobStore.complete takes
    expect(await store.complete(lease, { ok: true }, [queued])).toBe(true);

    expect(artifactRow(store, record.id)).toEqual({
      id: record.id,
      job_id: lease.id,
      attempt: lease.attempt,
      name: 'candidate.patch',
      media_type: 'text/x-diff',
      sha256: sha256(bytes),
      size: bytes.length,
      rel_path: `${record.id}/candidate.patch`,
      created_at: expect.any(Number),
    });
    expect(await artifacts.read(record)).toEqual(bytes);
    const download = await artifacts.open(record);
    expect(download.size).toBe(bytes.length);
    expect(await drain(download.stream)).toEqual({ bytes });
  });

  it('keeps the root and each artifact directory 0700, each file 0600, and no temp files', async () => {
    const { root, artifacts } = setup();
    const record = await artifacts.write({
      name: 'out.bin',
      mediaType: 'application/octet-stream',
      bytes: Buffer.from([0, 1, 2, 255]),
    });
    expect(mode(root)).toBe(0o700);
    expect(mode(join(root, record.id))).toBe(0o700);
    expect(mode(filePath(root, record))).toBe(0o600);
    expect(readdirSync(join(root, record.id))).toEqual(['out.bin']);
    expect(readFileSync(filePath(root, record))).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it('gives every write a fresh directory, even for the same name and content', async () => {
    const { artifacts } = setup();
    const a = await artifacts.write({ name: 'log.txt', mediaType: 'text/plain', bytes: 'same' });
    const b = await artifacts.write({ name: 'log.txt', mediaType: 'text/plain', bytes: 'same' });
    expect(a.id).not.toBe(b.id);
    expect(a.sha256).toBe(b.sha256);
    expect(a.relPath).not.toBe(b.relPath);
  });

  it('discards only the new bytes when registration fails, never an earlier identical artifact', async () => {
    const clock = manualClock();
    const store = tempStore({ clock });
    const { root, artifacts } = setup({ clock });
    const input = { name: 'report.json', mediaType: 'application/json', bytes: '{"passed":3}' };

    const first = await claimedJob(store);
    const earlier = await artifacts.write(input);
    expect(await store.complete(first, null, [earlier])).toBe(true);

    const second = await claimedJob(store, 1_000);
    const fresh = await artifacts.write(input);
    expect(fresh.sha256).toBe(earlier.sha256);
    clock.advance(5_000);
    await store.reclaimExpired(); // the second worker's lease is lost
    expect(await store.complete(second, null, [fresh])).toBe(false);
    await artifacts.discard(fresh);

    expect(existsSync(join(root, fresh.id))).toBe(false);
    expect(artifactRow(store, fresh.id)).toBeUndefined();
    expect(artifactRow(store, earlier.id)).toMatchObject({ job_id: first.id });
    expect((await artifacts.read(earlier)).toString()).toBe('{"passed":3}');
    expect(readdirSync(root)).toEqual([earlier.id]);
    await expect(artifacts.discard(fresh)).resolves.toBeUndefined(); // twice is fine
  });

  it('registerOrDiscard discards when registration returns false or throws, and keeps on success', async () => {
    const store = tempStore();
    const { root, artifacts } = setup();
    const write = () => artifacts.write({ name: 'a.txt', mediaType: 'text/plain', bytes: 'x' });

    const lost = await write();
    expect(await registerOrDiscard(artifacts, [lost], async () => false)).toBe(false);
    expect(existsSync(join(root, lost.id))).toBe(false);

    const failing = await write();
    const boom = registerOrDiscard(artifacts, [failing], async () => {
      throw new Error('database is locked');
    });
    await expect(boom).rejects.toThrow('database is locked');
    expect(existsSync(join(root, failing.id))).toBe(false);

    const kept = await write();
    const lease = await claimedJob(store);
    const done = await registerOrDiscard(artifacts, [kept], () =>
      store.complete(lease, null, [kept]),
    );
    expect(done).toBe(true);
    expect(await artifacts.read(kept)).toEqual(Buffer.from('x'));
  });

  it('refuses names that could escape or confuse the artifact directory', async () => {
    const { artifacts } = setup();
    for (const name of ['', 'a/b', 'a\\b', 'a\0b', '..', 'x..y', 'line\nbreak', 'n'.repeat(201)]) {
      await expect(
        artifacts.write({ name, mediaType: 'text/plain', bytes: 'x' }),
        JSON.stringify(name),
      ).rejects.toMatchObject({ code: 'ARTIFACT_INVALID' });
    }
    await expect(
      artifacts.write({ name: 'ok.txt', mediaType: 'not a type', bytes: 'x' }),
    ).rejects.toMatchObject({ code: 'ARTIFACT_INVALID' });
    const odd = await artifacts.write({
      name: '.résumé v2.txt',
      mediaType: 'text/plain',
      bytes: 'x',
    });
    expect(odd.name).toBe('.résumé v2.txt');
    expect(odd.relPath).toBe(`${odd.id}/_r_sum__v2.txt`);
  });

  it('reads verified slices, keeping only the slice, and refuses one of changed bytes', async () => {
    const { root, artifacts } = setup();
    // Larger than one read chunk, so that slices straddle chunk edges.
    const bytes = Buffer.from(
      Array.from({ length: 300_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(''),
    );
    const record = await artifacts.write({ name: 'log.txt', mediaType: 'text/plain', bytes });
    for (const [offset, length] of [
      [0, 10],
      [65_530, 20],
      [131_000, 100_000],
      [299_990, 100],
      [300_000, 5],
      [400_000, 5],
      [5, 0],
    ] as const) {
      const slice = await artifacts.readSlice(record, { offset, length });
      expect(slice.equals(bytes.subarray(offset, offset + length)), `${offset}+${length}`).toBe(
        true,
      );
    }
    await expect(artifacts.readSlice(record, { offset: -1, length: 1 })).rejects.toMatchObject({
      code: 'USAGE',
    });
    const changed = Buffer.from(bytes);
    changed[250_000] = 0x41;
    writeFileSync(filePath(root, record), changed);
    await expect(artifacts.readSlice(record, { offset: 0, length: 10 })).rejects.toMatchObject({
      code: 'ARTIFACT_INVALID',
      message: expect.stringContaining('SHA-256'),
    });
  });

  it('ends a utf8 slice before a character it would split, so that slices decode alone', async () => {
    const { artifacts } = setup();
    const text = 'ok é ✓ 😀 done\n'.repeat(4);
    const record = await artifacts.write({ name: 'log.txt', mediaType: 'text/plain', bytes: text });
    for (const length of [1, 2, 3, 5, 7, 64]) {
      let offset = 0;
      let joined = '';
      while (offset < record.size) {
        const slice = await artifacts.readSlice(record, { offset, length, utf8: true });
        expect(slice.length).toBeGreaterThan(0);
        expect(slice.length).toBeLessThanOrEqual(length);
        if (length >= 4) expect(slice.toString('utf8')).not.toContain('\ufffd');
        joined += slice.toString('latin1');
        offset += slice.length;
      }
      expect(Buffer.from(joined, 'latin1').toString('utf8'), `length ${length}`).toBe(text);
    }
  });

  it('refuses to write or read more than the byte limit', async () => {
    const { artifacts } = setup({ maxBytes: 8 });
    await expect(
      artifacts.write({
        name: 'big.bin',
        mediaType: 'application/octet-stream',
        bytes: 'x'.repeat(9),
      }),
    ).rejects.toMatchObject({ code: 'ARTIFACT_INVALID' });
    const record = await artifacts.write({
      name: 'b.bin',
      mediaType: 'application/octet-stream',
      bytes: '12345678',
    });
    await expect(artifacts.read(record, { maxBytes: 4 })).rejects.toMatchObject({
      code: 'ARTIFACT_INVALID',
      message: expect.stringContaining('more than the limit of 4'),
    });
  });

  describe('refuses bytes that changed on disk', () => {
    async function written(artifacts: ArtifactStore, size = 100) {
      const bytes = Buffer.alloc(size, 7);
      return artifacts.write({ name: 'data.bin', mediaType: 'application/octet-stream', bytes });
    }

    async function expectRefused(
      artifacts: ArtifactStore,
      record: ArtifactRecord,
      code: 'ARTIFACT_INVALID' | 'ARTIFACT_NOT_FOUND',
      message?: string,
    ) {
      const expected = {
        code,
        ...(message === undefined ? {} : { message: expect.stringContaining(message) }),
      };
      await expect(artifacts.read(record)).rejects.toMatchObject(expected);
      await expect(artifacts.open(record)).rejects.toMatchObject(expected);
    }

    it('changed bytes of the same size', async () => {
      const { root, artifacts } = setup();
      const record = await written(artifacts);
      writeFileSync(filePath(root, record), Buffer.alloc(100, 8));
      await expectRefused(artifacts, record, 'ARTIFACT_INVALID', 'SHA-256');
    });

    it('a changed size', async () => {
      const { root, artifacts } = setup();
      const record = await written(artifacts);
      appendFileSync(filePath(root, record), 'more');
      await expectRefused(
        artifacts,
        record,
        'ARTIFACT_INVALID',
        '104 bytes on disk, registered as 100',
      );
    });

    it('a file replaced by a symbolic link, even to identical bytes', async () => {
      const { root, artifacts } = setup();
      const record = await written(artifacts);
      const outside = join(tempDir(), 'copy.bin');
      writeFileSync(outside, Buffer.alloc(100, 7));
      rmSync(filePath(root, record));
      symlinkSync(outside, filePath(root, record));
      await expectRefused(artifacts, record, 'ARTIFACT_INVALID', 'symbolic link');
    });

    it('an artifact directory replaced by a symbolic link', async () => {
      const { root, artifacts } = setup();
      const record = await written(artifacts);
      const elsewhere = join(tempDir(), 'moved');
      renameSync(join(root, record.id), elsewhere);
      symlinkSync(elsewhere, join(root, record.id));
      await expectRefused(artifacts, record, 'ARTIFACT_INVALID', 'not a plain directory');
    });

    it('a removed file or directory', async () => {
      const { root, artifacts } = setup();
      const a = await written(artifacts);
      const b = await written(artifacts);
      rmSync(filePath(root, a));
      rmSync(join(root, b.id), { recursive: true });
      await expectRefused(artifacts, a, 'ARTIFACT_NOT_FOUND');
      await expectRefused(artifacts, b, 'ARTIFACT_NOT_FOUND');
    });

    it('a record whose path climbs out or names another artifact', async () => {
      const { root, artifacts } = setup();
      const record = await written(artifacts);
      const other = await written(artifacts);
      const forged = [
        { ...record, relPath: `${record.id}/../${other.id}/data.bin` },
        { ...record, relPath: `../${record.id}/data.bin` },
        { ...record, relPath: `${other.id}/data.bin` },
        { ...record, relPath: join(root, record.relPath) },
        { ...record, relPath: `${record.id}\\data.bin` },
        { ...record, relPath: `${record.id}/..` },
        { ...record, id: '../x', relPath: '../x/data.bin' },
        { ...record, sha256: 'NOT-HEX' },
      ];
      for (const bad of forged) await expectRefused(artifacts, bad, 'ARTIFACT_INVALID');
      await expect(
        artifacts.discard({ ...record, relPath: `${other.id}/data.bin` }),
      ).rejects.toMatchObject({
        code: 'ARTIFACT_INVALID',
      });
      expect(await artifacts.read(other)).toHaveLength(100);
      expect(await artifacts.read(record)).toHaveLength(100);
    });

    it('bytes changed after open() verified them: the stream errors before its last chunk', async () => {
      const { root, artifacts } = setup();
      const size = 300 * 1024;
      const record = await written(artifacts, size);
      const download = await artifacts.open(record);
      const bytes = Buffer.alloc(size, 7);
      bytes[size - 1] = 9;
      writeFileSync(filePath(root, record), bytes); // in place: same inode, same size
      const { bytes: received, error } = await drain(download.stream);
      expect(error).toMatchObject({
        code: 'ARTIFACT_INVALID',
        message: expect.stringContaining('SHA-256'),
      });
      expect(received.length).toBeLessThan(size);
    });
  });

  it('never stores a planted API key written through a JSON log', async () => {
    const planted = 'sk-proj-PLANTED0123456789abcdefghijklmn';
    const envOnly = 'proctor-canary-5b1e0c77d2';
    const { root, artifacts } = setup({ secrets: [envOnly] });
    const events = [
      {
        event: 'request',
        headers: { Authorization: `Bearer ${planted}` },
        url: 'https://api.x/v1',
      },
      { event: 'config', env: { OPENAI_API_KEY: planted, CANARY: envOnly }, cwd: '/home/alice/t' },
      { event: 'exec', argv: ['solver', `--api-key=${planted}`], note: `key is ${planted}` },
      { event: 'tool', arguments: JSON.stringify({ token: envOnly, path: 'a.ts' }) },
    ];
    const log = events.map((e) => JSON.stringify(e)).join('\n') + '\n';
    const nd = await artifacts.write({
      name: 'solver.jsonl',
      mediaType: 'application/x-ndjson',
      bytes: log,
    });
    const doc = await artifacts.write({
      name: 'events.json',
      mediaType: 'application/json; charset=utf-8',
      bytes: Buffer.from(JSON.stringify(events, null, 2)),
    });
    const plain = await artifacts.write({
      name: 'stdout.txt',
      mediaType: 'text/plain',
      bytes: log,
    });

    for (const record of [nd, doc, plain]) {
      const stored = readFileSync(filePath(root, record), 'utf8');
      expect(stored).not.toContain(planted);
      expect(stored).not.toContain(envOnly);
      expect(stored).not.toContain('/home/alice');
      expect(stored).toContain('[REDACTED]');
      expect(record.sha256).toBe(sha256(stored));
    }
    const lines = readFileSync(filePath(root, nd), 'utf8').trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line) as unknown)[1]).toEqual({
      event: 'config',
      env: { OPENAI_API_KEY: '[REDACTED]', CANARY: '[REDACTED]' },
      cwd: '~/t',
    });
  });

  it('stores binary media types byte for byte unless asked to redact', async () => {
    const { root, artifacts } = setup({ secrets: ['canary-123456'] });
    const bytes = Buffer.from('canary-123456 \xff', 'latin1');
    const raw = await artifacts.write({
      name: 'a.bin',
      mediaType: 'application/octet-stream',
      bytes,
    });
    expect(readFileSync(filePath(root, raw))).toEqual(bytes);
    const asked = await artifacts.write({
      name: 'b.bin',
      mediaType: 'application/octet-stream',
      bytes,
      redact: true,
    });
    expect(readFileSync(filePath(root, asked), 'utf8')).not.toContain('canary-123456');
    const exact = await artifacts.write({
      name: 'c.txt',
      mediaType: 'text/plain',
      bytes,
      redact: false,
    });
    expect(readFileSync(filePath(root, exact))).toEqual(bytes);
  });

  it('sweeps old unregistered artifact directories and nothing else', async () => {
    const clock = manualClock(Date.now());
    const store = tempStore({ clock });
    const { root, artifacts } = setup({ clock });
    const lease = await claimedJob(store);
    const registered = await artifacts.write({
      name: 'kept.txt',
      mediaType: 'text/plain',
      bytes: 'k',
    });
    expect(await store.complete(lease, null, [registered])).toBe(true);
    const orphan = await artifacts.write({
      name: 'orphan.txt',
      mediaType: 'text/plain',
      bytes: 'o',
    });
    mkdirSync(join(root, 'not-an-artifact'));
    clock.advance(25 * 60 * 60 * 1000);
    const young = await artifacts.write({ name: 'young.txt', mediaType: 'text/plain', bytes: 'y' });

    // Bounded: a sweep stops after its limit of removals.
    expect(await artifacts.sweep(indexOf(store), { limit: 0 })).toBe(0);
    expect(existsSync(join(root, orphan.id))).toBe(true);
    expect(await artifacts.sweep(indexOf(store))).toBe(1);
    expect(readdirSync(root).sort()).toEqual([registered.id, young.id, 'not-an-artifact'].sort());
    expect(existsSync(join(root, orphan.id))).toBe(false);
    expect(await artifacts.read(registered)).toEqual(Buffer.from('k'));
  });
});

describe('utf8Cut', () => {
  const cut = (...bytes: number[]) => utf8Cut(Uint8Array.from(bytes));

  it('keeps a slice that ends on a whole character', () => {
    expect(cut(0x61, 0x62)).toBe(2);
    expect(cut(0x61, 0xc3, 0xa9)).toBe(3); // a é
    expect(cut(0xf0, 0x9f, 0x98, 0x80)).toBe(4); // 😀
  });

  it('cuts before a character whose bytes run past the end', () => {
    expect(cut(0x61, 0xc3)).toBe(1);
    expect(cut(0x61, 0xe2, 0x9c)).toBe(1); // a, then 2 of ✓'s 3 bytes
    expect(cut(0x61, 0x62, 0xf0, 0x9f, 0x98)).toBe(2);
  });

  it('never cuts to nothing, nor inside bytes that are not UTF-8', () => {
    expect(cut(0xe2, 0x9c)).toBe(2);
    expect(cut(0x80, 0x80, 0x80, 0x80, 0x80)).toBe(5);
    expect(cut()).toBe(0);
  });
});
