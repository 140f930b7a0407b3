import { machineHost } from '../../src/config.js';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { silentLogger } from '../../src/logger.js';
import { labelsFor } from '../../src/sandbox/labels.js';
import { createWorkerPool, noopHandler, sandboxRecovery } from '../../src/workers/index.js';
import { testDocker } from '../helpers/docker.js';
import { onCleanup, tempStore } from '../helpers/temp.js';
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
