// Several hosts on one machine: three network namespaces, each with its own dockerd (see
// test/helpers/namespace-hosts.ts), one worker per host against one PostgreSQL (the test
// cluster, reached by its unix socket), each with its own home and host identity.
//
// The sweep is real: `proctor baseline --gold` jobs of a suite of copies of
// examples/sh-country-codes, run by the real `proctor worker` (bin/proctor.js) on each host.
// A namespace host has no network, and the task's Dockerfile needs apt, so the image is built
// once by Proctor on the machine's engine (a baseline there, in a home of its own) and moved
// into each host with `docker save | docker load`; each host's worker then finds it current by
// its labels (the context's hash, src/workers/images.ts) and never builds. The cancel case
// runs hardened no-op containers through test/helpers/host-worker-child.ts.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgJobStore } from '../../src/queue/pg/store.js';
import { LABEL, createContextCache, createDockerClient } from '../../src/sandbox/index.js';
import { proctor } from '../helpers/cli.js';
import { startNamespaceHosts, type NamespaceHosts } from '../helpers/namespace-hosts.js';
import { emptyPgDatabase } from '../helpers/postgres.js';
import { ROOT } from '../helpers/processes.js';
import { spawnHostWorker, spawnProctorWorker, type HostWorker } from '../helpers/host-workers.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const run = promisify(execFile);
const LEASE_SECONDS = 5;
const HEARTBEAT_MS = (LEASE_SECONDS * 1000) / 4;
const BUNDLE = join(ROOT, 'examples', 'sh-country-codes');

let machine: NamespaceHosts;
beforeAll(async () => {
  machine = await startNamespaceHosts(3);
}, 180_000);
afterAll(async () => {
  await machine?.close();
}, 120_000);

/** A home per host: its own proctor.toml (a short lease, so a dead host's jobs move soon). */
function makeHome(toml = '', leaseSeconds = LEASE_SECONDS): string {
  const home = join(tempDir('proctor-host-'), '.proctor');
  mkdirSync(home);
  writeFileSync(join(home, 'proctor.toml'), `${toml}[queue]\nlease_seconds = ${leaseSeconds}\n`);
  return home;
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Every container and volume of any Proctor job, and any container of any home. */
async function leftovers(): Promise<string[]> {
  const found: string[] = [];
  for (const host of machine.hosts) {
    const containers = [
      ...(await host.docker.listContainers({ all: true, filters: { label: [LABEL.job] } })),
      ...(await host.docker.listContainers({ all: true, filters: { label: [LABEL.home] } })),
    ];
    const { Volumes } = await host.docker.listVolumes({ filters: { label: [LABEL.job] } });
    found.push(...containers.map((c) => `host ${host.index}: container ${c.Names.join(',')}`));
    found.push(...(Volumes ?? []).map((v) => `host ${host.index}: volume ${v.Name}`));
  }
  return [...new Set(found)];
}

/** `N` copies of the example bundle, `sh-country-codes-01`…, as one suite folder. */
function makeSuite(n: number): { suite: string; ids: string[] } {
  const suite = tempDir('proctor-suite-');
  const ids = Array.from(
    { length: n },
    (_, i) => `sh-country-codes-${String(i + 1).padStart(2, '0')}`,
  );
  for (const id of ids) {
    const dir = join(suite, id);
    cpSync(BUNDLE, dir, { recursive: true });
    const toml = readFileSync(join(dir, 'task.toml'), 'utf8');
    const renamed = toml.replace(/^id = "sh-country-codes"$/m, `id = "${id}"`);
    expect(renamed).not.toBe(toml);
    writeFileSync(join(dir, 'task.toml'), renamed);
  }
  return { suite, ids };
}

interface Start {
  host: number;
  job: number;
  attempt: number;
  role: string;
}

/** Every job container started on every host, from each engine's event stream. */
async function watchStarts(): Promise<Start[]> {
  const starts: Start[] = [];
  for (const host of machine.hosts) {
    const stream = (await host.docker.getEvents({
      filters: { type: ['container'], event: ['start'], label: [LABEL.job] },
    })) as Readable;
    let pending = '';
    stream.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.trim() !== '')) {
        const attributes =
          (JSON.parse(line) as { Actor?: { Attributes?: Record<string, string> } }).Actor
            ?.Attributes ?? {};
        starts.push({
          host: host.index,
          job: Number(attributes[LABEL.job]),
          attempt: Number(attributes[LABEL.attempt]),
          role: attributes[LABEL.role] ?? '',
        });
      }
    });
    stream.on('error', () => {});
    onCleanup(() => {
      stream.destroy();
    });
  }
  return starts;
}

describe('several hosts on one machine', () => {
  it('runs a sweep of real baseline jobs on three hosts, one SIGKILLed at ~30 % and restarted: every job ends once, nothing left', async () => {
    const total = 15;
    const { suite, ids } = makeSuite(total);
    // The task image, built once by Proctor on the machine's engine (apt needs its network).
    const builder = makeHome();
    const built = await proctor(['baseline', join(suite, ids[0] as string), '--gold', '--wait'], {
      PROCTOR_HOME: builder,
      PROCTOR_DB: undefined,
      PROCTOR_HOST: undefined,
    });
    expect(built.code, built.stderr).toBe(0);
    expect([built.code, built.stdout]).toEqual([
      0,
      expect.stringMatching(/1 valid, 0 quarantined/),
    ]);
    // Its workspace template is the one thing it keeps on the machine's engine.
    const prunedBuilder = await proctor(['prune'], {
      PROCTOR_HOME: builder,
      PROCTOR_DB: undefined,
    });
    expect(prunedBuilder.code, prunedBuilder.stderr).toBe(0);
    const { hash } = await createContextCache({ dir: join(tempDir(), 'contexts') }).state(
      join(BUNDLE, 'environment'),
    );
    const root = createDockerClient(process.env['DOCKER_HOST']);
    // Labelled with the Dockerfile too, as Proctor's own lookup takes it: a build of the same
    // context by another test file, under way, lists its intermediate images with the context's
    // label alone, and one of them can be the newest.
    const images = await root.listImages({
      filters: { label: [`${LABEL.context}=${hash}`, `${LABEL.dockerfile}=Dockerfile`] },
    });
    const newest = images.sort((a, b) => b.Created - a.Created)[0];
    expect(newest?.Id).toMatch(/^sha256:[0-9a-f]{64}$/);
    const imageId = await machine.load(newest?.Id as string, root);

    const url = await emptyPgDatabase();
    // A longer lease than the cancel case's: real jobs on a loaded machine must not lose one.
    const homes = machine.hosts.map(() => makeHome('[workers]\nbaseline = 2\n', 10));
    const start = (i: number): HostWorker =>
      spawnProctorWorker(machine.hosts[i] as (typeof machine.hosts)[number], {
        home: homes[i] as string,
        hostId: `ns-h${i + 1}`,
        db: url,
        onCleanup,
      });
    const starts = await watchStarts();
    // Three hosts starting at once also race the automatic migration (an advisory lock).
    const workers = [start(0), start(1), start(2)];
    const owners = await Promise.all(workers.map((w) => w.ready));
    expect(owners.map((o) => o.split('/')[0])).toEqual(['ns-h1', 'ns-h2', 'ns-h3']);

    // The sweep, enqueued from host 1's CLI.
    const host1 = machine.hosts[0] as (typeof machine.hosts)[number];
    const { stdout: enqueued } = await run(
      host1.enter[0] as string,
      [
        ...host1.enter.slice(1),
        process.execPath,
        join(ROOT, 'bin', 'proctor.js'),
        'baseline',
        suite,
        '--gold',
      ],
      {
        env: {
          ...process.env,
          PROCTOR_HOME: homes[0],
          PROCTOR_HOST: 'ns-h1',
          PROCTOR_DB: url,
          DOCKER_HOST: host1.dockerHost,
        },
      },
    );
    expect(enqueued).toContain(`${total} baseline job(s) enqueued`);

    const count = async (status: string) =>
      Number(
        (
          await query<{ n: string }>(
            url,
            `SELECT count(*) AS n FROM jobs WHERE status = '${status}'`,
          )
        )[0]?.n,
      );
    const runningOn = async (owner: string) =>
      (
        await query<{ id: string }>(
          url,
          `SELECT id FROM jobs WHERE status = 'running' AND lease_owner = '${owner}'`,
        )
      ).map((r) => Number(r.id));
    // At ~30 %, and while host 3 holds jobs: they are the ones that must run again.
    await waitFor(
      async () =>
        (await count('done')) >= Math.round(total * 0.3) &&
        (await runningOn(owners[2] as string)).length > 0,
      { timeoutMs: 150_000, intervalMs: 50, what: '30 % of the sweep, host 3 busy' },
    );
    const killed = workers[2] as HostWorker;
    killed.process.kill('SIGKILL');
    await killed.exited;
    const inFlight = await runningOn(owners[2] as string);
    expect(inFlight.length).toBeGreaterThan(0);

    await waitFor(async () => (await count('done')) >= Math.round(total * 0.6), {
      timeoutMs: 150_000,
      intervalMs: 100,
      what: '60 % of the sweep',
    });
    const restarted = start(2);
    await restarted.ready;
    await waitFor(
      async () =>
        Number(
          (
            await query<{ n: string }>(
              url,
              "SELECT count(*) AS n FROM jobs WHERE status NOT IN ('queued', 'running')",
            )
          )[0]?.n,
        ) === total,
      { timeoutMs: 150_000, intervalMs: 200, what: 'the whole sweep' },
    );
    for (const w of [workers[0], workers[1], restarted] as HostWorker[]) w.process.kill('SIGTERM');
    for (const w of [workers[0], workers[1], restarted] as HostWorker[])
      expect((await w.exited).code).toBe(0);

    const jobs = await query<{
      id: string;
      status: string;
      attempt: number;
      result: string | null;
    }>(url, 'SELECT id, status, attempt, result FROM jobs ORDER BY id');
    expect(jobs).toHaveLength(total);
    expect(jobs.filter((j) => j.status !== 'done')).toEqual([]);
    // Results valid: every copy of the task is sound on every host.
    const validity = jobs.map(
      (j) => (JSON.parse(j.result ?? '{}') as { validity?: string }).validity,
    );
    expect(validity).toEqual(Array.from({ length: total }, () => 'valid'));
    // Exactly once: one oracle log per job, of the winning attempt, its bytes in the database.
    const logs = await query<{
      job_id: string;
      attempt: number;
      sha256: string;
      size: string;
      bytes: Buffer | null;
    }>(
      url,
      `SELECT a.job_id, a.attempt, a.sha256, a.size, b.bytes FROM artifacts a
         LEFT JOIN artifact_blobs b ON b.sha256 = a.sha256 WHERE a.name = 'oracle.log'`,
    );
    expect(new Set(logs.map((l) => l.job_id)).size).toBe(total);
    expect(logs).toHaveLength(total);
    for (const log of logs) {
      const job = jobs.find((j) => j.id === log.job_id);
      expect(log.attempt).toBe(job?.attempt);
      expect(log.bytes).not.toBeNull();
      expect(
        createHash('sha256')
          .update(log.bytes as Buffer)
          .digest('hex'),
      ).toBe(log.sha256);
      expect(Number(log.size)).toBe((log.bytes as Buffer).length);
    }
    // Re-runs are exactly the jobs the dead host held.
    const rerun = jobs.filter((j) => j.attempt > 1).map((j) => Number(j.id));
    expect(rerun.sort((a, b) => a - b)).toEqual([...inFlight].sort((a, b) => a - b));
    expect(jobs.every((j) => j.attempt <= 2)).toBe(true);
    // Where each attempt ran, from the engines: every job's containers, every host used, no
    // attempt on two hosts, and host 3's first attempts of the re-run jobs.
    const attemptHosts = new Map<string, Set<number>>();
    for (const s of starts.filter((e) => Number.isInteger(e.job))) {
      const key = `${s.job}/${s.attempt}`;
      attemptHosts.set(key, (attemptHosts.get(key) ?? new Set()).add(s.host));
    }
    for (const j of jobs) expect(attemptHosts.has(`${j.id}/${j.attempt}`)).toBe(true);
    expect([...attemptHosts.values()].filter((h) => h.size !== 1)).toEqual([]);
    // (A job killed before its first container has none.)
    for (const id of inFlight)
      expect([...(attemptHosts.get(`${id}/1`) ?? new Set([3]))]).toEqual([3]);
    expect(new Set(starts.map((s) => s.host))).toEqual(new Set([1, 2, 3]));
    // No host built: each found the loaded image current (no build container, no new image).
    for (const host of machine.hosts) {
      const there = await host.docker.listImages({ filters: { label: [LABEL.context] } });
      expect(there.map((i) => i.Id)).toEqual([imageId]);
    }

    // The restarted host's reaper removed what its dead worker left; the others touched none.
    await waitFor(async () => (await leftovers()).length === 0, {
      timeoutMs: 30_000,
      what: 'no container or volume left on any host',
    });
    // What is left is each home's workspace templates (kept on purpose); prune removes them.
    for (const [i, host] of machine.hosts.entries()) {
      const pruned = await proctor(['prune'], {
        PROCTOR_HOME: homes[i],
        PROCTOR_HOST: `ns-h${i + 1}`,
        PROCTOR_DB: url,
        DOCKER_HOST: host.dockerHost,
      });
      expect(pruned.code).toBe(0);
      const { Volumes } = await host.docker.listVolumes({ filters: { label: [LABEL.home] } });
      expect(Volumes ?? []).toEqual([]);
    }
  }, 420_000);

  it("cancels a job running on host 2 from host 1's CLI within heartbeat + 10 s", async () => {
    const url = await emptyPgDatabase();
    const execLog = join(tempDir(), 'exec.log');
    writeFileSync(execLog, '');
    const [home1, home2] = [makeHome(), makeHome()];
    const host1 = machine.hosts[0] as (typeof machine.hosts)[number];
    const host2 = machine.hosts[1] as (typeof machine.hosts)[number];
    const worker = spawnHostWorker(host2, {
      home: home2,
      hostId: 'ns-h2',
      db: url,
      execLog,
      slots: 1,
      onCleanup,
    });
    const owner = await worker.ready;
    const store = openPgJobStore(url, { maxConnections: 1 });
    onCleanup(() => store.close());
    const { job } = await store.enqueue({ kind: 'noop', payload: { sleepMs: 600_000 } });
    await waitFor(
      async () =>
        (await host2.docker.listContainers({ filters: { label: [`${LABEL.job}=${job.id}`] } }))
          .length === 1,
      { timeoutMs: 60_000, intervalMs: 100, what: 'the job running on host 2' },
    );
    expect((await store.getJob(job.id))?.leaseOwner).toBe(owner);

    const asked = Date.now();
    const { stdout } = await run(
      host1.enter[0] as string,
      [
        ...host1.enter.slice(1),
        process.execPath,
        join(ROOT, 'bin', 'proctor.js'),
        'cancel',
        String(job.id),
        '--db',
        url,
      ],
      {
        env: {
          ...process.env,
          PROCTOR_HOME: home1,
          PROCTOR_HOST: 'ns-h1',
          DOCKER_HOST: host1.dockerHost,
        },
      },
    );
    expect(stdout).toMatch(new RegExp(`^job ${job.id}: `));
    const limit = HEARTBEAT_MS + 10_000;
    await waitFor(async () => (await store.getJob(job.id))?.status === 'cancelled', {
      timeoutMs: limit,
      intervalMs: 50,
      what: 'the job cancelled',
    });
    await waitFor(
      async () =>
        (
          await host2.docker.listContainers({
            all: true,
            filters: { label: [`${LABEL.job}=${job.id}`] },
          })
        ).length === 0,
      {
        timeoutMs: Math.max(1, limit - (Date.now() - asked)),
        intervalMs: 50,
        what: 'its container gone',
      },
    );
    expect(Date.now() - asked).toBeLessThan(limit);
    expect(readFileSync(execLog, 'utf8')).not.toContain('end ');
    worker.process.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    expect(await leftovers()).toEqual([]);
  }, 180_000);
});
