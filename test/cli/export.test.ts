// `proctor export` over a real SQLite home and artifact store: what the archive holds, that
// a planted secret is redacted everywhere, that hidden tests need --include-hidden, that two
// exports are byte-identical, and one-line refusals of bad input.
import { cpSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { enqueueWithCandidates } from '../../src/queue/index.js';
import { createArtifactStore, createRedactor } from '../../src/store/index.js';
import { proctor, type CliResult } from '../helpers/cli.js';
import { ROOT } from '../helpers/processes.js';
import { gradeResult } from '../helpers/results.js';
import { tempDir, tempStore } from '../helpers/temp.js';

const SECRET = 'sk-proj-EXPORTplanted0123456789abcdefABCDEF';

interface Entry {
  name: string;
  type: string;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  body: Buffer;
}

async function entries(archive: Buffer): Promise<Entry[]> {
  const tar = extract();
  const found: Entry[] = [];
  const done = new Promise<void>((resolve, reject) => {
    tar.on('entry', (header, stream, next) => {
      const parts: Buffer[] = [];
      stream.on('data', (d: unknown) => parts.push(d as Buffer));
      stream.on('end', () => {
        found.push({
          name: header.name,
          type: header.type ?? 'file',
          mode: header.mode ?? 0,
          uid: header.uid ?? -1,
          gid: header.gid ?? -1,
          mtime: header.mtime?.getTime() ?? 0,
          body: Buffer.concat(parts),
        });
        next();
      });
    });
    tar.on('finish', resolve);
    tar.on('error', reject);
  });
  tar.end(gunzipSync(archive));
  await done;
  return found;
}

async function home() {
  const dir = tempDir();
  const bundle = join(tempDir(), 'shell-task');
  cpSync(join(ROOT, 'test/fixtures/bundles/shell-task'), bundle, { recursive: true });
  writeFileSync(
    join(bundle, 'description.md'),
    `${readFileSync(join(bundle, 'description.md'), 'utf8')}\nUse OPENAI_API_KEY=${SECRET}\n`,
  );
  const store = tempStore({ path: join(dir, 'proctor.db') });
  const artifacts = createArtifactStore({
    root: join(dir, 'artifacts'),
    redactor: createRedactor(),
    clock: systemClock,
  });
  // The candidate is stored byte for byte (never redacted at rest): the export must mask it.
  const diff = Buffer.from(
    `diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+export OPENAI_API_KEY=${SECRET}\n`,
  );
  const { batch, jobIds } = await enqueueWithCandidates(
    { store, artifacts },
    [diff],
    (ids, inputs) =>
      store.enqueueBatch(
        { label: 'export', jobs: [{ kind: 'grade', payload: { bundle, candidate: ids[0]! } }] },
        inputs,
      ),
  );
  const [job] = await store.claim('grade', 'w', 1, 60_000);
  const log = await artifacts.write({
    name: 'oracle.log',
    mediaType: 'text/plain; charset=utf-8',
    bytes: 'proctor oracle log: grade of task shell-div-zero\nverdict: PASS\n',
  });
  await store.complete(
    { id: job!.id, attempt: job!.attempt },
    gradeResult({ task: 'shell-div-zero', verdict: 'PASS' }),
    [log],
  );
  return { dir, bundle, batchId: batch!.id, jobId: jobIds[0]! };
}

function refused(result: CliResult, what: RegExp) {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stderr.trimEnd()).toMatch(what);
}

describe('proctor export', () => {
  it('archives the job, its artifacts and task files, redacted, with a manifest', async () => {
    const { dir, batchId, jobId } = await home();
    const out = join(tempDir(), 'debug.tar.gz');
    const result = await proctor(['--home', dir, 'export', '--batch', batchId, '--out', out]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^wrote .*debug\.tar\.gz: 1 jobs, \d+ files, \d+ bytes\n$/);
    const archive = readFileSync(out);
    expect(archive.includes(SECRET)).toBe(false);
    const found = await entries(archive);
    const names = found.map((e) => e.name);
    expect(names).toEqual([...names].sort());
    const files = found.filter((e) => e.type === 'file');
    expect(files.map((e) => e.name.replace(/[0-9a-f-]{36}-/, 'ID-')).sort()).toEqual([
      'proctor-export/MANIFEST.sha256',
      'proctor-export/bundles.json',
      'proctor-export/bundles/1/description.md',
      'proctor-export/bundles/1/task.toml',
      'proctor-export/export.json',
      `proctor-export/jobs/${jobId}/artifacts/ID-candidate.diff`,
      `proctor-export/jobs/${jobId}/artifacts/ID-oracle.log`,
      `proctor-export/jobs/${jobId}/job.json`,
    ]);
    for (const e of found) {
      expect(e.body.includes(SECRET)).toBe(false);
      expect([e.uid, e.gid, e.mtime]).toEqual([0, 0, Date.UTC(2000, 0, 1)]);
      expect(e.mode).toBe(e.type === 'directory' ? 0o755 : 0o644);
    }
    const body = (suffix: string) => found.find((e) => e.name.endsWith(suffix))!.body.toString();
    expect(body('candidate.diff')).toContain('+export OPENAI_API_KEY=[REDACTED]');
    expect(body('description.md')).toContain('[REDACTED]');
    expect(JSON.parse(body('job.json'))).toMatchObject({
      id: jobId,
      kind: 'grade',
      status: 'done',
    });
    // Every other file is in the manifest with its SHA-256.
    const manifest = body('MANIFEST.sha256').trimEnd().split('\n');
    expect(manifest).toHaveLength(files.length - 1);
    for (const line of manifest) {
      const [sum, path] = line.split('  ');
      const file = files.find((f) => f.name === `proctor-export/${path}`);
      expect(createHash('sha256').update(file!.body).digest('hex')).toBe(sum);
    }
  });

  it('is byte-identical when made twice, and holds hidden tests only with --include-hidden', async () => {
    const { dir, jobId } = await home();
    const folder = tempDir();
    const one = join(folder, 'one.tar.gz');
    const two = join(folder, 'two.tar.gz');
    expect((await proctor(['--home', dir, 'export', String(jobId), '--out', one])).code).toBe(0);
    expect((await proctor(['--home', dir, 'export', String(jobId), '--out', two])).code).toBe(0);
    expect(readFileSync(one).equals(readFileSync(two))).toBe(true);
    const plain = (await entries(readFileSync(one))).map((e) => e.name);
    expect(plain.some((n) => n.includes('/tests/'))).toBe(false);

    const hidden = join(folder, 'hidden.tar.gz');
    const withHidden = await proctor([
      '--home',
      dir,
      'export',
      String(jobId),
      '--out',
      hidden,
      '--include-hidden',
    ]);
    expect(withHidden.code).toBe(0);
    const names = (await entries(readFileSync(hidden))).map((e) => e.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'proctor-export/bundles/1/tests/hidden.patch',
        'proctor-export/bundles/1/tests/hidden.txt',
        'proctor-export/bundles/1/tests/existing.txt',
      ]),
    );
  });

  it('refuses bad input with one line and exit 2, writing nothing', async () => {
    const { dir, batchId, jobId } = await home();
    const folder = tempDir();
    const out = join(folder, 'x.tar.gz');
    refused(await proctor(['--home', dir, 'export', '999', '--out', out]), /^proctor: no job 999$/);
    refused(
      await proctor(['--home', dir, 'export', '--batch', 'nope', '--out', out]),
      /^proctor: no batch nope$/,
    );
    refused(
      await proctor(['--home', dir, 'export', String(jobId), '--batch', batchId, '--out', out]),
      /^proctor: give job ids or --batch ID, not both and not neither$/,
    );
    refused(
      await proctor(['--home', dir, 'export', String(jobId), '--out', join(folder, 'no/x.tar.gz')]),
      /^proctor: --out: no folder .*\/no to write .* into$/,
    );
    expect(readdirSync(folder)).toEqual([]);
  });
});
