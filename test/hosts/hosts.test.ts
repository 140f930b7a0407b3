// Several hosts on one machine: three network namespaces, each with its own dockerd (see
// test/helpers/namespace-hosts.ts), one worker per host against one PostgreSQL (the test
// cluster, reached by its unix socket), each with its own home and host identity. Jobs are
// hardened no-op containers through the real sandbox (test/helpers/host-worker-child.ts):
// real baseline jobs would need each host to build a task image, which needs the network.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgJobStore } from '../../src/queue/pg/store.js';
import { LABEL } from '../../src/sandbox/index.js';
import { startNamespaceHosts, type NamespaceHosts } from '../helpers/namespace-hosts.js';
import { emptyPgDatabase } from '../helpers/postgres.js';
import { ROOT } from '../helpers/processes.js';
import { spawnHostWorker, type HostWorker } from '../helpers/host-workers.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const run = promisify(execFile);
const LEASE_SECONDS = 5;
const HEARTBEAT_MS = (LEASE_SECONDS * 1000) / 4;

let machine: NamespaceHosts;
beforeAll(async () => {
  machine = await startNamespaceHosts(3);
}, 180_000);
afterAll(async () => {
  await machine?.close();
}, 120_000);

/** A home per host: its own proctor.toml (a short lease, so a dead host's jobs move soon). */
function makeHome(): string {
  const home = join(tempDir('proctor-host-'), '.proctor');
  mkdirSync(home);
  writeFileSync(join(home, 'proctor.toml'), `[queue]\nlease_seconds = ${LEASE_SECONDS}\n`);
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

async function leftovers(): Promise<string[]> {
  const found: string[] = [];
  for (const host of machine.hosts) {
    const filters = { label: [LABEL.job] };
    const containers = await host.docker.listContainers({ all: true, filters });
    const { Volumes } = await host.docker.listVolumes({ filters });
    found.push(...containers.map((c) => `host ${host.index}: container ${c.Names.join(',')}`));
    found.push(...(Volumes ?? []).map((v) => `host ${host.index}: volume ${v.Name}`));
  }
  return found;
}

describe('several hosts on one machine', () => {
  it('runs a sweep on three hosts, one SIGKILLed at ~30 % and restarted: every job ends once, nothing left', async () => {
    const url = await emptyPgDatabase();
    const execLog = join(tempDir(), 'exec.log');
    writeFileSync(execLog, '');
    const homes = machine.hosts.map(() => makeHome());
    const start = (i: number): HostWorker =>
      spawnHostWorker(machine.hosts[i] as (typeof machine.hosts)[number], {
        home: homes[i] as string,
        hostId: `ns-h${i + 1}`,
        db: url,
        execLog,
        slots: 2,
        onCleanup,
      });
    // Three hosts starting at once also race the automatic migration (an advisory lock).
    const workers = [start(0), start(1), start(2)];
    const owners = await Promise.all(workers.map((w) => w.ready));
    expect(owners.map((o) => o.split('/')[0])).toEqual(['ns-h1', 'ns-h2', 'ns-h3']);

    const total = 45;
    const store = openPgJobStore(url, { maxConnections: 2 });
    onCleanup(() => store.close());
    const batch = await store.enqueueBatch({
      label: 'hosts',
      jobs: Array.from({ length: total }, (_, i) => ({
        kind: 'noop' as const,
        payload: { sleepMs: 1000, tag: `j${i}` },
      })),
    });
    expect(batch.inserted).toBe(total);

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
      { timeoutMs: 120_000, intervalMs: 50, what: '30 % of the sweep, host 3 busy' },
    );
    const killed = workers[2] as HostWorker;
    killed.process.kill('SIGKILL');
    await killed.exited;
    const inFlight = await runningOn(owners[2] as string);
    expect(inFlight.length).toBeGreaterThan(0);
    // What the dead worker left on its engine: the volumes of the jobs it had started.
    const h3 = machine.hosts[2] as (typeof machine.hosts)[number];
    const { Volumes: leftOnH3 } = await h3.docker.listVolumes({
      filters: { label: [`${LABEL.host}=ns-h3`] },
    });
    const startedThere = readFileSync(execLog, 'utf8')
      .split('\n')
      .filter((l) => inFlight.some((id) => l.startsWith(`start ${id} 1 ns-h3 `)));
    expect((leftOnH3 ?? []).length).toBeGreaterThanOrEqual(startedThere.length);

    await waitFor(async () => (await count('done')) >= Math.round(total * 0.6), {
      timeoutMs: 120_000,
      intervalMs: 100,
      what: '60 % of the sweep',
    });
    const restarted = start(2);
    await restarted.ready;
    await waitFor(async () => (await count('done')) === total, {
      timeoutMs: 150_000,
      intervalMs: 200,
      what: 'the whole sweep',
    });
    // The restarted host's reaper removed what its dead worker left; the others touched none.
    await waitFor(async () => (await leftovers()).length === 0, {
      timeoutMs: 30_000,
      what: 'no container or volume left on any host',
    });

    const jobs = await query<{ id: string; status: string; attempt: number }>(
      url,
      'SELECT id, status, attempt FROM jobs ORDER BY id',
    );
    expect(jobs).toHaveLength(total);
    expect(jobs.filter((j) => j.status !== 'done')).toEqual([]);
    // Exactly once: one effect per job, registered by the winning attempt's completion.
    const effects = await query<{ job_id: string; n: string }>(
      url,
      "SELECT job_id, count(*) AS n FROM artifacts WHERE name = 'effect' GROUP BY job_id",
    );
    expect(effects).toHaveLength(total);
    expect(effects.filter((e) => Number(e.n) !== 1)).toEqual([]);
    // Re-runs are exactly the jobs the dead host held.
    const rerun = jobs.filter((j) => j.attempt > 1).map((j) => Number(j.id));
    expect(rerun.sort((a, b) => a - b)).toEqual(inFlight.sort((a, b) => a - b));
    const starts = readFileSync(execLog, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('start '));
    expect(starts.length).toBeLessThanOrEqual(total + inFlight.length);
    expect(new Set(starts.map((l) => l.split(' ')[1])).size).toBe(total);
    // Every host ran some of the sweep.
    for (const id of ['ns-h1', 'ns-h2', 'ns-h3'])
      expect(starts.some((l) => l.split(' ')[3] === id)).toBe(true);

    for (const w of [workers[0], workers[1], restarted] as HostWorker[]) w.process.kill('SIGTERM');
    for (const w of [workers[0], workers[1], restarted] as HostWorker[])
      expect((await w.exited).code).toBe(0);
  }, 240_000);

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
