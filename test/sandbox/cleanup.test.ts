import { machineHost } from '../../src/config.js';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { reapOrphans, removeOwned } from '../../src/sandbox/cleanup.js';
import { LABEL, labelsFor, type Owner } from '../../src/sandbox/labels.js';
import { hardenedContainerOptions } from '../../src/sandbox/profile.js';
import { fixtureImage, testDocker, testOwner } from '../helpers/docker.js';
import { onCleanup } from '../helpers/temp.js';

const docker = testDocker();

async function leave(owner: Owner): Promise<{ container: string; volume: string }> {
  const image = await fixtureImage('git-history');
  const volume = `proctor-test-${owner.job}-${owner.attempt}${owner.host ? `-${owner.host}` : ''}`;
  await docker.createVolume({ Name: volume, Labels: labelsFor(owner, 'solver') });
  const container = await docker.createContainer(
    hardenedContainerOptions({
      owner,
      role: 'solver',
      image,
      cmd: ['sleep', 'infinity'],
      uid: 1000,
      gid: 1000,
      workdir: '/w',
      workspace: { volume, target: '/w' },
    }),
  );
  await container.start();
  return { container: container.id, volume };
}

const exists = async (kind: 'container' | 'volume', id: string) => {
  try {
    await (kind === 'container'
      ? docker.getContainer(id).inspect()
      : docker.getVolume(id).inspect());
    return true;
  } catch {
    return false;
  }
};

describe('cleanup', () => {
  it('removes every running container and volume of one job attempt, and nothing else', async () => {
    const mine = testOwner(docker, 'clean');
    const other = { ...mine, attempt: 2 };
    const a = await leave(mine);
    const b = await leave(other);
    const removed = await removeOwned(docker, mine);
    expect(removed).toEqual({ containers: [a.container], volumes: [a.volume] });
    expect(await exists('container', a.container)).toBe(false);
    expect(await exists('volume', a.volume)).toBe(false);
    expect(await exists('container', b.container)).toBe(true);
    await removeOwned(docker, other);
    expect(await exists('container', b.container)).toBe(false);
  });

  it('reaps what jobs that are not running left behind, in this home only', async () => {
    // A home of this test's own: reaping the shared test home would remove the containers
    // of test files running at the same time.
    const home = `/proctor-tests/cleanup-${randomBytes(4).toString('hex')}`;
    const dead = Object.assign(testOwner(docker, 'dead'), { home });
    const live = Object.assign(testOwner(docker, 'live'), { home });
    const foreign = Object.assign(testOwner(docker, 'foreign'), { home: '/another-home' });
    const d = await leave(dead);
    const l = await leave(live);
    const f = await leave(foreign);
    try {
      const scope = { home, host: machineHost(), unlabelled: true };
      const removed = await reapOrphans(docker, scope, (job) => job === live.job);
      expect(removed.containers).toContain(d.container);
      expect(removed.volumes).toContain(d.volume);
      expect(await exists('container', d.container)).toBe(false);
      expect(await exists('container', l.container)).toBe(true);
      expect(await exists('container', f.container)).toBe(true);
      const labels = (await docker.getContainer(f.container).inspect()).Config.Labels;
      expect(labels[LABEL.home]).toBe('/another-home');
    } finally {
      await removeOwned(docker, foreign);
    }
  });

  it('labels each resource with its host, and removes one attempt on its own host only', async () => {
    const h1 = Object.assign(testOwner(docker, 'attempt'), { host: 'cleanup-h1' });
    const h2 = { ...h1, host: 'cleanup-h2' };
    testOwnerCleanup(h2);
    const a = await leave(h1);
    const b = await leave(h2);
    const labels = (await docker.getContainer(a.container).inspect()).Config.Labels;
    expect(labels[LABEL.host]).toBe('cleanup-h1');
    expect((await docker.getVolume(b.volume).inspect()).Labels[LABEL.host]).toBe('cleanup-h2');
    expect(await removeOwned(docker, h1)).toEqual({
      containers: [a.container],
      volumes: [a.volume],
    });
    expect(await exists('container', b.container)).toBe(true);
    expect(await exists('volume', b.volume)).toBe(true);
  });

  it("leaves other hosts' resources on one engine alone, and unlabelled ones on a shared queue", async () => {
    const home = `/proctor-tests/cleanup-hosts-${randomBytes(4).toString('hex')}`;
    const mine = Object.assign(testOwner(docker, 'h1'), { home, host: 'cleanup-h1' });
    const theirs = Object.assign(testOwner(docker, 'h2'), { home, host: 'cleanup-h2' });
    const m = await leave(mine);
    const t = await leave(theirs);
    const old = await leaveUnlabelled(Object.assign(testOwner(docker, 'old'), { home }));
    // Neither job is live: only the host label keeps h2's from h1's reaper.
    const shared = { home, host: 'cleanup-h1', unlabelled: false };
    const removed = await reapOrphans(docker, shared, () => false);
    expect(removed).toEqual({ containers: [m.container], volumes: [m.volume] });
    expect(await exists('container', t.container)).toBe(true);
    expect(await exists('volume', t.volume)).toBe(true);
    expect(await exists('container', old.container)).toBe(true);
    // On a SQLite home, resources from before host labels are this host's, as before.
    const single = { home, host: 'cleanup-h1', unlabelled: true };
    const again = await reapOrphans(docker, single, () => false);
    expect(again).toEqual({ containers: [old.container], volumes: [old.volume] });
    expect(await exists('container', t.container)).toBe(true);
  });
});

/** Registers the removal of what `owner` labels (an owner copied from a testOwner). */
function testOwnerCleanup(owner: Owner): void {
  onCleanup(async () => {
    await removeOwned(docker, owner);
  });
}

/** A container and a volume labelled as before host labels: no `proctor.host`. */
async function leaveUnlabelled(owner: Owner): Promise<{ container: string; volume: string }> {
  const image = await fixtureImage('git-history');
  const labels = labelsFor(owner, 'solver');
  delete labels[LABEL.host];
  const volume = `proctor-test-${owner.job}-${owner.attempt}`;
  await docker.createVolume({ Name: volume, Labels: labels });
  const options = hardenedContainerOptions({
    owner,
    role: 'solver',
    image,
    cmd: ['sleep', 'infinity'],
    uid: 1000,
    gid: 1000,
    workdir: '/w',
    workspace: { volume, target: '/w' },
  });
  const container = await docker.createContainer({ ...options, Labels: labels });
  onCleanup(async () => {
    await docker
      .getContainer(container.id)
      .remove({ force: true })
      .catch(() => {});
    await docker
      .getVolume(volume)
      .remove({ force: true })
      .catch(() => {});
  });
  return { container: container.id, volume };
}
