// Any host reads any job's artifacts: two homes (two PROCTOR_HOME folders, as two hosts would
// have) on one real PostgreSQL. Home A runs a solve with the flat adapter against a scripted
// model (the real binary, the real Docker engine); home B, which never ran anything, reads the
// grade's oracle log with `status --log`, the transcript, candidate and log with `export`, and
// downloads them byte-identical through its own loopback API. And a patch handed to `grade` in
// one home is graded by a worker in the other. Neither home keeps a file.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { startModelServer } from '../helpers/model-server.js';
import { tempPgDatabase } from '../helpers/postgres.js';
import { ROOT, spawnTs } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const GOLD = readFileSync(join(TASK, 'solution/gold.patch'), 'utf8');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function untar(archive: Buffer): Promise<Map<string, Buffer>> {
  const tar = extract();
  const files = new Map<string, Buffer>();
  const done = new Promise<void>((resolve, reject) => {
    tar.on('entry', (header, stream, next) => {
      const parts: Buffer[] = [];
      stream.on('data', (d: unknown) => parts.push(d as Buffer));
      stream.on('end', () => {
        files.set(header.name, Buffer.concat(parts));
        next();
      });
    });
    tar.on('finish', resolve);
    tar.on('error', reject);
  });
  tar.end(gunzipSync(archive));
  await done;
  return files;
}

/** No artifact file in the home: on PostgreSQL every byte is in the database. */
function noArtifactFiles(home: string) {
  const dir = join(home, 'artifacts');
  expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
}

interface Listed {
  artifacts: Array<{ id: string; name: string; size: number; sha256: string }>;
}

describe('artifacts in PostgreSQL, across hosts', () => {
  it('a job run in home A has its log, transcript and candidate read in home B', async () => {
    const url = await tempPgDatabase();
    const server = await startModelServer([
      { toolCalls: [{ name: 'apply_patch', arguments: { patch: GOLD } }] },
      { message: 'Fixed div by zero.' },
    ]);
    const a = tempDir();
    const b = tempDir();
    writeFileSync(
      join(a, 'proctor.toml'),
      `[solvers.mini]\nadapter = "flat"\nbase_url = "${server.baseUrl}"\nmodel = "scripted"\napi_key_env = "PROCTOR_SOLVE_KEY"\n`,
    );
    const solved = await proctor(
      ['--home', a, '--db', url, 'solve', TASK, '--solver', 'mini', '--wait'],
      { PROCTOR_SOLVE_KEY: 'sk-hoststestplanted0123456789abcdef' },
    );
    expect(solved.stderr).not.toMatch(/proctor: /);
    expect(solved.code).toBe(0);
    expect(solved.stdout).toMatch(/shell-div-zero\s+PASS\s+PASS\s/);

    // Job 1 is the solve, job 2 its grade.
    const status = await proctor(['--home', b, '--db', url, 'status', '1', '2', '--json']);
    expect(status.code).toBe(0);
    const [solve, grade] = (
      JSON.parse(status.stdout) as {
        jobs: Array<{ kind: string; result: { candidate?: { sha256: string; artifact: string } } }>;
      }
    ).jobs;
    expect([solve?.kind, grade?.kind]).toEqual(['solve', 'grade']);
    const candidateSha = solve?.result.candidate?.sha256 ?? '';

    const logged = await proctor(['--home', b, '--db', url, 'status', '2', '--log']);
    expect(logged.code).toBe(0);
    expect(logged.stdout).toMatch(
      /--- oracle log of job 2 \(artifact [0-9a-f-]{36}, \d+ bytes\) ---/,
    );
    expect(logged.stdout).toMatch(/tests_hash=[0-9a-f]{64}/);

    const out = join(tempDir(), 'jobs.tar.gz');
    const exported = await proctor(['--home', b, '--db', url, 'export', '1', '2', '--out', out]);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const files = await untar(readFileSync(out));
    const named = (job: number, name: string) =>
      [...files].find(
        ([path]) => path.startsWith(`proctor-export/jobs/${job}/artifacts/`) && path.endsWith(name),
      );
    expect(sha256(named(1, '-candidate.diff')![1])).toBe(candidateSha);
    expect(named(1, '-transcript.json')![1].toString()).toContain('apply_patch');
    expect(named(2, '-oracle.log')![1].toString()).toMatch(/tests_hash=/);
    // The grade's own copy of its candidate, through its payload.
    expect(sha256(named(2, '-candidate.diff')![1])).toBe(candidateSha);

    const serve = spawnTs(join(ROOT, 'bin/proctor.js'), [
      '--home',
      b,
      '--db',
      url,
      'serve',
      '--port',
      '0',
    ]);
    await waitFor(() => /serving http:\/\/127\.0\.0\.1:\d+\//.test(serve.stderr()), {
      what: 'the server in home B to listen',
      timeoutMs: 60_000,
    });
    const api = `http://127.0.0.1:${/127\.0\.0\.1:(\d+)/.exec(serve.stderr())?.[1] ?? ''}`;
    for (const job of [1, 2]) {
      const listed = (await (await fetch(`${api}/api/jobs/${job}`)).json()) as Listed;
      expect(listed.artifacts.length).toBeGreaterThan(0);
      for (const artifact of listed.artifacts) {
        const download = await fetch(`${api}/api/artifacts/${artifact.id}`);
        expect(download.status).toBe(200);
        const body = Buffer.from(await download.arrayBuffer());
        expect([body.length, sha256(body)]).toEqual([artifact.size, artifact.sha256]);
      }
    }
    const slice = (await (await fetch(`${api}/api/jobs/2/log?offset=0&limit=65536`)).json()) as {
      text: string;
    };
    expect(slice.text).toMatch(/tests_hash=/);
    serve.process.kill('SIGTERM');
    expect((await serve.exited).code).toBe(0);

    noArtifactFiles(a);
    noArtifactFiles(b);
    expect(await leftovers(a)).toEqual([]);
  }, 240_000);

  it('a patch handed to grade in home A is graded by a worker in home B, and read back in A', async () => {
    const url = await tempPgDatabase();
    const a = tempDir();
    const b = tempDir();
    const enqueued = await proctor([
      '--home',
      a,
      '--db',
      url,
      'grade',
      TASK,
      '--patch',
      join(TASK, 'solution/gold.patch'),
    ]);
    expect(enqueued.stderr).toBe('');
    expect(enqueued.code).toBe(0);
    const worker = spawnTs(join(ROOT, 'bin/proctor.js'), ['--home', b, '--db', url, 'worker']);
    await waitFor(
      async () => {
        const status = await proctor(['--home', a, '--db', url, 'status', '1', '--json']);
        const [job] = (JSON.parse(status.stdout) as { jobs: Array<{ status: string }> }).jobs;
        return job?.status === 'done';
      },
      { what: 'the grade to be done by the worker in home B', timeoutMs: 180_000, intervalMs: 500 },
    );
    worker.process.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);

    const logged = await proctor(['--home', a, '--db', url, 'status', '1', '--log']);
    expect(logged.stdout).toMatch(/verdict: PASS/);
    const out = join(tempDir(), 'grade.tar.gz');
    const exported = await proctor(['--home', a, '--db', url, 'export', '1', '--out', out]);
    expect(exported.code).toBe(0);
    const files = await untar(readFileSync(out));
    const candidate = [...files].find(([path]) => path.endsWith('-candidate.diff'));
    expect(candidate?.[1].equals(readFileSync(join(TASK, 'solution/gold.patch')))).toBe(true);
    noArtifactFiles(a);
    noArtifactFiles(b);
    expect(await leftovers(b)).toEqual([]);
  }, 240_000);
});
