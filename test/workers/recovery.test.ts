import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { machineHost } from '../../src/config.js';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { silentLogger } from '../../src/logger.js';
import { LABEL, labelsFor } from '../../src/sandbox/labels.js';
import { listTemplates, preparationName, removeTemplate } from '../../src/sandbox/template.js';
import { createWorkerPool, noopHandler, sandboxRecovery } from '../../src/workers/index.js';
import { reapGoneHomeTemplates } from '../../src/workers/recovery.js';
import { fixtureImage, testDocker } from '../helpers/docker.js';
import { onCleanup, tempDir, tempStore } from '../helpers/temp.js';
import { holdTemplate, makeTemplate } from '../helpers/templates.js';
import { removeOwned } from '../../src/sandbox/cleanup.js';

const docker = testDocker();

describe('sandbox recovery at worker start', () => {
  it('removes the volumes of jobs that are not running, and keeps those of running jobs', async () => {
    const store = tempStore();
    const home = `/proctor-tests/recovery-${Date.now()}`;
    const { jobIds } = await store.enqueueBatch({
      jobs: [
        { kind: 'grade', payload: { bundle: '/b', candidate: 'c' } },
        { kind: 'grade', payload: { bundle: '/b', candidate: 'd' } },
      ],
    });
    const [live, dead] = jobIds as [number, number];
    await store.claim('grade', 'another-live-worker', 1, 60_000); // job `live` is running elsewhere
    const volumes: Record<string, string> = {};
    for (const [name, job, attempt] of [
      ['live', live, 1],
      ['stale-attempt', live, 0],
      ['dead', dead, 1],
      ['not-a-job', 'validate-x', 1],
    ] as const) {
      const owner = { job: String(job), attempt, home };
      onCleanup(async () => void (await removeOwned(docker, owner)));
      volumes[name] = (
        await docker.createVolume({
          Name: `proctor-test-rec-${name}-${Date.now()}`,
          Labels: labelsFor(owner, 'solver'),
        })
      ).name;
    }
    const pool = createWorkerPool({
      store,
      clock: systemClock,
      logger: silentLogger,
      handlers: { noop: noopHandler },
      concurrency: { noop: 1 },
      recover: sandboxRecovery(
        docker,
        store,
        { home, host: machineHost(), unlabelled: true },
        silentLogger,
      ),
    });
    onCleanup(() => pool.stop({ graceMs: 0 }));
    await pool.start();
    const left =
      (await docker.listVolumes({ filters: { label: [`proctor.home=${home}`] } })).Volumes?.map(
        (v) => v.Name,
      ) ?? [];
    expect(left).toEqual([volumes['live']]);
  });

  it("leaves another host's leftovers on a shared engine, even of jobs that are over", async () => {
    const store = tempStore();
    const home = `/proctor-tests/recovery-hosts-${Date.now()}`;
    const { jobIds } = await store.enqueueBatch({
      jobs: [{ kind: 'grade', payload: { bundle: '/b', candidate: 'c' } }],
    });
    const [job] = jobIds as [number];
    const volumes: Record<string, string> = {};
    for (const [name, host] of [
      ['mine', 'rec-h1'],
      ['theirs', 'rec-h2'],
      ['their-probe', 'rec-h2'],
    ] as const) {
      const owner = {
        job: name === 'their-probe' ? 'validate-x' : String(job),
        attempt: 1,
        home,
        host,
      };
      onCleanup(async () => void (await removeOwned(docker, owner)));
      volumes[name] = (
        await docker.createVolume({
          Name: `proctor-test-rec-${name}-${Date.now()}`,
          Labels: labelsFor(owner, 'solver'),
        })
      ).name;
    }
    // Host rec-h1 starts on a shared queue: only its own volume of the job (not running) goes.
    const pool = createWorkerPool({
      store,
      clock: systemClock,
      logger: silentLogger,
      handlers: { noop: noopHandler },
      concurrency: { noop: 1 },
      recover: sandboxRecovery(
        docker,
        store,
        { home, host: 'rec-h1', unlabelled: false },
        silentLogger,
      ),
    });
    onCleanup(() => pool.stop({ graceMs: 0 }));
    await pool.start();
    const left =
      (await docker.listVolumes({ filters: { label: [`proctor.home=${home}`] } })).Volumes?.map(
        (v) => v.Name,
      ) ?? [];
    expect(left.sort()).toEqual([volumes['their-probe'], volumes['theirs']].sort());
  });
});

describe("workspace templates of gone homes, with a worker's sweeps", () => {
  async function exists(volume: string): Promise<boolean> {
    const { Volumes } = await docker.listVolumes({ filters: { name: [volume] } });
    return (Volumes ?? []).some((v) => v.Name === volume);
  }

  it("removes this host's templates whose home is gone; keeps live homes', other hosts' and one in use", async () => {
    // A host of this test's own: no other test's templates are this host's.
    const host = `rec-t-${randomBytes(3).toString('hex')}`;
    const homes = {
      live: tempDir(),
      gone: tempDir(),
      file: tempDir(),
      busy: tempDir(),
      foreign: tempDir(),
      unlabelled: tempDir(),
    };
    const t = {
      live: await makeTemplate(docker, homes.live, host),
      gone: await makeTemplate(docker, homes.gone, host),
      file: await makeTemplate(docker, homes.file, host),
      busy: await makeTemplate(docker, homes.busy, host),
      foreign: await makeTemplate(docker, homes.foreign, `${host}-b`),
    };
    // One an earlier Proctor made, before templates carried a host label.
    const unlabelled = `proctor-template-unlabelled-${randomBytes(4).toString('hex')}`;
    await docker.createVolume({
      Name: unlabelled,
      Labels: {
        [LABEL.home]: homes.unlabelled,
        [LABEL.role]: 'template',
        [LABEL.template]: 'k'.repeat(64),
        [LABEL.templateImage]: 'sha256:0',
      },
    });
    onCleanup(async () => void (await removeTemplate(docker, unlabelled)));
    const holder = await holdTemplate(docker, t.busy);
    // A preparation container a crash left, stopped: it goes with its gone home's template.
    const [gone] = await listTemplates(docker, homes.gone);
    const lock = await docker.createContainer({
      name: preparationName(gone?.key ?? ''),
      Image: await fixtureImage('git-history'),
      Cmd: ['true'],
      HostConfig: { Binds: [`${t.gone}:/t:ro`], NetworkMode: 'none' },
    });
    onCleanup(() => lock.remove({ force: true }).catch(() => undefined));
    // It ran and ended (one created and not yet started is a preparation about to start).
    await lock.start();
    await lock.wait();
    for (const home of [homes.gone, homes.file, homes.busy, homes.foreign, homes.unlabelled]) {
      rmSync(home, { recursive: true, force: true });
    }
    // A home whose folder became a file is no home.
    writeFileSync(homes.file, 'not a home');

    const warnings: string[] = [];
    const say = (message: string) => void warnings.push(message);
    const logger = { ...silentLogger, debug: say, info: say, warn: say };
    const own = tempDir();
    // A shared queue's worker: an unlabelled template could be any host's. Its start leaves
    // other homes' leftovers to its first sweep, which runs beside the first jobs.
    const shared = { home: own, host, unlabelled: false };
    await sandboxRecovery(docker, tempStore(), shared, logger)();
    expect(await exists(t.gone)).toBe(true);
    await reapGoneHomeTemplates(docker, shared, logger);
    expect(await exists(t.gone)).toBe(false);
    await expect(lock.inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(await exists(t.file)).toBe(false);
    expect(await exists(t.live)).toBe(true);
    expect(await exists(t.busy)).toBe(true);
    expect(await exists(t.foreign)).toBe(true);
    expect(await exists(unlabelled)).toBe(true);
    expect(warnings).toContain('removed 2 workspace template(s) of 2 home(s) that are gone');
    expect(warnings).toContain(
      `kept workspace template ${t.busy} of gone home ${homes.busy}: in use by container ${holder}`,
    );

    // A SQLite home's worker: what was made before host labels on this machine is its own.
    await reapGoneHomeTemplates(docker, { home: own, host, unlabelled: true }, logger);
    expect(await exists(unlabelled)).toBe(false);
    expect(await exists(t.busy)).toBe(true);
    expect(await exists(t.foreign)).toBe(true);
    expect(await exists(t.live)).toBe(true);
  });
});
