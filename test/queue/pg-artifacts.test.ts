// Artifacts in PostgreSQL (src/queue/pg/artifacts.ts, blobs.ts): bytes stored content-addressed
// in `artifact_blobs`, in the transaction that registers the rows naming them, on a real
// PostgreSQL. Content addressing, fencing, the size bound, verified reads, inputs and
// retention; test/store/artifacts-hosts.test.ts reads them from another home.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/clock.js';
import { silentLogger } from '../../src/logger.js';
import { enqueueWithCandidates, openArtifactStore } from '../../src/queue/index.js';
import { createPgArtifactStore, MAX_BLOB_BYTES } from '../../src/queue/pg/artifacts.js';
import type { PgJobStore } from '../../src/queue/pg/store.js';
import { createRedactor, type ArtifactStore } from '../../src/store/index.js';
import { sweepInputs } from '../../src/workers/input-sweep.js';
import { holdBlobs } from '../../src/queue/pg/blobs.js';
import { tempPgStore } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';

const LEASE = 60_000;
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

async function setup(options: { clock?: ReturnType<typeof manualClock> } = {}) {
  const store = await tempPgStore(options.clock ? { clock: options.clock } : {});
  const artifacts = createPgArtifactStore({
    pool: () => store.pool(),
    redactor: createRedactor({ home: '/home/alice', secrets: ['sk-live-0123456789abcdef'] }),
  });
  const count = async (table: 'artifact_blobs' | 'artifacts') => {
    const { rows } = await (
      await store.pool()
    ).query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    return rows[0]?.n;
  };
  return { store, artifacts, count };
}

async function claimed(store: PgJobStore, payload: unknown = {}) {
  const { job } = await store.enqueue({ kind: 'noop', payload });
  const [running] = await store.claim('noop', 'w', 1, LEASE);
  if (running?.id !== job.id) throw new Error('nothing claimed');
  return { id: running.id, attempt: running.attempt };
}

const log = (artifacts: ArtifactStore, text: string) =>
  artifacts.write({ name: 'oracle.log', mediaType: 'text/plain; charset=utf-8', bytes: text });

describe('artifacts in PostgreSQL', () => {
  it('stores nothing on write, and the bytes with the fenced completion', async () => {
    const { store, artifacts, count } = await setup();
    const lease = await claimed(store);
    const record = await log(artifacts, 'verdict: PASS\n');
    expect(record.content?.toString()).toBe('verdict: PASS\n');
    expect(await count('artifact_blobs')).toBe(0);
    expect(await store.complete(lease, { verdict: 'PASS' }, [record])).toBe(true);
    const [registered] = await store.listArtifacts(lease.id);
    expect(registered).toMatchObject({ id: record.id, sha256: sha256('verdict: PASS\n') });
    expect(registered).not.toHaveProperty('content');
    expect((await artifacts.read(registered!)).toString()).toBe('verdict: PASS\n');
  });

  it('keeps the same bytes of two jobs in one row, readable through either', async () => {
    const { store, artifacts, count } = await setup();
    const first = await claimed(store);
    const a = await log(artifacts, 'the same log\n');
    expect(await store.complete(first, null, [a])).toBe(true);
    const second = await claimed(store);
    const b = await log(artifacts, 'the same log\n');
    const other = await artifacts.write({
      name: 'transcript.json',
      mediaType: 'application/json',
      bytes: '{"events":[]}',
    });
    expect(await store.complete(second, null, [b, other])).toBe(true);
    expect(a.id).not.toBe(b.id);
    expect(await count('artifacts')).toBe(3);
    expect(await count('artifact_blobs')).toBe(2);
    for (const record of [a, b]) {
      const row = await store.getArtifact(record.id);
      expect((await artifacts.read(row!)).toString()).toBe('the same log\n');
    }
  });

  it('writes no artifact for a late finish after its lease was reclaimed', async () => {
    const clock = manualClock();
    const { store, artifacts, count } = await setup({ clock });
    const stale = await claimed(store);
    clock.advance(LEASE + 1);
    expect(await store.reclaimExpired()).toHaveLength(1);
    const [fresh] = await store.claim('noop', 'other-host', 1, LEASE);
    expect(fresh?.attempt).toBe(2);
    const late = await log(artifacts, 'from the dead host\n');
    expect(await store.complete(stale, { verdict: 'PASS' }, [late])).toBe(false);
    expect(await count('artifacts')).toBe(0);
    expect(await count('artifact_blobs')).toBe(0);
    expect(await store.getArtifact(late.id)).toBeUndefined();
    // Discarding what was never stored is harmless.
    await artifacts.discard(late);
  });

  it('stores no byte when the finish transaction fails after storing them', async () => {
    const { store, artifacts, count } = await setup();
    const lease = await claimed(store);
    const record = await log(artifacts, 'first\n');
    const twin = { ...(await log(artifacts, 'second\n')), id: record.id };
    // The second row has the first one's id: the rows' insert fails after the bytes went in.
    await expect(store.complete(lease, null, [record, twin])).rejects.toThrow(/duplicate key/);
    expect(await count('artifact_blobs')).toBe(0);
    expect(await count('artifacts')).toBe(0);
    expect(await store.getJob(lease.id)).toMatchObject({ status: 'running' });
    expect(await store.complete(lease, null, [record])).toBe(true);
    expect(await count('artifact_blobs')).toBe(1);
  });

  it('never removes bytes that a registration in flight found present but has not named yet', async () => {
    const { store, artifacts, count } = await setup();
    const lease = await claimed(store);
    const record = await log(artifacts, 'raced\n');
    const pool = await store.pool();
    // A registration, by hand: its bytes are in, the row that names them is not yet.
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await holdBlobs(client);
      await client.query(
        `INSERT INTO artifact_blobs (sha256, size, bytes, created_at) VALUES ($1, $2, $3, 0)`,
        [record.sha256, record.size, record.content],
      );
      const sweeping = artifacts.sweep(store);
      await waitFor(
        async () =>
          (
            await pool.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
            )
          ).rows[0]?.n === 1,
        { what: 'the sweep to wait for the registration' },
      );
      await client.query(
        `INSERT INTO artifacts (id, job_id, attempt, name, media_type, sha256, size, rel_path,
           created_at) VALUES ($1, $2, $3, 'oracle.log', 'text/plain', $4, $5, $6, 0)`,
        [record.id, lease.id, lease.attempt, record.sha256, record.size, record.relPath],
      );
      await client.query('COMMIT');
      expect(await sweeping).toBe(0);
    } finally {
      client.release();
    }
    expect(await count('artifact_blobs')).toBe(1);
    expect((await artifacts.read(record)).toString()).toBe('raced\n');
  });

  it('refuses a record whose bytes are not its registered size, and stores nothing', async () => {
    const { store, artifacts, count } = await setup();
    const lease = await claimed(store);
    const record = await log(artifacts, 'twelve bytes');
    await expect(
      store.complete(lease, null, [{ ...record, content: Buffer.from('eleven byte') }]),
    ).rejects.toMatchObject({
      code: 'ARTIFACT_INVALID',
      message: `artifact ${record.id}: 11 bytes, registered as 12`,
    });
    expect(await count('artifact_blobs')).toBe(0);
    expect(await count('artifacts')).toBe(0);
  });

  it('refuses an artifact over 16 MiB with one clear error, and a larger cap', async () => {
    const { artifacts } = await setup();
    const big = Buffer.alloc(MAX_BLOB_BYTES + 1, 0x61);
    await expect(
      artifacts.write({ name: 'huge.bin', mediaType: 'application/octet-stream', bytes: big }),
    ).rejects.toMatchObject({
      code: 'ARTIFACT_INVALID',
      message: `artifact huge.bin is ${MAX_BLOB_BYTES + 1} bytes, more than the limit of ${MAX_BLOB_BYTES}`,
    });
    const exact = await artifacts.write({
      name: 'edge.bin',
      mediaType: 'application/octet-stream',
      bytes: big.subarray(0, MAX_BLOB_BYTES),
    });
    expect(exact.size).toBe(MAX_BLOB_BYTES);
    expect(() =>
      createPgArtifactStore({
        pool: () => Promise.reject(new Error('unused')),
        redactor: createRedactor(),
        maxBytes: MAX_BLOB_BYTES + 1,
      }),
    ).toThrow(/Expected `maxBytes` to be an integer from 0 to 16777216, got `16777217`/);
  });

  it('stores a blob of exactly the cap, and the table refuses more', async () => {
    const { store, artifacts } = await setup();
    const lease = await claimed(store);
    const record = await artifacts.write({
      name: 'edge.bin',
      mediaType: 'application/octet-stream',
      bytes: Buffer.alloc(MAX_BLOB_BYTES, 0x62),
    });
    expect(await store.complete(lease, null, [record])).toBe(true);
    expect((await artifacts.read(record)).length).toBe(MAX_BLOB_BYTES);
    const pool = await store.pool();
    await expect(
      pool.query(
        `INSERT INTO artifact_blobs (sha256, size, bytes, created_at) VALUES ($1, $2, $3, 0)`,
        ['c'.repeat(64), MAX_BLOB_BYTES + 1, Buffer.alloc(MAX_BLOB_BYTES + 1)],
      ),
    ).rejects.toThrow(/artifact_blobs_size_bounded/);
  });

  it('redacts text as the file store does, and keeps a diff byte for byte', async () => {
    const { artifacts } = await setup();
    const text = await log(artifacts, 'token sk-live-0123456789abcdef in /home/alice/x\n');
    expect(text.content?.toString()).not.toContain('sk-live-0123456789abcdef');
    expect(text.content?.toString()).not.toContain('/home/alice');
    const diff = await artifacts.write({
      name: 'candidate.diff',
      mediaType: 'text/x-diff',
      bytes: '+/home/alice\n',
      redact: false,
    });
    expect(diff.content?.toString()).toBe('+/home/alice\n');
  });

  it('verifies every read: changed bytes, a changed size and missing bytes are refused', async () => {
    const { store, artifacts } = await setup();
    const lease = await claimed(store);
    const record = await log(artifacts, 'A'.repeat(100));
    expect(await store.complete(lease, null, [record])).toBe(true);
    const pool = await store.pool();
    await pool.query(`UPDATE artifact_blobs SET bytes = $1 WHERE sha256 = $2`, [
      Buffer.from('B'.repeat(100)),
      record.sha256,
    ]);
    await expect(artifacts.read(record)).rejects.toMatchObject({
      code: 'ARTIFACT_INVALID',
      message: expect.stringMatching(/SHA-256 of the bytes in the database does not match/),
    });
    await expect(artifacts.open(record)).rejects.toMatchObject({ code: 'ARTIFACT_INVALID' });
    await expect(artifacts.read({ ...record, size: 99 })).rejects.toThrow(
      /100 bytes in the database, registered as 99/,
    );
    await expect(artifacts.read({ ...record, sha256: 'd'.repeat(64) })).rejects.toMatchObject({
      code: 'ARTIFACT_NOT_FOUND',
    });
    await expect(artifacts.read({ ...record, id: '../x' })).rejects.toMatchObject({
      code: 'ARTIFACT_INVALID',
    });
    await expect(artifacts.read(record, { maxBytes: 10 })).rejects.toThrow(
      /is 100 bytes, more than the limit of 10/,
    );
  });

  it('serves slices on character boundaries and whole downloads', async () => {
    const { store, artifacts } = await setup();
    const lease = await claimed(store);
    const text = 'ab€cd'; // € is three bytes
    const record = await log(artifacts, text);
    expect(await store.complete(lease, null, [record])).toBe(true);
    expect(
      (await artifacts.readSlice(record, { offset: 0, length: 3, utf8: true })).toString(),
    ).toBe('ab');
    expect((await artifacts.readSlice(record, { offset: 2, length: 100 })).toString()).toBe('€cd');
    await expect(artifacts.readSlice(record, { offset: -1, length: 1 })).rejects.toMatchObject({
      code: 'USAGE',
    });
    const download = await artifacts.open(record);
    const chunks: Buffer[] = [];
    for await (const chunk of download.stream) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe(text);
    expect(download.size).toBe(Buffer.byteLength(text));
  });

  it('registers a candidate with its enqueue, once per content, and the sweep removes it', async () => {
    const clock = manualClock();
    const { store, artifacts, count } = await setup({ clock });
    const patch = Buffer.from('diff --git a/x b/x\n');
    const enqueue = (_ids: string[], inputs: Parameters<typeof store.enqueue>[1]) =>
      store.enqueue({ kind: 'noop', payload: {} }, inputs);
    const first = await enqueueWithCandidates({ store, artifacts }, [patch], enqueue);
    const second = await enqueueWithCandidates({ store, artifacts }, [patch], enqueue);
    expect(second.job.id).not.toBe(first.job.id);
    expect(await count('artifacts')).toBe(1);
    expect(await count('artifact_blobs')).toBe(1);
    const [input] = await store.findInputs('candidate.diff', [sha256(patch)]);
    expect((await artifacts.read(input!)).equals(patch)).toBe(true);
    // A noop payload names no grade candidate: an hour later nothing names the input.
    clock.advance(2 * 60 * 60 * 1000);
    expect(await sweepInputs({ store, artifacts, clock, logger: silentLogger })).toMatchObject({
      inputs: 1,
    });
    expect(await count('artifacts')).toBe(0);
    expect(await count('artifact_blobs')).toBe(0);
  });

  it('retention removes the artifacts of pruned jobs and the bytes nothing names', async () => {
    const clock = manualClock();
    const { store, artifacts, count } = await setup({ clock });
    const old = await claimed(store);
    const shared = 'shared log\n';
    expect(
      await store.complete(old, null, [
        await log(artifacts, shared),
        await log(artifacts, 'own\n'),
      ]),
    ).toBe(true);
    clock.advance(10_000);
    const recent = await claimed(store);
    const kept = await log(artifacts, shared);
    expect(await store.complete(recent, null, [kept])).toBe(true);
    expect(await count('artifact_blobs')).toBe(2);
    expect(await store.pruneFinished(clock.now() - 5_000)).toBe(1);
    expect(await count('artifacts')).toBe(1);
    expect(await count('artifact_blobs')).toBe(1);
    expect((await artifacts.read(kept)).toString()).toBe(shared);
    clock.advance(10_000);
    expect(await store.pruneFinished(clock.now())).toBe(1);
    expect(await count('artifacts')).toBe(0);
    expect(await count('artifact_blobs')).toBe(0);
  });

  it("keeps a pruned solve's candidate while its grade names it", async () => {
    const clock = manualClock();
    const { store, artifacts, count } = await setup({ clock });
    const solve = await claimed(store);
    const candidate = await artifacts.write({
      name: 'candidate.diff',
      mediaType: 'text/x-diff',
      bytes: 'diff\n',
      redact: false,
    });
    expect(await store.complete(solve, null, [candidate])).toBe(true);
    const pool = await store.pool();
    // A grade that reads it, finished after the cut-off (its payload is all that matters here).
    await pool.query(
      `INSERT INTO jobs (kind, status, payload, run_at, created_at, updated_at)
       VALUES ('grade', 'queued', $1, 0, 0, 0)`,
      [JSON.stringify({ bundle: '/x', candidate: candidate.id })],
    );
    clock.advance(10_000);
    expect(await store.pruneFinished(clock.now())).toBe(1);
    expect(await store.getArtifact(candidate.id)).toMatchObject({ jobId: null });
    expect((await artifacts.read(candidate)).toString()).toBe('diff\n');
    await pool.query(`DELETE FROM jobs WHERE kind = 'grade'`);
    expect(await store.pruneFinished(clock.now())).toBe(0);
    expect(await count('artifacts')).toBe(0);
    expect(await count('artifact_blobs')).toBe(0);
  });

  it('openArtifactStore picks the database for a URL and files for a SQLite home', async () => {
    const { store, count } = await setup();
    const redactor = createRedactor();
    const clock = manualClock();
    const files = openArtifactStore({ home: '/tmp/h', dbUrl: undefined }, store, {
      redactor,
      clock,
    });
    expect(files.root).toBe('/tmp/h/artifacts');
    const db = openArtifactStore({ home: '/tmp/h', dbUrl: 'postgres://x/y' }, store, {
      redactor,
      clock,
    });
    expect(db.root).toBe('postgresql');
    const lease = await claimed(store);
    const record = await log(db, 'via the selection\n');
    expect(await store.complete(lease, null, [record])).toBe(true);
    expect(await count('artifact_blobs')).toBe(1);
    expect((await db.read(record)).toString()).toBe('via the selection\n');
    expect(await db.sweep(store)).toBe(0);
  });
});
