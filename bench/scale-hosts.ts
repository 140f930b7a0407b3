// bench:scale (b) — hardened no-op container jobs on 1 host and on 3 namespace hosts, each
// host a network namespace with its own dockerd (test/helpers/namespace-hosts.ts) and one
// worker (test/helpers/host-worker-child.ts: the production runtime with a `noop` handler
// that runs `sleep 0` in a hardened container, with a workspace volume, through the real
// sandbox) against one PostgreSQL. Printed per case: wall (first enqueue to last finish, by
// the database's clock), jobs/s, and the CPU utilisation of the machine over the case (from
// /proc/stat: where it nears every core, the CPU caps the speed-up, not the hosts). The raw
// baseline, in the same run: the same containers and volumes made directly on one host's
// engine by the bench process (no queue, no worker), as many at a time as one host's slots.
// Every case checks that each job finished exactly once and that no container or volume is
// left. Needs root (namespaces, dockerd).
//
// Usage: npx tsx bench/scale-hosts.ts [--container-jobs 200 --host-slots 4 --hosts 3 --rounds 3];
// npm run bench:scale runs it after parts (a) and (c).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openPgJobStore } from '../src/queue/pg/store.js';
import { LABEL, labelsFor, runToCompletion } from '../src/sandbox/index.js';
import { spawnHostWorker, type HostWorker } from '../test/helpers/host-workers.js';
import { startNamespaceHosts, type NamespaceHost } from '../test/helpers/namespace-hosts.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Busy and total jiffies of all cores since boot. */
function cpuTimes(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

interface CaseResult {
  label: string;
  wallS: number;
  perSec: number;
  /** Of all cores, 0..1. */
  cpu: number;
}

async function measureCpu<T>(fn: () => Promise<T>): Promise<{ value: T; cpu: number }> {
  const before = cpuTimes();
  const value = await fn();
  const after = cpuTimes();
  return { value, cpu: (after.busy - before.busy) / Math.max(1, after.total - before.total) };
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

async function leftovers(hosts: readonly NamespaceHost[]): Promise<number> {
  let n = 0;
  for (const host of hosts) {
    const filters = { label: [LABEL.job] };
    n += (await host.docker.listContainers({ all: true, filters })).length;
    n += ((await host.docker.listVolumes({ filters })).Volumes ?? []).length;
  }
  return n;
}

/** The raw floor: the same container and volume per job, made here, `slots` at a time. */
async function raw(host: NamespaceHost, jobs: number, slots: number): Promise<number> {
  const start = process.hrtime.bigint();
  let next = 0;
  const home = '/proctor-bench/scale-hosts';
  const one = async () => {
    for (let i = next++; i < jobs; i = next++) {
      const owner = { job: `raw-${i}`, attempt: 1, home, host: 'bench-raw' };
      const volume = `proctor-raw-${i}-${randomBytes(4).toString('hex')}`;
      await host.docker.createVolume({ Name: volume, Labels: labelsFor(owner, 'solver') });
      const run = await runToCompletion(
        host.docker,
        {
          owner,
          role: 'solver',
          image: host.imageId,
          cmd: ['sleep', '0.000'],
          uid: 1000,
          gid: 1000,
          workdir: '/work',
          workspace: { volume, target: '/work' },
          limits: { cpus: 0.5, memoryMb: 64, pids: 16 },
        },
        { timeoutMs: 120_000 },
      );
      if (run.exitCode !== 0) throw new Error(`raw container ${i} exited ${run.exitCode}`);
      await host.docker.getVolume(volume).remove({ force: true });
    }
  };
  await Promise.all(Array.from({ length: slots }, one));
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function sweep(
  hosts: readonly NamespaceHost[],
  baseUrl: string,
  jobs: number,
  slots: number,
): Promise<number> {
  const name = `proctor_bench_hosts_${randomBytes(4).toString('hex')}`;
  await query(baseUrl, `CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const db = url.toString();
  const dir = mkdtempSync(join(tmpdir(), 'proctor-bench-hosts-'));
  const workers: HostWorker[] = [];
  try {
    const execLog = join(dir, 'exec.log');
    writeFileSync(execLog, '');
    for (const host of hosts) {
      const home = join(dir, `h${host.index}`);
      mkdirSync(home);
      workers.push(
        spawnHostWorker(host, { home, hostId: `bench-h${host.index}`, db, execLog, slots }),
      );
    }
    await Promise.all(workers.map((w) => w.ready));
    const store = openPgJobStore(db, { maxConnections: 1, migrate: false });
    try {
      await store.enqueueBatch({
        jobs: Array.from({ length: jobs }, () => ({ kind: 'noop' as const, payload: {} })),
      });
    } finally {
      await store.close();
    }
    for (;;) {
      const [row] = await query<{ n: string }>(
        db,
        "SELECT count(*) AS n FROM jobs WHERE status IN ('done', 'failed', 'cancelled')",
      );
      if (Number(row?.n) === jobs) break;
      await sleep(100);
    }
    const [stats] = await query<{
      done: string;
      effects: string;
      distinct_jobs: string;
      wall: string;
    }>(
      db,
      `SELECT (SELECT count(*) FROM jobs WHERE status = 'done') AS done,
        (SELECT count(*) FROM artifacts WHERE name = 'effect') AS effects,
        (SELECT count(DISTINCT job_id) FROM artifacts WHERE name = 'effect') AS distinct_jobs,
        (SELECT max(finished_at) - min(created_at) FROM jobs) AS wall`,
    );
    if (
      Number(stats?.done) !== jobs ||
      Number(stats?.effects) !== jobs ||
      Number(stats?.distinct_jobs) !== jobs
    )
      throw new Error(
        `sweep on ${hosts.length} host(s): ${JSON.stringify(stats)}, expected ${jobs} done once each`,
      );
    return Number(stats?.wall) / 1000;
  } finally {
    for (const w of workers) w.process.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    rmSync(dir, { recursive: true, force: true });
    await query(baseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

export async function benchScaleHosts(options: {
  jobs: number;
  slots: number;
  hosts: number;
  rounds: number;
}): Promise<void> {
  const { jobs, slots } = options;
  const cores = cpus().length;
  console.log(
    `(b) ${jobs} hardened no-op container jobs (sleep 0, a workspace volume each), ${slots} slots per host, each host a namespace with its own dockerd; ${cores} cores; load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  const baseUrl = execFileSync('bash', [join(ROOT, '.ci/postgres')], { encoding: 'utf8' }).trim();
  const machine = await startNamespaceHosts(options.hosts);
  try {
    const first = machine.hosts.slice(0, 1);
    const rawCase = async (): Promise<CaseResult> => {
      const run = await measureCpu(() => raw(first[0] as NamespaceHost, jobs, slots));
      return { label: 'raw, 1 host', wallS: run.value, perSec: jobs / run.value, cpu: run.cpu };
    };
    const proctorCase = async (hosts: readonly NamespaceHost[]): Promise<CaseResult> => {
      const run = await measureCpu(() => sweep(hosts, baseUrl, jobs, slots));
      const left = await leftovers(machine.hosts);
      if (left > 0) throw new Error(`${left} container(s) or volume(s) left after the sweep`);
      const label = `proctor, ${hosts.length} host${hosts.length > 1 ? 's' : ''}`;
      return { label, wallS: run.value, perSec: jobs / run.value, cpu: run.cpu };
    };
    const print = (r: CaseResult) =>
      console.log(
        `  ${r.label.padEnd(17)} wall ${r.wallS.toFixed(2).padStart(7)} s  ${r.perSec.toFixed(2).padStart(6)} jobs/s  machine CPU ${(r.cpu * 100).toFixed(0).padStart(3)} % of ${cores} cores`,
      );
    // The raw floor and one Proctor host alternate, the order swapped each round, so that a
    // machine whose load changes under the bench weighs on both alike; the ratio is per round.
    const ratios: number[] = [];
    let one: CaseResult | undefined;
    for (let round = 0; round < options.rounds; round++) {
      let rawR: CaseResult | undefined;
      let mine: CaseResult | undefined;
      for (const which of round % 2 === 0 ? ['raw', 'proctor'] : ['proctor', 'raw']) {
        if (which === 'raw') print((rawR = await rawCase()));
        else print((mine = await proctorCase(first)));
      }
      if (!rawR || !mine) throw new Error('a round ran without both cases');
      ratios.push(mine.perSec / rawR.perSec);
      one = mine;
    }
    const many = await proctorCase(machine.hosts);
    print(many);
    const sorted = [...ratios].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    const last = one as CaseResult;
    const capped = many.cpu >= 0.9;
    console.log(
      `  proctor, 1 host / raw: ${ratios.map((r) => r.toFixed(2)).join(', ')} per round, median ${median.toFixed(2)}x; speed-up ${many.label} / ${last.label}: ${(many.perSec / last.perSec).toFixed(2)}x (each job exactly once, nothing left)`,
    );
    console.log(
      capped
        ? `  the CPU caps it: ${(many.cpu * 100).toFixed(0)} % of ${cores} cores busy on ${options.hosts} hosts (${(last.cpu * 100).toFixed(0)} % on 1): the engines' create/start/remove work, not the queue, is what more hosts would need cores for`
        : `  the CPU does not cap it (${(many.cpu * 100).toFixed(0)} % of ${cores} cores busy on ${options.hosts} hosts)`,
    );
  } finally {
    await machine.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      'container-jobs': { type: 'string', default: '200' },
      'host-slots': { type: 'string', default: '4' },
      hosts: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '3' },
    },
  });
  await benchScaleHosts({
    jobs: Number(values['container-jobs']),
    slots: Number(values['host-slots']),
    hosts: Number(values.hosts),
    rounds: Number(values.rounds),
  });
}
